// Tiles of different extents along an axis, and tiles the library chooses: the geometry
// (partition/), the chooser on measured and modelled machines, and stencil steps on such grids
// bitwise against the serial reference for every scheduler and worker count.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "partition/autotile.hpp"
#include "partition/gpu_memory.hpp"
#include "partition/plan.hpp"
#include "partition/planner.hpp"
#include "partition/tiling.hpp"
#include "tests/autotile_cases.hpp"

namespace {

using tessera::partition::choose_tiles;
using tessera::partition::Cuts;
using tessera::partition::Machine;
using tessera::partition::TileChoice;
using tessera::partition::Tiling;
using testing::HasSubstr;
using testing::Not;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tessera::Error& e) { return e.what(); }
  return "(no error)";
}

// An axis cut at its own positions: origins, extents, numbering, neighbours, lookups.
TEST(UnevenTiling, LatticeOfCutPositions) {
  const Tiling t({10, 6, 20}, {std::vector<std::int64_t>{0, 7}, {0}, {0, 12, 16, 18}},
                 {false, false, true});
  ASSERT_EQ(t.size(), 8);
  EXPECT_EQ(t.tiles_per_axis(), (std::array<int, 3>{2, 1, 4}));
  EXPECT_EQ(t.tile(1).origin, (tessera::detail::Extent3{7, 0, 0}));
  EXPECT_EQ(t.tile(1).extent, (tessera::detail::Extent3{3, 6, 12}));
  EXPECT_EQ(t.tile(6).origin, (tessera::detail::Extent3{0, 0, 18}));
  EXPECT_EQ(t.tile(6).extent, (tessera::detail::Extent3{7, 6, 2}));
  EXPECT_EQ(t.thinnest(0), 3);
  EXPECT_EQ(t.thinnest(2), 2);
  EXPECT_EQ(t.tile_at({6, 5, 15}), 2);
  EXPECT_EQ(t.tile_at({7, 0, 19}), 7);
  EXPECT_EQ(t.neighbour(0, {0, 0, -1}), 6);  // periodic z wraps to the thin last slab
  EXPECT_EQ(t.neighbour(1, {1, 0, 0}), -1);
  // The uniform lattice as cut positions: the same tiles as the tile extent gives.
  const Tiling u({10, 6, 20}, {5, 6, 7}, {false, false, false});
  const Tiling c({10, 6, 20}, {std::vector<std::int64_t>{0, 5}, {0}, {0, 7, 14}},
                 {false, false, false});
  ASSERT_EQ(u.size(), c.size());
  for (int id = 0; id < u.size(); ++id) {
    EXPECT_EQ(u.tile(id).origin, c.tile(id).origin);
    EXPECT_EQ(u.tile(id).extent, c.tile(id).extent);
  }
}

TEST(UnevenTiling, CutListsAreChecked) {
  using tessera::partition::cuts_error;
  using tessera::partition::uniform_tile_of;
  EXPECT_EQ(cuts_error(10, {3, 7}), "");
  EXPECT_THAT(cuts_error(10, {3, 3}), HasSubstr("does not follow"));
  EXPECT_THAT(cuts_error(10, {0}), HasSubstr("does not follow"));
  EXPECT_THAT(cuts_error(10, {4, 10}), HasSubstr("not inside the extent of 10"));
  EXPECT_EQ(uniform_tile_of(10, {4, 8}), 4);
  EXPECT_EQ(uniform_tile_of(10, {}), 10);
  EXPECT_EQ(uniform_tile_of(10, {4, 7}), 0);
  EXPECT_EQ(uniform_tile_of(10, {3}), 0);  // a last tile of 7 is not at most 3
  EXPECT_EQ(tessera::partition::even_cuts(10, 3), (Cuts{4, 7}));
  EXPECT_EQ(tessera::partition::even_cuts(10, 1), Cuts{});
}

// A cut list that is a uniform lattice makes the same Grid as the tile extent; others keep
// their positions; bad lists are refused with the rule.
TEST(UnevenTiling, GridOfCuts) {
  using G = tessera::Grid<3>;
  EXPECT_EQ(G::cut({16, 8, 20}, {{{8}, {}, {6, 12, 18}}}), G({16, 8, 20}, {8, 8, 6}));
  const G g = G::cut({16, 8, 20}, {{{}, {}, {9, 18, 19}}});
  EXPECT_EQ(g.tiles(), 4);
  EXPECT_EQ(g.tile()[2], 9);
  EXPECT_EQ(g.cuts()[2], (std::vector<std::int64_t>{9, 18, 19}));
  EXPECT_EQ(g.describe(), "16x8x20 in tiles of 16x8x(9 9 1 1)");
  EXPECT_NE(g, G({16, 8, 20}, {16, 8, 9}));
  EXPECT_THAT(error_of([] {
                G::cut({16, 8, 20}, {{{}, {9}, {}}});
              }),
              AllOf(HasSubstr("tile cuts along y: cut 0 at 9 is not inside the extent of 8"),
                    HasSubstr("increasing")));
  EXPECT_THAT(error_of([] { G({16, 8, 20}, {16, -1, 4}); }), HasSubstr("must be positive"));
  EXPECT_EQ(G::cut({16, 8, 20}, {{{}, {}, {9, 18, 19}}}, {}, 2, 18).split(), 18);
  EXPECT_THAT(error_of([] {
                G::cut({16, 8, 20}, {{{}, {}, {9, 18, 19}}}, {}, 2, 10);
              }),
              HasSubstr("split at 10 along axis 2 is not where a tile starts"));
  EXPECT_THAT(error_of([] { G({16, 8, 20}); }), HasSubstr("needs a live tessera::Runtime"));
}

// The chooser on CPU workers: enough tiles for every worker, none thinner than the minimum,
// the slowest axis cut first, fixed axes kept, a tiny grid left whole.
TEST(TileChooser, CpuWorkers) {
  Machine m;
  m.cpu_workers = 2;
  for (const tessera::detail::Extent3& e :
       {tessera::detail::Extent3{64, 64, 64}, tessera::detail::Extent3{256, 256, 256},
        tessera::detail::Extent3{4096, 4096, 1}}) {
    const int dims = e[2] == 1 ? 2 : 3;
    const TileChoice c = choose_tiles(e, dims, {0, 0, 0}, m);
    SCOPED_TRACE(c.summary);
    EXPECT_GE(c.cpu_tiles, 2);
    EXPECT_EQ(c.cpu_tiles % 2, 0);           // whole rounds of the workers
    EXPECT_FALSE(c.cuts[dims - 1].empty());  // the slowest axis is cut
    EXPECT_TRUE(c.cuts[0].empty());          // rows stay whole
    for (int a = 0; a < dims; ++a)
      if (!c.cuts[a].empty())
        EXPECT_GE(tessera::partition::thinnest_tile(e[a], 0, c.cuts[a]),
                  tessera::partition::kMinThickness);
    EXPECT_EQ(c.split_axis, -1);
  }
  EXPECT_EQ(choose_tiles({12, 12, 12}, 3, {0, 0, 0}, m).cpu_tiles, 1);  // thinner than the minimum
  m.cpu_workers = 16;
  const TileChoice many = choose_tiles({256, 256, 256}, 3, {0, 0, 0}, m);
  EXPECT_GE(many.cpu_tiles, 16);
  EXPECT_EQ(many.cpu_tiles % 16, 0);
  // z fixed in tiles of 64: the chooser cuts y, not z.
  const TileChoice fixed = choose_tiles({256, 256, 256}, 3, {0, 0, 64}, m);
  EXPECT_EQ(fixed.cuts[2], (Cuts{64, 128, 192}));
  EXPECT_FALSE(fixed.cuts[1].empty());
}

// A mesh's tile count: whole rounds of the workers, tiles of at least kMinMeshTile elements
// (Airfoil's 45,000 cells on 2 workers: one tile each; 720,000: four each), never more tiles
// than elements nor fewer than ranks.
TEST(TileChooser, MeshTiles) {
  using tessera::partition::choose_mesh_tiles;
  EXPECT_EQ(choose_mesh_tiles(45000, 2, 1), 2);
  EXPECT_EQ(choose_mesh_tiles(720000, 2, 1), 8);
  EXPECT_EQ(choose_mesh_tiles(3 * 2 * tessera::partition::kMinMeshTile, 2, 1), 6);
  EXPECT_EQ(choose_mesh_tiles(100000000, 16, 1), 16 * tessera::partition::kMostMeshRounds);
  EXPECT_EQ(choose_mesh_tiles(3, 8, 1), 3);  // no empty tiles
  EXPECT_EQ(choose_mesh_tiles(450, 0, 1), 1);
  EXPECT_EQ(choose_mesh_tiles(450, 2, 4), 4);  // at least one tile per rank
}

// The split on modelled CPU+GPU nodes: a GPU part of few large tiles and a CPU part of many
// smaller ones along z, whose predicted step times meet.
TEST(TileChooser, GpuAndCpuParts) {
  Machine m;
  m.cpu_workers = 14;
  m.cuda_workers = 1;
  m.cpu_point_seconds = 4e-9;
  m.gpu_point_seconds = 1e-10;  // 40 times a core
  const TileChoice c = choose_tiles({512, 512, 512}, 3, {0, 0, 0}, m);
  SCOPED_TRACE(c.summary);
  ASSERT_EQ(c.split_axis, 2);
  // More than the GPU's share of the speed, 40 / (40 + 14) of the planes (379 of 512): the CPU
  // part also pays for its ghost layers, its tasks and its imbalance.
  EXPECT_GT(c.split, 379);
  EXPECT_LT(c.split, 512);
  // One GPU slab, cut across as the CPU part is (a lattice): one GPU tile per CPU tile across.
  EXPECT_LE(c.gpu_tiles, c.cpu_tiles);
  EXPECT_GE(c.cpu_tiles, 14);
  EXPECT_EQ(c.cpu_tiles % 14, 0);
  // The GPU part's tiles are thicker than the CPU part's along z.
  const Cuts& z = c.cuts[2];
  ASSERT_FALSE(z.empty());
  EXPECT_EQ(std::count(z.begin(), z.end(), c.split), 1);
  const std::int64_t gpu_thin = tessera::partition::thinnest_tile(
      c.split, c.split, Cuts(z.begin(), std::find(z.begin(), z.end(), c.split)));
  // The CPU part's tiles along z: from the split to the end, at the cuts above the split (often
  // none: the CPU part is then cut across only).
  std::int64_t cpu_thin = 512 - z.back(), start = c.split;
  for (auto cut = std::upper_bound(z.begin(), z.end(), c.split); cut != z.end(); ++cut) {
    cpu_thin = std::min(cpu_thin, *cut - start);
    start = *cut;
  }
  EXPECT_GT(gpu_thin, cpu_thin);
  // Within 30 % of a perfect split of the points by speed.
  EXPECT_GT(c.step_seconds, 0);
  EXPECT_LT(c.step_seconds, 1.3 * 512.0 * 512 * 512 / (14 / 4e-9 + 1 / 1e-10));
  // A GPU far faster than the cores: GPU-only, one slab.
  m.gpu_point_seconds = 1e-13;
  const TileChoice gpu = choose_tiles({128, 128, 128}, 3, {0, 0, 0}, m);
  EXPECT_EQ(gpu.split, 128);
  EXPECT_EQ(gpu.cpu_tiles, 0);
  EXPECT_EQ(gpu.gpu_tiles, 1);
  // Two GPUs, 2-D: y is split.
  m.cuda_workers = 2;
  m.gpu_point_seconds = 1e-10;
  const TileChoice two = choose_tiles({4096, 4096, 1}, 2, {0, 0, 0}, m);
  EXPECT_EQ(two.split_axis, 1);
  EXPECT_GE(two.gpu_tiles, 2);
}

// The measured H100 node's workers (15 CPU, 1 CUDA) at given per-point times.
Machine h100_node(double cpu_point_seconds, double gpu_point_seconds) {
  Machine m;
  m.cpu_workers = 15;
  m.cuda_workers = 1;
  m.cpu_point_seconds = cpu_point_seconds;
  m.gpu_point_seconds = gpu_point_seconds;
  return m;
}

