// The task of a mesh loop on one tile: the user's kernel called once per element of the tile,
// in element order, with a pointer per argument. The library (core/mesh/mesh.cpp) writes the frame:
// which of the task's buffers holds what for each argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <array>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/detail/cuda_launch.hpp"
#include "tessera/detail/mesh_codes.hpp"
#include "tessera/detail/task.hpp"

namespace tessera::detail {

/// How a loop argument reaches its data, as its task sees it.
enum class ArgPath : std::int64_t {
  Direct,           ///< the loop set's own dat: element e of the tile
  IndirectRead,     ///< through a map: own elements, then the import halo
  IndirectWritten,  ///< through a map, incremented or written: in place or an increment slot
  GlobalRead,       ///< a global's value, carried in the frame
  GlobalReduce      ///< one contribution per element, combined by the library (sums exactly)
};

/// The words a frame holds per argument.
struct ArgWords {
  static constexpr int kPath = 0, kDim = 1, kOwned = 2, kHalo = 3, kMap = 4, kCodes = 5,
                       kSlotFirst = 6, kSlotCount = 7, kOwnedCount = 8, kArity = 9, kIndex = 10,
                       kAccess = 11,
                       // increments on CUDA workers (IncrementPlan::device_codes): -1 elsewhere
      kDeviceCodes = 12, kLocalSlots = 13, kLocalGather = 14, kLocalTargets = 15, kValue = 16;
  static constexpr int kValueBytes = 32;  // a read global's value: at most 32 bytes
  static constexpr int kCount = kValue + kValueBytes / 8;
};

/// Reduction and write modes the task must know about (a subset of tessera::Access).
enum class ArgAccess : std::int64_t { Read, Write, ReadWrite, Inc, Min, Max };

/// A global argument in MeshLoop's list of element types (par_loop passes GlobalValue<T> for
/// tessera::arg(global, ...)): the CPU task gives the kernel a local copy of the value, so the
/// compiler keeps a reduction in registers rather than in memory every dat write might alias.
template <class T>
struct GlobalValue {};
template <class E>
struct MeshValueOf {
  using type = E;
};
template <class T>
struct MeshValueOf<GlobalValue<T>> {
  using type = T;
};
/// The element type of a MeshLoop argument: T for T and for GlobalValue<T>.
template <class E>
using value_t = typename MeshValueOf<E>::type;

/// Words 0-1: the tile's element count and the task's buffer count; then ArgWords::kCount
/// words per argument.
template <int K>
struct LoopFrame {
  std::int64_t w[2 + K * ArgWords::kCount];
  TESSERA_HD std::int64_t elements() const { return w[0]; }
  TESSERA_HD std::int64_t buffers() const { return w[1]; }
  TESSERA_HD const std::int64_t* arg(int i) const { return w + 2 + i * ArgWords::kCount; }
  TESSERA_HD std::int64_t* arg(int i) { return w + 2 + i * ArgWords::kCount; }
};

template <class F, int K>
struct LoopArgs {
  LoopFrame<K> frame;
  F f;
};

/// The argument blocks of one loop's tasks, for the library: a prototype (functor set, frame
/// empty) copied per tile with that tile's frame written in.
struct LoopBlock {
  const void* prototype;
  std::size_t size;
  std::size_t frame_offset;
  int args;
  template <class F, int K>
  static LoopBlock of(const LoopArgs<F, K>& proto) {
    const auto* base = reinterpret_cast<const unsigned char*>(&proto);
    const auto* frame = reinterpret_cast<const unsigned char*>(&proto.frame.w[0]);
    return {&proto, sizeof(proto), static_cast<std::size_t>(frame - base), K};
  }
};

/// The value an increment slot starts from: adding to it gives the increment exactly, so a
/// slot added to its target later gives the same bits as incrementing the target in place.
/// For floating point that is -0.0 (0.0 + -0.0 would turn a -0.0 increment into +0.0).
template <class T>
inline T increment_start() {
  if constexpr (std::is_floating_point_v<T>) return -T(0);
  return T(0);
}
/// Where a Min or Max contribution starts: the operation's identity.
template <class T>
inline T reduction_start(ArgAccess a) {
  if (a == ArgAccess::Inc) return increment_start<T>();
  if constexpr (std::is_floating_point_v<T>)
    return a == ArgAccess::Min ? std::numeric_limits<T>::infinity()
                               : -std::numeric_limits<T>::infinity();
  return a == ArgAccess::Min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

// The pointer argument `d` gives the kernel for element e. On a CUDA worker (Device) a tile's
// elements run at once, so increments to the tile's own elements go to local slots.
template <class T, bool Device = false>
TESSERA_HD T* arg_pointer(const std::int64_t* d, void* const* base, std::int64_t e) {
  using W = ArgWords;
  const std::int64_t dim = d[W::kDim];
  switch (static_cast<ArgPath>(d[W::kPath])) {
    case ArgPath::Direct: return static_cast<T*>(base[d[W::kOwned]]) + e * dim;
    case ArgPath::IndirectRead: {
      const std::int64_t l =
          static_cast<const std::int32_t*>(base[d[W::kMap]])[e * d[W::kArity] + d[W::kIndex]];
      const std::int64_t own = d[W::kOwnedCount];
      return l < own ? static_cast<T*>(base[d[W::kOwned]]) + l * dim
                     : static_cast<T*>(base[d[W::kHalo]]) + (l - own) * dim;
    }
    case ArgPath::IndirectWritten: {
      const bool local_slots = Device && static_cast<ArgAccess>(d[W::kAccess]) == ArgAccess::Inc;
      const std::int32_t c = static_cast<const std::int32_t*>(
          base[local_slots ? d[W::kDeviceCodes] : d[W::kCodes]])[e * d[W::kArity] + d[W::kIndex]];
      if (c >= 0)
        return static_cast<T*>(base[local_slots ? d[W::kLocalSlots] : d[W::kOwned]]) + c * dim;
      return static_cast<T*>(base[d[W::kSlotFirst] + mesh_codes::slot_buffer(c)]) +
             std::int64_t(mesh_codes::slot_offset(c)) * dim;
    }
    case ArgPath::GlobalRead:  // the task's own copy of the frame
      return reinterpret_cast<T*>(const_cast<std::int64_t*>(d) + W::kValue);
    case ArgPath::GlobalReduce: return static_cast<T*>(base[d[W::kOwned]]) + e * dim;
  }
  return nullptr;
}

// One argument as a CPU task walks it: the frame's words and the task's buffers looked up once
// per task, so that the element loop does none. pointers() writes the kernel's pointers for a
// run of elements, one loop per access path (arg_pointer<T, false> element by element).
template <class T>
struct CpuArg {
  ArgPath path = ArgPath::Direct;
  std::int64_t dim = 0, arity = 0, own = 0;
  T* owned = nullptr;
  T* halo = nullptr;
  const std::int32_t* entries =
      nullptr;                   // the map (read) or the slot codes (written), at the index
  void* const* slots = nullptr;  // the argument's slot buffers
  T* value = nullptr;            // a read global: in the task's copy of the frame

  CpuArg(const std::int64_t* d, void* const* base) {
    using W = ArgWords;
    path = static_cast<ArgPath>(d[W::kPath]);
    dim = d[W::kDim];
    switch (path) {
      case ArgPath::Direct:
      case ArgPath::GlobalReduce: owned = static_cast<T*>(base[d[W::kOwned]]); break;
      case ArgPath::IndirectRead:
        owned = static_cast<T*>(base[d[W::kOwned]]);
        halo = static_cast<T*>(base[d[W::kHalo]]);
        entries = static_cast<const std::int32_t*>(base[d[W::kMap]]) + d[W::kIndex];
        arity = d[W::kArity];
        own = d[W::kOwnedCount];
        break;
      case ArgPath::IndirectWritten:
        owned = static_cast<T*>(base[d[W::kOwned]]);
        entries = static_cast<const std::int32_t*>(base[d[W::kCodes]]) + d[W::kIndex];
        arity = d[W::kArity];
        slots = base + d[W::kSlotFirst];
        break;
      case ArgPath::GlobalRead:
        value = reinterpret_cast<T*>(const_cast<std::int64_t*>(d) + W::kValue);
        break;
    }
  }

  // Members copied to locals first: `out` holds T*, as the members do, so a store to it would
  // otherwise make the compiler reload them every element.
  void pointers(std::int64_t first, std::int64_t n, T** out) const {
    const std::int64_t d = dim, stride = arity, own_count = own;
    T* const own_data = owned;
    const std::int32_t* const e = entries + first * stride;
    switch (path) {
      case ArgPath::Direct:
      case ArgPath::GlobalReduce: {
        T* p = own_data + first * d;
        for (std::int64_t j = 0; j < n; ++j, p += d) out[j] = p;
        break;
      }
      case ArgPath::IndirectRead: {
        T* const halo_data = halo;
        for (std::int64_t j = 0; j < n;
             ++j) {  // written so that it compiles to selects, not branches
          const std::int64_t l = e[j * stride];
          const bool in_halo = l >= own_count;
          T* const from = in_halo ? halo_data : own_data;
          const std::int64_t at = in_halo ? l - own_count : l;
          out[j] = from + at * d;
        }
        break;
      }
      case ArgPath::IndirectWritten: {
        void* const* const slot_data = slots;
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int32_t c = e[j * stride];
          out[j] = c >= 0 ? own_data + c * d
                          : static_cast<T*>(slot_data[mesh_codes::slot_buffer(c)]) +
                                std::int64_t(mesh_codes::slot_offset(c)) * d;
        }
        break;
      }
      case ArgPath::GlobalRead: {
        T* const v = value;
        for (std::int64_t j = 0; j < n; ++j) out[j] = v;
        break;
      }
    }
  }
};

// A global argument as a CPU task walks it: each element's kernel call gets a fresh local
// holding the value (read) or the reduction's identity, and a reduction's local is stored as
// the element's contribution afterwards: the bits of arg_pointer's path, without the memory.
template <class T>
struct CpuGlobal {
  static constexpr int kCapacity = ArgWords::kValueBytes / static_cast<int>(sizeof(T));
  struct Local {
    T v[kCapacity];
  };
  Local first{};               // what each element's local starts from
  T* contributions = nullptr;  // null: a read global
  std::int64_t dim = 0;

