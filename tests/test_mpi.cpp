// Distributed runs (run under mpirun with 1 to 4 ranks): tiles spread over the ranks give the
// serial reference's bits for every boundary kind, periodic wrap across rank edges included;
// reductions give the same value for any rank count; the face-buffer traffic StarPU-MPI
// performs equals the analytic halo volume of the decomposition.
#include <algorithm>
#include <cstdlib>
#include <memory>

#include <tessera/reduce.hpp>

#include "apps/heat3d/heat3d.hpp"
#include "apps/life/life.hpp"
#include "tests/app_cases.hpp"
#include "tests/boundary_cases.hpp"
#include "tests/mpi/mpi_main.hpp"
#include "tests/reduce_cases.hpp"
#include "tests/stencil_cases.hpp"

namespace {

using tessera::Boundaries;
using tessera::Boundary;
using tessera::Index;

// One Runtime for the whole program: MPI (and StarPU-MPI) start once per process.
tessera::Runtime* runtime = nullptr;

TEST(Distributed, ThreeDimensionalBoundariesMatchReference) {
  {
    SCOPED_TRACE("star r1, distinct Dirichlet faces");
    test::expect_matches_reference<double, 3, 1, false>(tessera::Grid<3>({12, 10, 9}, {4, 5, 3}),
                                                        test::distinct_dirichlet3());
  }
  {
    SCOPED_TRACE("star r1, Neumann, uneven last tiles");
    test::expect_matches_reference<double, 3, 1, false>(tessera::Grid<3>({13, 11, 7}, {5, 4, 3}),
                                                        Boundaries<3>::all(Boundary::neumann()));
  }
  {
    SCOPED_TRACE("box r1, periodic on every axis: wrap across rank edges");
    test::expect_matches_reference<double, 3, 1, true>(
        tessera::Grid<3>({9, 8, 7}, {4, 3, 3}, {true, true, true}), Boundaries<3>{});
  }
  {
    SCOPED_TRACE("box r2, periodic x, Neumann y, Dirichlet z");
    Boundaries<3> bc;
    bc.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
    bc.set(1, 0, Boundary::neumann()).set(1, 1, Boundary::neumann());
    bc.set(2, 0, Boundary::dirichlet(0.25)).set(2, 1, Boundary::dirichlet(4.0));
    test::expect_matches_reference<double, 3, 2, true>(
        tessera::Grid<3>({11, 10, 9}, {4, 5, 3}, {true, false, false}), bc);
  }
}

TEST(Distributed, TwoDimensionalBoundariesAndTypesMatchReference) {
  {
    SCOPED_TRACE("box r2 double, Neumann x, periodic y");
    Boundaries<2> bc;
    bc.set(0, 0, Boundary::neumann()).set(0, 1, Boundary::neumann());
    bc.set(1, 0, Boundary::periodic()).set(1, 1, Boundary::periodic());
    test::expect_matches_reference<double, 2, 2, true>(
        tessera::Grid<2>({17, 12}, {6, 4}, {false, true}), bc);
  }
  {
    SCOPED_TRACE("star r2 int32, Dirichlet and Neumann");
    Boundaries<2> bc = Boundaries<2>::all(Boundary::dirichlet(-3));
    bc.set(0, 1, Boundary::dirichlet(7)).set(1, 0, Boundary::neumann());
    test::expect_matches_reference<std::int32_t, 2, 2, false>(tessera::Grid<2>({15, 14}, {4, 6}),
                                                              bc);
  }
}

TEST(Distributed, BoundaryFunctionsMatchReference) {
  test::expect_function_boundaries_match_reference();
}

TEST(Distributed, ApplicationsMatchReference) {
  {
    SCOPED_TRACE("heat3d");
    test::expect_matches_reference<double, 3, 1, false, apps::Heat3d>(
        tessera::Grid<3>({14, 12, 10}, {7, 4, 5}), apps::heat3d_boundaries(), 4, 1,
        apps::Heat3d{0.1});
  }
  {
    SCOPED_TRACE("life, periodic");
    test::expect_matches_reference<std::uint8_t, 2, 1, true, apps::Life>(
        tessera::Grid<2>({20, 18}, {7, 5}, {true, true}), Boundaries<2>{}, 5, 1, apps::Life{});
  }
  SCOPED_TRACE("jacobi2d, two inputs");
  test::expect_jacobi_matches_reference(tessera::Grid<2>({19, 17}, {6, 5}), 4);
}

// The property under 1 to 4 ranks: 20 random tilings, the exact sum's bits for each.
TEST(Distributed, SumIsTheExactSumForEveryTilingAndRankCount) {
  test::expect_exact_sums_for_random_tilings(20);
}

// Sums are exact, rounded once: the reference's exact sum, whatever the rank count.
TEST(Distributed, ReductionsAreTheSameForAnyRankCount) {
  const tessera::Grid<3> grid({23, 17, 11}, {6, 5, 4});
  tessera::Field<double, 3> u(grid, 1, {}, "u");
  u.fill([](Index<3> p) { return test::noise<3>(p) - 0.3; });
  const std::vector<double> values = test::initial_values<double>(grid);
  std::vector<double> shifted(values.size());
  std::transform(values.begin(), values.end(), shifted.begin(), [](double v) { return v - 0.3; });
  EXPECT_EQ(tessera::sum(u), reference::exact_sum(shifted));
  EXPECT_EQ(tessera::min(u), *std::min_element(shifted.begin(), shifted.end()));
  EXPECT_EQ(tessera::max(u), *std::max_element(shifted.begin(), shifted.end()));
}

// Per step, a star stencil of radius r on doubles moves, across each cut plane between rank
// blocks, one face buffer per tile of the plane in each direction: 2 * (tiles on the plane)
// messages and 2 * r * 8 * (points on the plane) bytes. Interior tasks move nothing.
TEST(Distributed, TrafficPerStepEqualsAnalyticHaloVolume) {
  const std::array<std::int64_t, 3> n{24, 16, 12}, tile{6, 4, 4};
  const tessera::Grid<3> grid({n[0], n[1], n[2]}, {tile[0], tile[1], tile[2]},
                              {true, false, false});
  Boundaries<3> bc = test::distinct_dirichlet3();
  bc.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
  tessera::Field<double, 3> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
  u.fill(test::initial<double, 3>);
  const std::array<int, 3> ranks = u.storage().rank_grid();
  std::int64_t plane_tiles = 0, plane_points = 0;
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    const int cuts = ranks[a] == 1 ? 0 : ranks[a] - (grid.periodic()[a] ? 0 : 1);
    plane_tiles += cuts * (n[b] / tile[b]) * (n[c] / tile[c]);
    plane_points += cuts * n[b] * n[c];
  }
  tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
  const int steps = 3;
  runtime->wait();
  const tessera::Traffic before = runtime->traffic();
  for (int s = 0; s < steps; ++s) {
    heat.apply(apps::Heat3d{0.1}, tessera::in(u), tessera::out(next));
    tessera::swap(u, next);
  }
  runtime->wait();
  const tessera::Traffic after = runtime->traffic();
  EXPECT_EQ((after.messages - before.messages) / steps, 2 * plane_tiles);
  EXPECT_EQ((after.messages - before.messages) % steps, 0);
  EXPECT_EQ(after.bytes - before.bytes, steps * 2 * 1 * 8 * plane_points);
  if (after.sent_bytes >= 0) {  // StarPU-MPI's own count (STARPU_COMM_STATS=1)
    EXPECT_EQ(after.sent_bytes - before.sent_bytes, steps * 2 * 1 * 8 * plane_points);
  }
}

