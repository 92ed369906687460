#include "kernels/cpu/mesh.hpp"

#include <cstring>

#include "tessera/detail/mesh_codes.hpp"
#include "tessera/detail/task.hpp"

namespace tessera::kernels {

using detail::buffer_data;
using detail::buffer_elements;

void mesh_gather_cpu(void** buffers, void* arg) {
  const auto& a = *static_cast<const MeshCopyArgs*>(arg);
  const auto* src = static_cast<const unsigned char*>(buffer_data(buffers, 0));
  const auto* index = static_cast<const std::int32_t*>(buffer_data(buffers, 1));
  const auto bytes = static_cast<std::size_t>(a.element_bytes);
  for (int k = 2; k < a.buffers; ++k) {
    auto* dst = static_cast<unsigned char*>(buffer_data(buffers, k));
    const std::size_t n = buffer_elements(buffers, k);
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(dst + i * bytes, src + static_cast<std::size_t>(index[i]) * bytes, bytes);
    index += n;
  }
}

void mesh_import_cpu(void** buffers, void* arg) {
  const auto& a = *static_cast<const MeshCopyArgs*>(arg);
  auto* dst = static_cast<unsigned char*>(buffer_data(buffers, 0));
  for (int k = 1; k < a.buffers; ++k) {
    const std::size_t bytes =
        buffer_elements(buffers, k) * static_cast<std::size_t>(a.element_bytes);
    std::memcpy(dst, buffer_data(buffers, k), bytes);
    dst += bytes;
  }
}

template <class T, bool Assign>
void mesh_combine_cpu(void** buffers, void* arg) {
  namespace codes = detail::mesh_codes;
  const auto& a = *static_cast<const MeshCopyArgs*>(arg);
  T* own = static_cast<T*>(buffer_data(buffers, 0));
  const codes::TargetPlan plan(static_cast<const std::int32_t*>(buffer_data(buffers, 1)));
  const std::int64_t dim = a.dim;
  for (std::int32_t j = 0; j < plan.m; ++j) {
    T* target = own + std::int64_t(plan.targets[j]) * dim;
    for (std::int32_t q = plan.starts[j]; q < plan.starts[j + 1]; ++q) {
      const T* slot =
          static_cast<const T*>(buffer_data(buffers, 2 + codes::slot_buffer(plan.entries[q]))) +
          std::int64_t(codes::slot_offset(plan.entries[q])) * dim;
      for (std::int64_t k = 0; k < dim; ++k) {
        if constexpr (Assign)
          target[k] = slot[k];
        else
          target[k] += slot[k];
      }
    }
  }
}

template void mesh_combine_cpu<double, false>(void**, void*);
template void mesh_combine_cpu<double, true>(void**, void*);
template void mesh_combine_cpu<float, false>(void**, void*);
template void mesh_combine_cpu<float, true>(void**, void*);
template void mesh_combine_cpu<std::int32_t, false>(void**, void*);
template void mesh_combine_cpu<std::int32_t, true>(void**, void*);

}  // namespace tessera::kernels
