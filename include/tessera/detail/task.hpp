// What the header templates need to define a task kind and to run inside one: the kind's
// declaration, the tile frame and argument block, and the buffer accessors. The library does
// every submission (core/grid/tile_tasks.cpp); no runtime type appears here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/macros.hpp"

namespace tessera::detail {

/// A task body: the task's buffers (as the runtime hands them over) and its argument block.
using KernelFn = void (*)(void** buffers, void* arg);

enum class Access { Read, Write, ReadWrite };

/// One declaration per task kind: its name, the access mode of its first group of buffers and
/// of the rest, and one entry per backend (cuda may be null: CPU only). The codelet and its
/// history-based perfmodel are built from this, so modes and inserted buffers never disagree.
struct TaskKind {
  const char* kind;  // a string literal: "interior", "halo-pack", "sum", ...
  Access first;
  Access rest;
  KernelFn cpu;
  KernelFn cuda;
  /// Tasks of this kind run once per setup or per call outside the time loop (constant
  /// ghosts, reductions): no perfmodel, since calibration sweeps could never sample them.
  bool untimed = false;
  /// A task of this kind may run on several CPU workers at once, each calling the CPU entry
  /// (a user task whose body takes a tessera::Team): under a scheduler that forms teams
  /// (peager; StarPU's combined workers), else on one worker.
  bool team = false;
};

/// Checks the name of a stencil, loop, task or boundary function (`what`): it names task kinds
/// and performance-model files. Returns it; throws tessera::Error naming `what` otherwise.
std::string check_name(const char* what, const std::string& name);

/// Pointer to the data of buffer `i` on the memory node the task runs on.
void* buffer_data(void** buffers, int i);
/// Number of elements of buffer `i`.
std::size_t buffer_elements(void** buffers, int i);
/// The CUDA stream of the current CUDA worker (a cudaStream_t), null without CUDA.
void* cuda_stream();
/// In a task of a `team` kind: this worker's rank in the team running it, and the team's size
/// (1 when one worker runs it).
int team_rank();
int team_size();

/// Where a tile lies, as its task sees it: the tile's global origin and extent, and for each of
/// the task's N fields the element offset of interior point (0, 0, 0) in its buffer and the y
/// and z strides (fields may have different halo widths). Plain words, so that the library,
/// which does not know N, writes it for every tile.
template <int N>
struct TileFrame {
  static constexpr int kFields = N;
  std::int64_t w[6 + 3 * N];
  TESSERA_HD std::int64_t origin(int axis) const { return w[axis]; }
  TESSERA_HD std::int64_t extent(int axis) const { return w[3 + axis]; }
  TESSERA_HD std::int64_t offset0(int field) const { return w[6 + 3 * field]; }
  TESSERA_HD std::int64_t sy(int field) const { return w[7 + 3 * field]; }
  TESSERA_HD std::int64_t sz(int field) const { return w[8 + 3 * field]; }
};

/// The argument block of a tile task: the frame, then the user's functor.
template <class F, int N>
struct TileArgs {
  TileFrame<N> frame;
  F f;
};

/// The argument blocks of one call's tasks, described for the library: a prototype (the
/// functor set, the frame empty) that is copied once per tile with that tile's frame written in.
struct ArgBlock {
  const void* prototype;
  std::size_t size;
  std::size_t frame_offset;  // where the frame's words start in the block
  int frame_fields;          // N

  template <class F, int N>
  static ArgBlock of(const TileArgs<F, N>& proto) {
    const auto* base = reinterpret_cast<const unsigned char*>(&proto);
    const auto* frame = reinterpret_cast<const unsigned char*>(&proto.frame.w[0]);
    return {&proto, sizeof(proto), static_cast<std::size_t>(frame - base), N};
  }
};

}  // namespace tessera::detail
