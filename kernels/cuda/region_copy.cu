#include <cstdint>

#include "kernels/common/region_copy.hpp"
#include "kernels/cuda/region_copy.hpp"
#include "tessera/detail/cuda_launch.hpp"
#include "tessera/detail/task.hpp"

namespace tessera::kernels {

namespace {

template <class Word>
struct Slots {
  Word* p[RegionCopyList::kMax + 1];
};

// blockIdx.y selects the region; threads stride over its points, x fastest.
template <class Word>
__global__ void region_copy_kernel(RegionCopyList list, Slots<Word> slots) {
  const RegionCopy& r = list.region[blockIdx.y];
  const std::int64_t n0 = r.dims[0], n01 = r.dims[0] * r.dims[1];
  const std::int64_t total = n01 * r.dims[2];
  for (std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; p < total;
       p += std::int64_t(gridDim.x) * blockDim.x)
    copy_region_point(r, slots.p, p % n0, (p % n01) / n0, p / n01);
}

}  // namespace

template <class Word>
void region_copy_cuda(void** buffers, void* arg) {
  const RegionCopyList& list = *static_cast<const RegionCopyList*>(arg);
  Slots<Word> slots{};
  std::int64_t largest = 1;
  for (int r = 0; r < list.count; ++r) {
    const RegionCopy& region = list.region[r];
    const std::int64_t points = region.dims[0] * region.dims[1] * region.dims[2];
    largest = largest > points ? largest : points;
  }
  for (int s = 0; s < slot_count(list); ++s)
    slots.p[s] = static_cast<Word*>(detail::buffer_data(buffers, s));
  if (list.count == 0) return;
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(
      (largest + threads - 1) / threads < 1024 ? (largest + threads - 1) / threads : 1024);
  detail::launch("region_copy_kernel", &region_copy_kernel<Word>,
                 dim3(blocks, static_cast<unsigned>(list.count)), dim3(threads),
                 static_cast<cudaStream_t>(detail::cuda_stream()),
                 detail::LaunchTile::regions(list.count, largest), list, slots);
}

template void region_copy_cuda<std::uint8_t>(void**, void*);
template void region_copy_cuda<std::uint16_t>(void**, void*);
template void region_copy_cuda<std::uint32_t>(void**, void*);
template void region_copy_cuda<std::uint64_t>(void**, void*);

}  // namespace tessera::kernels