// What a split adds to every step (Machine::split_seconds) keeps a thin CPU part out when the
// GPU step is short: jacobi2d 8192^2 with the speeds measured on an H100 node (a GPU point
// 7.2 ps, a core's 570 ps, 15 cores). Without that cost the chooser split it; on the node the
// split was 1.15 times slower than the GPU alone.
TEST(Planner, AutomaticTilesPayTheSplitsFixedCost) {
  Machine m = h100_node(5.7e-10, 7.2e-12);
  const TileChoice c = choose_tiles({8192, 8192, 1}, 2, {0, 0, 0}, m);
  SCOPED_TRACE(c.summary);
  EXPECT_EQ(c.split, 8192);
  EXPECT_THAT(c.summary, HasSubstr("predicted step: GPU-only "));
  EXPECT_THAT(c.summary, HasSubstr(", CPU-only "));
  m.split_seconds = 1e-9;  // a free split: the CPU part gains a little
  const TileChoice free = choose_tiles({8192, 8192, 1}, 2, {0, 0, 0}, m);
  SCOPED_TRACE(free.summary);
  EXPECT_LT(free.split, 8192);
  EXPECT_GT(free.split, 6500);
}

// The planner's choice for tiles a user gave (partition::place_lattice), with known answers.
TEST(Planner, UserTilesOnTheFasterDevice) {
  using tessera::partition::place_lattice;
  // heat3d 512^3 in tiles of 512x512x32 (16 slabs), a GPU 298 times a core (the node's
  // models): a GPU slab takes 70 us and a task's 15, a CPU slab 21 ms. Every tile on the GPU.
  Machine m = h100_node(2.5e-9, 2.5e-9 / 298);
  std::array<Cuts, 3> slabs;
  for (std::int64_t z = 32; z < 512; z += 32) slabs[2].push_back(z);
  auto p = place_lattice({512, 512, 512}, 3, slabs, m, true);
  SCOPED_TRACE(p.summary);
  EXPECT_EQ(p.split_axis, 2);
  EXPECT_EQ(p.split, 512);
  EXPECT_NEAR(p.gpu_only_seconds, 16 * (512.0 * 512 * 32 * 2.5e-9 / 298 + 15e-6), 1e-9);
  EXPECT_NEAR(p.cpu_only_seconds, 2 * (512.0 * 512 * 32 * 2.5e-9 + 15e-6), 1e-9);
  EXPECT_THAT(p.summary, HasSubstr("every tile on the CUDA workers (predicted step: GPU-only"));
  // Uncalibrated: the GPU takes every tile, and the line says how to let the planner weigh more.
  p = place_lattice({512, 512, 512}, 3, slabs, m, false);
  EXPECT_EQ(p.split, 512);
  EXPECT_THAT(p.summary, HasSubstr("calibrate"));
  // No CPU workers: no CPU part to weigh.
  m.cpu_workers = 0;
  p = place_lattice({512, 512, 512}, 3, slabs, m, true);
  EXPECT_EQ(p.split, 512);
  EXPECT_EQ(p.cpu_only_seconds, -1);
  EXPECT_EQ(p.split_seconds, -1);
}

// nbody's all-pairs work on an H100 node (a body 3.2 us on the GPU, 94 us on a core, so the 15
// cores give half the GPU's rate) in 64 tiles of 256 bodies: 49 tiles on the GPU (41 ms), 15
// on the cores (one round, 24 ms), plus the split's 0.3 ms, against 53 ms on the GPU alone:
// 0.84 of the two devices' summed rate (34.7 ms) where whole tiles allow.
TEST(Planner, UserTilesSplitWhereTheCoresAddThroughput) {
  const Machine m = h100_node(9.4e-5, 3.2e-6);
  std::array<Cuts, 3> tiles;
  for (std::int64_t x = 256; x < 16384; x += 256) tiles[0].push_back(x);
  const auto p = tessera::partition::place_lattice({16384, 1, 1}, 2, tiles, m, true);
  SCOPED_TRACE(p.summary);
  EXPECT_EQ(p.split_axis, 0);
  EXPECT_EQ(p.split, 49 * 256);
  EXPECT_NEAR(p.split_seconds, 49 * (256 * 3.2e-6 + 15e-6) + tessera::partition::kSplitSeconds,
              1e-9);
  EXPECT_NEAR(p.gpu_only_seconds, 64 * (256 * 3.2e-6 + 15e-6), 1e-9);
  EXPECT_THAT(p.summary, HasSubstr("tiles below x 12544 on the CUDA workers"));
  // 16 tiles of 1024: one CPU tile (96 ms) outlasts the whole GPU step (53 ms): GPU only.
  std::array<Cuts, 3> coarse;
  for (std::int64_t x = 1024; x < 16384; x += 1024) coarse[0].push_back(x);
  EXPECT_EQ(tessera::partition::place_lattice({16384, 1, 1}, 2, coarse, m, true).split, 16384);
}

// The one planner of a run (partition::Planner) with known answers: what it places with and
// without CUDA workers, a hand-set share for tiles it did not cut (the tile start nearest the
// share, as for the tiles it cuts), a mesh's tiles, and when a split may move.
TEST(Planner, OwnsEveryPlacementRule) {
  using tessera::partition::DeviceClass;
  using tessera::partition::Planner;
  std::array<Cuts, 3> slabs;  // 20 planes in slabs of 4
  for (std::int64_t z = 4; z < 20; z += 4) slabs[2].push_back(z);

  const Planner none;  // no CUDA workers: nothing placed, nothing moved
  EXPECT_FALSE(none.places());
  EXPECT_EQ(none.given({8, 8, 20}, 3, slabs).split_axis, -1);
  EXPECT_EQ(none.mesh_class(0, 4), DeviceClass::Any);
  EXPECT_EQ(none.rebalancing_off(), "this run has no CUDA workers");
  std::string why;
  EXPECT_EQ(none.mesh_workers(&why), 1);
  EXPECT_EQ(why, "");

  Machine m = h100_node(2.5e-9, 2.5e-9 / 20);
  m.gpu_share = 0.7;  // 14 of 20 planes: the nearest tile start is 12 (16 is further)
  const Planner hand(m, true);
  const auto p = hand.given({8, 8, 20}, 3, slabs);
  EXPECT_EQ(p.split_axis, 2);
  EXPECT_EQ(p.split, 12);
  EXPECT_THAT(p.summary, HasSubstr("hand-set GPU share 0.7: tiles below z 12 of 20"));
  EXPECT_EQ(hand.mesh_class(2, 4), DeviceClass::Cuda);  // round(0.7 x 4) = 3 tiles
  EXPECT_EQ(hand.mesh_class(3, 4), DeviceClass::Cpu);
  EXPECT_EQ(hand.rebalancing_off(), "--gpu-fraction fixes the split");
  const auto fixed = hand.rebalance({8, 8, 20}, 3, 2, 12, 1e-3, 4e-3, 0.05, 1000, 0, 2);
  EXPECT_FALSE(fixed.move);
  EXPECT_THAT(fixed.why, HasSubstr("--gpu-fraction fixes the split"));
  m.gpu_share = 1;  // every tile, and a share of 0 none
  EXPECT_EQ(Planner(m, true).given({8, 8, 20}, 3, slabs).split, 20);
  m.gpu_share = 0;
  EXPECT_EQ(Planner(m, true).given({8, 8, 20}, 3, slabs).split, 0);

  m.gpu_share = -1;  // the planner's own choice: the same as place_lattice's
  const Planner own(m, true);
  EXPECT_EQ(own.given({8, 8, 20}, 3, slabs).split,
            tessera::partition::place_lattice({8, 8, 20}, 3, slabs, m, true).split);
  EXPECT_EQ(own.mesh_class(3, 4), DeviceClass::Cuda);
  EXPECT_EQ(own.mesh_workers(&why), 1);  // a mesh's tiles counted for the GPU that takes them
  EXPECT_THAT(why, HasSubstr("every tile on the CUDA workers"));
  EXPECT_EQ(hand.mesh_workers(&why), 16);
  EXPECT_EQ(own.rebalancing_off(), "");
  // A measured CPU part 4 times the GPU's: the split moves (plan_rebalance's rule).
  EXPECT_TRUE(own.rebalance({8, 8, 200}, 3, 2, 100, 1e-3, 4e-3, 0.05, 1000, 0, 2).move);
}

// The tiles a user gave that the planner puts on the CUDA workers are merged: every tile there,
// into the library's GPU-only tiles (Planner::recut_for_gpus), with a CPU part one slab per
// CUDA worker (Planner::merge_gpu_part), with known answers: heat3d 512^3 in 16 slabs of 32
// (on the H100 node 0.65 of copy bandwidth against 0.88 in one tile) on one and two CUDA
// workers, a hand-set split (the CPU part and the other axes' cuts stay), and nothing merged
// for cut positions (Grid::cut), on several ranks, for a CPU-only placement, or where each
// CUDA worker has one tile.
TEST(Planner, MergesTheTilesOfEachCudaWorker) {
  using tessera::partition::Planner;
  Machine m = h100_node(2.5e-9, 2.5e-9 / 298);
  std::array<Cuts, 3> slabs;
  for (std::int64_t z = 32; z < 512; z += 32) slabs[2].push_back(z);
  auto p = Planner(m, true).given({512, 512, 512}, 3, slabs);
  SCOPED_TRACE(p.summary);
  EXPECT_EQ(p.split, 512);
  EXPECT_TRUE(p.merged);
  EXPECT_TRUE(p.cuts[0].empty() && p.cuts[1].empty() && p.cuts[2].empty());
  // Its own predicted step, one 512^3 tile: 1.34e8 points at 8.4 ps and a task's 15 us.
  EXPECT_THAT(p.summary, HasSubstr("; the 16 tiles on the CUDA workers merged into 1, its "
                                   "predicted step 1.14 ms ("));
  p = Planner(m, true).given({512, 512, 512}, 3, slabs, false);  // cut positions: kept
  EXPECT_EQ(p.split, 512);
  EXPECT_FALSE(p.merged);
  EXPECT_EQ(p.cuts, slabs);
  std::array<Cuts, 3> columns = slabs;  // y cut too: 32 tiles, every axis's cuts go
  columns[1] = {256};
  p = Planner(m, true).given({512, 512, 512}, 3, columns);
  EXPECT_TRUE(p.cuts[1].empty() && p.cuts[2].empty());
  EXPECT_THAT(p.summary,
              HasSubstr("the 32 tiles on the CUDA workers merged into 1, its predicted"));
  // On two: the library's GPU-only tiles (Planner::recut_for_gpus), a slab each, their edges of
  // 16 planes cut off (their faces cross while the rest computes).
  m.cuda_workers = 2;
  p = Planner(m, true).given({512, 512, 512}, 3, slabs);
  EXPECT_EQ(p.cuts[2], Cuts({240, 256, 272}));
  EXPECT_EQ(p.cuts, tessera::partition::gpu_tiles({512, 512, 512}, 3, m).cuts);
  EXPECT_THAT(p.summary, HasSubstr("merged into 4, its predicted step 621 us"));
  m.cuda_workers = 1;
  // The GPU's memory bounds a slab (plan_gpu_memory): 512^3 points at 24 bytes are 3.2 GB,
  // within 0.85 of an H100's 80 GB or of a 4 GB GPU (one slab, resident); on a 2 GB GPU
  // (1.7 GB usable for the slab computed, 24 bytes a point, and the one leaving, 16: about 162
  // planes of 10.5 MB, less the faces and ghost planes of the depth, and each plane held with its
  // ghost points across, 544^2 at depth 16) the 16 given slabs merge into 6 that stream through
  // it, 16 steps a visit (no compute speed: the bus alone prices the depth); on a 700 MB GPU
  // streaming needs more slabs than the 16 given: kept.
  m.gpus = {{80e9, 0}};
  EXPECT_TRUE(Planner(m, true).given({512, 512, 512}, 3, slabs).cuts[2].empty());
  m.gpus = {{4e9, 0}};
  EXPECT_TRUE(Planner(m, true).given({512, 512, 512}, 3, slabs).cuts[2].empty());
  m.gpus = {{2e9, 0}};
  p = Planner(m, true).given({512, 512, 512}, 3, slabs);
  EXPECT_EQ(p.cuts[2].size(), 5u);
  EXPECT_EQ(p.stream_depth, 16);
  EXPECT_THAT(p.summary, HasSubstr("merged into 6, its predicted step 6.25 ms"));
  EXPECT_THAT(p.summary, HasSubstr("streamed: 3.22e+09 bytes a GPU's share against 1.7e+09 it "
                                   "may hold; 6 slabs, 16 steps a visit"));
  // On a 700 MB GPU streaming needs thinner slabs than the 16 given (about 595 MB usable: at
  // most about 595e6 / (544^2 x (24 + 16)) = 50 planes a slab with the one leaving, less the
  // ghost planes and faces): the given tiles are cut into the slabs that stream, not kept for
  // StarPU to fetch and evict task by task.
  m.gpus = {{0.7e9, 0}};
  p = Planner(m, true).given({512, 512, 512}, 3, slabs);
  EXPECT_TRUE(p.merged);
  EXPECT_GT(p.stream_depth, 0);
  EXPECT_GT(p.cuts[2].size(), slabs[2].size());
  EXPECT_LE(512 / (p.cuts[2].size() + 1), 50u);
  EXPECT_THAT(p.summary, HasSubstr("the 16 tiles on the CUDA workers cut into "));
  EXPECT_THAT(p.summary, HasSubstr("streamed: "));
  m.gpus.clear();

  m.cuda_workers = 1;
  m.gpu_share = 0.5;  // 10 of 20 planes: the tile starts 8 and 12 are as near; the first wins
  std::array<Cuts, 3> small;
  small[1] = {4};
  for (std::int64_t z = 4; z < 20; z += 4) small[2].push_back(z);
  p = Planner(m, true).given({8, 8, 20}, 3, small);
  EXPECT_EQ(p.split, 8);
  EXPECT_EQ(p.cuts[1], Cuts({4}));
  EXPECT_EQ(p.cuts[2], Cuts({8, 12, 16}));
  EXPECT_THAT(p.summary, HasSubstr("the 4 tiles on the CUDA workers merged into 2, its predicted"));
  m.gpu_share = 0;  // every tile on the CPU workers: nothing to merge
  p = Planner(m, true).given({8, 8, 20}, 3, small);
  EXPECT_FALSE(p.merged);
  EXPECT_EQ(p.cuts, small);

  m.gpu_share = -1;
  m.ranks = 2;  // several ranks: a grid's tiles are distributed over them as given
  p = Planner(m, true).given({512, 512, 512}, 3, slabs);
  EXPECT_EQ(p.split, 512);
  EXPECT_FALSE(p.merged);
  EXPECT_EQ(p.cuts, slabs);
  m.ranks = 1;
  std::array<Cuts, 3> one;  // one tile: nothing to merge
  EXPECT_FALSE(Planner(m, true).given({512, 512, 512}, 3, one).merged);
}

