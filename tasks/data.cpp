#include "tasks/data.hpp"

#include "partition/tiling.hpp"
#include "tasks/idle.hpp"
#include "tasks/starpu.hpp"

namespace tessera::tasks {

Handle DataRegistry::register_vector(void* data, std::size_t elements, std::size_t element_size,
                                     int owner) {
  starpu_data_handle_t h = nullptr;
  starpu_vector_data_register(&h, data != nullptr ? STARPU_MAIN_RAM : -1,
                              reinterpret_cast<uintptr_t>(data),
                              static_cast<std::uint32_t>(elements), element_size);
  const std::int64_t tag = next_tag_++;
#ifdef TESSERA_WITH_MPI
  if (distributed_) starpu_mpi_data_register(h, tag, owner);
#endif
  (void)tag;
  (void)owner;
  return opaque(h);
}

void DataRegistry::unregister(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_unregister(raw(h));
}

void DataRegistry::unregister_scratch(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_unregister_no_coherency(raw(h));
}

void DataRegistry::acquire(Handle h, bool write) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_acquire(raw(h), write ? STARPU_RW : STARPU_R);
}

void DataRegistry::release(Handle h) { starpu_data_release(raw(h)); }

const void* DataRegistry::acquire_host(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_acquire(raw(h), STARPU_R);
  return starpu_data_handle_to_pointer(raw(h), STARPU_MAIN_RAM);
}

void DataRegistry::unregister_later(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_unregister_submit(raw(h));
}

void DataRegistry::after_visit(Handle h, bool keep) {
  const IdleWorkers::Awake awake(idle_);
  if (keep)
    starpu_data_wont_use(raw(h));
  else
    starpu_data_invalidate_submit(raw(h));
}

bool DataRegistry::received(Handle h) const {
#ifdef TESSERA_WITH_MPI
  return distributed_ && starpu_mpi_cached_receive(raw(h)) != 0;
#else
  (void)h;
  return false;
#endif
}

namespace {
#ifdef STARPU_SIMGRID
constexpr int kAllocFlags = STARPU_MALLOC_PINNED | STARPU_MALLOC_SIMULATION_FOLDED;
#else
constexpr int kAllocFlags = STARPU_MALLOC_PINNED;  // starpu_malloc's default
#endif
}  // namespace

void* DataRegistry::allocate(std::size_t bytes, bool pinned) {
  void* memory = nullptr;
  // StarPU's alignment is one for all of its allocations and only ever grows (malloc's 16
  // bytes unless set; pinned CUDA memory starts a page).
  starpu_malloc_set_align(partition::kCacheLineBytes);
  const int flags = pinned ? kAllocFlags : kAllocFlags & ~STARPU_MALLOC_PINNED;
  if (starpu_malloc_flags(&memory, bytes, flags) != 0) return nullptr;
  return memory;
}

void DataRegistry::deallocate(void* memory, std::size_t bytes, bool pinned) {
  starpu_free_flags(memory, bytes, pinned ? kAllocFlags : kAllocFlags & ~STARPU_MALLOC_PINNED);
}

}  // namespace tessera::tasks
