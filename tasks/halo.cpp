#include "tasks/halo.hpp"

#include <cstdint>

#include "kernels/cpu/region_copy.hpp"
#if TESSERA_HAVE_CUDA_KERNELS
#include "kernels/cuda/region_copy.hpp"
#endif
#include "tessera/error.hpp"

namespace tessera::tasks {

using detail::Access;
using detail::TaskKind;

namespace {

// The kinds execute lists of region copies on words of the element's size; they differ in
// what they read and write, which their declarations below state once.
template <class Word>
TaskKind declare(const char* kind, Access first, Access rest) {
#if TESSERA_HAVE_CUDA_KERNELS
  return {kind, first, rest, &kernels::region_copy_cpu<Word>, &kernels::region_copy_cuda<Word>};
#else
  return {kind, first, rest, &kernels::region_copy_cpu<Word>, nullptr};
#endif
}

TaskKind by_size(std::size_t size, const char* kind, Access first, Access rest) {
  switch (size) {
    case 1: return declare<std::uint8_t>(kind, first, rest);
    case 2: return declare<std::uint16_t>(kind, first, rest);
    case 4: return declare<std::uint32_t>(kind, first, rest);
    case 8: return declare<std::uint64_t>(kind, first, rest);
    default:
      throw Error("element size " + std::to_string(size) + " bytes has no halo kernels");
  }
}

}  // namespace

TaskKind halo_pack_kind(std::size_t element_size) {
  return by_size(element_size, "halo-pack", Access::Read, Access::Write);
}

TaskKind boundary_kind(std::size_t element_size) {
  return by_size(element_size, "boundary", Access::ReadWrite, Access::Read);
}

TaskKind constant_ghosts_kind(std::size_t element_size) {
  TaskKind k = by_size(element_size, "constant-ghosts", Access::ReadWrite, Access::Read);
  k.untimed = true;  // once per field and halo plan
  return k;
}

}  // namespace tessera::tasks
