#include "partition/plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tessera::partition {

namespace {

// Which GPU runs each of the rank's GPU tiles (`gpu_tile`) and which are edges (Plan::Tile): the
// planes of the GPU part along the split axis in contiguous blocks, a block a GPU (a tile by its
// first plane), so that neighbouring tiles share a GPU and only the faces between blocks cross
// between GPUs (round-robin over the tile numbers put neighbours on different GPUs wherever the
// part was cut across, and a streamed part's slabs, visited in order on each GPU, would each
// have read a face from another GPU).
struct GpuUnits {
  std::vector<int> unit;
  std::vector<bool> edge;
};
GpuUnits assign_gpu_units(const Tiling& tiling, int axis, const std::vector<bool>& gpu_tile,
                          int gpus) {
  const auto tiles = static_cast<std::size_t>(tiling.size());
  GpuUnits out{std::vector<int>(tiles, -1), std::vector<bool>(tiles, false)};
  if (axis < 0 || gpus <= 0) return out;
  const auto on_gpu = [&](int t) { return t >= 0 && gpu_tile[static_cast<std::size_t>(t)]; };
  std::int64_t lo = -1, hi = -1;  // the rank's GPU part along the axis
  for (int t = 0; t < tiling.size(); ++t)
    if (on_gpu(t)) {
      const Tile& tile = tiling.tile(t);
      lo = lo < 0 ? tile.origin[axis] : std::min(lo, tile.origin[axis]);
      hi = std::max(hi, tile.origin[axis] + tile.extent[axis]);
    }
  std::vector<int> order;  // the rank's GPU tiles along the axis (then by number)
  std::vector<bool> used(static_cast<std::size_t>(gpus), false);
  for (int t = 0; t < tiling.size(); ++t)
    if (on_gpu(t)) {
      order.push_back(t);
      const auto u = static_cast<int>((tiling.tile(t).origin[axis] - lo) * gpus / (hi - lo));
      out.unit[static_cast<std::size_t>(t)] = u;
      used[static_cast<std::size_t>(u)] = true;
    }
  // Blocks of planes leave a GPU without a tile where the part has fewer layers of tiles along
  // the axis than GPUs (tiles kept as given, cut across it: life's 3 x 2 tiles split at y 40 put
  // its 3 GPU tiles in one layer, all on one of 2 or 3 GPUs while the others idled; issue 48,
  // item 3's emulated.app.life.gpus2). There the tiles in that order go in contiguous blocks of
  // tile count instead: neighbours across the axis then share a face between GPUs, but every
  // GPU computes.
  const auto units = static_cast<std::size_t>(std::count(used.begin(), used.end(), true));
  if (units < std::min(used.size(), order.size())) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return tiling.tile(a).origin[axis] < tiling.tile(b).origin[axis];
    });
    for (std::size_t k = 0; k < order.size(); ++k)
      out.unit[static_cast<std::size_t>(order[k])] =
          static_cast<int>(k * used.size() / order.size());
  }
  if (gpus < 2) return out;
  for (int t = 0; t < tiling.size(); ++t) {
    if (!on_gpu(t)) continue;
    for (int side : {-1, 1}) {
      Dir3 d{0, 0, 0};
      d[static_cast<std::size_t>(axis)] = side;
      const int n = tiling.neighbour(t, d);
      if (n >= 0 && (!on_gpu(n) || out.unit[static_cast<std::size_t>(n)] !=
                                       out.unit[static_cast<std::size_t>(t)]))
        out.edge[static_cast<std::size_t>(t)] = true;
    }
  }
  return out;
}

}  // namespace

Plan place_tiles(const Tiling& tiling, const GpuPart& part, const std::vector<bool>& mine,
                 int gpus) {
  Plan plan{part, std::vector<Plan::Tile>(static_cast<std::size_t>(tiling.size()))};
  // Tiles the library chose for CPU workers alone come in whole rounds of the workers, as the
  // split's CPU part does: each runs on one worker, which dmda, left to place a one-round
  // tiling, did not do: it put several tiles on one worker while others idled (figures:
  // docs/scheduling.md, "Placement that sticks").
  if (part.axis < 0) {
    const DeviceClass kind = part.library_tiles && gpus == 0 ? DeviceClass::Cpu : DeviceClass::Any;
    for (Plan::Tile& t : plan.tiles) t.device.kind = kind;
    return plan;
  }
  std::vector<bool> gpu_tile(plan.tiles.size());
  for (int t = 0; t < tiling.size(); ++t) {
    const bool gpu_part = tiling.tile(t).origin[part.axis] < part.split;
    plan.tiles[static_cast<std::size_t>(t)].device.kind =
        gpu_part ? DeviceClass::Cuda : DeviceClass::Cpu;
    gpu_tile[static_cast<std::size_t>(t)] = gpu_part && mine[static_cast<std::size_t>(t)];
  }
  const GpuUnits units = assign_gpu_units(tiling, part.axis, gpu_tile, gpus);
  for (std::size_t t = 0; t < plan.tiles.size(); ++t) {
    plan.tiles[t].device.gpu = units.unit[t];
    plan.tiles[t].edge = units.edge[t];
  }
  return plan;
}

}  // namespace tessera::partition
