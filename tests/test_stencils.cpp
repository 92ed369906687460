// Tiled stencil results are bitwise identical to the serial reference, for every shape,
// radius, boundary kind, tiling, element type, scheduler and worker count.
#include <array>
#include <cstdint>
#include <tuple>

#include "apps/heat3d/heat3d.hpp"
#include "apps/life/life.hpp"
#include "core/grid/field_impl.hpp"  // a tile's host memory
#include "tests/stencil_cases.hpp"

namespace {

using tessera::Boundaries;
using tessera::Boundary;
using tessera::Index;
using test::distinct_dirichlet3;
using test::domain;
using test::expect_matches_reference;
using test::initial;
using test::initial_values;

class StencilMatchesReference : public testing::TestWithParam<test::Config> {};

TEST_P(StencilMatchesReference, ThreeDimensionalShapesBoundariesAndTilings) {
  tessera::Runtime rt(test::options(GetParam()));
  {
    SCOPED_TRACE("star r1, distinct Dirichlet faces, tiles divide the grid");
    expect_matches_reference<double, 3, 1, false>(tessera::Grid<3>({12, 10, 9}, {4, 5, 3}),
                                                  distinct_dirichlet3());
  }
  {
    SCOPED_TRACE("star r1, Neumann, last tiles 3, 3 and 1 thick");
    expect_matches_reference<double, 3, 1, false>(tessera::Grid<3>({13, 11, 7}, {5, 4, 3}),
                                                  Boundaries<3>::all(Boundary::neumann()));
  }
  {
    SCOPED_TRACE("star r1, periodic on every axis, thin last tiles");
    expect_matches_reference<double, 3, 1, false>(
        tessera::Grid<3>({9, 8, 7}, {4, 3, 3}, {true, true, true}), Boundaries<3>{});
  }
  {
    SCOPED_TRACE("box r1, periodic x, Neumann/Dirichlet y, Dirichlet/Neumann z");
    Boundaries<3> bc;
    bc.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
    bc.set(1, 0, Boundary::neumann()).set(1, 1, Boundary::dirichlet(-1.5));
    bc.set(2, 0, Boundary::dirichlet(2.0)).set(2, 1, Boundary::neumann());
    expect_matches_reference<double, 3, 1, true>(
        tessera::Grid<3>({10, 9, 8}, {4, 4, 3}, {true, false, false}), bc);
  }
  {
    SCOPED_TRACE("star r2, Dirichlet and Neumann, last tiles 2, 3 and 2 thick");
    Boundaries<3> bc = distinct_dirichlet3();
    bc.set(0, 1, Boundary::neumann()).set(2, 0, Boundary::neumann());
    expect_matches_reference<double, 3, 2, false>(tessera::Grid<3>({12, 11, 10}, {5, 4, 4}), bc);
  }
  {
    SCOPED_TRACE("box r2, periodic x, Neumann y, Dirichlet z");
    Boundaries<3> bc;
    bc.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
    bc.set(1, 0, Boundary::neumann()).set(1, 1, Boundary::neumann());
    bc.set(2, 0, Boundary::dirichlet(0.25)).set(2, 1, Boundary::dirichlet(4.0));
    expect_matches_reference<double, 3, 2, true>(
        tessera::Grid<3>({11, 10, 9}, {4, 5, 3}, {true, false, false}), bc);
  }
  {
    SCOPED_TRACE("box r1, one tile wrapping onto itself");
    expect_matches_reference<double, 3, 1, true>(
        tessera::Grid<3>({6, 5, 4}, {6, 5, 4}, {true, true, true}), Boundaries<3>{});
  }
  {
    SCOPED_TRACE("star r1 in float, halo wider than the radius");
    expect_matches_reference<float, 3, 1, false>(tessera::Grid<3>({8, 7, 6}, {3, 4, 2}),
                                                 distinct_dirichlet3(), 3, 2);
  }
}

TEST_P(StencilMatchesReference, TwoDimensionalShapesBoundariesAndTypes) {
  tessera::Runtime rt(test::options(GetParam()));
  {
    SCOPED_TRACE("star r1 double, Dirichlet, last tiles 1 thick");
    Boundaries<2> bc;
    bc.set(0, 0, Boundary::dirichlet(1)).set(0, 1, Boundary::dirichlet(2));
    bc.set(1, 0, Boundary::dirichlet(3)).set(1, 1, Boundary::dirichlet(4));
    expect_matches_reference<double, 2, 1, false>(tessera::Grid<2>({16, 13}, {5, 4}), bc);
  }
  {
    SCOPED_TRACE("box r2 double, Neumann x, periodic y");
    Boundaries<2> bc;
    bc.set(0, 0, Boundary::neumann()).set(0, 1, Boundary::neumann());
    bc.set(1, 0, Boundary::periodic()).set(1, 1, Boundary::periodic());
    expect_matches_reference<double, 2, 2, true>(tessera::Grid<2>({17, 12}, {6, 4}, {false, true}),
                                                 bc);
  }
  {
    SCOPED_TRACE("box r1 uint8, periodic");
    expect_matches_reference<std::uint8_t, 2, 1, true>(
        tessera::Grid<2>({14, 11}, {4, 4}, {true, true}), Boundaries<2>{});
  }
  {
    SCOPED_TRACE("star r2 int32, Dirichlet -3 and 7, Neumann");
    Boundaries<2> bc = Boundaries<2>::all(Boundary::dirichlet(-3));
    bc.set(0, 1, Boundary::dirichlet(7)).set(1, 0, Boundary::neumann());
    expect_matches_reference<std::int32_t, 2, 2, false>(tessera::Grid<2>({15, 14}, {4, 6}), bc);
  }
  {
    SCOPED_TRACE("box r1 float, Dirichlet corners meet Neumann and periodic faces");
    Boundaries<2> bc;
    bc.set(0, 0, Boundary::dirichlet(5)).set(0, 1, Boundary::neumann());
    bc.set(1, 0, Boundary::neumann()).set(1, 1, Boundary::dirichlet(-2));
    expect_matches_reference<float, 2, 1, true>(tessera::Grid<2>({9, 10}, {3, 3}), bc);
  }
}

TEST_P(StencilMatchesReference, ApplicationStencils) {
  tessera::Runtime rt(test::options(GetParam()));
  {
    SCOPED_TRACE("heat3d");
    expect_matches_reference<double, 3, 1, false, apps::Heat3d>(
        tessera::Grid<3>({14, 12, 10}, {14, 12, 3}), apps::heat3d_boundaries(), 4, 1,
        apps::Heat3d{0.1});
  }
  {
    // A 200 x 190 plane of doubles is over the point loop's 256 KiB plane limit: rows go in
    // y-blocks of 163, the last one 27 rows (TilePoints::y_block).
    SCOPED_TRACE("heat3d, tiles cache-blocked along y");
    expect_matches_reference<double, 3, 1, false, apps::Heat3d>(
        tessera::Grid<3>({200, 190, 12}, {200, 190, 6}), apps::heat3d_boundaries(), 2, 1,
        apps::Heat3d{0.1});
  }
  {
    SCOPED_TRACE("life");
    expect_matches_reference<std::uint8_t, 2, 1, true, apps::Life>(
        tessera::Grid<2>({20, 18}, {7, 5}, {true, true}), Boundaries<2>{}, 5, 1, apps::Life{});
  }
}

// Jacobi reads two fields (u and the source f): several inputs with their own ghost layers.
TEST_P(StencilMatchesReference, JacobiWithSourceField) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_jacobi_matches_reference(tessera::Grid<2>({19, 17}, {6, 5}), 4);
}

