// The tiling of a Grid, by partition/'s rules, with the checks of its arguments; tiles the
// library chooses (partition/autotile.hpp) from the live runtime's workers.
#include <algorithm>
#include <climits>
#include <cstdio>

#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "partition/planner.hpp"
#include "partition/tiling.hpp"
#include "tessera/error.hpp"
#include "tessera/grid.hpp"

namespace tessera::detail {

namespace {
std::string lattice_text(const Extent3& v, int dims) {
  std::string s;
  for (int a = 0; a < dims; ++a) s += (a ? " x " : "") + std::to_string(v[a]);
  return s;
}

void check_extent(const Extent3& extent, int dims) {
  for (int a = 0; a < dims; ++a)
    if (extent[a] <= 0)
      throw Error("grid extent " + std::to_string(extent[a]) + " on axis " + axis_name(a) +
                  " must be positive; give at least 1 point per axis");
}

// Points are counted in 64 bits and tiles in int (task tags, StarPU-MPI tags): a product
// that does not fit would wrap silently into another grid. `counts`: tiles per axis.
void check_counts(const Extent3& extent, const Extent3& counts, const std::string& tiles_text,
                  int dims) {
  std::int64_t points = 1, tiles = 1;
  for (int a = 0; a < dims; ++a) {
    if (__builtin_mul_overflow(points, extent[a], &points))
      throw Error("grid of " + lattice_text(extent, dims) +
                  " points has more points than a 64-bit count holds; give a smaller grid");
    if (counts[a] > INT_MAX || __builtin_mul_overflow(tiles, counts[a], &tiles) || tiles > INT_MAX)
      throw Error("grid of " + lattice_text(extent, dims) + " points in tiles of " + tiles_text +
                  " makes " + lattice_text(counts, dims) + " tiles, more than the " +
                  std::to_string(INT_MAX) + " a grid may have; use larger tiles");
  }
}

// The lattice of `cuts` (checked), with the split given where `split_axis` >= 0.
Lattice lattice_of_cuts(const Extent3& extent, const std::array<std::vector<std::int64_t>, 3>& cuts,
                        int dims, int split_axis, std::int64_t split) {
  check_extent(extent, dims);
  for (int a = dims; a < 3; ++a)
    if (!cuts[a].empty())
      throw Error("tile cuts given along " + std::string(axis_name(a)) + " of a " +
                  std::to_string(dims) + "-D grid; give cuts for its " + std::to_string(dims) +
                  " axes only");
  Extent3 counts{1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    const std::string wrong = partition::cuts_error(extent[a], cuts[a]);
    if (!wrong.empty())
      throw Error("tile cuts along " + std::string(axis_name(a)) + ": " + wrong +
                  "; give the first index of every tile but the first, increasing, each inside "
                  "(0, " +
                  std::to_string(extent[a]) + ")");
    counts[a] = static_cast<std::int64_t>(cuts[a].size()) + 1;
  }
  check_counts(extent, counts, "the cuts given", dims);
  Lattice l;
  for (int a = 0; a < dims; ++a) {
    // A list that is a uniform lattice is one: the same Grid as its tile extent makes.
    const std::int64_t uniform = partition::uniform_tile_of(extent[a], cuts[a]);
    if (uniform == 0) l.cuts[a] = cuts[a];
    l.tile[a] = partition::largest_tile(extent[a], uniform, l.cuts[a]);
    l.tiles[a] = static_cast<int>(counts[a]);
  }
  if (split_axis >= 0) {
    const std::vector<std::int64_t> starts =
        split_axis < dims
            ? partition::tile_starts(extent[split_axis], l.tile[split_axis], l.cuts[split_axis])
            : std::vector<std::int64_t>{};
    const bool at_start = std::find(starts.begin(), starts.end(), split) != starts.end();
    if (split_axis >= dims || !(at_start || split == extent[split_axis]))
      throw Error("a CPU/GPU split at " + std::to_string(split) + " along axis " +
                  std::to_string(split_axis) +
                  " is not where a tile starts; split a grid axis at one of its cut positions "
                  "(or at its extent: every tile on CUDA workers)");
    l.split_axis = split_axis;
    l.split = split;
  }
  return l;
}

// A point holds at least its stencil's field, of at least a byte: checked for every grid, with
// CUDA workers or not, before its tiles are placed.
void check_point_data(const PointData& points) {
  if (points.field_bytes == 0 || points.bytes < points.field_bytes)
    throw Error("a grid's PointData of " + std::to_string(points.bytes) +
                " bytes a point, of which the stencil's field " +
                std::to_string(points.field_bytes) +
                ": a point holds at least its field, of at least a byte; make it with "
                "tessera::PointData::of<T...>(), a type for each field");
}

// What a point holds, as the planner prices a GPU's memory and the bus with it.
partition::PointBytes point_bytes(const PointData& points) {
  return {static_cast<double>(points.bytes), static_cast<double>(points.field_bytes)};
}

// A grid whose GPU part fits no GPU even streamed, refused before any task: the planner's
// figures (bytes needed, bytes available) and what to change.
std::string gpu_memory_refusal(const Context& rt, const Extent3& extent, int dims,
                               const partition::TileChoice& choice) {
  return "a grid of " + lattice_text(extent, dims) + " does not fit the memory of " +
         std::to_string(rt.planner.machine().cuda_workers) +
         " CUDA worker(s) even streamed through it in slabs, and no CPU part can take it (" +
         choice.summary +
         "); run with CPU workers (--ncpu), on GPUs with more memory (STARPU_LIMIT_CUDA_MEM "
         "limits what StarPU uses of them), or on a smaller grid";
}

// Tiles chosen by the library along the axes whose tile is 0, by the run's planner: with CUDA
// workers the split is where both parts take a step in the shortest time (a hand-set
// --gpu-fraction puts it at that share of the planes instead).
Lattice automatic_lattice(const Extent3& extent, const Extent3& tile, int dims,
                          const PointData& points) {
  Context& rt = live_context("a Grid whose tiles the library chooses (a tile extent of 0)");
  const partition::TileChoice choice =
      rt.planner.for_points(point_bytes(points)).automatic(extent, dims, tile);
  Lattice l = lattice_of_cuts(extent, choice.cuts, dims, -1, -1);
  l.split_axis = choice.split_axis;
  l.split = choice.split;
  l.stream_depth = choice.stream_depth;
  l.chosen = choice.summary + rt.planner_speeds;
  if (!choice.gpu_fits) throw Error(gpu_memory_refusal(rt, extent, dims, choice));
  // Said once per grid and extent, after the configuration line, which the trace and the
  // report carry too.
  announce(rt, "tessera: tiles of " + lattice_text(extent, dims) + ": " + l.chosen);
  return l;
}

// Tiles chosen by the run's planner for all-pairs work (Planner::pairs).
Lattice pairs_lattice(const Extent3& extent, int dims) {
  Context& rt = live_context("a Grid for all-pairs work (PointWork::AllPairs)");
  const partition::TileChoice choice = rt.planner.pairs(extent, dims);
  Lattice l = lattice_of_cuts(extent, choice.cuts, dims, choice.split_axis, choice.split);
  l.chosen = choice.summary + rt.planner_pair_speeds;
  announce(rt, "tessera: tiles of " + lattice_text(extent, dims) + ": " + l.chosen);
  return l;
}

// Tiles the user gave (or an application's own), with CUDA workers: which run on the CUDA
// workers and which on the CPU workers is the run's planner's (with a hand-set --gpu-fraction,
// the tile start nearest that share), not the scheduler's task by task (dmda put a user's
// heat3d tiles on cores 20 times slower than the GPU: docs/scheduling.md). On one rank the
// tiles it places on the CUDA workers are merged where they were given as a tile extent
// (`as_extent`; cut positions are kept) unless Options::merge_gpu_tiles is off
// (Planner::merge_gpu_part); on several ranks whole classes only (Planner::whole_classes);
// every rank's planner decides alike.
void place_given_tiles(Lattice& l, const Extent3& extent, int dims, bool as_extent,
                       const PointData& points) {
  Context* rt = live_context_or_null();
  if (rt == nullptr || !rt->planner.places()) return;
  const bool may_merge = as_extent && rt->options.merge_gpu_tiles;
  std::array<std::vector<std::int64_t>, 3> cuts;
  for (int a = 0; a < dims; ++a) {
    const std::vector<std::int64_t> starts =
        partition::tile_starts(extent[a], l.tile[a], l.cuts[a]);
    cuts[a].assign(starts.begin() + 1, starts.end());
  }
  const partition::LatticePlacement p =
      rt->planner.for_points(point_bytes(points)).given(extent, dims, cuts, may_merge);
  announce(*rt, "tessera: placement of " + lattice_text(extent, dims) + " in tiles of " +
                    lattice_text(l.tile, dims) + ": " + p.summary + rt->planner_speeds);
  if (p.merged) {
    l = lattice_of_cuts(extent, p.cuts, dims, -1, -1);
    l.chosen = p.summary + rt->planner_speeds;
  }
  l.split_axis = p.split_axis;
  l.split = p.split;
  l.stream_depth = p.stream_depth;
}
}  // namespace

Lattice tile_lattice(const Extent3& extent, const Extent3& tile, int dims, PointWork work,
                     const PointData& points) {
  check_extent(extent, dims);
  check_point_data(points);
  bool automatic = false;
  for (int a = 0; a < dims; ++a) {
    if (tile[a] < 0)
      throw Error("tile extent " + std::to_string(tile[a]) + " on axis " + axis_name(a) +
                  " must be positive (or 0: the library chooses); use the grid extent for a "
                  "single tile");
    automatic = automatic || tile[a] == 0;
  }
  // The overflow checks of the fixed axes, before the chooser (which counts in tiles) is asked
  // for the others.
  Extent3 counts{1, 1, 1};
  for (int a = 0; a < dims; ++a)
    if (tile[a] > 0) counts[a] = partition::tile_count_along(extent[a], tile[a]);
  check_counts(extent, counts, lattice_text(tile, dims), dims);
  if (work == PointWork::AllPairs) return pairs_lattice(extent, dims);
  if (automatic) return automatic_lattice(extent, tile, dims, points);
  Lattice l;
  for (int a = 0; a < dims; ++a) {
    l.tile[a] = partition::clamped_tile(extent[a], tile[a]);
    l.tiles[a] = static_cast<int>(counts[a]);
  }
  place_given_tiles(l, extent, dims, true, points);
  return l;
}

Lattice cut_lattice(const Extent3& extent, const std::array<std::vector<std::int64_t>, 3>& cuts,
                    int dims, int split_axis, std::int64_t split, const PointData& points) {
  check_point_data(points);
  Lattice l = lattice_of_cuts(extent, cuts, dims, split_axis, split);
  if (split_axis < 0) place_given_tiles(l, extent, dims, false, points);  // cut positions: kept
  return l;
}

}  // namespace tessera::detail
