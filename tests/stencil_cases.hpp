// The stencil cases shared by the shared-memory, distributed and CUDA tests: a functor that
// reads every offset of a shape, reproducible inputs, and the comparison with the reference.
#pragma once

#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "apps/jacobi2d/jacobi2d.hpp"
#include "tests/reference/reference.hpp"
#include "tests/test_support.hpp"

namespace test {

using tessera::Boundaries;
using tessera::Boundary;
using tessera::Index;

// Reads every offset of the shape in a fixed order and folds them with distinct effective
// weights, so a wrong ghost value, a wrong orientation or a missing corner changes the result.
template <class T, int D, int R, bool Box>
struct Mix {
  TESSERA_HD void operator()(Index<D>, tessera::In<T> u, tessera::Out<T> out) const {
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
T initial(Index<D> p) {
  const double v = test::noise<D>(p);
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
        Index<D> p;
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

// Runs `steps` applications of F on the tiles and in the reference; compares bitwise.
// `functions`: the reference's copy of bc's boundary functions, if any.
template <class T, int D, int R, bool Box, class F = Mix<T, D, R, Box>>
void expect_matches_reference(const tessera::Grid<D>& grid, const Boundaries<D>& bc, int steps = 3,
                              int halo = R, F f = {},
                              const reference::FaceFunctions<T, D>& functions = {}) {
  tessera::Field<T, D> u(grid, halo, bc, "u"), next(grid, halo, bc, "next");
  u.fill(initial<T, D>);
  const std::string name = "mix-" + std::to_string(D) + "d-r" + std::to_string(R) +
                           (Box ? "-box-" : "-star-") + typeid(F).name();
  tessera::Stencil<D> stencil(
      name.substr(0, name.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")),
      Box ? tessera::Shape::Box : tessera::Shape::Star, R);
  for (int s = 0; s < steps; ++s) {
    stencil.apply(f, tessera::in(u), tessera::out(next));
    tessera::swap(u, next);
  }
  const std::vector<T> got = u.gather();

  reference::RefField<T, D> ref{initial_values<T>(grid), bc, functions};
  for (int s = 0; s < steps; ++s) {
    std::vector<T> out(ref.values.size());
    reference::apply(domain(grid), R, f, std::make_tuple(&ref), std::make_tuple(&out));
    ref.values = out;
  }
  test::expect_bitwise_equal(got, ref.values);
}

inline Boundaries<3> distinct_dirichlet3() {
  Boundaries<3> bc;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) bc.set(a, s, Boundary::dirichlet(1.0 + a + 0.5 * s));
  return bc;
}

// jacobi2d (two inputs: u and the source f, each with its own ghost layers) for `steps` steps
// against the reference, over the whole field and at its last point.
inline void expect_jacobi_matches_reference(const tessera::Grid<2>& grid, int steps) {
  const std::int64_t nx = grid.extent()[0], ny = grid.extent()[1];
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  tessera::Field<float, 2> u(grid, 1, zero, "u"), next(grid, 1, zero, "next"),
      f(grid, 1, zero, "f");
  auto source = [nx, ny](Index<2> p) { return apps::jacobi2d_source(p, nx, ny); };
  u.fill(initial<float, 2>);
  f.fill(source);
  tessera::Stencil<2> jacobi("jacobi2d", tessera::Shape::Star, 1);
  const apps::Jacobi2d update{0.01f};
  for (int s = 0; s < steps; ++s) {
    jacobi.apply(update, tessera::in(u, f), tessera::out(next));
    tessera::swap(u, next);
  }
  reference::RefField<float, 2> ru{initial_values<float>(grid), zero}, rf{{}, zero};
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) rf.values.push_back(source({x, y}));
  for (int s = 0; s < steps; ++s) {
    std::vector<float> out(ru.values.size());
    reference::apply(domain(grid), 1, update, std::make_tuple(&ru, &rf), std::make_tuple(&out));
    ru.values = out;
  }
  expect_bitwise_equal(u.gather(), ru.values);
  EXPECT_EQ(u.at({nx - 1, ny - 1}), ru.values.back());
}

}  // namespace test
