// The emulated CUDA device (builds with TESSERA_EMULATE_CUDA, docs/gpu.md): what the CUDA
// bodies need from CUDA, for a host compiler. The same __global__ functions that nvcc compiles
// are compiled for the host, and emulation::run (called by detail::launch, cuda_launch.hpp)
// runs every thread of every block on the calling CPU thread, blocks and threads in order;
// blockIdx, threadIdx, blockDim and gridDim read the running thread's state. A block whose
// threads reach __syncthreads runs as fibers, one per CUDA thread, switched at each barrier;
// shared memory is one copy per CPU thread, so blocks (which run one after another) and
// StarPU's CPU workers (which run side by side) never share it. Host only: nvcc has CUDA.
#pragma once

#if defined(__CUDACC__)
#error "tessera/detail/cuda_emulation.hpp is for host compilers; nvcc has CUDA"
#endif

#include <ucontext.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/error.hpp"

// Under AddressSanitizer or ThreadSanitizer the switches between a CPU thread's stack and its
// fibers' are announced to them (Fibers, below): unannounced, ASan cannot tell a fiber's frames
// from the thread's (it warns of false reports), and TSan's per-thread call stack broke (every
// emulated test died in its first kernel, inside TSan).
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_FIBERS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_FIBERS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TESSERA_FIBERS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TESSERA_FIBERS_TSAN 1
#endif
#endif
#ifdef TESSERA_FIBERS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef TESSERA_FIBERS_TSAN
#include <sanitizer/tsan_interface.h>
#endif
// The announcements are inlined where the switch is: TSan keeps a call stack per fiber, and a
// function of their own would return (pop its frame) on the other side of the switch.
#define TESSERA_FIBER_SWITCH inline __attribute__((always_inline))

// ---- The language: qualifiers and built-in variables ----------------------------------------
#define __global__
#define __device__
#define __host__
#define __shared__ static thread_local  // one copy per CPU thread: the running block's
#define __syncthreads() ::tessera::detail::emulation::barrier()
#define blockIdx (::tessera::detail::emulation::state.block)
#define threadIdx (::tessera::detail::emulation::state.thread)
#define blockDim (::tessera::detail::emulation::state.block_dim)
#define gridDim (::tessera::detail::emulation::state.grid_dim)

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

// ---- The runtime API the bodies call: host operations on the calling thread -----------------
using cudaStream_t = struct CUstream_st*;
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidConfiguration = 9 };
enum cudaMemcpyKind {
  cudaMemcpyHostToHost,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice,
  cudaMemcpyDefault
};
inline const char* cudaGetErrorName(cudaError_t e) {
  return e == cudaSuccess ? "cudaSuccess" : "cudaErrorInvalidConfiguration";
}
inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error" : "invalid configuration argument";
}
inline cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t = nullptr) {
  std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, std::size_t bytes, cudaMemcpyKind,
                                   cudaStream_t = nullptr) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
// The threads of a launch run one at a time: a plain update is atomic.
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  const unsigned long long old = *p;
  *p = old + v;
  return old;
}
inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) {
  const unsigned long long old = *p;
  *p = old | v;
  return old;
}

namespace tessera::detail::emulation {

struct Fibers;

/// The running CUDA thread, as the built-in variables show it, on this CPU thread.
struct State {
  uint3 block{0, 0, 0}, thread{0, 0, 0};
  dim3 block_dim, grid_dim;
  const char* kernel = "";
  Fibers* fibers = nullptr;  // the block's fibers while it runs as fibers
};
inline thread_local State state;

/// One CUDA thread as a fiber of the CPU thread running its block.
struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  uint3 thread{0, 0, 0};
  int barriers = 0;  // barriers reached so far
  bool done = false;
  void* asan_fake_stack = nullptr;  // ASan's: this fiber's, kept while it waits at a barrier
  void* tsan_fiber = nullptr;       // TSan's: made anew at each start (fresh)
};

/// The fibers of the block that runs as fibers, and the context that switches between them.
struct Fibers {
  static constexpr std::size_t kStack = 256 * 1024;
  ucontext_t scheduler;
  std::vector<Fiber> fiber;       // kept between launches (stacks allocated once per CPU thread)
  void (*body)(void*) = nullptr;  // runs one CUDA thread: the kernel with its arguments
  void* closure = nullptr;
  std::size_t running = 0;
  // The sanitizers' view of the CPU thread's own stack, to switch back to it.
  const void* thread_stack = nullptr;
  std::size_t thread_stack_size = 0;
  void* asan_fake_stack = nullptr;
  void* tsan_thread = nullptr;

