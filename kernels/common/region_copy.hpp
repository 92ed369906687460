// The point copy of a region (partition/region_copy.hpp): the body of the CUDA kernel of the
// halo-pack, boundary and constant-ghosts task kinds (one thread a point). The CPU kernel copies
// the same regions a row at a time (kernels/cpu/region_copy.cpp), where this body's index
// products at every word cost about 3 % of life's block.
#pragma once

#include <cstdint>

#include "partition/region_copy.hpp"
#include "tessera/macros.hpp"

namespace tessera::kernels {

using partition::RegionCopy;
using partition::RegionCopyList;
using partition::slot_count;

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
    *dst = slots[r.src_slot]
                [r.src_start + i * r.src_stride[0] + j * r.src_stride[1] + k * r.src_stride[2]];
  }
}

}  // namespace tessera::kernels