// One input, two outputs of different types, and the global index passed to the functor.
struct Split {
  TESSERA_HD void operator()(Index<2> p, tessera::In<double> u, tessera::Out<double> smooth,
                             tessera::Out<std::int32_t> sign) const {
    const double v = 0.5 * u() + 0.125 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1)) + 1e-3 * p[0];
    smooth = v;
    sign = v > 0.5 ? 1 : -1;
  }
};

TEST_P(StencilMatchesReference, SeveralOutputsAndGlobalIndex) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({13, 9}, {5, 4});
  const auto bc = Boundaries<2>::all(Boundary::neumann());
  tessera::Field<double, 2> u(grid, 1, bc, "u"), smooth(grid, 1, bc, "smooth");
  tessera::Field<std::int32_t, 2> sign(grid, 1, bc, "sign");
  u.fill(initial<double, 2>);
  tessera::Stencil<2>("split", tessera::Shape::Star, 1)
      .apply(Split{}, tessera::in(u), tessera::out(smooth, sign));
  reference::RefField<double, 2> ru{initial_values<double>(grid), bc};
  std::vector<double> want_smooth(ru.values.size());
  std::vector<std::int32_t> want_sign(ru.values.size());
  reference::apply(domain(grid), 1, Split{}, std::make_tuple(&ru),
                   std::make_tuple(&want_smooth, &want_sign));
  test::expect_bitwise_equal(smooth.gather(), want_smooth);
  test::expect_bitwise_equal(sign.gather(), want_sign);
}

