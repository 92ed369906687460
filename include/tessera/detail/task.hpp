// Task kinds and task submission, as seen by the header templates. StarPU stays out of the
// public headers: handles are opaque pointers and kernels use the accessors below.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct _starpu_data_state;

namespace tessera::detail {

using Handle = _starpu_data_state*;
using KernelFn = void (*)(void** buffers, void* arg);

enum class Access { Read, Write, ReadWrite };

/// One declaration per task kind: its name, the access mode of its first group of buffers and
/// of the rest, and one entry per backend (cuda may be null: CPU only). The codelet and its
/// history-based perfmodel are built from this, so modes and inserted handles never disagree.
struct TaskKind {
  const char* kind;
  Access first;
  Access rest;
  KernelFn cpu;
  KernelFn cuda;
  /// Tasks of this kind run once per setup or per call outside the time loop (constant
  /// ghosts, reductions): no perfmodel, since calibration sweeps could never sample them.
  bool untimed = false;
};

struct Codelet;  // a starpu_codelet plus its perfmodel, owned by the Runtime

/// The codelet of `kind` for `stencil` (e.g. "heat3d"); its perfmodel symbol is
/// "tessera.<stencil>.<kind>.<type>". Built once, then cached by the Runtime.
Codelet& codelet(const std::string& stencil, const std::string& type, const TaskKind& kind);

/// Submits one task: `first` handles get kind.first, `rest` get kind.rest. `arg` is passed
/// to the kernel; when `owned`, it was allocated with std::malloc and StarPU frees it.
/// The tile a task works on, of how many the field has, and its priority (higher runs first
/// with priority-aware schedulers). Under a hand-set GPU fraction (Options::gpu_fraction) the
/// tile decides whether the task is pinned to CUDA or to CPU workers.
struct TaskPlace {
  int tile = -1;  // -1: not a tile's task; never pinned
  int tiles = 0;
  int priority = 0;
};

void submit(Codelet& cl, const std::vector<Handle>& first, const std::vector<Handle>& rest,
            void* arg, std::size_t arg_size, bool owned, const std::string& name,
            TaskPlace place = {});

/// Pointer to the data of buffer `i` on the memory node the task runs on.
void* buffer_data(void** buffers, int i);
/// Number of elements of buffer `i`.
std::size_t buffer_elements(void** buffers, int i);
/// The CUDA stream StarPU gives the current worker (a cudaStream_t), null without CUDA.
void* cuda_stream();
/// A vector registered with StarPU and StarPU-MPI (the next tag), owned by rank `owner`:
/// `data` is its host memory on the owner, null elsewhere and for buffers StarPU allocates
/// where they are written. unregister_buffer waits for the tasks using it and brings the data
/// back to the host.
Handle register_vector(void* data, std::size_t elements, std::size_t element_size, int owner);
void unregister_buffer(Handle h);
/// Number of stencil applications submitted so far: the step in task names.
long next_step();

}  // namespace tessera::detail