  Fibers() = default;
  Fibers(const Fibers&) = delete;
  Fibers& operator=(const Fibers&) = delete;
  ~Fibers() {
#ifdef TESSERA_FIBERS_TSAN
    for (Fiber& fb : fiber)
      if (fb.tsan_fiber != nullptr) __tsan_destroy_fiber(fb.tsan_fiber);
#endif
  }

  // A fiber about to start again from its entry: TSan's record of it made anew (an ended fiber
  // never returns from its entry, whose frame stays in its record).
  static void fresh(Fiber& fb) {
#ifdef TESSERA_FIBERS_TSAN
    if (fb.tsan_fiber != nullptr) __tsan_destroy_fiber(fb.tsan_fiber);
    fb.tsan_fiber = __tsan_create_fiber(0);
#endif
    (void)fb;
  }
  // The four sides of a switch, as the sanitizers want them announced (no-ops without them).
  // From the thread's stack to fiber t, then back on the thread's stack.
  TESSERA_FIBER_SWITCH void leave_thread(Fiber& to) {
#ifdef TESSERA_FIBERS_ASAN
    __sanitizer_start_switch_fiber(&asan_fake_stack, to.stack.get(), kStack);
#endif
#ifdef TESSERA_FIBERS_TSAN
    if (tsan_thread == nullptr) tsan_thread = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
    (void)to;
  }
  TESSERA_FIBER_SWITCH void back_on_thread() {
#ifdef TESSERA_FIBERS_ASAN
    __sanitizer_finish_switch_fiber(asan_fake_stack, nullptr, nullptr);
#endif
  }
  // From a fiber to the thread's stack (`ending`: for good, its frames gone), then on the fiber
  // (`first`: at its start).
  TESSERA_FIBER_SWITCH void leave_fiber(Fiber& from, bool ending) {
#ifdef TESSERA_FIBERS_ASAN
    __sanitizer_start_switch_fiber(ending ? nullptr : &from.asan_fake_stack, thread_stack,
                                   thread_stack_size);
#endif
#ifdef TESSERA_FIBERS_TSAN
    __tsan_switch_to_fiber(tsan_thread, 0);
#endif
    (void)from;
    (void)ending;
  }
  TESSERA_FIBER_SWITCH void on_fiber(Fiber& at, bool first) {
#ifdef TESSERA_FIBERS_ASAN
    __sanitizer_finish_switch_fiber(first ? nullptr : at.asan_fake_stack, &thread_stack,
                                    &thread_stack_size);
#endif
    (void)at;
    (void)first;
  }
};

[[noreturn]] inline void divergent_barrier() {
  throw Error(
      "emulated CUDA: kernel " + std::string(state.kernel) + " reached __syncthreads in block (" +
      std::to_string(state.block.x) + ", " + std::to_string(state.block.y) + ", " +
      std::to_string(state.block.z) +
      ") in some threads only; CUDA requires every thread of a block to reach each barrier");
}

/// __syncthreads(): the fiber waits until its block's other threads reach the barrier.
inline void barrier() {
  Fibers* f = state.fibers;
  // No fibers: the block's first thread ended without a barrier, so the block runs thread by
  // thread; a barrier reached by other threads only is one CUDA does not allow either.
  if (f == nullptr) divergent_barrier();
  Fiber& me = f->fiber[f->running];
  ++me.barriers;
  f->leave_fiber(me, false);
  swapcontext(&me.context, &f->scheduler);
  f->on_fiber(me, false);
}

inline void fiber_entry() {
  Fibers& f = *state.fibers;
  f.on_fiber(f.fiber[f.running], true);
  f.body(f.closure);
  Fiber& me = f.fiber[f.running];
  me.done = true;
  // Back to the scheduler for good, without returning: under the sanitizers nothing may run
  // on this stack once the switch is announced (uc_link, the same context, is not reached).
  f.leave_fiber(me, true);
  setcontext(&f.scheduler);
}

inline uint3 thread_of(std::size_t t, dim3 block) {
  const auto x = static_cast<unsigned>(t % block.x),
             y = static_cast<unsigned>(t / block.x % block.y),
             z = static_cast<unsigned>(t / (std::size_t(block.x) * block.y));
  return {x, y, z};
}