// All-pairs work (nbody's 16384 bodies) on the H100 node: an interaction 5.39 ns on a core
// (1024^2 in 5.65 ms), 0.176 ns on the GPU (1024^2 in 184 us). GPU-only 47 ms a step, CPU-only
// (15 cores) 96 ms; the two devices' summed rate would take 31.6 ms. The planner cuts the GPU
// part in one tile and the CPU part in 15 thin ones whose chains keep pace: within 0.85 of
// the summed rate, which no uniform tiling reaches (UserTilesSplitWhereTheCoresAddThroughput).
TEST(Planner, AllPairsWorkSplitsNearTheSummedRate) {
  using tessera::partition::Planner;
  Machine m = h100_node(0, 0);
  m.cpu_pair_seconds = 5.65e-3 / (1024.0 * 1024);
  m.gpu_pair_seconds = 184e-6 / (1024.0 * 1024);
  const TileChoice c = Planner(m, true).pairs({16384, 1, 1}, 2);
  SCOPED_TRACE(c.summary);
  const double n2 = 16384.0 * 16384;
  const double summed = 1 / (15 / (n2 * m.cpu_pair_seconds) + 1 / (n2 * m.gpu_pair_seconds));
  EXPECT_EQ(c.split_axis, 0);
  EXPECT_GT(c.split, 16384 * 6 / 10);
  EXPECT_LT(c.split, 16384 * 3 / 4);
  EXPECT_EQ(c.gpu_tiles, 1);
  EXPECT_EQ(c.cpu_tiles, 15);
  EXPECT_EQ(c.cuts[0].size(), 15U);
  EXPECT_LT(c.step_seconds, summed / 0.85);
  EXPECT_THAT(c.summary, HasSubstr("all-pairs work: the GPU part x < "));
  // Without the pair models: the GPU takes every body, in one tile.
  m.gpu_pair_seconds = 0;
  const TileChoice unknown = Planner(m, true).pairs({16384, 1, 1}, 2);
  EXPECT_EQ(unknown.split, 16384);
  EXPECT_TRUE(unknown.cuts[0].empty());
  EXPECT_THAT(unknown.summary, HasSubstr("calibrate"));
  // No CUDA workers: one tile per CPU worker, no split.
  m.cuda_workers = 0;
  const TileChoice cpu = Planner(m, false).pairs({16384, 1, 1}, 2);
  EXPECT_EQ(cpu.split_axis, -1);
  EXPECT_EQ(cpu.cuts[0].size(), 14U);
}

// Small all-pairs work (issue 48 (d)): nbody 4096 on the simulated H100 node (an interaction
// 5.696 ns on a core, 0.1753 ns on the GPU) split at 2806 bodies was predicted 2.56 ms a step
// and ran 3.72 (3.22 with its sources copied as soon as written) against GPU-only's 3.05: each
// of the GPU's 15 tasks against a CPU tile waited for that tile's copies. Priced
// (kSourceCopySeconds a foreign source tile), the split loses and the GPU takes every body;
// at 16384 bodies the split's gain (a third of the step) dwarfs the copies and stays.
TEST(Planner, AllPairsWorkPaysForSourcesInTheOtherMemory) {
  using tessera::partition::Planner;
  Machine m = h100_node(0, 0);
  m.cpu_pair_seconds = 5.696e-9;
  m.gpu_pair_seconds = 0.1753e-9;
  const TileChoice small = Planner(m, true).pairs({4096, 1, 1}, 2);
  SCOPED_TRACE(small.summary);
  EXPECT_EQ(small.split, 4096);
  EXPECT_THAT(small.summary, HasSubstr("split at x "));  // priced, and slower
  const TileChoice large = Planner(m, true).pairs({16384, 1, 1}, 2);
  SCOPED_TRACE(large.summary);
  EXPECT_GT(large.split, 16384 / 2);
  EXPECT_LT(large.split, 16384);
  // The price is what decides, derived by hand. A split at S: the GPU's one tile of S bodies and
  // the CPU part's C = min(15, 4096 - S) tiles of ceil((4096 - S) / C) each run against the 1 +
  // C source tiles (a task each), the GPU's also copying the C CPU tiles, each CPU tile the
  // GPU's (kSourceCopySeconds a tile); the step is the longer part and the split's fixed cost.
  // The GPU's interaction is a full GPU's (0.1753 ns) over the share its task fills: ceil(S / 32)
  // x 32 targets x min(16, ceil(4096 / (1 + C) / 64)) lanes of kPairFillThreads (a GPU alone:
  // 4096 targets x 16 lanes, half of it). Priced so, the split the planner weighed (its line:
  // "GPU-only G ms, ..., split at x S: T ms") is T, more than G, and so is every split, copies
  // or none: the GPU part fills the GPU no better than the GPU alone does, and the split adds
  // its fixed cost.
  std::smatch line;
  ASSERT_TRUE(std::regex_search(
      small.summary, line, std::regex("GPU-only ([0-9.]+) ms.*split at x ([0-9]+): ([0-9.]+) ms")))
      << small.summary;
  const double n = 4096, task = tessera::partition::kTaskSeconds;
  const double copy = tessera::partition::kSourceCopySeconds,
               fixed = tessera::partition::kSplitSeconds,
               full = tessera::partition::kPairFillThreads;
  const auto split_step = [&](double split, double copies) {
    const double c = std::min(15.0, n - split), sources = 1 + c;
    const double lanes = std::min(16.0, std::ceil(n / sources / 64));
    const double fill = std::min(1.0, std::ceil(split / 32) * 32 * lanes / full);
    const double gpu_part = split * n * m.gpu_pair_seconds / fill + sources * task + c * copies;
    const double cpu_part =
        std::ceil((n - split) / c) * n * m.cpu_pair_seconds + sources * task + copies;
    return std::max(gpu_part, cpu_part) + fixed;
  };
  const double gpu_alone = n * n * m.gpu_pair_seconds / (n * 16 / full) + task;
  EXPECT_NEAR(gpu_alone * 1e3, std::stod(line[1]), 0.006);
  EXPECT_NEAR(split_step(std::stod(line[2]), copy) * 1e3, std::stod(line[3]), 0.006);
  EXPECT_GT(std::stod(line[3]), std::stod(line[1]));
  // The planner's split is the best of the hand-priced ones.
  double best = split_step(1, copy);
  for (double split = 2; split < n; ++split) best = std::min(best, split_step(split, copy));
  EXPECT_NEAR(best * 1e3, std::stod(line[3]), 0.006);
  double unpriced = split_step(1, 0);
  for (double split = 2; split < n; ++split) unpriced = std::min(unpriced, split_step(split, 0));
  EXPECT_GT(unpriced, gpu_alone);
  // A class whose model is not calibrated has no predicted step, not its tasks' fixed cost.
  m.cpu_workers = 0;
  m.cpu_pair_seconds = 0;
  const TileChoice gpu_only = Planner(m, true).pairs({4096, 1, 1}, 2);
  // 0.1753 ns is taken as a full GPU's interaction: 4096 targets of 4096 sources (16 lanes)
  // run 65536 threads, half of kPairFillThreads, so 4096^2 x 0.1753 ns / 0.5 + 15 us.
  EXPECT_THAT(gpu_only.summary, HasSubstr("GPU-only 5.90"));
  EXPECT_THAT(gpu_only.summary, HasSubstr("CPU-only impossible"));
  m.gpu_pair_seconds = 0;
  EXPECT_THAT(Planner(m, true).pairs({4096, 1, 1}, 2).summary, HasSubstr("GPU-only unknown"));
}

// All-pairs tiles big enough to fill a GPU (issue 71): 4 GPUs, an interaction 2.8 ps on a full
// GPU (the H200's 65536-body task, 12.0 ms for 65536^2 in the simulation's regression), 15 us
// a task, 60 us a source tile from another GPU (kSourceCopySeconds). A GPU tile of T targets
// among g tiles of S = n / g sources runs 32 ceil(T / 32) min(16, S / 64) threads, full from
// 131072 (kPairFillThreads); its chain: T n 2.8 ps / fill + 15 us g + 60 us (g - 1).
//   n = 4096:  g = 1: fill 0.5,   94 us + 15          = 109 us (g = 2: 94 + 30 + 60 = 184)
//   n = 16384: g = 2: fill 1,    376 us + 30 + 60     = 466 us (g = 1: 752 + 15; g = 4: fill 0.5,
//              376 + 60 + 180 = 616)
//   n = 65536: g = 4: fill 1,   3006 us + 60 + 180    = 3246 us (g = 2: 6013 + 30 + 60)
// With 60 cores at 5.696 ns an interaction, a CPU part keeping pace with 65536 bodies' 3.2 ms
// would be 8 bodies a core (0.7 % of the work), while each GPU tile would read 60 more source
// tiles (60 x (15 + 60) us): no CPU share.
TEST(Planner, AllPairsTilesFillTheGpus) {
  using tessera::partition::Planner;
  Machine m = h100_node(0, 0);
  m.cuda_workers = 4;
  m.cpu_workers = 0;
  m.gpu_pair_seconds = 2.8e-12;
  for (const auto& [n, tiles, step] : {std::tuple<std::int64_t, int, double>{4096, 1, 109e-6},
                                       {16384, 2, 466e-6},
                                       {65536, 4, 3246e-6}}) {
    const TileChoice c = Planner(m, true).pairs({n, 1, 1}, 2);
    SCOPED_TRACE(c.summary);
    EXPECT_EQ(c.split, n);
    EXPECT_EQ(c.gpu_tiles, tiles);
    EXPECT_EQ(c.cuts[0].size(), static_cast<std::size_t>(tiles - 1));
    EXPECT_NEAR(c.step_seconds, step, 1e-6);
  }
  m.cpu_workers = 60;
  m.cpu_pair_seconds = 5.696e-9;
  const TileChoice cores = Planner(m, true).pairs({65536, 1, 1}, 2);
  SCOPED_TRACE(cores.summary);
  EXPECT_EQ(cores.split, 65536);
  EXPECT_EQ(cores.gpu_tiles, 4);
}

