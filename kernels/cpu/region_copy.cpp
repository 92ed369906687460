#include "kernels/cpu/region_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/common/region_copy.hpp"
#include "tessera/detail/kernel_launch.hpp"

namespace tessera::kernels {

namespace {
constexpr std::int64_t kShortRow = 16;  // words
}  // namespace

template <class Word>
void region_copy_cpu(void** buffers, void* arg) {
  const RegionCopyList& list = *static_cast<const RegionCopyList*>(arg);
  Word* slots[RegionCopyList::kMax + 1];
  for (int s = 0; s < slot_count(list); ++s)
    slots[s] = static_cast<Word*>(detail::buffer_data(buffers, s));
  for (int r = 0; r < list.count; ++r) {
    // A local copy: a store through a one-byte Word may alias anything, and would otherwise
    // reload the region's fields at every point.
    const RegionCopy region = list.region[r];
    // Rows whose x-stride is 1 on both sides are contiguous: copy or fill them whole, which
    // the compiler turns into memcpy/memset calls (the common case: every face but x). Rows of
    // a few words (an x face: the halo's width) go in a plain strided loop: a call per row cost
    // more than the copy (figure: docs/architecture.md, kernels/cpu), and the point-by-point
    // index arithmetic of copy_region_point (three products a word) cost about 3 % of life's
    // 1024^2 block, whose x faces are 4 columns of every row (docs/scheduling.md).
    const bool contiguous = region.dims[0] >= kShortRow && region.dst_stride[0] == 1 &&
                            (region.src_slot < 0 || region.src_stride[0] == 1);
    const std::int64_t n = region.dims[0], dst_x = region.dst_stride[0];
    const std::int64_t src_x = region.src_stride[0];
    detail::parallel_rows(region.dims[1], region.dims[2], [&](std::int64_t j, std::int64_t k) {
      Word* dst = slots[region.dst_slot] + region.dst_start + j * region.dst_stride[1] +
                  k * region.dst_stride[2];
      if (region.src_slot < 0) {
        const auto value = static_cast<Word>(region.constant_bits);
        if (contiguous) {
          std::fill_n(dst, n, value);
        } else {
          for (std::int64_t i = 0; i < n; ++i) dst[i * dst_x] = value;
        }
        return;
      }
      const Word* src = slots[region.src_slot] + region.src_start + j * region.src_stride[1] +
                        k * region.src_stride[2];
      if (contiguous) {
        std::memcpy(dst, src, sizeof(Word) * static_cast<std::size_t>(n));
      } else {
        for (std::int64_t i = 0; i < n; ++i) dst[i * dst_x] = src[i * src_x];
      }
    });
  }
}

template void region_copy_cpu<std::uint8_t>(void**, void*);
template void region_copy_cpu<std::uint16_t>(void**, void*);
template void region_copy_cpu<std::uint32_t>(void**, void*);
template void region_copy_cpu<std::uint64_t>(void**, void*);

}  // namespace tessera::kernels
