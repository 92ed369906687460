// User tasks, all-pairs interactions and the applications built on them, under mpirun with 1 to
// 4 ranks: a transpose whose tasks read tiles of other ranks, and nbody, give the serial
// reference's bits; a task writing tiles of two ranks is refused on every rank.
#include <gmock/gmock.h>

#include <cmath>
#include <memory>

#include <tessera/pairs.hpp>
#include <tessera/task.hpp>

#include "tests/mpi/mpi_main.hpp"
#include "tests/reference/nbody.hpp"
#include "tests/tile_cases.hpp"

namespace {

using tessera::Index;
using tessera::TileView;

tessera::Runtime* runtime = nullptr;  // one for the whole program: MPI starts once per process

TEST(DistributedTiles, TransposeReadsTilesOfOtherRanks) {
  test::expect_transpose_matches_reference(8, 6, 12, 3, 2);
}

struct Copy2 {
  void cpu(TileView<const double, 2>, TileView<double, 2>, TileView<double, 2>) const {}
};

TEST(DistributedTiles, TaskWritingTilesOfTwoRanksIsRefused) {
  tessera::Grid<2> grid({8, 8}, {2, 8});
  tessera::Field<double, 2> u(grid, 0, {}, "u");
  int other = -1;
  for (int t = 1; t < grid.tiles(); ++t)
    if (tessera::tile_of(u, t).owner != tessera::tile_of(u, 0).owner) other = t;
  if (other < 0) GTEST_SKIP() << "one rank: every tile has one owner";
  try {
    tessera::Task("copy2").submit(Copy2{}, tessera::read_tile(u, 1), tessera::write_tile(u, 0),
                                  tessera::write_tile(u, other));
    ADD_FAILURE() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("a task runs on the rank that owns what it writes"));
  }
}

TEST(DistributedTiles, NBodyMatchesSerialReference) {
  const std::int64_t n = 80;
  const apps::Bodies start = apps::plummer(n, 3);
  apps::NBodyParams p;
  const reference::NBodyState want = reference::nbody(start, 3, p.dt, p.eps);
  apps::NBody sim(n, 16, start, p);
  for (int s = 0; s < 3; ++s) sim.step();
  test::expect_bitwise_equal(sim.x.gather(), want.b.x);
  test::expect_bitwise_equal(sim.vz.gather(), want.b.vz);
  const auto e = sim.energies().get();
  const auto r = reference::nbody_energies(want.b, p.eps);
  EXPECT_EQ(e[0], r[0]);
  EXPECT_EQ(e[1], r[1]);
}

TEST(DistributedTiles, MgClassSMatchesReferenceAndVerifies) {
  // Every level's field needs a tile per rank: the coarsest (2^3 points) has 2 z-tiles.
  if (runtime->ranks() > 2) GTEST_SKIP() << "the coarsest MG level has 2 tiles";
  // Levels' tiles on different ranks: operators cross ranks. Coarse levels as few tiles as
  // there are ranks (the default), or halved with the top's.
  test::expect_mg_class_s_verified(4, apps::Mg::kMinTilePoints, runtime->ranks());
  test::expect_mg_class_s_verified(4, 1, runtime->ranks());
}

}  // namespace

int main(int argc, char** argv) { return test::run_mpi_tests(argc, argv, runtime); }
