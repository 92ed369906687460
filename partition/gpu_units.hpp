// Which CUDA worker runs each GPU tile of a rank: part of the placement, decided here and only
// recorded by the fields' storage (core/grid). Pure code: no StarPU, no CUDA.
#pragma once

#include <vector>

#include "partition/tiling.hpp"

namespace tessera::partition {

// Per tile of a tiling: the CUDA worker (0..gpus-1, of the rank's) that runs it, -1 where it is
// not one of the rank's GPU tiles; and whether it is an edge: beside another GPU's, the CPU
// part's or another rank's tile along the split axis (its tasks go first so that its faces
// cross while the rest of its block computes).
struct GpuUnits {
  std::vector<int> unit;
  std::vector<bool> edge;
};

// The rank's GPU tiles (`gpu_tile`, per tile) in contiguous blocks of planes along the split
// `axis`, a block a worker of `gpus`; nothing assigned where the axis is unknown (< 0) or there
// is no GPU.
GpuUnits assign_gpu_units(const Tiling& tiling, int axis, const std::vector<bool>& gpu_tile,
                          int gpus);

}  // namespace tessera::partition