// On several ranks, whole classes: nbody's 64 tiles of 256 that one rank splits at 49 tiles
// (UserTilesSplitWhereTheCoresAddThroughput) go to the GPUs (53.4 ms against 94 ms on the
// cores); all-pairs work likewise; a hand-set share stays the user's.
TEST(Planner, SeveralRanksPlaceWholeClasses) {
  using tessera::partition::Planner;
  Machine m = h100_node(9.4e-5, 3.2e-6);
  m.ranks = 2;
  std::array<Cuts, 3> tiles;
  for (std::int64_t x = 256; x < 16384; x += 256) tiles[0].push_back(x);
  const auto p = Planner(m, true).given({16384, 1, 1}, 2, tiles);
  SCOPED_TRACE(p.summary);
  EXPECT_EQ(p.split, 16384);
  EXPECT_THAT(p.summary, HasSubstr("on 2 ranks whole classes only"));
  EXPECT_THAT(p.summary, HasSubstr("one rank would have split"));
  m.cpu_pair_seconds = 5.65e-3 / (1024.0 * 1024);
  m.gpu_pair_seconds = 184e-6 / (1024.0 * 1024);
  const TileChoice c = Planner(m, true).pairs({16384, 1, 1}, 2);
  SCOPED_TRACE(c.summary);
  EXPECT_EQ(c.split, 16384);
  EXPECT_EQ(c.gpu_tiles, 1);  // one per CUDA worker of the whole run (h100_node: 1)
  m.gpu_share = 0.5;
  EXPECT_EQ(Planner(m, true).given({16384, 1, 1}, 2, tiles).split, 8192);
  // Tiles the library chooses: jacobi2d 8192^2 with a free split, which one rank takes
  // (AutomaticTilesPayTheSplitsFixedCost), goes whole to the GPUs, a slab per CUDA worker.
  Machine j = h100_node(5.7e-10, 7.2e-12);
  j.split_seconds = 1e-9;
  j.cuda_workers = 2;  // one per rank
  j.cpu_workers = 30;
  const TileChoice one = Planner(j, true).automatic({8192, 8192, 1}, 2, {0, 0, 0});
  EXPECT_LT(one.split, 8192);
  j.ranks = 2;
  const TileChoice two = Planner(j, true).automatic({8192, 8192, 1}, 2, {0, 0, 0});
  SCOPED_TRACE(two.summary);
  EXPECT_EQ(two.split_axis, 1);
  EXPECT_EQ(two.split, 8192);
  EXPECT_EQ(two.gpu_tiles, 2);
  EXPECT_THAT(two.summary, HasSubstr("on 2 ranks whole classes only"));
}

// A split's fixed cost from the bus's calibrated latency: kSplitSeconds at the latency assumed
// when it was measured, four transfers' worth more or less elsewhere.
TEST(Planner, SplitCostFollowsTheBusLatency) {
  using tessera::partition::kSplitSeconds;
  using tessera::partition::split_seconds_for_bus;
  EXPECT_EQ(split_seconds_for_bus(0), kSplitSeconds);  // unknown
  EXPECT_NEAR(split_seconds_for_bus(10e-6), kSplitSeconds, 1e-12);
  EXPECT_NEAR(split_seconds_for_bus(30e-6), kSplitSeconds + 80e-6, 1e-12);
  EXPECT_NEAR(split_seconds_for_bus(1e-6), kSplitSeconds - 36e-6, 1e-12);
}

// The rebalancing rule: planes move to where the measured speeds balance the parts, not for
// a difference within the threshold.
TEST(TileChooser, RebalancedSplit) {
  using tessera::partition::rebalanced_split;
  // The CPU part runs half as fast as planned: its 100 planes take 2 ms, the GPU's 400 1 ms.
  // Speeds 400 and 50 planes/ms: 500 x 400 / 450 = 444 planes to the GPU.
  EXPECT_EQ(rebalanced_split(500, 400, 1e-3, 2e-3, 0.1), 444);
  EXPECT_EQ(rebalanced_split(500, 400, 1e-3, 1.05e-3, 0.1), 400);  // within the threshold
  EXPECT_EQ(rebalanced_split(500, 400, 0, 2e-3, 0.1), 400);        // no GPU sample yet
  EXPECT_EQ(rebalanced_split(500, 400, 1e-3, 1e-9, 0.1), 1);       // at least a plane each
  // The CPU part in 10 slabs of 10 planes, 0.2 ms a plane: the step waits for the thickest
  // slab. At 444, 56 planes make slabs of up to 6 (1.2 ms, the GPU 1.11); at 450, slabs of 5
  // (1 ms, the GPU 1.125): the shortest step near the balance.
  EXPECT_EQ(rebalanced_split(500, 400, 1e-3, 2e-3, 0.1, 10), 450);
  // 105 planes in slabs of 10 and 11, 1.05 ms on average against the GPU's 1 ms: within 5 %
  // by the mean, but the thickest slab takes 1.1 ms. At 400, slabs of 10: 1 ms, the GPU 1.013.
  EXPECT_EQ(rebalanced_split(500, 395, 1e-3, 1.05e-3, 0.05), 395);
  EXPECT_EQ(rebalanced_split(500, 395, 1e-3, 1.05e-3, 0.05, 10), 400);
}

// A part's time now from a window's per-step times: the median of its later half.
TEST(TileChooser, RecentStepSeconds) {
  using tessera::partition::recent_step_seconds;
  EXPECT_EQ(recent_step_seconds({}), 0);
  EXPECT_EQ(recent_step_seconds({1.0}), 1.0);
  // A slowdown from the window's third step: counted.
  EXPECT_EQ(recent_step_seconds({1.0, 1.0, 1.5, 2.0, 2.0}), 2.0);
  // A move's first two steps, which fill new halos: not counted.
  EXPECT_EQ(recent_step_seconds({1.4, 1.3, 1.0, 1.0, 1.0}), 1.0);
  // One slow step in the later half: not counted either.
  EXPECT_EQ(recent_step_seconds({1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0, 1.0, 1.0, 1.0}), 1.0);
  EXPECT_EQ(recent_step_seconds({1.0, 2.0, 3.0, 4.0}), 3.5);
}

// A hand-set share puts the split at that share of the planes, the CPU part tiled as the
// chooser would; the split laid out at a given plane is the chooser's own layout there.
TEST(TileChooser, HandSetShareAndGivenSplit) {
  Machine m;
  m.cpu_workers = 14;
  m.cuda_workers = 1;
  m.gpu_share = 0.75;
  const TileChoice c = choose_tiles({512, 512, 512}, 3, {0, 0, 0}, m);
  EXPECT_EQ(c.split, 384);
  EXPECT_EQ(c.cpu_tiles % 14, 0);
  EXPECT_GT(c.gpu_step_seconds, 0);
  EXPECT_GT(c.cpu_step_seconds, 0);
  m.gpu_share = 0.99;  // 5 planes: thinner than a CPU tile may be, so GPU only
  EXPECT_EQ(choose_tiles({512, 512, 512}, 3, {0, 0, 0}, m).split, 512);
  m.gpu_share = -1;
  const TileChoice chosen = choose_tiles({512, 512, 512}, 3, {0, 0, 0}, m);
  const TileChoice same =
      tessera::partition::split_tiles({512, 512, 512}, 3, {0, 0, 0}, m, 2, chosen.split);
  EXPECT_EQ(same.cuts, chosen.cuts);
  // The chooser's line adds the alternatives it weighed.
  EXPECT_THAT(chosen.summary, testing::StartsWith(same.summary + "; predicted step: GPU-only "));
}

// The decision from measured part times, with known answers: the CPU part (100 planes)
// measured at 2 ms a step against the GPU part's (400 planes) 1 ms moves the split to 444
// planes (rebalanced_split), gaining 2 - max(1.11, 1.12) = 0.88 ms a step.
TEST(TileChooser, RebalanceFromMeasuredTimes) {
  using tessera::partition::plan_rebalance;
  Machine m;
  m.cpu_workers = 14;
  m.cuda_workers = 1;
  const tessera::partition::Rebalance r =
      plan_rebalance({256, 256, 500}, 3, 2, 400, m, 1e-3, 2e-3, 0.1, 100, 0.05);
  SCOPED_TRACE(r.why);
  EXPECT_TRUE(r.move);
  EXPECT_EQ(r.tiles.split, 444);
  EXPECT_EQ(r.tiles.split_axis, 2);
  EXPECT_NEAR(r.gain_seconds, 2e-3 - 1.12e-3, 1e-6);
  EXPECT_EQ(r.tiles.cuts[2].front(), 444);  // one GPU slab, then the CPU part
  // The same, with 50 steps left: 44 ms gained against 50 ms to move the fields: stays.
  EXPECT_FALSE(plan_rebalance({256, 256, 500}, 3, 2, 400, m, 1e-3, 2e-3, 0.1, 50, 0.05).move);
  // Within the threshold, or a part not measured: stays.
  EXPECT_FALSE(plan_rebalance({256, 256, 500}, 3, 2, 400, m, 1e-3, 1.05e-3, 0.1, 100, 0).move);
  EXPECT_FALSE(plan_rebalance({256, 256, 500}, 3, 2, 400, m, 0, 2e-3, 0.1, 100, 0).move);
}

class UnevenTiles : public testing::TestWithParam<test::Config> {};

TEST_P(UnevenTiles, StencilsAndBlocksMatchReference) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_uneven_tilings_match_reference();
}

// A grid without tile extents gets tiles from the runtime (and the configuration says which);
// its results are the reference's.
TEST_P(UnevenTiles, AutomaticTilesMatchReference) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<3> grid({40, 24, 64});
  EXPECT_GE(grid.tiles(), rt.cpu_workers());
  EXPECT_THAT(rt.configuration(), HasSubstr("tiles of 40 x 24 x 64: "));
  EXPECT_FALSE(grid.chosen().empty());
  test::expect_heat3d_advance_matches_reference(grid, 5, tessera::kAutoDepth);
  // A tile of 0 along z only: x and y as given.
  const tessera::Grid<3> partly({40, 24, 64}, {20, 24, 0});
  EXPECT_EQ(partly.tile()[0], 20);
  EXPECT_TRUE(partly.cuts()[0].empty());
  test::expect_heat3d_advance_matches_reference(partly, 3, 1);
}

// Tiles the library chose for CPU workers alone come in whole rounds of the workers: every
// task of a tile runs on one worker, the tiles taking the workers in turn; a Grid with the
// user's tiles leaves placement to the scheduler.
TEST(TileChooser, AutomaticCpuTilesRunOnOneWorkerEach) {
  tessera::Options o = test::options({"dmda", 2});
  o.trace = testing::TempDir() + "tessera_pinned_tiles.json";
  tessera::Runtime rt(o);
  const tessera::Grid<3> grid({40, 24, 64});
  ASSERT_GE(grid.tiles(), 2);
  test::expect_heat3d_advance_matches_reference(grid, 6, 1);
  rt.wait();
  std::map<int, std::set<int>> workers;  // tile -> the workers its tasks ran on
  for (const tessera::trace::TaskEvent& e : rt.recorded().tasks)
    if (e.tile >= 0) workers[e.tile].insert(e.worker);
  ASSERT_EQ(static_cast<int>(workers.size()), grid.tiles());
  std::set<int> used;
  for (const auto& [tile, on] : workers) {
    EXPECT_EQ(on.size(), 1U) << "tile " << tile << " ran on " << on.size() << " workers";
    used.insert(on.begin(), on.end());
  }
  EXPECT_EQ(static_cast<int>(used.size()), rt.cpu_workers());
  EXPECT_NE(*workers[0].begin(), *workers[1].begin());  // round-robin
}

TEST_P(UnevenTiles, TilesThinnerThanTheRadiusAreRefused) {
  tessera::Runtime rt(test::options(GetParam()));
  const auto grid = tessera::Grid<3>::cut({8, 8, 20}, {{{}, {}, {9, 10}}});
  EXPECT_THAT(error_of([&] {
                test::expect_matches_reference<double, 3, 2, false>(
                    grid, test::Boundaries<3>::all(test::Boundary::neumann()));
              }),
              AllOf(HasSubstr("only 1 point(s) thick along z"), HasSubstr("cut at 9, 10")));
}

INSTANTIATE_TEST_SUITE_P(Config, UnevenTiles, testing::ValuesIn(test::configs()),
                         test::config_name);

// The split between the parts moved mid-run: fields unchanged, steps as the reference's.
TEST_P(UnevenTiles, BalanceMovesTheSplitMidRunChangingNoValue) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_balanced_run_matches_reference(1);
  test::expect_balanced_run_matches_reference(tessera::kAutoDepth);
}

TEST_P(UnevenTiles, RetilingMidRunChangesNoValue) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_retiled_run_matches_reference(1);
  test::expect_retiled_run_matches_reference(tessera::kAutoDepth);
  tessera::Field<double, 3> u(tessera::Grid<3>({8, 8, 8}, {8, 8, 4}), 1);
  EXPECT_THAT(error_of([&] {
                u.retile(tessera::Grid<3>({8, 8, 9}, {8, 8, 4}));
              }),
              AllOf(HasSubstr("cannot move onto a grid of 8 x 8 x 9"), HasSubstr("same extent")));
}

