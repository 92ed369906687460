// One rectangular copy between tile storage and halo buffers: the unit of work of the
// halo-pack and boundary task kinds, executed point by point by both backends.
#pragma once

#include <cstdint>

#include "tessera/macros.hpp"

namespace tessera::kernels {

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

// Copies point (i, j, k) of region `r`; `Word` is an unsigned integer of the element's size,
// so one instantiation serves every element type of that size.
template <class Word>
TESSERA_HD void copy_region_point(const RegionCopy& r, Word* const* slots, std::int64_t i,
                                  std::int64_t j, std::int64_t k) {
  Word* dst = slots[r.dst_slot] + r.dst_start + i * r.dst_stride[0] + j * r.dst_stride[1] +
              k * r.dst_stride[2];
  if (r.src_slot < 0) {
    *dst = static_cast<Word>(r.constant_bits);
  } else {
    *dst = slots[r.src_slot][r.src_start + i * r.src_stride[0] + j * r.src_stride[1] +
                             k * r.src_stride[2]];
  }
}

}  // namespace tessera::kernels