  CpuGlobal(const std::int64_t* d, void* const* base) {
    using W = ArgWords;
    dim = d[W::kDim];
    if (static_cast<ArgPath>(d[W::kPath]) == ArgPath::GlobalRead) {
      std::memcpy(first.v, d + W::kValue, static_cast<std::size_t>(dim) * sizeof(T));
    } else {
      contributions = static_cast<T*>(base[d[W::kOwned]]);
      for (int k = 0; k < kCapacity; ++k)
        first.v[k] = reduction_start<T>(static_cast<ArgAccess>(d[W::kAccess]));
    }
  }
  void enter(Local& l) const { l = first; }
  void leave(const Local& l, std::int64_t e) const {
    if (contributions == nullptr) return;
    // A loop of constant length: with `dim` as its bound GCC calls memcpy for a few bytes.
    for (int k = 0; k < kCapacity; ++k)
      if (k < dim) contributions[e * dim + k] = l.v[k];
  }
};

/// Elements whose pointers a CPU task computes at once (MeshLoop::run).
constexpr std::int64_t kCpuRun = 64;

// What a CPU task walks per argument: CpuArg for dats, CpuGlobal for globals. Dats' Local is
// empty; their pointers come in runs (CpuArg::pointers).
template <class E>
struct CpuWalk {
  using type = CpuArg<E>;
  struct Local {};
  using Run = std::array<E*, kCpuRun>;
};
template <class T>
struct CpuWalk<GlobalValue<T>> {
  using type = CpuGlobal<T>;
  using Local = typename CpuGlobal<T>::Local;
  struct Run {};
};

// Before the elements run: increment slots and reduction contributions start from their
// identity; slots of written (not incremented) targets start from the target's value, so a
// kernel that writes part of an element leaves the rest as it was.
template <class T>
void start_slots(std::int64_t* d, void** buffers, void* const* base, std::int64_t n) {
  using W = ArgWords;
  const auto path = static_cast<ArgPath>(d[W::kPath]);
  const auto access = static_cast<ArgAccess>(d[W::kAccess]);
  const std::int64_t dim = d[W::kDim];
  if (path == ArgPath::GlobalReduce) {
    T* c = static_cast<T*>(base[d[W::kOwned]]);
    for (std::int64_t i = 0; i < n * dim; ++i) c[i] = reduction_start<T>(access);
  } else if (path == ArgPath::IndirectWritten && access == ArgAccess::Inc) {
    for (std::int64_t k = 0; k < d[W::kSlotCount]; ++k) {
      T* s = static_cast<T*>(base[d[W::kSlotFirst] + k]);
      const auto count = static_cast<std::int64_t>(
          buffer_elements(buffers, static_cast<int>(d[W::kSlotFirst] + k)));
      for (std::int64_t i = 0; i < count * dim; ++i) s[i] = increment_start<T>();
    }
  } else if (path == ArgPath::IndirectWritten) {
    const auto* codes = static_cast<const std::int32_t*>(base[d[W::kCodes]]);
    const auto* local = static_cast<const std::int32_t*>(base[d[W::kMap]]);
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t at = e * d[W::kArity] + d[W::kIndex];
      if (codes[at] >= 0) continue;
      const std::int64_t l = local[at], own = d[W::kOwnedCount];
      const T* from = l < own ? static_cast<const T*>(base[d[W::kOwned]]) + l * dim
                              : static_cast<const T*>(base[d[W::kHalo]]) + (l - own) * dim;
      T* to = static_cast<T*>(base[d[W::kSlotFirst] + mesh_codes::slot_buffer(codes[at])]) +
              std::int64_t(mesh_codes::slot_offset(codes[at])) * dim;
      for (std::int64_t i = 0; i < dim; ++i) to[i] = from[i];
    }
  }
}