// What a GPU part asks of a GPU's memory (partition::plan_gpu_memory), with the figures of the
// calibrated H100 node's simulation: heat3d's 16 bytes a point (u and next, its PointData) at
// 2745 GB/s on the GPU, a task 15 us, the bus 50 GB/s.
constexpr double kH100PointSeconds = 16 / 2745e9;
Machine gpu_node(double memory_bytes, int gpus = 1, double point_seconds = kH100PointSeconds) {
  Machine m;
  m.point = {16, 8};
  m.cpu_workers = 15;
  m.cuda_workers = gpus;
  m.gpu_point_seconds = point_seconds;
  m.gpus.assign(static_cast<std::size_t>(gpus), {memory_bytes, 50e9});
  return m;
}

TEST(GpuMemory, AGridThatFitsStaysResident) {
  using tessera::partition::plan_gpu_memory;
  // heat3d 1024^3 on an 80 GB H100: 17.2 GB at 16 bytes a point fits 0.85 of it.
  const auto p = plan_gpu_memory(1024.0 * 1024, 1024, gpu_node(80e9), kH100PointSeconds, 15e-6, 1);
  EXPECT_FALSE(p.streamed);
  EXPECT_TRUE(p.possible);
  EXPECT_EQ(p.slabs, 1);
  EXPECT_EQ(p.depth, 0);
  EXPECT_TRUE(p.why.empty());
  // Memory unknown (0): resident, as before the planner knew memory.
  EXPECT_FALSE(
      plan_gpu_memory(1024.0 * 1024, 1024, gpu_node(0), kH100PointSeconds, 15e-6, 1).streamed);
}

TEST(GpuMemory, AGridLargerThanTheGpuStreamsInSlabsThatFit) {
  using tessera::partition::plan_gpu_memory;
  // heat3d 1024^3 on a 4 GiB GPU as StarPU reports it (3.6 GiB): 3.29 GB usable for the slab
  // computed (16 bytes a point: u and next) and the one leaving (8: its scratch dropped), 130
  // planes of 25 MB less their faces and 2 x depth ghost planes. What crosses the bus a step,
  // per plane's column: 8768 bytes at depth 2 (9 slabs), 4736 at 4 (10), 3435 at 6 (11), 2816
  // at 8 (12), 2470 at 10 (13), 2261 at 12 (14), 2194 at 14 (16 slabs of 64 planes), 2240 at
  // 16 (19); with the GPU's compute after it (6.3 ms a step and the recomputed ghost planes):
  // depth 14. The fields alone would be 1170 at depth 14: at this memory the ghost planes and
  // faces cost nearly as much as the fields.
  const double memory = 3865051136;
  const double plane = 1024.0 * 1024;
  const auto p = plan_gpu_memory(plane, 1024, gpu_node(memory), kH100PointSeconds, 15e-6, 1);
  EXPECT_TRUE(p.streamed);
  EXPECT_TRUE(p.possible);
  EXPECT_EQ(p.depth, 14);
  EXPECT_EQ(p.slabs, 16);
  // What the GPU holds at once fits: the two slabs in flight with their ghost planes.
  const double slab_planes = std::ceil(1024.0 / static_cast<double>(p.slabs)) + 2 * p.depth;
  EXPECT_LE(slab_planes * plane * (16 + 8), 0.85 * memory);
  // The bus: the field in and out once a visit with its ghost planes (16 bytes a point), four
  // faces of 14 planes (8 bytes a point), over 14 steps.
  const double thick = 1024.0 / 16;
  EXPECT_NEAR(p.bus_bytes_per_step, 16 * plane * ((thick + 28) * 16 + 4 * 14 * 8) / 14, 1e3);
  EXPECT_NEAR(p.fields_bytes_per_step, plane * 1024 * 16 / 14, 1e3);
  // Up and back alike (u up, u back): the busier way carries half, at 0.95 of the link.
  EXPECT_NEAR(p.bus_seconds, p.bus_bytes_per_step / 2 / (0.95 * 50e9), 1e-9);
  EXPECT_GT(p.bus_seconds, p.compute_seconds);
  EXPECT_THAT(p.why, HasSubstr("streamed: 1.72e+10 bytes a GPU's share against 3.29e+09 it may "
                               "hold; 16 slabs, 14 steps a visit, 2.3e+09 bytes over the bus a "
                               "step (the fields 1.23e+09"));
  // Four such GPUs: a quarter each, still streamed, 4 x the slabs of one GPU's share.
  const auto four = plan_gpu_memory(plane, 1024, gpu_node(memory, 4), kH100PointSeconds, 15e-6, 1);
  EXPECT_TRUE(four.streamed);
  EXPECT_EQ(four.slabs % 4, 0);
  EXPECT_LT(four.step_seconds, p.step_seconds / 3);
}

// The same where a slab crosses the bus without its ghost planes (Machine::ghost_planes_stay:
// its visit writes them on the GPU): per plane's column a step, the field in and out once a visit
// (16 bytes a point) and four faces of the depth (8), 1170 + 512 bytes at depth 14 (16 slabs of
// 64 planes), 1024 + 608 at 16 (19 slabs of 54: the memory still holds two slabs with their
// ghost planes): depth 16, 18.0 ms of bus and 8.0 of compute a step, shorter than with the
// ghost planes crossing (2194 bytes a column at depth 14).
TEST(GpuMemory, GhostPlanesThatStayOnTheGpuLeaveTheFieldsAndFaces) {
  using tessera::partition::plan_gpu_memory;
  const double memory = 3865051136, plane = 1024.0 * 1024;
  tessera::partition::Machine m = gpu_node(memory);
  const auto crossing = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  m.ghost_planes_stay = true;
  const auto p = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  ASSERT_TRUE(p.streamed && p.possible);
  const double thick = 1024.0 / static_cast<double>(p.slabs);
  EXPECT_NEAR(p.bus_bytes_per_step, p.slabs * plane * (thick * 16 + 4.0 * p.depth * 8) / p.depth,
              1e3);
  EXPECT_EQ(p.depth, 16);
  EXPECT_EQ(p.slabs, 19);
  EXPECT_NEAR(p.bus_bytes_per_step / plane, 1024 + 608, 0.1);
  EXPECT_LT(p.step_seconds, crossing.step_seconds);
  EXPECT_THAT(p.why, HasSubstr("(the fields 1.07e+09, their faces the rest;"));
  EXPECT_THAT(crossing.why, HasSubstr("(the fields 1.23e+09, their ghost planes and faces the"));
}

// The same where each slab packs ahead the face its next visitor on the GPU reads
// (Machine::faces_packed_ahead): of a pass of S slabs only the S - 1 faces towards the slab
// visited before cross, both ways (and, on several GPUs, those towards a neighbouring GPU's).
// Derived by hand: 0.85 of the 3865051136 bytes (3285293465.6) hold the slab computed and the
// one leaving (24 bytes a point of a plane of 2^20 points: 25165824 a plane) and two sets of
// four faces of d planes (8 bytes a point: 2 x 33554432 d); at the deepest depth, 16, that is
// floor((3285293465.6 - 1073741824) / 25165824) = 87 planes, less 2 x 16 ghost planes: 55, so
// 19 slabs of the 1024 planes. Per plane's column a step: the field, up and back once a visit
// of 16 steps (1024 planes x 16 bytes / 16 = 1024 bytes), and the faces towards the slab visited
// before (18 of the 19), 16 planes each way, 8 bytes a point (2 x 18 x 16 x 8 / 16 = 288). On
// four GPUs a GPU's share is 256 planes, 5 slabs (20 in all), and each GPU's pass crosses 2 x 4
// faces between its slabs and 4 towards its neighbours (two at most): 1024 + 4 x 12 x 8 = 1408.
TEST(GpuMemory, FacesPackedAheadStayOnTheGpu) {
  using tessera::partition::plan_gpu_memory;
  const double memory = 3865051136, plane = 1024.0 * 1024;
  tessera::partition::Machine m = gpu_node(memory);
  m.ghost_planes_stay = true;
  const auto crossing = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  m.faces_packed_ahead = true;
  const auto p = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  ASSERT_TRUE(p.streamed && p.possible);
  EXPECT_EQ(p.depth, 16);
  EXPECT_EQ(p.slabs, 19);
  EXPECT_NEAR(p.bus_bytes_per_step / plane, 1024 + 288, 0.1);
  const double slabs = static_cast<double>(p.slabs), thick = 1024.0 / slabs;
  EXPECT_NEAR(p.bus_bytes_per_step,
              slabs * plane * (thick * 16 + 2.0 * (slabs - 1) / slabs * p.depth * 8) / p.depth,
              1e3);
  EXPECT_LT(p.bus_bytes_per_step, crossing.bus_bytes_per_step);
  EXPECT_LT(p.step_seconds, crossing.step_seconds);
  // Four GPUs: a GPU's share of S slabs (S of p.slabs), beside two others at most.
  tessera::partition::Machine four = gpu_node(memory, 4);
  four.ghost_planes_stay = four.faces_packed_ahead = true;
  const auto q = plan_gpu_memory(plane, 1024, four, kH100PointSeconds, 15e-6, 1);
  ASSERT_TRUE(q.streamed && q.possible);
  EXPECT_EQ(q.depth, 16);
  EXPECT_EQ(q.slabs, 20);
  EXPECT_NEAR(q.bus_bytes_per_step / plane, 1024 + 4 * 12 * 8, 0.1);
  const double share = static_cast<double>(q.slabs) / 4, share_thick = 256.0 / share;
  EXPECT_NEAR(q.bus_bytes_per_step,
              4 * share * plane *
                  (share_thick * 16 + (2.0 * (share - 1) + 4) / share * q.depth * 8) / q.depth,
              1e3);
}

// The same where a visit also reads the face of the slab visited after it straight from that
// slab's tile (Machine::faces_read_from_next_slab), which its own visit needs on the GPU next:
// no face crosses on one GPU, only the fields (1024 bytes a plane's column a step), and the GPU
// holds that slab's field too (32 bytes a point of a slab in flight against 24) but one set of
// faces: 21 slabs of 16 steps a visit, 11.3 ms of bus a step, against 19 and 14.5 ms. By hand:
// (3285293465.6 - 4 x 16 x 2^20 x 8) / (32 x 2^20) = 81.9, so 81 - 32 = 49 planes and 21 slabs;
// the busier way carries 1024 planes x 8 bytes over 16 steps, 512 bytes a column, at 0.95 x
// 50 GB/s: 11.30 ms. Packed ahead only, 19 slabs (above) and 18 faces of 16 planes more that
// way: 512 + 18 x 16 x 8 / 16 = 656 bytes a column, 14.48 ms.
TEST(GpuMemory, FacesReadFromTheNextSlabLeaveTheFieldsAlone) {
  using tessera::partition::plan_gpu_memory;
  const double memory = 3865051136, plane = 1024.0 * 1024;
  tessera::partition::Machine m = gpu_node(memory);
  m.ghost_planes_stay = m.faces_packed_ahead = true;
  const auto ahead = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  m.faces_read_from_next_slab = true;
  const auto p = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  ASSERT_TRUE(p.streamed && p.possible);
  EXPECT_EQ(p.depth, 16);
  EXPECT_EQ(p.slabs, 21);
  EXPECT_EQ(ahead.slabs, 19);
  EXPECT_NEAR(p.bus_bytes_per_step, p.fields_bytes_per_step, 1);
  EXPECT_NEAR(p.bus_bytes_per_step / plane, 1024, 1e-9);
  EXPECT_NEAR(p.bus_seconds * 1e3, 11.3, 0.05);
  EXPECT_NEAR(ahead.bus_seconds * 1e3, 14.48, 0.01);
  EXPECT_LT(p.step_seconds, ahead.step_seconds);
  // And where one CUDA worker streams the grid alone, the slabs a visit reads are prefetched
  // while the visit before it computes (Machine::visits_prefetched): the GPU holds a fourth
  // slab's field (40 bytes a point of a slab in flight), 32 slabs of 32 planes ((3285293465.6 -
  // 4 x 16 x 2^20 x 8) / (40 x 2^20) = 65.5, less 32), and the step is the longer of the bus's
  // time and the compute's, not their sum. Its blocks turn: of the 32 slabs a pass, 29 come up
  // (the first three are there) and 31 go back (the last one stays).
  m.visits_prefetched = true;
  const auto prefetched = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  EXPECT_EQ(prefetched.depth, 16);
  EXPECT_EQ(prefetched.slabs, 32);
  EXPECT_NEAR(prefetched.bus_bytes_per_step / plane, 512.0 * (29 + 31) / 32, 1e-9);
  EXPECT_NEAR(prefetched.step_seconds,
              std::max(prefetched.bus_seconds, prefetched.compute_seconds) + 32 * 15e-6 / 16, 1e-9);
  EXPECT_LT(prefetched.step_seconds, 0.7 * p.step_seconds);
  EXPECT_THAT(prefetched.why, HasSubstr("ms while the next slab arrives"));
  EXPECT_THAT(p.why, testing::Not(HasSubstr("arrives")));
  // Four GPUs: a GPU's share of S slabs, its faces towards its neighbours (two at most) both
  // ways.
  tessera::partition::Machine four = gpu_node(memory, 4);
  four.ghost_planes_stay = four.faces_packed_ahead = four.faces_read_from_next_slab = true;
  const auto q = plan_gpu_memory(plane, 1024, four, kH100PointSeconds, 15e-6, 1);
  ASSERT_TRUE(q.streamed && q.possible);
  const double share = static_cast<double>(q.slabs) / 4, share_thick = 256.0 / share;
  EXPECT_NEAR(q.bus_bytes_per_step,
              4 * share * plane * (share_thick * 16 + 4.0 / share * q.depth * 8) / q.depth, 1e3);
}

