// PSkel's 2-D Jacobi iteration for the Poisson equation -lap(u) = f on the unit square:
// u'(i,j) = (u(i+-1,j) + u(i,j+-1) + h^2 f(i,j)) / 4, u = 0 on the boundary, in float.
#pragma once

#include <cmath>

#include <tessera/tessera.hpp>

namespace apps {

struct Jacobi2d {
  float h2;  // h^2 with h = 1 / (n + 1)
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<float> u, tessera::In<float> f,
                             tessera::Out<float> next) const {
    next = 0.25f * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) + h2 * f());
  }
};

// The source term f(x, y) = 2 pi^2 sin(pi x) sin(pi y), whose solution is sin(pi x) sin(pi y).
inline float jacobi2d_source(tessera::Index<2> p, long nx, long ny) {
  const double pi = 3.14159265358979323846;
  const double x = (p[0] + 1.0) / (nx + 1.0), y = (p[1] + 1.0) / (ny + 1.0);
  return static_cast<float>(2 * pi * pi * std::sin(pi * x) * std::sin(pi * y));
}

}  // namespace apps