// A field updated in place beside the stencil (tessera::inout): acc keeps a decaying sum of u,
// read and written at the point, while u is smoothed into next; several steps with swaps, on
// tiles that cut both axes. The reference: the smoothing through the oracle, acc in a plain loop
// over the values u had before each step. An acc read from anywhere but its own point, or
// written before it is read, or not kept between steps, changes the bits.
struct Smooth {
  TESSERA_HD double operator()(tessera::In<double> u) const {
    return 0.5 * u() + 0.125 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
  TESSERA_HD void operator()(Index<2>, tessera::In<double> u, tessera::Out<double> next) const {
    next = (*this)(u);
  }
};
struct SmoothAndAccumulate {
  TESSERA_HD void operator()(Index<2>, tessera::In<double> u, tessera::Out<double> next,
                             tessera::InOut<double> acc) const {
    next = Smooth{}(u);
    acc = 0.5 * acc + u();
  }
};

TEST_P(StencilMatchesReference, FieldUpdatedInPlace) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({13, 11}, {5, 4});
  const auto bc = Boundaries<2>::all(Boundary::neumann());
  // acc has ghost layers: a later stencil reads it with neighbours, so the in-place updates
  // must leave its faces current for the exchange.
  tessera::Field<double, 2> u(grid, 1, bc, "u"), next(grid, 1, bc, "next"), acc(grid, 1, bc, "acc");
  u.fill(initial<double, 2>);
  acc.fill([](Index<2> p) { return 0.01 * static_cast<double>(p[0] - 2 * p[1]); });
  std::vector<double> want_acc = acc.gather();
  reference::RefField<double, 2> ru{initial_values<double>(grid), bc};
  tessera::Stencil<2> stencil("smooth-acc", tessera::Shape::Star, 1),
      smoothing("smooth", tessera::Shape::Star, 1);
  // Read once with neighbours first: from then on the tasks that update acc pack its faces.
  tessera::Field<double, 2> smooth(grid, 1, bc, "smooth");
  smoothing.apply(Smooth{}, tessera::in(acc), tessera::out(smooth));
  for (int step = 0; step < 4; ++step) {
    stencil.apply(SmoothAndAccumulate{}, tessera::in(u), tessera::out(next), tessera::inout(acc));
    tessera::swap(u, next);
    for (std::size_t i = 0; i < want_acc.size(); ++i)
      want_acc[i] = 0.5 * want_acc[i] + ru.values[i];
    std::vector<double> out(ru.values.size());
    reference::apply(domain(grid), 1, Smooth{}, std::make_tuple(&ru), std::make_tuple(&out));
    ru.values = out;
  }
  test::expect_bitwise_equal(u.gather(), ru.values);
  test::expect_bitwise_equal(acc.gather(), want_acc);
  smoothing.apply(Smooth{}, tessera::in(acc), tessera::out(smooth));
  reference::RefField<double, 2> racc{want_acc, bc};
  std::vector<double> want_smooth(want_acc.size());
  reference::apply(domain(grid), 1, Smooth{}, std::make_tuple(&racc),
                   std::make_tuple(&want_smooth));
  test::expect_bitwise_equal(smooth.gather(), want_smooth);
}

