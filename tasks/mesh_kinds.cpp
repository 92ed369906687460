#include "tasks/mesh_kinds.hpp"

#include <cstdint>

#include "kernels/cpu/mesh.hpp"
#include "tessera/error.hpp"

namespace tessera::tasks {

using detail::Access;
using detail::TaskKind;

TaskKind halo_gather_kind() { return {"halo-gather", Access::Read, Access::Write, &kernels::mesh_gather_cpu, nullptr}; }

TaskKind halo_import_kind() { return {"halo-import", Access::Write, Access::Read, &kernels::mesh_import_cpu, nullptr}; }

namespace {
template <class T>
TaskKind combine(bool assign) {
  return {assign ? "write-back" : "inc-combine", Access::ReadWrite, Access::Read,
          assign ? &kernels::mesh_combine_cpu<T, true> : &kernels::mesh_combine_cpu<T, false>, nullptr};
}
}  // namespace

TaskKind combine_kind(const std::string& type, bool assign) {
  if (type == "double") return combine<double>(assign);
  if (type == "float") return combine<float>(assign);
  if (type == "int32") return combine<std::int32_t>(assign);
  throw Error("mesh dats of type '" + type + "' have no combine kernel");
}

}  // namespace tessera::tasks
