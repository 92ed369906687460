// Tiling and halo plans, checked by hand on small cases (pure code, no StarPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "partition/plan.hpp"
#include "partition/tiling.hpp"

namespace {

using FaceRule = tessera::Boundary::Kind;
using tessera::partition::Extent3;
using tessera::partition::FaceRules;
using tessera::partition::plan_halos;
using tessera::partition::Tile;
using tessera::partition::TileLayout;
using tessera::partition::Tiling;

// A streamed tile's copies move its planes along the outermost axis, each with its ghost
// points on the other axes: from its first point's plane at x and y's first ghost to the end of
// its last plane, the ghost planes of that axis left out (z in 3-D, y in 2-D).
TEST(TileLayout, PlanesSpanThePointsPlanesOnly) {
  const TileLayout slab{{64, 64, 32}, {4, 4, 4}, 8};
  const auto [first, count] = slab.planes(3);
  EXPECT_EQ(first, slab.offset(-4, -4, 0));
  EXPECT_EQ(first, 4 + 4 * 72 * 72);
  EXPECT_EQ(count, 32 * 72 * 72);
  EXPECT_EQ(first + count, slab.size() - 4 * 72 * 72);
  EXPECT_EQ(first + count, slab.offset(67, 67, 31) + 1);
  const TileLayout odd{{13, 5, 1}, {3, 3, 0}, 16};
  const auto [row, rows] = odd.planes(2);
  EXPECT_EQ(row, 13 + 3 * 32);
  EXPECT_EQ(rows, 5 * 32);
  EXPECT_EQ(row, odd.offset(-3, 0, 0));
}

// Rows of a tile start a cache line: heat3d's 64 x 64 x 32 slab with 4 ghost layers of doubles
// (8 a line) starts 4 elements into its buffer, so that point (0, y, z) is at a multiple of 8;
// an odd row is padded to whole lines; one element a line is the dense layout.
TEST(TileLayout, EveryRowStartsACacheLine) {
  const TileLayout slab{{64, 64, 32}, {4, 4, 4}, 8};
  EXPECT_EQ(slab.lead(), 4);
  EXPECT_EQ(slab.stride(1), 72);
  EXPECT_EQ(slab.offset(0, 0, 0), 4 + 4 + 4 * 72 + 4 * 72 * 72);
  EXPECT_EQ(slab.size(), 4 + 72 * 72 * 40);
  const TileLayout odd{{13, 5, 1}, {3, 3, 0}, 16};  // floats in 2-D, 19 elements a row
  EXPECT_EQ(odd.lead(), 13);
  EXPECT_EQ(odd.stride(1), 32);
  EXPECT_EQ(odd.size(), 13 + 32 * 11);
  const TileLayout dense{{13, 5, 1}, {3, 3, 0}};
  EXPECT_EQ(dense.lead(), 0);
  EXPECT_EQ(dense.stride(1), 19);
  EXPECT_EQ(dense.size(), 19 * 11);
  for (const TileLayout& l : {slab, odd}) {
    for (std::int64_t z = -l.halo[2]; z < l.n[2] + l.halo[2]; ++z)
      for (std::int64_t y = -l.halo[1]; y < l.n[1] + l.halo[1]; ++y) {
        EXPECT_EQ(l.offset(0, y, z) % l.line, 0) << "row " << y << ", plane " << z;
        EXPECT_GE(l.offset(-l.halo[0], y, z), 0);
        EXPECT_LT(l.offset(l.n[0] + l.halo[0] - 1, y, z), l.size());
      }
  }
  EXPECT_EQ(tessera::partition::line_elements(8), 8);
  EXPECT_EQ(tessera::partition::line_elements(1), 64);
  EXPECT_EQ(tessera::partition::line_elements(24), 1);  // a 3-double struct: rows stay dense
}

// 4 x 4 x 3 tiles of a 24 x 16 x 12 grid, periodic along x: cutting x costs two planes of
// 16 x 12 = 192 points (the wrap too), y one plane of 24 x 12 = 288, z one of 24 x 16 = 384.
TEST(Distribution, RankGridCutsTheFewestPoints) {
  const Tiling t({24, 16, 12}, {6, 4, 4}, {true, false, false});
  using G = std::array<int, 3>;
  EXPECT_EQ(tessera::partition::choose_rank_grid(t, 1), (G{1, 1, 1}));
  EXPECT_EQ(tessera::partition::choose_rank_grid(t, 2), (G{1, 2, 1}));  // 288 < 384
  EXPECT_EQ(tessera::partition::cut_points(t, {2, 1, 1}), 384);
  EXPECT_EQ(tessera::partition::cut_points(t, {2, 2, 1}), 384 + 288);
  // (1, 2, 2) and (2, 2, 1) both cut 672 points (1, 4, 1: 864); the first in x order wins.
  EXPECT_EQ(tessera::partition::choose_rank_grid(t, 4), (G{1, 2, 2}));
  EXPECT_EQ(tessera::partition::choose_rank_grid(t, 5), (G{0, 0, 0}));   // 5 tiles on no axis
  EXPECT_EQ(tessera::partition::choose_rank_grid(t, 49), (G{0, 0, 0}));  // more ranks than tiles
}

TEST(Distribution, BlocksDifferByAtMostOneTileAndRanksAreXFastest) {
  const Tiling t({10, 6, 1}, {2, 2, 1}, {false, false, false});  // 5 x 3 tiles
  const auto d = tessera::partition::distribute(t, {2, 3, 1});
  // x: tiles 0, 1, 2 -> block 0 (c * 2 / 5), tiles 3, 4 -> block 1; y: one tile row per block.
  const std::vector<int> want{0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5};
  EXPECT_EQ(d.owner, want);
}

TEST(Tiling, LastTilesAreSmallerAndNumberedXFastest) {
  const Tiling t({10, 7, 1}, {4, 3, 1}, {false, false, false});
  EXPECT_EQ(t.size(), 3 * 3);
  EXPECT_EQ(t.tile(2).extent[0], 2);
  EXPECT_EQ(t.tile(2).origin[0], 8);
  EXPECT_EQ(t.tile(3).coord[1], 1);
  EXPECT_EQ(t.tile(8).extent[1], 1);
  EXPECT_EQ(t.thinnest(0), 2);
  EXPECT_EQ(t.thinnest(1), 1);
  for (int id = 0; id < t.size(); ++id) {  // every point of every tile maps back to it
    const Tile& tile = t.tile(id);
    for (std::int64_t y = 0; y < tile.extent[1]; ++y)
      for (std::int64_t x = 0; x < tile.extent[0]; ++x)
        EXPECT_EQ(t.tile_at({tile.origin[0] + x, tile.origin[1] + y, 0}), id);
  }
}

TEST(Tiling, NeighboursWrapOnlyOnPeriodicAxes) {
  const Tiling t({8, 8, 1}, {4, 4, 1}, {true, false, false});
  EXPECT_EQ(t.neighbour(0, {-1, 0, 0}), 1);   // wraps along x
  EXPECT_EQ(t.neighbour(0, {0, -1, 0}), -1);  // y is closed
  EXPECT_EQ(t.neighbour(0, {1, 1, 0}), 3);
}

FaceRules all(FaceRule r) {
  FaceRules rules;
  for (auto& axis : rules.rule) axis = {r, r};
  return rules;
}

TEST(HaloPlan, StarNeedsFacesOnlyAndBoxNeedsCornersToo) {
  const Tiling t({9, 9, 9}, {3, 3, 3}, {true, true, true});
  const auto star = plan_halos(t, {1, 1, 1}, all(FaceRule::Periodic), 1, false, 3);
  const auto box = plan_halos(t, {1, 1, 1}, all(FaceRule::Periodic), 1, true, 3);
  EXPECT_EQ(star[13].pack_dirs.size(), 6u);
  EXPECT_EQ(star[13].ghosts.count, 6);
  EXPECT_EQ(star[13].pack_sizes[0], 3 * 3);
  EXPECT_EQ(box[13].pack_dirs.size(), 26u);
  EXPECT_EQ(box[13].sources.size(), 26u);
}

TEST(HaloPlan, ConstantFacesNeedNoBuffersAndMirrorsReadTheTileItself) {
  const Tiling t({4, 4, 1}, {4, 4, 1}, {false, false, false});  // one tile
  const auto dirichlet = plan_halos(t, {2, 2, 0}, all(FaceRule::Dirichlet), 2, true, 2);
  EXPECT_TRUE(dirichlet[0].pack_dirs.empty());
  EXPECT_EQ(dirichlet[0].ghosts.count, 8);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(dirichlet[0].ghosts.region[r].src_slot, -1);
  const auto mirror = plan_halos(t, {2, 2, 0}, all(FaceRule::Neumann), 2, true, 2);
  EXPECT_TRUE(mirror[0].sources.empty());
  for (int r = 0; r < 8; ++r) EXPECT_EQ(mirror[0].ghosts.region[r].src_slot, 0);
}

// Region copies in plain loops: what kernels/common/region_copy.hpp does on either backend.
void copy(const tessera::partition::RegionCopyList& list, const std::vector<double*>& slots) {
  for (int n = 0; n < list.count; ++n) {
    const tessera::partition::RegionCopy& r = list.region[n];
    for (std::int64_t k = 0; k < r.dims[2]; ++k)
      for (std::int64_t j = 0; j < r.dims[1]; ++j)
        for (std::int64_t i = 0; i < r.dims[0]; ++i)
          slots[static_cast<std::size_t>(r.dst_slot)][r.dst_start + i * r.dst_stride[0] +
                                                      j * r.dst_stride[1] + k * r.dst_stride[2]] =
              slots[static_cast<std::size_t>(r.src_slot)]
                   [r.src_start + i * r.src_stride[0] + j * r.src_stride[1] + k * r.src_stride[2]];
  }
}

using Plans = std::vector<tessera::partition::TileHaloPlan>;
using Faces = std::vector<std::vector<std::vector<double>>>;  // [tile][pack direction]

// Runs tile `id`'s packs from `tile` into face buffers of its own, appended to `faces`.
void pack_faces(const Plans& plans, int id, std::vector<double>& tile, Faces& faces) {
  std::vector<double*> slots{tile.data()};
  auto& buffers = faces.emplace_back();
  for (std::int64_t size : plans[static_cast<std::size_t>(id)].pack_sizes)
    slots.push_back(buffers.emplace_back(static_cast<std::size_t>(size)).data());
  copy(plans[static_cast<std::size_t>(id)].packs, slots);
}

// The slots of tile `id`'s ghost copies: `tile`, then the face buffers of its sources.
std::vector<double*> ghost_slots(const Plans& plans, int id, double* tile, Faces& faces) {
  std::vector<double*> slots{tile};
  for (const auto& [from, dir] : plans[static_cast<std::size_t>(id)].sources) {
    const auto& dirs = plans[static_cast<std::size_t>(from)].pack_dirs;
    const auto k =
        static_cast<std::size_t>(std::find(dirs.begin(), dirs.end(), dir) - dirs.begin());
    slots.push_back(faces[static_cast<std::size_t>(from)][k].data());
  }
  return slots;
}

// Ghost regions read from a face buffer and the same regions read straight from the tile that
// packed it (read_from_tile) copy the same values: slabs along z, box-shaped layers of 2 (the
// corners too), x mirrored (negative strides through the face), y wrapped.
TEST(HaloPlan, AFaceReadStraightFromTheTileCopiesWhatItsBufferHolds) {
  const Tiling t({6, 5, 12}, {6, 5, 4}, {false, true, false});
  FaceRules rules = all(FaceRule::Neumann);
  rules.rule[1] = {FaceRule::Periodic, FaceRule::Periodic};
  const auto plans = plan_halos(t, {2, 2, 2}, rules, 2, true, 3);
  std::vector<std::vector<double>> tiles;
  Faces faces;
  for (int id = 0; id < t.size(); ++id) {
    const TileLayout layout{t.tile(id).extent, {2, 2, 2}, 1};
    std::vector<double>& tile = tiles.emplace_back(static_cast<std::size_t>(layout.size()));
    for (std::size_t i = 0; i < tile.size(); ++i) tile[i] = 1000.0 * id + static_cast<double>(i);
    pack_faces(plans, id, tile, faces);
  }
  // Tile 0's ghost layers through the buffers, then straight from tile 1 for its face.
  const tessera::partition::TileHaloPlan& plan = plans[0];
  const tessera::partition::TileHaloPlan& above = plans[1];
  std::vector<double> through = tiles[0], straight = tiles[0];
  std::vector<double*> slots = ghost_slots(plans, 0, through.data(), faces);
  copy(plan.ghosts, slots);
  const std::pair<int, tessera::partition::Dir3> face{1, {0, 0, -1}};
  const auto source = std::find(plan.sources.begin(), plan.sources.end(), face);
  ASSERT_NE(source, plan.sources.end());
  const int slot = 1 + static_cast<int>(source - plan.sources.begin());
  const auto packed = std::find(above.pack_dirs.begin(), above.pack_dirs.end(), face.second);
  const int face_slot = 1 + static_cast<int>(packed - above.pack_dirs.begin());
  tessera::partition::RegionCopyList direct = plan.ghosts;
  int rewritten = 0, mirrored = 0;
  for (int r = 0; r < direct.count; ++r) {
    if (direct.region[r].src_slot != slot) continue;
    for (int p = 0; p < above.packs.count; ++p)
      if (above.packs.region[p].dst_slot == face_slot)
        direct.region[r] =
            tessera::partition::read_from_tile(plan.ghosts.region[r], above.packs.region[p]);
    ++rewritten;
    mirrored += direct.region[r].src_stride[0] < 0 ? 1 : 0;
  }
  EXPECT_GE(rewritten, 3);  // the face and its mirrored corners
  EXPECT_GE(mirrored, 1);
  slots[0] = straight.data();
  slots[static_cast<std::size_t>(slot)] = tiles[1].data();
  copy(direct, slots);
  EXPECT_EQ(straight, through);
  EXPECT_NE(through, tiles[0]);
}

// The value every test point holds: its global coordinates, coded.
double coded(std::int64_t x, std::int64_t y, std::int64_t z) {
  return static_cast<double>(x + 100 * y + 10000 * z);
}

// Fills every tile's points with coded(global index), runs every tile's packs, then every
// tile's ghost copies (through the buffers of its sources), and returns the tiles.
std::vector<std::vector<double>> exchanged(const Tiling& t, const Extent3& halo,
                                           const Plans& plans) {
  std::vector<std::vector<double>> tiles;
  Faces faces;
  for (int id = 0; id < t.size(); ++id) {
    const Tile& tile = t.tile(id);
    const TileLayout layout{tile.extent, halo, 1};
    std::vector<double>& v = tiles.emplace_back(static_cast<std::size_t>(layout.size()), -1.0);
    for (std::int64_t z = 0; z < tile.extent[2]; ++z)
      for (std::int64_t y = 0; y < tile.extent[1]; ++y)
        for (std::int64_t x = 0; x < tile.extent[0]; ++x)
          v[static_cast<std::size_t>(layout.offset(x, y, z))] =
              coded(tile.origin[0] + x, tile.origin[1] + y, tile.origin[2] + z);
    pack_faces(plans, id, v, faces);
  }
  for (int id = 0; id < t.size(); ++id)
    copy(plans[static_cast<std::size_t>(id)].ghosts,
         ghost_slots(plans, id, tiles[static_cast<std::size_t>(id)].data(), faces));
  return tiles;
}

// A tile that spans a periodic axis is its own neighbour across the wrap: its ghosts there are
// its own points, copied straight from it, and the corners beyond another axis' face come from
// that face's buffer. Life's slabs (one tile across x, two along y) then read 2 face buffers
// where they read 8, and every ghost point holds its wrapped point's value.
TEST(HaloPlan, ATileAcrossAPeriodicAxisReadsItsOwnPoints) {
  const Tiling t({8, 6, 5}, {8, 3, 5}, {true, true, true});  // across x and z, 2 tiles along y
  const Extent3 halo{2, 2, 2};
  const auto plans = plan_halos(t, halo, all(FaceRule::Periodic), 2, true, 3);
  for (const auto& plan : plans) {
    EXPECT_EQ(plan.pack_dirs.size(), 2u);  // its two y faces, of all 26 directions
    EXPECT_EQ(plan.sources.size(), 2u);
    for (const auto& source : plan.sources) EXPECT_EQ(source.second[0], 0);
  }
  const auto tiles = exchanged(t, halo, plans);
  const auto wrap = [](std::int64_t i, std::int64_t n) { return (i % n + n) % n; };
  for (int id = 0; id < t.size(); ++id) {
    const Tile& tile = t.tile(id);
    const TileLayout layout{tile.extent, halo, 1};
    for (std::int64_t z = -2; z < tile.extent[2] + 2; ++z)
      for (std::int64_t y = -2; y < tile.extent[1] + 2; ++y)
        for (std::int64_t x = -2; x < tile.extent[0] + 2; ++x)
          ASSERT_EQ(
              tiles[static_cast<std::size_t>(id)][static_cast<std::size_t>(layout.offset(x, y, z))],
              coded(wrap(tile.origin[0] + x, 8), wrap(tile.origin[1] + y, 6),
                    wrap(tile.origin[2] + z, 5)))
              << "tile " << id << " ghost " << x << ' ' << y << ' ' << z;
  }
  // Across x and mirrored in y (Neumann): no face buffer at all, corners wrapped and mirrored.
  const Tiling one({8, 6, 1}, {8, 6, 1}, {true, false, false});
  FaceRules rules = all(FaceRule::Neumann);
  rules.rule[0] = {FaceRule::Periodic, FaceRule::Periodic};
  const Extent3 flat{2, 2, 0};
  const auto mixed = plan_halos(one, flat, rules, 2, true, 2);
  EXPECT_TRUE(mixed[0].sources.empty());
  EXPECT_TRUE(mixed[0].pack_dirs.empty());
  const auto tile = exchanged(one, flat, mixed)[0];
  const TileLayout layout{{8, 6, 1}, flat, 1};
  for (std::int64_t y = -2; y < 8; ++y)
    for (std::int64_t x = -2; x < 10; ++x) {
      const std::int64_t my = y < 0 ? -1 - y : (y >= 6 ? 11 - y : y);  // i -> -1-i about each face
      EXPECT_EQ(tile[static_cast<std::size_t>(layout.offset(x, y, 0))], coded(wrap(x, 8), my, 0))
          << x << ' ' << y;
    }
}

}  // namespace

