#include "tasks/mesh_kinds.hpp"

#include <cstdint>

#include "kernels/cpu/mesh.hpp"
#if TESSERA_HAVE_CUDA_KERNELS
#include "kernels/cuda/mesh.hpp"
#endif
#include "tessera/error.hpp"

namespace tessera::tasks {

using detail::Access;
using detail::KernelFn;
using detail::TaskKind;

namespace {
// The CUDA entries exist when the library compiled its CUDA kernels.
#if TESSERA_HAVE_CUDA_KERNELS
KernelFn gather_cuda() { return &kernels::mesh_gather_cuda; }
KernelFn import_cuda() { return &kernels::mesh_import_cuda; }
template <class T, bool Assign>
KernelFn combine_cuda() {
  return &kernels::mesh_combine_cuda<T, Assign>;
}
#else
KernelFn gather_cuda() { return nullptr; }
KernelFn import_cuda() { return nullptr; }
template <class T, bool Assign>
KernelFn combine_cuda() {
  return nullptr;
}
#endif

template <class T>
TaskKind combine(bool assign) {
  if (assign)
    return {"write-back", Access::ReadWrite, Access::Read, &kernels::mesh_combine_cpu<T, true>,
            combine_cuda<T, true>()};
  return {"inc-combine", Access::ReadWrite, Access::Read, &kernels::mesh_combine_cpu<T, false>,
          combine_cuda<T, false>()};
}
}  // namespace

TaskKind halo_gather_kind() {
  return {"halo-gather", Access::Read, Access::Write, &kernels::mesh_gather_cpu, gather_cuda()};
}

TaskKind halo_import_kind() {
  return {"halo-import", Access::Write, Access::Read, &kernels::mesh_import_cpu, import_cuda()};
}

TaskKind combine_kind(const std::string& type, bool assign) {
  if (type == "double") return combine<double>(assign);
  if (type == "float") return combine<float>(assign);
  if (type == "int32") return combine<std::int32_t>(assign);
  throw Error("mesh dats of type '" + type + "' have no combine kernel");
}

}  // namespace tessera::tasks
