// Tiles of different extents and tiles the library chooses under mpirun with 1 to 3 ranks:
// stencil steps and temporal blocks give the serial reference's bits, each rank owning a block
// of uneven tiles.
#include <gmock/gmock.h>

#include "tests/autotile_cases.hpp"
#include "tests/mpi/mpi_main.hpp"

namespace {

tessera::Runtime* runtime = nullptr;  // one for the whole program: MPI starts once per process

TEST(DistributedUnevenTiles, StencilsAndBlocksMatchReference) {
  test::expect_uneven_tilings_match_reference();
}

// The library chooses for every rank's workers: at least a tile per rank, the same on every
// rank (each computes the choice alone).
TEST(DistributedUnevenTiles, AutomaticTilesMatchReference) {
  const tessera::Grid<3> grid({24, 20, 96});
  EXPECT_GE(grid.tiles(), runtime->ranks() * runtime->cpu_workers());
  test::expect_heat3d_advance_matches_reference(grid, 5, tessera::kAutoDepth);
}

// The split moved mid-run, the tiles changing owners: fields unchanged, steps as the reference's.
TEST(DistributedUnevenTiles, RetilingMidRunChangesNoValue) {
  test::expect_retiled_run_matches_reference(1);
  test::expect_retiled_run_matches_reference(tessera::kAutoDepth);
}

// tessera::Balance moving the split mid-run: the same decision and the same bits on every rank.
TEST(DistributedUnevenTiles, BalanceMovesTheSplitMidRunChangingNoValue) {
  test::expect_balanced_run_matches_reference(1);
  test::expect_balanced_run_matches_reference(tessera::kAutoDepth);
}

}  // namespace

int main(int argc, char** argv) { return test::run_mpi_tests(argc, argv, runtime); }