// The loop task of kernel F whose arguments have element types T... (GlobalValue<U> for a
// global of U).
template <class F, class... T>
struct MeshLoop {
  static constexpr int K = static_cast<int>(sizeof...(T));
  using Args = LoopArgs<F, K>;
  using Indices = std::index_sequence_for<T...>;

  template <bool Device, std::size_t... I>
  TESSERA_HD static void element(const Args& a, void* const* base, std::int64_t e,
                                 std::index_sequence<I...>) {
    a.f(arg_pointer<value_t<T>, Device>(a.frame.arg(static_cast<int>(I)), base, e)...);
  }

  // Every argument's start values (start_slots); with `globals` false, not those of globals,
  // whose CpuGlobal writes every element's contribution.
  template <std::size_t... I>
  static void start(Args& a, void** buffers, void* const* base, bool globals,
                    std::index_sequence<I...>) {
    ((globals || std::is_same_v<T, value_t<T>>
          ? start_slots<value_t<T>>(a.frame.arg(static_cast<int>(I)), buffers, base,
                                    a.frame.elements())
          : void()),
     ...);
  }
  // Whether every global fits a CpuGlobal's local (at most ArgWords::kValueBytes).
  template <std::size_t... I>
  static bool globals_fit(const Args& a, std::index_sequence<I...>) {
    return (
        (std::is_same_v<T, value_t<T>> || a.frame.arg(static_cast<int>(I))[ArgWords::kDim] *
                                                  static_cast<std::int64_t>(sizeof(value_t<T>)) <=
                                              ArgWords::kValueBytes) &&
        ...);
  }