// A functor with an interior fast path: CPU workers call interior() exactly at the points at
// least the radius from every non-periodic face (every point along a periodic axis), step by
// step and in temporal blocks, and operator() elsewhere. Each writes its own mark here.
struct Marks {
  TESSERA_HD void operator()(Index<2>, tessera::In<double>, tessera::Out<double> next) const {
    next = 1.0;
  }
  TESSERA_HD void interior(Index<2>, tessera::In<double>, tessera::Out<double> next) const {
    next = 2.0;
  }
};

TEST_P(StencilMatchesReference, InteriorFastPathWhereTheNeighbourhoodIsInside) {
  tessera::Runtime rt(test::options(GetParam()));
  for (const int radius : {1, 2}) {
    // Periodic along y: every row is inside along y; x keeps `radius` columns each side.
    const tessera::Grid<2> grid({17, 12}, {6, 4}, {false, true});
    auto bc = Boundaries<2>::all(Boundary::dirichlet(0.0));
    bc.set(1, 0, Boundary::periodic()).set(1, 1, Boundary::periodic());
    tessera::Field<double, 2> u(grid, 2 * radius, bc, "u"), next(grid, 2 * radius, bc, "next");
    u.fill([](Index<2>) { return 0.0; });
    std::vector<double> want(static_cast<std::size_t>(grid.points()));
    for (std::int64_t y = 0; y < 12; ++y)
      for (std::int64_t x = 0; x < 17; ++x)
        want[static_cast<std::size_t>(x + 17 * y)] = (x >= radius && x < 17 - radius) ? 2.0 : 1.0;
    tessera::Stencil<2> marks("marks", tessera::Shape::Star, radius);
    marks.apply(Marks{}, tessera::in(u), tessera::out(next));
    test::expect_bitwise_equal(next.gather(), want);
    marks.advance(Marks{}, u, next, 3, 2);  // a block of 2 steps, then 1
    test::expect_bitwise_equal(u.gather(), want);
  }
}

// Every row of every tile starts a 64-byte cache line in host memory (the buffer aligned, the
// rows padded and the tile shifted: partition::TileLayout), whatever the element type, the
// ghost width and the tile's width.
template <class T, int D>
void expect_rows_start_a_line(const tessera::Grid<D>& grid, int halo, std::int64_t line) {
  tessera::Field<T, D> u(grid, halo, Boundaries<D>::all(Boundary::dirichlet(0.0)), "u");
  const tessera::detail::FieldStorage& s = u.storage();
  for (int t = 0; t < s.tiles(); ++t) {
    const tessera::detail::TileGeometry g = s.geometry(t);
    const auto start = reinterpret_cast<std::uintptr_t>(s.impl().tile(t).memory);
    for (std::int64_t z = 0; z < g.extent[2]; ++z)
      for (std::int64_t y = 0; y < g.extent[1]; ++y) {
        const std::int64_t at = g.offset0 + y * g.stride_y + z * g.stride_z;
        EXPECT_EQ((start + sizeof(T) * static_cast<std::uintptr_t>(at)) % (line * sizeof(T)), 0u)
            << "tile " << t << ", row " << y << ", plane " << z;
      }
  }
}

TEST(FieldMemory, EveryRowStartsACacheLine) {
  tessera::Runtime rt(test::options({"eager", 2}));
  expect_rows_start_a_line<double, 3>(tessera::Grid<3>({64, 20, 18}, {64, 10, 9}), 4, 8);
  expect_rows_start_a_line<double, 3>(tessera::Grid<3>({37, 11, 6}, {13, 11, 3}), 3, 8);
  expect_rows_start_a_line<float, 2>(tessera::Grid<2>({50, 9}, {25, 3}), 1, 16);
  expect_rows_start_a_line<std::uint8_t, 2>(tessera::Grid<2>({100, 8}, {100, 4}), 10, 64);
}

INSTANTIATE_TEST_SUITE_P(Config, StencilMatchesReference, testing::ValuesIn(test::configs()),
                         test::config_name);

}  // namespace
