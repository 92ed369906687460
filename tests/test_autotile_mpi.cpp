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

// Tiles a user gave, with CUDA workers on every rank (TESSERA_EMULATED_CUDA=split: a CPU
// worker of each rank stands in for one; mpi.autotile.emulated_split): the planner places them
// on every rank alike, whole classes (no calibrated models: all on the CUDA workers), and the
// steps give the reference's bits. Skipped without CUDA workers.
TEST(DistributedUnevenTiles, GivenTilesPlacedAlikeOnEveryRank) {
  if (runtime->cuda_workers() == 0) GTEST_SKIP() << "no CUDA workers (nor their stand-ins)";
  const tessera::Grid<3> grid({12, 10, 24}, {12, 10, 4});
  EXPECT_EQ(grid.split_axis(), 2);
  EXPECT_EQ(grid.split(), 24);
  test::expect_heat3d_advance_matches_reference(grid, 5, 1);
}

// Every rank's GPU memory agreed whole (STARPU_LIMIT_CUDA_MEM=40960 for the stand-ins, the
// mpi.autotile.gpu_memory entry): a grid of 77 GB at 24 bytes a point, 38.7 GB a rank's GPU,
// streams alike on every rank, against 0.85 of 40 GiB.
TEST(DistributedGpuMemory, TensOfGigabytesAgreedOnEveryRank) {
  if (runtime->cuda_workers() == 0) GTEST_SKIP() << "no CUDA workers (nor their stand-ins)";
  const tessera::Grid<3> grid({1024, 1024, 3072}, {0, 0, 0});
  EXPECT_GT(grid.stream_depth(), 0) << grid.chosen();
  EXPECT_THAT(grid.chosen(), testing::HasSubstr("against 3.65e+10 it may hold")) << grid.chosen();
}

}  // namespace

int main(int argc, char** argv) { return test::run_mpi_tests(argc, argv, runtime); }