  // Elements run in runs of kCpuRun: first the dats' pointers for the run (one loop per argument,
  // its access path chosen once), then the kernel on each element, globals in fresh locals.
  // Pointers depend on maps and codes only, never on values: this is the element-by-element
  // loop of arg_pointer, with the lookups done once.
  template <class E>
  static auto* pointer(typename CpuWalk<E>::Run& run, typename CpuWalk<E>::Local& local,
                       std::int64_t j) {
    if constexpr (std::is_same_v<E, value_t<E>>)
      return run[static_cast<std::size_t>(j)];
    else
      return static_cast<value_t<E>*>(local.v);
  }

  template <std::size_t... I>
  static void run(Args& a, void* const* base, std::index_sequence<I...>) {
    const std::tuple<typename CpuWalk<T>::type...> walk{
        typename CpuWalk<T>::type(a.frame.arg(static_cast<int>(I)), base)...};
    std::tuple<typename CpuWalk<T>::Run...> runs;
    const std::int64_t n = a.frame.elements();
    for (std::int64_t first = 0; first < n; first += kCpuRun) {
      const std::int64_t m = n - first < kCpuRun ? n - first : kCpuRun;
      (pointers<T>(std::get<I>(walk), first, m, std::get<I>(runs)), ...);
      for (std::int64_t j = 0; j < m; ++j) {
        std::tuple<typename CpuWalk<T>::Local...> locals;
        (enter<T>(std::get<I>(walk), std::get<I>(locals)), ...);
        a.f(pointer<T>(std::get<I>(runs), std::get<I>(locals), j)...);
        (leave<T>(std::get<I>(walk), std::get<I>(locals), first + j), ...);
      }
    }
  }
  template <class E, class W, class R>
  static void pointers(const W& w, std::int64_t first, std::int64_t m, R& run) {
    if constexpr (std::is_same_v<E, value_t<E>>) w.pointers(first, m, run.data());
  }
  template <class E, class W, class L>
  static void enter(const W& w, L& local) {
    if constexpr (!std::is_same_v<E, value_t<E>>) w.enter(local);
  }
  template <class E, class W, class L>
  static void leave(const W& w, const L& local, std::int64_t e) {
    if constexpr (!std::is_same_v<E, value_t<E>>) w.leave(local, e);
  }