namespace {

using tessera::partition::Device;
using tessera::partition::GpuPart;
using tessera::partition::place_tiles;
using tessera::partition::Plan;
constexpr auto kAny = tessera::detail::DeviceClass::Any;
constexpr auto kCpu = tessera::detail::DeviceClass::Cpu;
constexpr auto kCuda = tessera::detail::DeviceClass::Cuda;

std::vector<Device> devices(const Plan& plan) {
  std::vector<Device> out;
  for (const Plan::Tile& t : plan.tiles) out.push_back(t.device);
  return out;
}
std::vector<bool> edges(const Plan& plan) {
  std::vector<bool> out;
  for (const Plan::Tile& t : plan.tiles) out.push_back(t.edge);
  return out;
}

// Known answers of the plan, by hand: 8 z slabs of 4 planes all on 4 GPUs go in blocks of 2 (not
// round-robin), the slabs beside another GPU's are edges.
TEST(Plan, SlabsGoInContiguousBlocksAndEdgesAreMarked) {
  const Tiling slabs({8, 8, 32}, {8, 8, 4}, {false, false, false});
  const std::vector<bool> all(8, true);
  const Plan four = place_tiles(slabs, {2, 32, 0, true}, all, 4);
  std::vector<Device> want;
  for (int gpu : {0, 0, 1, 1, 2, 2, 3, 3}) want.push_back({kCuda, gpu});
  EXPECT_EQ(devices(four), want);
  EXPECT_EQ(edges(four), (std::vector<bool>{false, true, true, true, true, true, true, false}));
  EXPECT_FALSE(four.streamed());
  EXPECT_TRUE(four.on_other_gpus(1, 2));
  EXPECT_FALSE(four.on_other_gpus(2, 3));
  // One GPU: no edges between GPUs.
  EXPECT_EQ(edges(place_tiles(slabs, {2, 32, 0, true}, all, 1)), std::vector<bool>(8, false));
}

// A split (a hand-set share or the planner's): the last 2 slabs the CPU part's, the GPU tile
// beside them an edge too; streamed, the plan says so and places as resident.
TEST(Plan, ASplitPutsTheRestOnTheCpusAndItsNeighbourIsAnEdge) {
  const Tiling slabs({8, 8, 32}, {8, 8, 4}, {false, false, false});
  const std::vector<bool> all(8, true);
  for (int depth : {0, 3}) {
    const Plan split = place_tiles(slabs, {2, 24, depth, false}, all, 2);
    std::vector<Device> want;
    for (int gpu : {0, 0, 0, 1, 1, 1}) want.push_back({kCuda, gpu});
    want.push_back({kCpu, -1});
    want.push_back({kCpu, -1});
    EXPECT_EQ(devices(split), want);
    EXPECT_EQ(edges(split),
              (std::vector<bool>{false, false, true, true, false, true, false, false}));
    EXPECT_EQ(split.streamed(), depth > 0);
  }
}

// Another rank's GPU tiles keep their class (its tasks there) but no GPU of this rank: the
// rank's own (the first 4 slabs) fill its 2 GPUs.
TEST(Plan, OnlyThisRanksGpuTilesGetItsGpus) {
  const Tiling slabs({8, 8, 32}, {8, 8, 4}, {false, false, false});
  std::vector<bool> mine(8, false);
  for (int t = 0; t < 4; ++t) mine[static_cast<std::size_t>(t)] = true;
  const Plan plan = place_tiles(slabs, {2, 32, 0, false}, mine, 2);
  std::vector<Device> want;
  for (int gpu : {0, 0, 1, 1, -1, -1, -1, -1}) want.push_back({kCuda, gpu});
  EXPECT_EQ(devices(plan), want);
  EXPECT_FALSE(plan.on_gpu(4));
}

// Without a split: the library's tiles on a rank without GPUs are pinned to the CPU workers
// (one tile a worker), a user's tiles or any tiles beside GPUs left to the scheduler.
TEST(Plan, WithoutASplitLibraryTilesStayOnTheCpusElseTheSchedulerPlaces) {
  const Tiling slabs({8, 8, 32}, {8, 8, 4}, {false, false, false});
  const std::vector<bool> all(8, true);
  EXPECT_EQ(devices(place_tiles(slabs, {-1, -1, 0, true}, all, 0)),
            std::vector<Device>(8, Device{kCpu, -1}));
  EXPECT_EQ(devices(place_tiles(slabs, {-1, -1, 0, false}, all, 0)),
            std::vector<Device>(8, Device{kAny, -1}));
  EXPECT_EQ(devices(place_tiles(slabs, {-1, -1, 0, true}, all, 2)),
            std::vector<Device>(8, Device{kAny, -1}));
}

// Fewer layers of tiles along the axis than GPUs (3 x 2 tiles, one layer of 3 along y on 2
// GPUs): blocks of tile count, so that every GPU computes.
TEST(Plan, OneLayerAcrossTheAxisStillUsesEveryGpu) {
  const Tiling lattice({12, 8, 1}, {4, 4, 1}, {false, false, false});  // 3 x 2 tiles
  const Plan plan = place_tiles(lattice, {1, 4, 0, false}, std::vector<bool>(6, true), 2);
  std::vector<int> gpus;
  for (const Device& d : devices(plan)) gpus.push_back(d.gpu);
  EXPECT_EQ(gpus, (std::vector<int>{0, 0, 1, -1, -1, -1}));
}

}  // namespace