// Temporal blocking across ranks: the reference's bits, and with 4 steps per exchange a quarter
// of the exchanges, each 4 layers deep; with 3 (blocks of 3, 3 and 2 steps, the first two
// ending in next, whose faces their tasks pack) 3 exchanges in 8 steps. Tiles cut x only, so
// each tile's only neighbours are across x faces and a box-shaped exchange sends as many
// buffers as a star-shaped one: a quarter (3 eighths) of the messages. (Where tiles also meet
// along edges and corners, a box exchange sends more buffers per round, and blocking saves
// rounds rather than messages.)
TEST(Distributed, TemporalBlockingMatchesReferenceWithFewerMessages) {
  const tessera::Grid<3> grid({24, 8, 6}, {6, 8, 6});
  const Boundaries<3> bc = test::distinct_dirichlet3();
  std::int64_t messages[5] = {0, 0, 0, 0, 0};  // by depth
  for (int depth : {1, 3, 4}) {
    tessera::Field<double, 3> u(grid, 4, bc, "u"), next(grid, 4, bc, "next");
    u.fill(test::initial<double, 3>);
    tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
    runtime->wait();
    const tessera::Traffic before = runtime->traffic();
    heat.advance(apps::Heat3d{0.1}, u, next, 8, depth);
    runtime->wait();
    messages[depth] = runtime->traffic().messages - before.messages;
    reference::RefField<double, 3> ref{test::initial_values<double>(grid), bc};
    for (int s = 0; s < 8; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(test::domain(grid), 1, apps::Heat3d{0.1}, std::make_tuple(&ref),
                       std::make_tuple(&out));
      ref.values = out;
    }
    test::expect_bitwise_equal(u.gather(), ref.values);
  }
  if (runtime->ranks() > 1) {
    EXPECT_GT(messages[1], 0);
    EXPECT_EQ(messages[4] * 4, messages[1]);
    EXPECT_EQ(messages[3] * 8, messages[1] * 3);
  }
  if (runtime->rank() == 0)
    std::printf("halo messages over 8 steps: %lld step by step, %lld with 4 steps per exchange\n",
                static_cast<long long>(messages[1]), static_cast<long long>(messages[4]));
}

