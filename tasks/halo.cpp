#include "tasks/halo.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>

#include "kernels/cpu/region_copy.hpp"
#if TESSERA_HAVE_CUDA_KERNELS
#include "kernels/cuda/region_copy.hpp"
#endif
#include "tessera/error.hpp"

namespace tessera::tasks {

using detail::Access;
using detail::KernelFn;
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
    default: throw Error("element size " + std::to_string(size) + " bytes has no halo kernels");
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

TaskKind scratch_ghosts_kind(std::size_t element_size) {
  // Write only: the tile's values were dropped (slabs::after_visit), so StarPU allocates
  // it where the task runs and moves nothing; the task writes the ghost regions, and the block
  // that follows writes every point it then reads.
  TaskKind k = by_size(element_size, "scratch-ghosts", Access::Write, Access::Read);
  k.untimed = true;
  return k;
}

void region_copies(std::size_t element_size, KernelFn& cpu, KernelFn& cuda) {
  const TaskKind k = by_size(element_size, "copy", Access::Read, Access::Write);
  cpu = k.cpu;
  cuda = k.cuda;
}

namespace {

void run_copies(const HaloWork::Copies& c, void** buffers, bool cuda) {
  if (c.empty) return;
  void* slots[1 + partition::RegionCopyList::kMax];
  slots[0] = buffers[c.tile];
  for (int k = 0; k < c.count; ++k) slots[1 + k] = buffers[c.first + k];
  (cuda ? c.cuda : c.cpu)(slots, const_cast<void*>(c.args));
}

// Faces packed ahead (of the tile as it was), ghost layers in, the kernel, faces out: in this
// order on the CPU, and on the worker's stream in this order on a GPU.
template <bool Cuda>
void halo_work(void** buffers, void* arg) {
  const HaloWork& w = *static_cast<const HaloWork*>(arg);
  for (int k = 0; k < w.aheads; ++k) run_copies(w.ahead[k], buffers, Cuda);
  for (int k = 0; k < w.fills; ++k) run_copies(w.fill[k], buffers, Cuda);
  (Cuda ? w.cuda : w.cpu)(buffers, static_cast<unsigned char*>(arg) + kHaloWorkSize);
  for (int k = 0; k < w.packs; ++k) run_copies(w.pack[k], buffers, Cuda);
}

// Kind names live as long as the program (TaskKind holds string literals).
const char* intern(const std::string& name) {
  static std::mutex mutex;
  static std::deque<std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& n : names)
    if (n == name) return n.c_str();
  return names.emplace_back(name).c_str();
}

}  // namespace

bool is_halo_work(const TaskKind& kind) { return kind.cpu == &halo_work<false>; }

unsigned char* new_task_arg(const void* prototype, std::size_t size, bool halo, KernelFn kernel_cpu,
                            KernelFn kernel_cuda, HaloWork** work, std::size_t* bytes) {
  const std::size_t head = halo ? kHaloWorkSize : 0;
  auto* block = static_cast<unsigned char*>(std::malloc(head + size));
  if (block == nullptr) throw std::bad_alloc();
  std::memcpy(block + head, prototype, size);
  *work = nullptr;
  if (halo) {
    *work = new (block) HaloWork{};
    (*work)->cpu = kernel_cpu;
    (*work)->cuda = kernel_cuda;
  }
  *bytes = head + size;
  return block;
}

TaskKind with_halo_work(const TaskKind& kind) {
  TaskKind k = kind;
  k.kind = intern(std::string(kind.kind) + "+halo");
  k.cpu = &halo_work<false>;
#if TESSERA_HAVE_CUDA_KERNELS
  k.cuda = kind.cuda != nullptr ? &halo_work<true> : nullptr;
#else
  k.cuda = nullptr;  // no region copies for CUDA workers in this build
#endif
  return k;
}

}  // namespace tessera::tasks