// A slab's tiles hold and move the ghost points across their planes too: for a channel of
// 128 x 128 planes, at depth d a plane is (128 + 2d)^2 points in memory and over the bus (1.56x
// its points at depth 16). Given the planes' extents the planner sizes the slabs by them, so
// that what a GPU holds fits what it may use, and prices their bytes.
// Where visits are prefetched the blocks turn: of a pass's `slabs` on one GPU, all but the first
// three come up (they are there, from the last pass's end) and all but the last go back (it
// stays): the bus's share of the fields' own bytes (u up and back, 8 bytes a point each way).
namespace {
double turned_share(double slabs) { return ((slabs - 3) + (slabs - 1)) / (2 * slabs); }
}  // namespace

TEST(GpuMemory, GhostPointsAcrossTheSlabCountInMemoryAndOnTheBus) {
  using tessera::partition::plan_gpu_memory;
  const double memory = 3865051136, plane = 128.0 * 128;
  tessera::partition::Machine m = gpu_node(memory);
  m.ghost_planes_stay = m.faces_packed_ahead = m.faces_read_from_next_slab = true;
  m.visits_prefetched = true;
  const auto points_only = plan_gpu_memory(plane, 65536, m, kH100PointSeconds, 15e-6, 1);
  const auto p = plan_gpu_memory(plane, 65536, m, kH100PointSeconds, 15e-6, 1, 16, {128.0, 128.0});
  ASSERT_TRUE(p.streamed && p.possible);
  const double held = (128.0 + 2 * p.depth) * (128.0 + 2 * p.depth);
  EXPECT_NEAR(p.bus_bytes_per_step / p.fields_bytes_per_step,
              held / plane * turned_share(static_cast<double>(p.slabs)), 1e-9);
  EXPECT_NEAR(
      points_only.bus_bytes_per_step,
      points_only.fields_bytes_per_step * turned_share(static_cast<double>(points_only.slabs)), 1);
  EXPECT_GT(p.slabs, points_only.slabs);
  // The slab computed (every field), the one arriving, the one read, the last one leaving, each
  // with its ghost planes, and one visit's four faces: within 0.85 of the memory.
  const double thick = std::ceil(65536.0 / static_cast<double>(p.slabs));
  EXPECT_LE((thick + 2 * p.depth) * held * (16 + 3 * 8) + 4 * p.depth * plane * 8, 0.85 * memory);
}

TEST(GpuMemory, SlowComputeTakesAShallowerDepth) {
  using tessera::partition::plan_gpu_memory;
  // A GPU as slow as 10 cores (268 ms a step): the recomputed ghost planes cost more than the
  // bus saves from depth 6 on: 320.8 ms a step (37.9 ms of bus, the busier way at 0.95 of its
  // rate) against 321.6 at depth 8 and 328.6 at 4 (the bus alone would take depth 14).
  const auto p = plan_gpu_memory(1024.0 * 1024, 1024, gpu_node(3865051136, 1, 2.5e-9 / 10),
                                 2.5e-9 / 10, 15e-6, 1);
  EXPECT_TRUE(p.streamed);
  EXPECT_EQ(p.depth, 6);
  EXPECT_GT(p.compute_seconds, p.bus_seconds);
  // Without a calibrated GPU speed the bus alone prices it: depth 14.
  EXPECT_EQ(
      plan_gpu_memory(1024.0 * 1024, 1024, gpu_node(3865051136, 1, 0), 2.5e-9 / 20, 15e-6, 1).depth,
      14);
}

TEST(GpuMemory, NotEvenTheThinnestSlabFitsIsRefused) {
  using tessera::partition::plan_gpu_memory;
  // A 100 MB GPU for planes of 1M points: two slabs of 8 planes (one computed, 16 bytes a point,
  // one leaving, 8), their ghost planes and faces at depth 2 need 436 MB.
  const auto p = plan_gpu_memory(1024.0 * 1024, 1024, gpu_node(100e6), kH100PointSeconds, 15e-6, 1);
  EXPECT_FALSE(p.possible);
  EXPECT_THAT(p.why, HasSubstr("streaming needs 2 slabs of at least 8 planes (4.36e+08 bytes) "
                               "on a GPU at once, more than the 8.5e+07 bytes it may use of its "
                               "1e+08"));
  // Where visits are prefetched, four: the one computed, the one whose face it reads, the next
  // arriving and the last leaving (40 bytes a point of a plane), with one visit's faces: 570 MB.
  Machine prefetching = gpu_node(100e6);
  prefetching.faces_packed_ahead = prefetching.faces_read_from_next_slab = true;
  prefetching.visits_prefetched = true;
  EXPECT_THAT(plan_gpu_memory(1024.0 * 1024, 1024, prefetching, kH100PointSeconds, 15e-6, 1).why,
              HasSubstr("streaming needs 4 slabs of at least 8 planes (5.7e+08 bytes)"));
  // The chooser then gives the GPU only what it holds (5 planes, 84 MB), the rest to the CPU
  // workers, or, without any, refuses the grid.
  Machine m = gpu_node(100e6);
  TileChoice c = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_TRUE(c.gpu_fits);
  EXPECT_EQ(c.stream_depth, 0);
  EXPECT_LE(c.split, 5);
  m.cpu_workers = 0;
  c = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_FALSE(c.gpu_fits);
}

// The step of a 1024^3 grid of three doubles a point (24 bytes; 16 kept while a slab leaves, 8
// written back) streamed through one 4 GiB GPU (3865051136 bytes, 0.85 of them usable) on a
// 50 GB/s bus (0.95 of it the busier way), its point at 16 bytes / 2745 GB/s, in visits of
// `d` steps, derived by hand from docs/gpu.md's rule ("Grids larger than a GPU"): a plane held
// with its ghost points across, (1024 + 2d)^2; the slab computed (24 bytes a point) and the one
// leaving (16) beside two sets of four faces of d planes (8 bytes a point); the thickest slab
// fitting, less 2d ghost planes; each visit moves its slab and ghost planes up (16 bytes a
// point) and back (8) with two faces each way; the step is the bus's time (the up way, busier),
// the compute (ghost planes recomputed: (d - 1) / the slab's thickness more) and a task a visit.
// `planes` of the grid's 1024 on the GPU (the GPU part of a split), in slabs of at most the
// thickest fitting; -1 where that is thinner than 8 planes or than d.
double streamed_step_by_hand(int d, double planes = 1024) {
  const double plane = 1024.0 * 1024, held = (1024.0 + 2 * d) * (1024.0 + 2 * d);
  const double face = 4.0 * d * plane * 8;
  const double fits = std::floor((0.85 * 3865051136 - 2 * face) / (held * 40)) - 2 * d;
  if (std::min(fits, planes) < std::max(8, d)) return -1;
  const double slabs = std::ceil(planes / std::min(fits, planes)), thick = planes / slabs;
  const double up = (thick + 2 * d) * held * 16 + face / 2;
  const double bus = slabs / d * up / (0.95 * 50e9);
  const double compute = 16 / 2745e9 * plane * planes * (1 + (d - 1) / thick);
  return bus + compute + 15e-6 * slabs / d;
}

// The CPU part of the split beside it, `planes` planes of 1024^2 points on `workers` cores of
// 16 bytes / 7.16 GB/s a point, by docs/gpu.md's rule (the cores' slabs priced "with the planes
// they recompute at the streamed depth"): one slab a core, at least 8 planes thick (fewer where
// the part is thinner; more slabs would only add ghost planes and tasks), all in one round; a
// slab's step is its points (the mean slab's) and, at depth d, the (d - 1) planes it recomputes
// of its neighbours' edges and its two faces copied in and out (4 planes), then a task.
double cpu_part_step_by_hand(int d, double planes, int workers) {
  const double slabs = std::min<double>(workers, std::floor(planes / 8)), thick = planes / slabs;
  return 16 / 7.16e9 * 1024.0 * 1024 * thick * (1 + (d - 1) / thick + 4 / thick) + 15e-6;
}

// The split of that grid with `workers` cores, searched plane by plane: the GPU takes z < s
// (streamed: s > 130, the planes of 24 bytes a point beyond 0.85 of its memory), the cores the
// rest (at least 8 planes); both parts at one depth d of the even ones (a visit's d steps, every
// depth whose slabs fit); the step is the longer part and what a split adds (kSplitSeconds,
// 0.3 ms). Resident GPU parts (s <= 130) and the cores alone leave the cores at least 894
// planes: longer than the best split in both tests below (asserted there).
struct SplitByHand {
  int planes = 0, depth = 0;
  double seconds = -1;
};
SplitByHand split_by_hand(int workers) {
  SplitByHand best;
  for (int s = 131; s <= 1024 - 8; ++s)
    for (int d = 2; d <= 16 && streamed_step_by_hand(d, s) >= 0; d += 2) {
      const double step =
          std::max(streamed_step_by_hand(d, s), cpu_part_step_by_hand(d, 1024 - s, workers)) + 3e-4;
      if (best.seconds < 0 || step < best.seconds) best = {s, d, step};
    }
  return best;
}
// A lower bound of a step where the cores take at least 894 planes: their points alone.
double cores_alone_bound(int workers) { return 16 / 7.16e9 * 1024.0 * 1024 * 894 / workers; }

TEST(GpuMemory, TheSplitPricesTheStreamedPart) {
  // A grid of three doubles a point (cardiac3d's e, next and r) at heat3d's speeds, 1024^3 on a
  // 4 GiB GPU with 15 cores at 7.16 GB/s each (the node's calibration): the GPU part streams at
  // the bus's rate (24 bytes a point each visit), so the cores take a share of the planes where
  // that shortens the step, and the line says streamed. Known answer: the cores take z >= 831,
  // 15 slabs of 12 or 13 planes at depth 10 (61.06 ms a step, the GPU part 60.76, GPU-only
  // 74.74: the streamed planes held and moved with their ghost points across), derived below.
  Machine m = gpu_node(3865051136);
  m.point = {24, 8};
  m.cpu_point_seconds = 16 / 7.16e9;
  m.gpu_point_seconds = kH100PointSeconds;
  const TileChoice c = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_EQ(c.split, 831) << c.summary;
  EXPECT_EQ(c.stream_depth, 10) << c.summary;
  EXPECT_EQ(c.cpu_tiles, 15) << c.summary;
  EXPECT_THAT(c.summary, HasSubstr("streamed: "));
  EXPECT_THAT(c.summary, HasSubstr("predicted step: GPU-only 74.74 ms"));
  // The GPU-only figure by hand: at depth 10, 39 planes a slab, 27 slabs, 66.96 ms of bus and
  // 7.74 of compute a step, the least of the even depths (8: 77.68 ms, 12: 75.00).
  double least = streamed_step_by_hand(2);
  int depth = 2;
  for (int d = 4; d <= 16; d += 2)
    if (streamed_step_by_hand(d) < least) least = streamed_step_by_hand(d), depth = d;
  EXPECT_EQ(depth, 10);
  EXPECT_NEAR(least * 1e3, 74.74, 0.005);
  // The split by hand (split_by_hand): at z 831 the GPU part's 831 planes take 60.76 ms at
  // depth 10 (22 slabs of 37.8 planes), the cores' 193 (15 slabs of 12.87 planes, 9 + 4 of
  // each recomputed and copied) 60.63 ms, with the split's 0.3 ms 61.06; a plane either way
  // lengthens the longer part. It gains more than a tenth of GPU-only, and the cores with 894
  // planes or more (the GPU part resident, or none) would take 139.6 ms at least.
  const SplitByHand hand = split_by_hand(15);
  EXPECT_EQ(c.split, hand.planes) << c.summary;
  EXPECT_EQ(c.stream_depth, hand.depth) << c.summary;
  EXPECT_NEAR(c.step_seconds, hand.seconds, 1e-9) << c.summary;
  EXPECT_NEAR(hand.seconds * 1e3, 61.06, 0.005);
  EXPECT_LT(hand.seconds, 0.9 * least);
  EXPECT_GT(cores_alone_bound(15), hand.seconds);
}

