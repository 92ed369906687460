// Stencil test cases shared by test_stencils and tests/cuda: a functor that exposes any wrong
// ghost value, reproducible initial values, and the reference's view of a grid.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include <tessera/tessera.hpp>

#include "tests/reference/reference.hpp"
#include "tests/test_support.hpp"

namespace test {

// Reads every offset of the shape in a fixed order and folds them with distinct effective
// weights, so a wrong ghost value, a wrong orientation or a missing corner changes the result.
template <class T, int D, int R, bool Box>
struct Mix {
  TESSERA_HD void operator()(tessera::Index<D>, tessera::In<T> u, tessera::Out<T> out) const {
    const int rz = D == 3 ? R : 0;
    double acc = 0;
    for (int dz = -rz; dz <= rz; ++dz)
      for (int dy = -R; dy <= R; ++dy)
        for (int dx = -R; dx <= R; ++dx) {
          if (!Box && (dx != 0) + (dy != 0) + (dz != 0) > 1) continue;
          if constexpr (std::is_floating_point_v<T>)
            acc = acc * 0.75 + static_cast<double>(u(dx, dy, dz));
          else
            acc = static_cast<double>((static_cast<long>(acc) * 31 + u(dx, dy, dz)) % 251);
        }
    if constexpr (std::is_floating_point_v<T>)
      out = static_cast<T>(acc / 4);
    else
      out = static_cast<T>(acc);
  }
};

template <class T, int D>
T initial(tessera::Index<D> p) {
  const double v = noise<D>(p);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else
    return static_cast<T>(v * 200);
}

template <int D>
reference::Domain<D> domain(const tessera::Grid<D>& g) {
  reference::Domain<D> d;
  for (int a = 0; a < D; ++a) {
    d.n[a] = g.extent()[a];
    d.periodic[a] = g.periodic()[a];
  }
  return d;
}

// init(p) at every grid point, x fastest: the reference's layout.
template <class T, int D, class Init>
std::vector<T> values_of(const tessera::Grid<D>& g, Init init) {
  std::vector<T> v(static_cast<std::size_t>(g.points()));
  const auto dom = domain(g);
  for (std::int64_t z = 0; z < dom.n[2]; ++z)
    for (std::int64_t y = 0; y < dom.n[1]; ++y)
      for (std::int64_t x = 0; x < dom.n[0]; ++x) {
        tessera::Index<D> p;
        p[0] = x;
        p[1] = y;
        if constexpr (D == 3) p[2] = z;
        v[static_cast<std::size_t>(x + dom.n[0] * (y + dom.n[1] * z))] = init(p);
      }
  return v;
}

template <class T, int D>
std::vector<T> initial_values(const tessera::Grid<D>& g) {
  return values_of<T>(g, initial<T, D>);
}

inline tessera::Boundaries<3> distinct_dirichlet3() {
  tessera::Boundaries<3> bc;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) bc.set(a, s, tessera::Boundary::dirichlet(1.0 + a + 0.5 * s));
  return bc;
}

}  // namespace test
