#include "kernels/cpu/region_copy.hpp"

#include <cstdint>

#include "kernels/common/region_copy.hpp"
#include "tessera/detail/kernel_launch.hpp"

namespace tessera::kernels {

template <class Word>
void region_copy_cpu(void** buffers, void* arg) {
  const RegionCopyList& list = *static_cast<const RegionCopyList*>(arg);
  Word* slots[RegionCopyList::kMax + 1];
  for (int s = 0; s < slot_count(list); ++s) slots[s] = static_cast<Word*>(detail::buffer_data(buffers, s));
  for (int r = 0; r < list.count; ++r) {
    const RegionCopy& region = list.region[r];
    detail::for_each_row(region.dims, [&](std::int64_t j, std::int64_t k) {
      for (std::int64_t i = 0; i < region.dims[0]; ++i) copy_region_point(region, slots, i, j, k);
    });
  }
}

template void region_copy_cpu<std::uint8_t>(void**, void*);
template void region_copy_cpu<std::uint16_t>(void**, void*);
template void region_copy_cpu<std::uint32_t>(void**, void*);
template void region_copy_cpu<std::uint64_t>(void**, void*);

}  // namespace tessera::kernels
