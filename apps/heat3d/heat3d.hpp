// The 7-point Laplacian heat stencil of the Panda paper: explicit Euler for du/dt = lap(u),
// with u held constant on the whole physical boundary.
#pragma once

#include <tessera/tessera.hpp>

namespace apps {

struct Heat3d {
  double alpha;  // dt / h^2; stable for alpha <= 1/6
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u,
                             tessera::Out<double> next) const {
    next = u() + alpha * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) +
                          u(0, 0, 1) - 6.0 * u());
  }
};

// The boundary value: hot x-low face, cold elsewhere.
inline tessera::Boundaries<3> heat3d_boundaries() {
  auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(0.0));
  bc.set(0, 0, tessera::Boundary::dirichlet(1.0));
  return bc;
}

}  // namespace apps