/// Runs thread t of the block as a fiber until it reaches a barrier or ends.
inline void step(Fibers& f, std::size_t t) {
  f.running = t;
  state.thread = f.fiber[t].thread;
  f.leave_thread(f.fiber[t]);
  swapcontext(&f.scheduler, &f.fiber[t].context);
  f.back_on_thread();
}

/// Runs the current block's `n` threads. First thread 0, as a fiber: when it ends without a
/// barrier the others run as plain calls (the common case: no barriers, no switches) and false
/// is returned; otherwise every thread runs as a fiber, round by round between barriers.
/// `as_fibers`: run every thread as a fiber from the start (a later block of a kernel with
/// barriers).
inline bool run_block(Fibers& f, dim3 block, bool as_fibers) {
  const std::size_t n = std::size_t(block.x) * block.y * block.z;
  if (f.fiber.size() < n) f.fiber.resize(n);
  const auto start = [&](std::size_t t) {
    Fiber& fb = f.fiber[t];
    if (!fb.stack) fb.stack.reset(new char[Fibers::kStack]);
    getcontext(&fb.context);
    fb.context.uc_stack.ss_sp = fb.stack.get();
    fb.context.uc_stack.ss_size = Fibers::kStack;
    fb.context.uc_link = &f.scheduler;
    makecontext(&fb.context, &fiber_entry, 0);
    fb.thread = thread_of(t, block);
    fb.barriers = 0;
    fb.done = false;
    Fibers::fresh(fb);
  };
  state.fibers = &f;
  std::size_t first = 0;
  if (!as_fibers) {
    start(0);
    step(f, 0);
    if (f.fiber[0].done && f.fiber[0].barriers == 0) {
      state.fibers = nullptr;
      for (std::size_t t = 1; t < n; ++t) {
        state.thread = thread_of(t, block);
        f.body(f.closure);
      }
      return false;
    }
    first = 1;
  }
  for (std::size_t t = first; t < n; ++t) start(t);
  // Round r takes every thread from barrier r (0: its start) to barrier r + 1 or its end.
  for (int round = 0;; ++round) {
    for (std::size_t t = 0; t < n; ++t)
      if (!f.fiber[t].done && f.fiber[t].barriers == round) step(f, t);
    std::size_t ended = 0;
    for (std::size_t t = 0; t < n; ++t) ended += f.fiber[t].done ? 1 : 0;
    if (ended == n) break;
    if (ended > 0) {  // some threads ended while others wait at a barrier
      state.fibers = nullptr;
      divergent_barrier();
    }
  }
  state.fibers = nullptr;
  return true;
}

/// This CPU thread's fibers, shared by every kernel it runs (stacks allocated once).
inline Fibers& thread_fibers() {
  static thread_local Fibers fibers;
  return fibers;
}

template <class Thread>
void call(void* closure) {
  (*static_cast<Thread*>(closure))();
}

/// Launches per kernel name in this process: the tests check that the CUDA bodies ran.
class Counts {
 public:
  static Counts& get() {
    static Counts counts;
    return counts;
  }
  void add(const char* kernel) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, count] : by_kernel_)
      if (name == kernel) return void(++count);
    by_kernel_.emplace_back(kernel, 1);
  }
  long of(const std::string& kernel) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, count] : by_kernel_)
      if (name == kernel) return count;
    return 0;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, long>> by_kernel_;
};

/// Launches of the kernel named `kernel` so far (emulated device only).
inline long launches(const std::string& kernel) { return Counts::get().of(kernel); }

/// Runs kernel<<<grid, block>>>(args...) on the calling thread: every block in order (x
/// fastest), every thread of it; each thread gets its own copy of the arguments, as on a GPU.
/// The configuration was checked against CUDA's limits by the caller.
template <class... P, class... A>
void run(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, const A&... args) {
  Counts::get().add(name);
  Fibers& fibers = thread_fibers();
  auto thread = [&] { kernel(args...); };
  fibers.body = &call<decltype(thread)>;
  fibers.closure = &thread;
  state.kernel = name;
  state.grid_dim = grid;
  state.block_dim = block;
  bool barriers = false, first = true;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        state.block = {x, y, z};
        if (first || barriers) {
          barriers = run_block(fibers, block, barriers) || barriers;
          first = false;
          continue;
        }
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              state.thread = {tx, ty, tz};
              kernel(args...);
            }
      }
}

}  // namespace tessera::detail::emulation