// With more than one rank, some tiles have a remote neighbour and some do not (with the
// default rank grid and this tiling), so both priorities occur.
TEST(Distributed, OnlyTilesAtRankEdgesAreRankEdgeTiles) {
  const tessera::Grid<2> grid({40, 40}, {5, 5});
  tessera::Field<float, 2> u(grid, 1, {}, "u");
  int edge = 0;
  for (int t = 0; t < u.storage().tiles(); ++t) edge += u.storage().on_rank_edge(t) ? 1 : 0;
  if (runtime->ranks() == 1) {
    EXPECT_EQ(edge, 0);
  } else {
    EXPECT_GT(edge, 0);
    EXPECT_LT(edge, u.storage().tiles());
  }
}

// Temporal blocks with mirror faces (Neumann, NeumannVertex) across ranks: each block refreshes
// its tiles' mirror ghosts after every step; the reference's bits for every depth.
TEST(Distributed, TemporalBlockingWithMirrorFacesMatchesReference) {
  const tessera::Grid<3> grid({24, 12, 8}, {6, 6, 8});
  Boundaries<3> bc = Boundaries<3>::all(Boundary::neumann());
  bc.set(0, 1, Boundary::neumann_vertex())
      .set(1, 0, Boundary::neumann_vertex())
      .set(2, 1, Boundary::dirichlet(1.5));
  for (int depth : {1, 2, 3, 4}) {
    tessera::Field<double, 3> u(grid, 4, bc, "u"), next(grid, 4, bc, "next");
    u.fill(test::initial<double, 3>);
    tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
    heat.advance(apps::Heat3d{0.1}, u, next, 7, depth);
    reference::RefField<double, 3> ref{test::initial_values<double>(grid), bc};
    for (int s = 0; s < 7; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(test::domain(grid), 1, apps::Heat3d{0.1}, std::make_tuple(&ref),
                       std::make_tuple(&out));
      ref.values = out;
    }
    test::expect_bitwise_equal(u.gather(), ref.values);
  }
}

// Cardiac on tiles spread over the ranks: the reference's bits, step by step and in temporal
// blocks (e and r, updated in place, exchanged once per block across the ranks); and per step
// only e crosses ranks (the recovery variable r, read at the point only, is not exchanged
// step by step): one face buffer per tile of each cut plane in each direction, as for a lone
// radius-1 stencil on e.
TEST(Distributed, CardiacMatchesReferenceAndOnlyECrossesRanks) {
  test::expect_cardiac_matches_reference<2>(tessera::Grid<2>({128, 24}, {32, 6}), 10, true);
  test::expect_cardiac_matches_reference<3>(tessera::Grid<3>({128, 8, 6}, {32, 4, 3}), 5, true);
  test::expect_cardiac_matches_reference<2>(tessera::Grid<2>({128, 48}, {32, 12}), 10, true, 3);
  test::expect_cardiac_matches_reference<3>(tessera::Grid<3>({96, 16, 16}, {32, 8, 8}), 7, true, 4);
  const std::array<std::int64_t, 3> n{128, 8, 8}, tile{32, 4, 4};
  const tessera::Grid<3> grid({n[0], n[1], n[2]}, {tile[0], tile[1], tile[2]});
  apps::Cardiac<3> model(grid, 1);
  const std::array<int, 3> ranks = model.e.storage().rank_grid();
  std::int64_t plane_tiles = 0, plane_points = 0;
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    plane_tiles += (ranks[a] - 1) * (n[b] / tile[b]) * (n[c] / tile[c]);
    plane_points += (ranks[a] - 1) * n[b] * n[c];
  }
  const int steps = 3;
  runtime->wait();
  const tessera::Traffic before = runtime->traffic();
  model.advance(steps);
  runtime->wait();
  const tessera::Traffic after = runtime->traffic();
  EXPECT_EQ(after.messages - before.messages, steps * 2 * plane_tiles);
  EXPECT_EQ(after.bytes - before.bytes, steps * 2 * 8 * plane_points);
  if (runtime->ranks() > 1) EXPECT_GT(plane_tiles, 0);
}

TEST(Distributed, CloudsimMatchesReference) {
  test::expect_cloudsim_matches_reference(tessera::Grid<2>({40, 36}, {10, 9}), 8, 0.001f);
}

}  // namespace

int main(int argc, char** argv) { return test::run_mpi_tests(argc, argv, runtime); }