  // In element order: a tile's own increments reach a target in the order of the elements'
  // global numbers, which is the rule that makes results independent of the tiling.
  static void cpu(void** buffers, void* arg) {
    Args a = *static_cast<const Args*>(arg);  // a local copy: globals read point into it
    void* local[16];
    std::vector<void*> more;
    const auto count = static_cast<std::size_t>(a.frame.buffers());
    void** base = local;
    if (count > 16) {
      more.resize(count);
      base = more.data();
    }
    for (std::size_t k = 0; k < count; ++k) base[k] = buffer_data(buffers, static_cast<int>(k));
    if (globals_fit(a, Indices{})) {
      start(a, buffers, base, false, Indices{});
      run(a, base, Indices{});
      return;
    }
    // A large reduced global: element by element, contributions in memory.
    start(a, buffers, base, true, Indices{});
    for (std::int64_t e = 0; e < a.frame.elements(); ++e) element<false>(a, base, e, Indices{});
  }

#if TESSERA_CUDA_BODIES
  static void cuda(void** buffers, void* arg);
#endif

  static TaskKind kind() {
    // Modes come per buffer from the loop's access descriptors; these two are unused.
#if TESSERA_CUDA_BODIES
    return {"loop", Access::Read, Access::ReadWrite, &cpu, &cuda};
#else
    return {"loop", Access::Read, Access::ReadWrite, &cpu, nullptr};
#endif
  }
};

#if TESSERA_CUDA_BODIES
struct DeviceBuffers {
  void* p[mesh_codes::kMaxDeviceBuffers];
};

template <class T>
__global__ void mesh_fill_kernel(T* p, std::int64_t n, T value) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = value;
}

// Slots of targets written (not incremented) through a map start from the target's value.
template <class T, int K>
__global__ void mesh_written_slots_kernel(LoopFrame<K> frame, int arg, DeviceBuffers base) {
  using W = ArgWords;
  const std::int64_t* d = frame.arg(arg);
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < frame.elements();
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t at = e * d[W::kArity] + d[W::kIndex];
    const std::int32_t code = static_cast<const std::int32_t*>(base.p[d[W::kCodes]])[at];
    if (code >= 0) continue;
    const std::int64_t l = static_cast<const std::int32_t*>(base.p[d[W::kMap]])[at],
                       own = d[W::kOwnedCount];
    const std::int64_t dim = d[W::kDim];
    const T* from = l < own ? static_cast<const T*>(base.p[d[W::kOwned]]) + l * dim
                            : static_cast<const T*>(base.p[d[W::kHalo]]) + (l - own) * dim;
    T* to = static_cast<T*>(base.p[d[W::kSlotFirst] + mesh_codes::slot_buffer(code)]) +
            std::int64_t(mesh_codes::slot_offset(code)) * dim;
    for (std::int64_t k = 0; k < dim; ++k) to[k] = from[k];
  }
}

// One thread per element: every argument's pointer, the user's kernel.
template <class L>
__global__ void mesh_element_kernel(typename L::Args a, DeviceBuffers base) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < a.frame.elements();
       e += std::int64_t(gridDim.x) * blockDim.x)
    L::template element<true>(a, base.p, e, typename L::Indices{});
}

// One thread per target: its local slots added in element order (IncrementPlan::local_gather).
template <class T>
__global__ void mesh_local_gather_kernel(T* own, const std::int32_t* plan, const T* slots,
                                         std::int64_t dim) {
  const mesh_codes::TargetPlan p(plan);
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < p.m;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    T* target = own + std::int64_t(p.targets[j]) * dim;
    for (std::int32_t q = p.starts[j]; q < p.starts[j + 1]; ++q)
      for (std::int64_t k = 0; k < dim; ++k)
        target[k] += slots[std::int64_t(p.entries[q]) * dim + k];
  }
}

