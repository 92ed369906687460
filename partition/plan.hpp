// Where a grid's tiles run, as one object: made here from the planner's choice for the lattice
// (Planner::automatic, given, pairs: a split between GPU and CPU workers, a GPU part streamed
// through the GPUs' memory), and only read by the fields' storage (core/grid) and the submitter
// (tasks::Placement::device). Pure code: no StarPU, no CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "partition/tiling.hpp"
#include "tessera/detail/device_class.hpp"

namespace tessera::partition {

using detail::DeviceClass;

// The device a tile's tasks are pinned to: a class of workers and, for one of this rank's GPU
// tiles, which of the rank's GPUs (the index of its CUDA worker among the rank's); -1: the
// tile's worker of the class is round-robin over the tiles (tasks::Submitter::worker_of_tile).
struct Device {
  DeviceClass kind = DeviceClass::Any;
  int gpu = -1;
  bool operator==(const Device& o) const { return kind == o.kind && gpu == o.gpu; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// The planner's choice for a lattice, as its Grid records it (Grid::split_axis, split,
// stream_depth, chosen).
struct GpuPart {
  int axis = -1;               // the split axis; -1: no split
  std::int64_t split = -1;     // tiles that start before it along `axis` run on GPUs
  int stream_depth = 0;        // > 0: the GPU part streams through the GPUs' memory, steps a visit
  bool library_tiles = false;  // tiles the library chose (without a split: for CPU workers)
};

struct Plan {
  struct Tile {
    Device device;
    // A GPU tile beside another device's tile along the split axis (another GPU's, the CPU
    // part's): its tasks go first, so that its faces cross while the rest of its block computes.
    bool edge = false;
  };
  GpuPart part;
  std::vector<Tile> tiles;  // per tile of the tiling, in its numbering

  const Device& device(int tile) const { return tiles[static_cast<std::size_t>(tile)].device; }
  bool edge(int tile) const { return tiles[static_cast<std::size_t>(tile)].edge; }
  bool streamed() const { return part.stream_depth > 0; }
  // One of this rank's GPU tiles, on a GPU of its own.
  bool on_gpu(int tile) const { return device(tile).gpu >= 0; }
  // Two of this rank's GPU tiles on different GPUs.
  bool on_other_gpus(int a, int b) const {
    return on_gpu(a) && on_gpu(b) && device(a).gpu != device(b).gpu;
  }
};

// Places every tile of `tiling`: with a split, the tiles before it on the GPUs and the others on
// the CPU workers, this rank's GPU tiles (`mine`, per tile) in contiguous blocks of planes along
// the split axis, a block a GPU of `gpus`, so that neighbouring tiles share a GPU and only the
// faces between blocks cross between GPUs; without one, library tiles on a rank without GPUs
// each pinned to one CPU worker, other tiles left to the scheduler.
Plan place_tiles(const Tiling& tiling, const GpuPart& part, const std::vector<bool>& mine,
                 int gpus);

}  // namespace tessera::partition
