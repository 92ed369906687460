// One rectangular copy between tile storage and halo buffers: what a halo plan is made of,
// and the unit of work of the halo-pack, boundary and constant-ghosts task kinds. Plain data
// (passed by value to CUDA kernels); kernels/common/region_copy.hpp executes it.
#pragma once

#include <cstdint>

namespace tessera::partition {

// Addresses are element offsets from the start of a slot (slot = one task buffer).
// A region with src_slot < 0 is filled with `constant_bits` (the element's own bytes).
struct RegionCopy {
  std::int32_t src_slot = -1;
  std::int32_t dst_slot = 0;
  std::uint64_t constant_bits = 0;
  std::int64_t dims[3] = {0, 0, 0};
  std::int64_t src_start = 0;
  std::int64_t src_stride[3] = {0, 0, 0};
  std::int64_t dst_start = 0;
  std::int64_t dst_stride[3] = {0, 0, 0};
};

// At most 26 neighbour directions in 3-D; small enough to pass by value to a CUDA kernel.
struct RegionCopyList {
  static constexpr int kMax = 26;
  std::int32_t count = 0;
  RegionCopy region[kMax];
};

// Number of task buffers (slots) the regions of `list` read or write.
inline int slot_count(const RegionCopyList& list) {
  int n = 0;
  for (int r = 0; r < list.count; ++r) {
    n = n > list.region[r].dst_slot + 1 ? n : list.region[r].dst_slot + 1;
    n = n > list.region[r].src_slot + 1 ? n : list.region[r].src_slot + 1;
  }
  return n;
}

}  // namespace tessera::partition