template <class L, class T>
void device_start(const typename L::Args& a, int arg, void** buffers, const DeviceBuffers& base,
                  cudaStream_t s) {
  using W = ArgWords;
  const std::int64_t* d = a.frame.arg(arg);
  const auto path = static_cast<ArgPath>(d[W::kPath]);
  const auto access = static_cast<ArgAccess>(d[W::kAccess]);
  const std::int64_t dim = d[W::kDim], n = a.frame.elements();
  const auto fill = [&](std::int64_t buffer, T value) {
    const auto count =
        static_cast<std::int64_t>(buffer_elements(buffers, static_cast<int>(buffer))) * dim;
    launch("mesh_fill_kernel", &mesh_fill_kernel<T>, dim3(blocks_for(count, 256)), dim3(256), s,
           LaunchTile::elements(n), static_cast<T*>(base.p[buffer]), count, value);
  };
  if (path == ArgPath::GlobalReduce) {
    fill(d[W::kOwned], reduction_start<T>(access));
  } else if (path == ArgPath::IndirectWritten && access == ArgAccess::Inc) {
    for (std::int64_t k = 0; k < d[W::kSlotCount]; ++k)
      fill(d[W::kSlotFirst] + k, increment_start<T>());
    fill(d[W::kLocalSlots], increment_start<T>());
  } else if (path == ArgPath::IndirectWritten) {
    launch("mesh_written_slots_kernel", &mesh_written_slots_kernel<T, L::K>,
           dim3(blocks_for(n, 128)), dim3(128), s, LaunchTile::elements(n), a.frame, arg, base);
  }
}

template <class T>
void device_gather(const std::int64_t* d, const DeviceBuffers& base, cudaStream_t s,
                   std::int64_t elements) {
  using W = ArgWords;
  if (static_cast<ArgPath>(d[W::kPath]) != ArgPath::IndirectWritten ||
      static_cast<ArgAccess>(d[W::kAccess]) != ArgAccess::Inc || d[W::kLocalTargets] == 0)
    return;
  launch("mesh_local_gather_kernel", &mesh_local_gather_kernel<T>,
         dim3(blocks_for(d[W::kLocalTargets], 128)), dim3(128), s, LaunchTile::elements(elements),
         static_cast<T*>(base.p[d[W::kOwned]]),
         static_cast<const std::int32_t*>(base.p[d[W::kLocalGather]]),
         static_cast<const T*>(base.p[d[W::kLocalSlots]]), d[W::kDim]);
}

// Whether argument `i` shares its local gather with an earlier argument (both cells of an edge
// incremented through one map): the gather runs once.
template <int K>
bool gathered_before(const LoopFrame<K>& f, int i) {
  using W = ArgWords;
  for (int j = 0; j < i; ++j)
    if (f.arg(j)[W::kPath] == f.arg(i)[W::kPath] &&
        f.arg(j)[W::kLocalGather] == f.arg(i)[W::kLocalGather] &&
        f.arg(j)[W::kAccess] == f.arg(i)[W::kAccess])
      return true;
  return false;
}

// Start values, then every element at once, then the local slots added per target in order:
// the CPU's bits (no atomics), on the worker's stream.
template <class F, class... T>
void MeshLoop<F, T...>::cuda(void** buffers, void* arg) {
  static_assert(sizeof(Args) + sizeof(DeviceBuffers) <= 4000,
                "too many loop arguments for a CUDA kernel");
  const Args& a = *static_cast<const Args*>(arg);
  cudaStream_t s = static_cast<cudaStream_t>(cuda_stream());
  DeviceBuffers base{};
  for (std::int64_t k = 0; k < a.frame.buffers(); ++k)
    base.p[k] = buffer_data(buffers, static_cast<int>(k));
  int i = 0;
  ((device_start<MeshLoop, value_t<T>>(a, i++, buffers, base, s)), ...);
  const std::int64_t n = a.frame.elements();
  launch("mesh_element_kernel", &mesh_element_kernel<MeshLoop>, dim3(blocks_for(n, 128)), dim3(128),
         s, LaunchTile::elements(n), a, base);
  i = 0;
  ((gathered_before(a.frame, i) ? void(i++)
                                : (device_gather<value_t<T>>(a.frame.arg(i++), base, s, n))),
   ...);
}
#endif

}  // namespace tessera::detail
