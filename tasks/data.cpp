#include "tasks/data.hpp"

#include <string>

#include "partition/tiling.hpp"
#include "tasks/idle.hpp"
#include "tasks/starpu.hpp"
#include "tessera/error.hpp"

namespace tessera::tasks {

namespace {

#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
// A vector that knows what its copies move (Travel): StarPU's vector interface, whose
// accessors read the description's first member, with the Travel after it. Its own copy
// method and size (the bytes a copy moves: StarPU's transfer statistics, its schedulers'
// transfer times and, simulated, the transfer itself); the rest is the vector's. Reusing a
// buffer, StarPU 1.4 takes only its pointers from the description it was cached with
// (reuse_data_on_node), so a reused buffer keeps the new data's Travel.
struct TravelVector {
  starpu_vector_interface vector;
  const Travel* travel;
};

std::pair<std::size_t, std::size_t> moved_range(const TravelVector& v) {
  const Travel* t = v.travel;
  if (t != nullptr && t->planes_only.load(std::memory_order_relaxed)) return {t->first, t->bytes};
  return {0, static_cast<std::size_t>(v.vector.nx) * v.vector.elemsize};
}

int copy_travel_vector(void* src_interface, unsigned src_node, void* dst_interface,
                       unsigned dst_node, void* async_data) {
  const auto* src = static_cast<const TravelVector*>(src_interface);
  const auto* dst = static_cast<const TravelVector*>(dst_interface);
  const auto [first, bytes] = moved_range(*src);
  const int ret = starpu_interface_copy(src->vector.dev_handle, src->vector.offset + first,
                                        src_node, dst->vector.dev_handle,
                                        dst->vector.offset + first, dst_node, bytes, async_data);
  starpu_interface_data_copy(src_node, dst_node, bytes);
  return ret;
}

size_t travel_vector_size(starpu_data_handle_t h) {
  return moved_range(*static_cast<const TravelVector*>(
                         starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM)))
      .second;
}

void register_travel_vector(starpu_data_handle_t h, int home_node, void* data_interface) {
  starpu_interface_vector_ops.register_data_handle(h, home_node, data_interface);
  const Travel* travel = static_cast<const TravelVector*>(data_interface)->travel;
  for (unsigned node = 0; node < STARPU_MAXNODES; ++node)
    static_cast<TravelVector*>(starpu_data_get_interface_on_node(h, node))->travel = travel;
}

starpu_data_interface_ops* travel_vector_ops() {
  static starpu_data_copy_methods copies = [] {
    starpu_data_copy_methods c{};
    c.any_to_any = copy_travel_vector;
    return c;
  }();
  static starpu_data_interface_ops ops = [] {
    starpu_data_interface_ops o = starpu_interface_vector_ops;
    o.register_data_handle = register_travel_vector;
    o.copy_methods = &copies;
    o.get_size = travel_vector_size;
    o.interface_size = sizeof(TravelVector);
    o.name = const_cast<char*>("TESSERA_TRAVEL_VECTOR");
    return o;
  }();
  return &ops;
}
#endif

}  // namespace

bool DataRegistry::moves_planes_only() {
#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
  return true;
#else
  return false;
#endif
}

Handle DataRegistry::register_vector(void* data, std::size_t elements, std::size_t element_size,
                                     int owner, const Travel* travel) {
  starpu_data_handle_t h = nullptr;
  const int home = data != nullptr ? STARPU_MAIN_RAM : -1;
  const auto ptr = reinterpret_cast<uintptr_t>(data);
  const auto nx = static_cast<std::uint32_t>(elements);
#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
  if (travel != nullptr) {
    TravelVector v{};
    v.vector.id = STARPU_VECTOR_INTERFACE_ID;
    v.vector.ptr = v.vector.dev_handle = ptr;
    v.vector.nx = nx;
    v.vector.elemsize = element_size;
    v.vector.allocsize = elements * element_size;
    v.travel = travel;
    starpu_data_register(&h, home, &v, travel_vector_ops());
  }
#else
  (void)travel;
#endif
  if (h == nullptr) starpu_vector_data_register(&h, home, ptr, nx, element_size);
  const std::int64_t tag = next_tag_++;
#ifdef TESSERA_WITH_MPI
  if (distributed_) starpu_mpi_data_register(h, tag, owner);
#endif
  (void)tag;
  (void)owner;
  return opaque(h);
}

Handle DataRegistry::register_with_home(std::size_t elements, std::size_t element_size, int owner) {
  const Home home = allocate_home(elements * element_size);
  const Handle h = register_vector(home.memory, elements, element_size, owner);
  homes_[h] = home;
  return h;
}

DataRegistry::Home DataRegistry::allocate_home(std::size_t bytes) {
  Home home{allocate(bytes, false), bytes};
  if (home.memory == nullptr)
    throw Error("out of host memory for a face buffer of " + std::to_string(bytes) + " bytes");
  return home;
}

void DataRegistry::free_home(Handle h) {
  const auto found = homes_.find(h);
  if (found == homes_.end()) return;
  deallocate(found->second.memory, found->second.bytes, false);
  homes_.erase(found);
}

Handle DataRegistry::register_face(std::size_t elements, std::size_t element_size, int owner) {
  int rank = 0;
#ifdef TESSERA_WITH_MPI
  if (distributed_) starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
#endif
  if (stand_in_homes_ && owner == rank) return register_with_home(elements, element_size, owner);
  return register_vector(nullptr, elements, element_size, owner);
}

Handle DataRegistry::register_local_vector(std::size_t elements, std::size_t element_size) {
  starpu_data_handle_t h = nullptr;
  const Home home = stand_in_homes_ ? allocate_home(elements * element_size) : Home{};
  starpu_vector_data_register(&h, home.memory != nullptr ? STARPU_MAIN_RAM : -1,
                              reinterpret_cast<uintptr_t>(home.memory),
                              static_cast<std::uint32_t>(elements), element_size);
  if (home.memory != nullptr) homes_[opaque(h)] = home;
#ifdef TESSERA_WITH_MPI
  if (distributed_) {
    int rank = 0;
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
    starpu_mpi_data_register(h, next_local_tag_++, rank);
  }
#endif
  return opaque(h);
}

void DataRegistry::unregister(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_unregister(raw(h));
  free_home(h);
}

void DataRegistry::unregister_scratch(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_unregister_no_coherency(raw(h));
  free_home(h);
}

void DataRegistry::acquire(Handle h, bool write) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_acquire(raw(h), write ? STARPU_RW : STARPU_R);
}

void DataRegistry::acquire_to_overwrite(Handle h) {
  const IdleWorkers::Awake awake(idle_);
  starpu_data_acquire(raw(h), STARPU_W);
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
  // Kept: the copy home is an idle request StarPU queues once the visit's task has run, and its
  // GPU copy the first to be evicted (a plain prefetch home evicts least recently used first,
  // which streamed slower). The caller keeps it apart from a later invalidation
  // (slabs::after_visit).
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