TEST(GpuMemory, ASplitTakesTheDepthOfBothParts) {
  // The grid above with 40 cores: one depth for the grid, so the cores' slabs (about 9 planes)
  // recompute their neighbours' edges at it. The GPU alone takes depth 10 (derived above,
  // streamed_step_by_hand); the split is shortest at 8 (48.88 ms a step, z >= 635 on the cores),
  // by hand (split_by_hand): the GPU part's 635 planes 48.57 ms, the cores' 389 (40 slabs of
  // 9.73 planes, 7 + 4 of each recomputed and copied) 48.58, with the split's 0.3 ms 48.88; at
  // depth 10 the cores' recomputed planes would cost more than the bus saves. The cores with
  // 894 planes or more would take 52.37 ms at least.
  Machine m = gpu_node(3865051136);
  m.point = {24, 8};
  m.cpu_workers = 40;
  m.cpu_point_seconds = 16 / 7.16e9;
  const TileChoice gpu_only = split_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m, 2, 1024);
  const TileChoice c = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_EQ(gpu_only.stream_depth, 10) << gpu_only.summary;
  EXPECT_EQ(c.split, 635) << c.summary;
  EXPECT_EQ(c.stream_depth, 8) << c.summary;
  EXPECT_NEAR(c.step_seconds, 48.88e-3, 0.01e-3) << c.summary;
  const SplitByHand hand = split_by_hand(40);
  EXPECT_EQ(c.split, hand.planes) << c.summary;
  EXPECT_EQ(c.stream_depth, hand.depth) << c.summary;
  EXPECT_NEAR(c.step_seconds, hand.seconds, 1e-9) << c.summary;
  EXPECT_NEAR(hand.seconds * 1e3, 48.88, 0.005);
  EXPECT_LT(hand.seconds, 0.9 * streamed_step_by_hand(10));
  EXPECT_GT(cores_alone_bound(40), hand.seconds);
}

TEST(GpuMemory, TheBusyWayOfTheBusPricesTheStep) {
  using tessera::partition::plan_gpu_memory;
  // jacobi2d 49152^2 (u, next and f in floats) on a 4 GiB GPU: a visit uploads u and f with
  // their ghost rows and writes back u, so the upload, twice the write-back's points, prices the
  // bus (two faces each way alike).
  const double plane = 49152;
  Machine m = gpu_node(3865051136, 1, 12 / 2600e9);
  m.point = {12, 4};
  const auto p = plan_gpu_memory(plane, 49152, m, 12 / 2600e9, 15e-6, 1);
  ASSERT_TRUE(p.streamed);
  const double d = p.depth, slabs = static_cast<double>(p.slabs);
  const double tile = (49152 / slabs + 2 * d) * plane, faces = 2 * d * plane * 4;
  EXPECT_NEAR(p.bus_bytes_per_step, slabs / d * (tile * 12 + 2 * faces), 1e3);
  EXPECT_NEAR(p.bus_seconds, slabs / d * (tile * 8 + faces) / (0.95 * 50e9), 1e-9);
}

TEST(GpuMemory, ASplitBesideAStreamedPartMustGainATenth) {
  // jacobi2d 49152^2 on 4 GiB GPUs with the node's calibrated speeds (21.5 GB/s a core, 2600 a
  // GPU, 12 bytes a point): on one GPU with 15 cores a split predicted 28 % shorter is taken; on
  // four with 12 cores one predicted 4 % shorter is not (simulated, such a split ran from 6 %
  // faster to 16 % slower as it moved by 21 rows).
  Machine m = gpu_node(3865051136, 1, 12 / 2600e9);
  m.point = {12, 4};
  m.cpu_point_seconds = 12 / 21.5e9;
  TileChoice c = choose_tiles({49152, 49152, 1}, 2, {0, 0, 0}, m);
  EXPECT_GT(c.split, 0) << c.summary;
  EXPECT_LT(c.split, 49152) << c.summary;
  m = gpu_node(3865051136, 4, 12 / 2600e9);
  m.point = {12, 4};
  m.cpu_workers = 12;
  m.cpu_point_seconds = 12 / 21.5e9;
  c = choose_tiles({49152, 49152, 1}, 2, {0, 0, 0}, m);
  EXPECT_EQ(c.split, 49152) << c.summary;
  EXPECT_THAT(c.summary, HasSubstr("a CPU part beside the streamed one would gain less than 10 %"));
}

TEST(GpuMemory, FacesBetweenGpusArePricedByTheirLink) {
  using tessera::partition::plan_gpu_memory;
  // heat3d 1024^3 on 4 GPUs of 80 GB: each GPU's step is its slab's points and its faces of a
  // plane (8 bytes a point) over the link to its neighbours: NVLink-class 300 GB/s, two faces
  // in and out at once; through the host (the 50 GB/s bus, where StarPU gives no faster link
  // between GPUs) each face twice in turn, two neighbours' on the bus one after another: four
  // (two on 2 GPUs); none on one GPU.
  const double plane = 1024.0 * 1024;
  Machine m = gpu_node(80e9, 4);
  for (auto& g : m.gpus) g.peer_bytes_per_second = 300e9;
  const auto nvlink = plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1);
  EXPECT_FALSE(nvlink.streamed);
  EXPECT_NEAR(nvlink.exchange_seconds, 2 * plane * 8 / 300e9, 1e-12);
  EXPECT_NEAR(nvlink.step_seconds,
              kH100PointSeconds * plane * 256 + nvlink.exchange_seconds + 15e-6, 1e-12);
  for (auto& g : m.gpus) g.peer_bytes_per_second = 0;
  EXPECT_NEAR(plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1).exchange_seconds,
              4 * plane * 8 / 50e9, 1e-12);
  for (auto& g : m.gpus) g.peer_bytes_per_second = 50e9;  // PCIe between GPUs: the same
  EXPECT_NEAR(plan_gpu_memory(plane, 1024, m, kH100PointSeconds, 15e-6, 1).exchange_seconds,
              4 * plane * 8 / 50e9, 1e-12);
  EXPECT_NEAR(
      plan_gpu_memory(plane, 1024, gpu_node(80e9, 2), kH100PointSeconds, 15e-6, 1).exchange_seconds,
      2 * plane * 8 / 50e9, 1e-12);
  for (auto& g : m.gpus) g.peer_bytes_per_second = 0;
  EXPECT_EQ(
      plan_gpu_memory(plane, 1024, gpu_node(80e9, 1), kH100PointSeconds, 15e-6, 1).exchange_seconds,
      0);
  // The placement line says it.
  const TileChoice c = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_THAT(c.summary, HasSubstr("the faces between GPUs"));
}

TEST(GpuMemory, SlowLinksBetweenGpusCutTheSlabsEdgesOff) {
  // heat3d 1024^3 on 4 GPUs, no CPU worker. Through the host (50 GB/s), a step's faces take
  // 0.34 ms beside 1.6 ms of compute: each slab's edges (16 planes) are cut off to run first,
  // their faces crossing while the rest computes. Over 300 GB/s links: 0.06 ms, not worth the
  // cuts.
  Machine m = gpu_node(80e9, 4);
  m.cpu_workers = 0;
  const TileChoice host = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_EQ(host.cuts[2], (Cuts{240, 256, 272, 496, 512, 528, 752, 768, 784}));
  EXPECT_EQ(host.gpu_tiles, 10);
  EXPECT_THAT(host.summary, HasSubstr("edges of 16 planes first"));
  for (auto& g : m.gpus) g.peer_bytes_per_second = 300e9;
  const TileChoice nvlink = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_EQ(nvlink.cuts[2], (Cuts{256, 512, 768}));
  EXPECT_THAT(nvlink.summary, Not(HasSubstr("edges")));
  // Streamed (4 GiB GPUs): the slabs' faces go through main memory with them; no edges (they
  // had been cut off a streamed part's 28 slabs too: 82 tiles, a step 2.2x slower simulated).
  Machine small = gpu_node(3865051136, 4);
  small.cpu_workers = 0;
  const TileChoice streamed = choose_tiles({1024, 1024, 1024}, 3, {0, 0, 0}, small);
  EXPECT_GT(streamed.stream_depth, 0);
  EXPECT_EQ(streamed.gpu_tiles, 16);  // 4 a GPU
  EXPECT_THAT(streamed.summary, Not(HasSubstr("between GPUs")));
}

// Where a GPU-only grid's slabs go (partition::cheapest_gpu_layout): each free axis and GPU
// count priced, GPU-only. The prices, independently of plan_gpu_memory: a GPU's step is its
// share of the points at kH100PointSeconds, a task's 15 us, and, on several GPUs, its faces
// through the host (the 50 GB/s bus: each twice in turn, a face a neighbour), a plane of 8 bytes
// a point (heat3d's u).
double gpu_only_step(double plane, std::int64_t planes, int gpus, double link) {
  const auto share = static_cast<double>((planes + gpus - 1) / gpus);
  const int faces = 2 * std::min(2, gpus - 1);
  return kH100PointSeconds * plane * share + 15e-6 + (gpus > 1 ? faces * plane * 8 / link : 0);
}

TEST(GpuLayout, ThinGridsAreCutAlongTheAxisWithTheSmallestFaces) {
  using tessera::partition::cheapest_gpu_layout;
  // heat3d 2048x2048x64 on 4 GPUs through the host, no CPU worker. z slabs (16 planes of
  // 2048^2): 0.39 ms of compute and 2.68 ms of faces, 3.09 ms, slower than one GPU (1.58 ms);
  // y slabs (512 planes of 2048 x 64): 0.39 ms and 0.08 ms of faces, 0.49 ms.
  Machine m = gpu_node(80e9, 4);
  m.cpu_workers = 0;
  const double z4 = gpu_only_step(2048.0 * 2048, 64, 4, 50e9);
  const double z1 = gpu_only_step(2048.0 * 2048, 64, 1, 50e9);
  const double y4 = gpu_only_step(2048.0 * 64, 2048, 4, 50e9);
  ASSERT_GT(z4, z1);
  ASSERT_LT(y4, 0.35 * z1);
  const auto layout = cheapest_gpu_layout({2048, 2048, 64}, 3, {0, 0, 0}, m);
  EXPECT_EQ(layout.axis, 1);
  EXPECT_EQ(layout.gpus, 4);
  // Its faces partly hidden where each slab's edges are cut off to run first.
  EXPECT_LE(layout.step_seconds, y4);
  EXPECT_GE(layout.step_seconds, y4 - 4 * 2048.0 * 64 * 8 / 50e9);
  EXPECT_NEAR(layout.default_step_seconds, z4, 1e-9);
  const TileChoice c = choose_tiles({2048, 2048, 64}, 3, {0, 0, 0}, m);
  SCOPED_TRACE(c.summary);
  EXPECT_EQ(c.split_axis, 1);
  EXPECT_EQ(c.split, 2048);
  EXPECT_TRUE(c.cuts[2].empty());
  // A slab a GPU (and, where the faces gain by it, each slab's edges cut off to run first).
  EXPECT_THAT(c.cuts[1],
              testing::IsSupersetOf({std::int64_t{512}, std::int64_t{1024}, std::int64_t{1536}}));
  EXPECT_THAT(c.summary, HasSubstr("GPU slabs along y on 4 of 4 GPU(s)"));
  // A cube's faces are alike along every axis: z slabs on every GPU, as before.
  const auto cube = cheapest_gpu_layout({1024, 1024, 1024}, 3, {0, 0, 0}, m);
  EXPECT_EQ(cube.axis, 2);
  EXPECT_EQ(cube.gpus, 4);
  // A hand-set share keeps the user's layout.
  m.gpu_share = 1;
  EXPECT_EQ(cheapest_gpu_layout({2048, 2048, 64}, 3, {0, 0, 0}, m).axis, 2);
}

