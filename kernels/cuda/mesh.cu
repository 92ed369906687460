#include <cstdint>

#include "kernels/cpu/mesh.hpp"
#include "kernels/cuda/mesh.hpp"
#include "tessera/detail/cuda_launch.hpp"
#include "tessera/detail/mesh_codes.hpp"
#include "tessera/detail/mesh_loop.hpp"
#include "tessera/detail/task.hpp"

namespace tessera::kernels {

namespace {

struct Pointers {
  void* p[detail::mesh_codes::kMaxDeviceBuffers];
};

cudaStream_t stream() { return static_cast<cudaStream_t>(detail::cuda_stream()); }

// Elements are whole 4-byte words (dats hold double, float or int32).
__global__ void gather_kernel(std::uint32_t* dst, const std::uint32_t* src,
                              const std::int32_t* index, std::int64_t n, std::int64_t words) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    for (std::int64_t w = 0; w < words; ++w)
      dst[i * words + w] = src[std::int64_t(index[i]) * words + w];
}

// One thread per target: its slots added (or copied) in the plan's order, as on the CPU.
template <class T, bool Assign>
__global__ void combine_kernel(T* own, const std::int32_t* plan, Pointers slots, std::int64_t dim) {
  namespace codes = detail::mesh_codes;
  const codes::TargetPlan p(plan);
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < p.m;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    T* target = own + std::int64_t(p.targets[j]) * dim;
    for (std::int32_t q = p.starts[j]; q < p.starts[j + 1]; ++q) {
      const T* slot = static_cast<const T*>(slots.p[codes::slot_buffer(p.entries[q])]) +
                      std::int64_t(codes::slot_offset(p.entries[q])) * dim;
      for (std::int64_t k = 0; k < dim; ++k) {
        if (Assign)
          target[k] = slot[k];
        else
          target[k] += slot[k];
      }
    }
  }
}

}  // namespace

void mesh_gather_cuda(void** buffers, void* arg) {
  const auto& a = *static_cast<const MeshCopyArgs*>(arg);
  const auto* src = static_cast<const std::uint32_t*>(detail::buffer_data(buffers, 0));
  const auto* index = static_cast<const std::int32_t*>(detail::buffer_data(buffers, 1));
  for (int k = 2; k < a.buffers; ++k) {
    const auto n = static_cast<std::int64_t>(detail::buffer_elements(buffers, k));
    detail::launch("gather_kernel", &gather_kernel, dim3(detail::blocks_for(n, 128)), dim3(128),
                   stream(), detail::LaunchTile::elements(n),
                   static_cast<std::uint32_t*>(detail::buffer_data(buffers, k)), src, index, n,
                   std::int64_t{a.element_bytes / 4});
    index += n;
  }
}

void mesh_import_cuda(void** buffers, void* arg) {
  const auto& a = *static_cast<const MeshCopyArgs*>(arg);
  auto* dst = static_cast<unsigned char*>(detail::buffer_data(buffers, 0));
  for (int k = 1; k < a.buffers; ++k) {
    const std::size_t bytes =
        detail::buffer_elements(buffers, k) * static_cast<std::size_t>(a.element_bytes);
    detail::check_call(cudaMemcpyAsync(dst, detail::buffer_data(buffers, k), bytes,
                                       cudaMemcpyDeviceToDevice, stream()),
                       "cudaMemcpyAsync of a halo import",
                       detail::LaunchTile::elements(
                           static_cast<std::int64_t>(detail::buffer_elements(buffers, k))));
    dst += bytes;
  }
}

template <class T, bool Assign>
void mesh_combine_cuda(void** buffers, void* arg) {
  const auto& a = *static_cast<const MeshCopyArgs*>(arg);
  Pointers slots{};
  for (int k = 2; k < a.buffers; ++k) slots.p[k - 2] = detail::buffer_data(buffers, k);
  detail::launch("combine_kernel", &combine_kernel<T, Assign>,
                 dim3(detail::blocks_for(a.targets, 128)), dim3(128), stream(),
                 detail::LaunchTile::elements(a.targets),
                 static_cast<T*>(detail::buffer_data(buffers, 0)),
                 static_cast<const std::int32_t*>(detail::buffer_data(buffers, 1)), slots,
                 std::int64_t{a.dim});
}

template void mesh_combine_cuda<double, false>(void**, void*);
template void mesh_combine_cuda<double, true>(void**, void*);
template void mesh_combine_cuda<float, false>(void**, void*);
template void mesh_combine_cuda<float, true>(void**, void*);
template void mesh_combine_cuda<std::int32_t, false>(void**, void*);
template void mesh_combine_cuda<std::int32_t, true>(void**, void*);

}  // namespace tessera::kernels