TEST(GpuLayout, NoMoreGpusThanTheirPricesPay) {
  using tessera::partition::cheapest_gpu_layout;
  // A 2-D grid of 4096 x 64 (y its one free axis): a face of 4096 points takes 1.31 us each way
  // through the host, more than a GPU more saves of 1.53 us of compute: one GPU (16.53 us)
  // against 2 (17.07), 3 (16.84) and 4 (16.69).
  Machine m = gpu_node(80e9, 4);
  m.cpu_workers = 0;
  const double one = gpu_only_step(4096, 64, 1, 50e9);
  for (int k = 2; k <= 4; ++k) ASSERT_GT(gpu_only_step(4096, 64, k, 50e9), one) << k;
  auto layout = cheapest_gpu_layout({4096, 64, 1}, 2, {0, 0, 0}, m);
  EXPECT_EQ(layout.axis, 1);
  EXPECT_EQ(layout.gpus, 1);
  EXPECT_NEAR(layout.step_seconds, one, 1e-12);
  const TileChoice c = choose_tiles({4096, 64, 1}, 2, {0, 0, 0}, m);
  EXPECT_TRUE(c.cuts[1].empty()) << c.summary;
  EXPECT_THAT(c.summary, HasSubstr("on 1 of 4 GPU(s)"));
  // Over 300 GB/s links the faces take 0.22 us: four GPUs pay.
  for (auto& g : m.gpus) g.peer_bytes_per_second = 300e9;
  ASSERT_LT(gpu_only_step(4096, 64, 4, 300e9), one);
  EXPECT_EQ(cheapest_gpu_layout({4096, 64, 1}, 2, {0, 0, 0}, m).gpus, 4);
  // On several ranks every rank's GPUs take their blocks.
  for (auto& g : m.gpus) g.peer_bytes_per_second = 0;
  m.ranks = 2;
  EXPECT_EQ(cheapest_gpu_layout({4096, 64, 1}, 2, {0, 0, 0}, m).gpus, 4);
}

TEST(GpuMemory, TheLineSaysWhatIsAssumed) {
  // GPU speed from the models but a core's time assumed (the simulation's regression models
  // record no work): said; both from the models: not.
  Machine m = gpu_node(80e9);
  m.cpu_point_seconds = tessera::partition::kCpuPointSeconds;
  m.cpu_point_assumed = true;
  m.gpu_point_seconds = m.cpu_point_seconds / 300;
  EXPECT_THAT(choose_tiles({512, 512, 512}, 3, {0, 0, 0}, m).summary,
              HasSubstr("a core assumed 2.50 ns a point"));
  m.cpu_point_assumed = false;
  EXPECT_THAT(choose_tiles({512, 512, 512}, 3, {0, 0, 0}, m).summary, Not(HasSubstr("assumed")));
}

}  // namespace

namespace {

using tessera::partition::Device;
using tessera::partition::place_tiles;
using tessera::partition::Plan;

// The out-of-core node of docs/simulation.md: GPUs of 4 GiB as StarPU reports them, a streamed
// visit's faces kept on the GPU and its inputs prefetched (fused exchanges, StarPU 1.4).
Machine out_of_core_node(int gpus, int cores) {
  Machine m = gpu_node(3865051136, gpus);
  m.cpu_workers = cores;
  m.cpu_point_seconds = 2.5e-9;
  m.ghost_planes_stay = m.faces_packed_ahead = m.faces_read_from_next_slab = true;
  m.visits_prefetched = true;
  return m;
}

// A streamed slab is at least as thick as a visit's steps (its ghost planes come from one
// neighbour each side): the thickest slab that fits, cut evenly, may not leave thinner ones (76
// slabs of 13-14 planes at 14 steps a visit ran 8x slower than predicted, simulated). Every z
// extent from 900 to 1100 planes of 1024 x 1024 (and 8 times as many y planes of 8192 x 64) on
// 1 to 4 GPUs of 3 to 4 GiB.
TEST(GpuMemory, StreamedSlabsAreNoThinnerThanAVisitsSteps) {
  for (double gib : {3.0, 3.6, 4.0})
    for (int gpus : {1, 2, 3, 4})
      for (std::int64_t planes = 900; planes <= 1100; planes += 2) {
        Machine m = out_of_core_node(gpus, 0);
        m.gpus.assign(static_cast<std::size_t>(gpus), {gib * (1 << 30), 50e9});
        // z slabs, and y slabs where z planes are too large for a slab (8192 x 64 planes).
        for (const tessera::detail::Extent3& extent :
             {tessera::detail::Extent3{1024, 1024, planes},
              tessera::detail::Extent3{8192, 8 * planes, 64}}) {
          const TileChoice c = choose_tiles(extent, 3, {0, 0, 0}, m);
          if (c.stream_depth == 0) continue;
          const auto axis = static_cast<std::size_t>(c.split_axis);
          std::int64_t previous = 0, thinnest = extent[axis];
          for (std::int64_t cut : c.cuts[axis])
            thinnest = std::min(thinnest, cut - previous), previous = cut;
          thinnest = std::min(thinnest, extent[axis] - previous);
          ASSERT_GE(thinnest, c.stream_depth)
              << gib << " GiB, " << gpus << " GPU(s), " << extent[axis] << " planes: " << c.summary;
        }
      }
}

// A tiling's plan from the planner's choice, as a grid's storage makes it (every tile this
// rank's).
Plan plan_of(const std::array<Cuts, 3>& cuts, int axis, std::int64_t split, int depth, int gpus) {
  std::array<std::vector<std::int64_t>, 3> starts;
  const std::int64_t extent = 1024;
  for (int a = 0; a < 3; ++a)
    starts[a] = tessera::partition::tile_starts(extent, extent, cuts[static_cast<std::size_t>(a)]);
  const Tiling tiling({extent, extent, extent}, starts, {false, false, false});
  return place_tiles(tiling, {axis, split, depth, true},
                     std::vector<bool>(static_cast<std::size_t>(tiling.size()), true), gpus);
}

// Known answers of the placement for user and library tiles of a grid larger than the GPUs
// (heat3d 1024^3 on GPUs of 4 GiB, docs/simulation.md "One plan for every tiling"): the user's
// 16 tiles of 1024 x 1024 x 64 get the library's plan, z slabs streamed on every GPU, each GPU a
// contiguous block of as many slabs, the slabs beside another GPU's its only edges; with 15
// cores, GPU-only (the cores 336 ms a step against the GPU's 11.7). The slabs and predicted steps
// of the table's rows: 36 slabs and 11.72 ms on 1 GPU, 64 and 3.19 ms on 4 (40 and 5.90 on 2).
TEST(Place, UserTilesLargerThanTheGpusGetTheLibrarysPlan) {
  using tessera::partition::Planner;
  std::array<Cuts, 3> given;
  for (std::int64_t z = 64; z < 1024; z += 64) given[2].push_back(z);
  const std::map<int, std::pair<std::size_t, std::string>> table{
      {1, {36, "11.72 ms"}}, {2, {40, "5.90 ms"}}, {4, {64, "3.19 ms"}}};
  for (const auto& [gpus, row] : table) {
    SCOPED_TRACE(gpus);
    for (int cores : {0, 15}) {
      const Machine m = out_of_core_node(gpus, cores);
      const TileChoice library = Planner(m, true).automatic({1024, 1024, 1024}, 3, {0, 0, 0});
      const auto user = Planner(m, true).given({1024, 1024, 1024}, 3, given);
      SCOPED_TRACE(user.summary);
      EXPECT_TRUE(user.merged);
      EXPECT_EQ(user.cuts, library.cuts);
      // Given as the library's own slabs: kept, and streamed as the library's.
      const auto same = Planner(m, true).given({1024, 1024, 1024}, 3, library.cuts);
      EXPECT_FALSE(same.merged);
      EXPECT_EQ(same.cuts, library.cuts);
      EXPECT_EQ(same.stream_depth, library.stream_depth);
      EXPECT_EQ(user.stream_depth, library.stream_depth);
      EXPECT_EQ(user.stream_depth, 16);
      EXPECT_EQ(user.cuts[2].size() + 1, row.first);
      EXPECT_THAT(user.summary, HasSubstr("its predicted step " + row.second));
      EXPECT_EQ(user.split_axis, 2);
      EXPECT_EQ(user.split, 1024);  // GPU-only
      const Plan plan = plan_of(user.cuts, user.split_axis, user.split, user.stream_depth, gpus);
      EXPECT_TRUE(plan.streamed());
      const auto slabs = static_cast<int>(plan.tiles.size());
      EXPECT_EQ(slabs % gpus, 0);
      for (int t = 0; t < slabs; ++t) {
        EXPECT_EQ(plan.device(t), (Device{tessera::detail::DeviceClass::Cuda, t * gpus / slabs}));
        const bool block_end = (t + 1) % (slabs / gpus) == 0 || t % (slabs / gpus) == 0;
        EXPECT_EQ(plan.edge(t), gpus > 1 && block_end && t > 0 && t + 1 < slabs) << t;
      }
    }
  }
}

// A grid thin along z on 4 GPUs through the host (docs/simulation.md, the pcie node's 2048 x 2048
// x 64): cut along y (GpuLayout.ThinGridsAreCutAlongTheAxisWithTheSmallestFaces), each GPU the
// tiles of its quarter of y, the tiles at a quarter's ends its edges (their tasks first).
TEST(Place, AThinGridsGpusTakeBlocksAlongY) {
  Machine m = gpu_node(80e9, 4);
  m.cpu_workers = 0;
  const TileChoice c = choose_tiles({2048, 2048, 64}, 3, {0, 0, 0}, m);
  SCOPED_TRACE(c.summary);
  ASSERT_EQ(c.split_axis, 1);
  std::array<std::vector<std::int64_t>, 3> starts;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t extent = a == 2 ? 64 : 2048;
    starts[a] =
        tessera::partition::tile_starts(extent, extent, c.cuts[static_cast<std::size_t>(a)]);
  }
  const Tiling tiling({2048, 2048, 64}, starts, {false, false, false});
  const Plan plan =
      place_tiles(tiling, {c.split_axis, c.split, c.stream_depth, true},
                  std::vector<bool>(static_cast<std::size_t>(tiling.size()), true), 4);
  EXPECT_FALSE(plan.streamed());
  for (int t = 0; t < tiling.size(); ++t) {
    const std::int64_t lo = tiling.tile(t).origin[1], hi = lo + tiling.tile(t).extent[1];
    EXPECT_EQ(plan.device(t).gpu, static_cast<int>(lo / 512)) << t;
    EXPECT_EQ(plan.edge(t), (lo % 512 == 0 && lo > 0) || (hi % 512 == 0 && hi < 2048)) << t;
  }
}

// The same grid given in tiles of 2048 x 2048 x 16, one a GPU: their 2048 x 2048 faces crossed
// between the GPUs through the host each step (2.53 ms a step simulated, 0.48 in the library's y
// slabs). Given as an extent, they are re-cut as the library's (Planner::recut_for_gpus); as cut
// positions (Grid::cut, --keep-gpu-tiles) they stay.
TEST(Place, GivenTilesOfAThinGridTakeTheLibrarysAxis) {
  using tessera::partition::Planner;
  Machine m = gpu_node(80e9, 4);
  m.cpu_workers = 0;
  std::array<Cuts, 3> given;
  given[2] = {16, 32, 48};
  const auto p = Planner(m, true).given({2048, 2048, 64}, 3, given);
  SCOPED_TRACE(p.summary);
  EXPECT_TRUE(p.merged);
  EXPECT_EQ(p.split_axis, 1);
  EXPECT_EQ(p.split, 2048);
  EXPECT_EQ(p.cuts, choose_tiles({2048, 2048, 64}, 3, {0, 0, 0}, m).cuts);
  EXPECT_THAT(p.summary, HasSubstr("GPU slabs along y on 4 of 4 GPU(s)"));
  const auto kept = Planner(m, true).given({2048, 2048, 64}, 3, given, false);
  EXPECT_FALSE(kept.merged);
  EXPECT_EQ(kept.cuts, given);
}

}  // namespace

namespace {

// All-pairs work (nbody's 65536 bodies on 4 GPUs, Planner.AllPairsTilesFillTheGpus): a tile a
// GPU, in order along x, each beside another GPU's an edge.
TEST(Place, AllPairsTilesTakeAGpuEach) {
  using tessera::partition::place_tiles;
  using tessera::partition::Planner;
  Machine m = h100_node(0, 0);
  m.cuda_workers = 4;
  m.cpu_workers = 0;
  m.gpu_pair_seconds = 2.8e-12;
  const TileChoice c = Planner(m, true).pairs({65536, 1, 1}, 2);
  SCOPED_TRACE(c.summary);
  ASSERT_EQ(c.split_axis, 0);
  std::array<std::vector<std::int64_t>, 3> starts{
      tessera::partition::tile_starts(65536, 65536, c.cuts[0]), {0}, {0}};
  const Tiling tiling({65536, 1, 1}, starts, {false, false, false});
  ASSERT_EQ(tiling.size(), 4);
  const auto plan =
      place_tiles(tiling, {c.split_axis, c.split, 0, true}, std::vector<bool>(4, true), 4);
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(plan.device(t), (tessera::partition::Device{tessera::detail::DeviceClass::Cuda, t}));
    EXPECT_TRUE(plan.edge(t));
  }
  EXPECT_FALSE(plan.streamed());
}

}  // namespace
