// Data handles: the buffers tasks read and write (tiles, halo buffers, reduction results),
// registered with StarPU and, in distributed runs, StarPU-MPI.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::tasks {

class IdleWorkers;
struct Data;  // a StarPU data handle, opaque outside tasks/
using Handle = Data*;

/// Registers and unregisters handles. Every rank registers the same handles in the same order
/// (same program, same options: checked at start-up), so their StarPU-MPI tags, given in
/// registration order here, agree on every rank.
class DataRegistry {
 public:
  /// Every access that may need the workers (waiting for tasks, bringing data home) wakes
  /// `idle`'s workers first.
  DataRegistry(bool distributed, IdleWorkers& idle) : distributed_(distributed), idle_(idle) {}

  /// A vector of `elements` elements of `element_size` bytes, owned by rank `owner`: `data` is
  /// its host memory on the owner, null elsewhere and for buffers allocated where a task
  /// first writes them.
  Handle register_vector(void* data, std::size_t elements, std::size_t element_size, int owner);
  /// Waits for the tasks using `h`, brings its data back to the host, and forgets it.
  void unregister(Handle h);
  /// Forgets a scratch buffer (a halo buffer) without bringing its data back.
  void unregister_scratch(Handle h);
  /// Host access to a buffer this rank owns: waits for the tasks that write it (and, to
  /// write, those that read it) until release().
  void acquire(Handle h, bool write);
  void release(Handle h);
  /// Host read access to a buffer this rank owns that was registered without host memory (a
  /// mesh loop's reduction contributions): waits for the tasks that write it and returns its
  /// data in main memory, valid until release().
  const void* acquire_host(Handle h);
  /// Forgets `h` once the tasks using it have run, without waiting; its data is dropped.
  void unregister_later(Handle h);
  /// For a tile streamed through a GPU's memory (docs/gpu.md, "Grids larger than a GPU"), once
  /// the tasks submitted so far that use `h` have run: `keep`, its values go back to main
  /// memory while the bus is idle and it is the first to leave the GPU (starpu_data_wont_use);
  /// else its values are scratch and dropped on every memory node, nothing written back
  /// (starpu_data_invalidate_submit): the next task that uses it must write what it reads.
  void after_visit(Handle h, bool keep);
  /// Whether StarPU-MPI holds `h` in this rank's receive cache: received from its owner for a
  /// task of this rank since the owner last wrote it.
  bool received(Handle h) const;

  /// Host memory for a tile: pinned when CUDA workers exist, so transfers are asynchronous.
  /// Null when out of memory. In simulation every allocation maps the same few pages
  /// (STARPU_MALLOC_SIMULATION_FOLDED), so grids larger than this machine's memory can be
  /// simulated; its contents are then meaningless (tasks do not run anyway).
  /// `pinned` false: plain host memory, for tiles a retile makes mid-run (pinning costs more
  /// than the one transfer such a tile makes over the bus gains from it; figures:
  /// docs/scheduling.md). Free with the same `pinned`. Its start is aligned to a cache line
  /// (partition::kCacheLineBytes), where partition::TileLayout aligns a tile's rows.
  static void* allocate(std::size_t bytes, bool pinned = true);
  static void deallocate(void* memory, std::size_t bytes, bool pinned = true);
  /// Handles registered so far: where a rank is in the program (equal on every rank at the
  /// same point of the same program).
  std::int64_t registered() const { return next_tag_; }

 private:
  bool distributed_;
  IdleWorkers& idle_;
  std::int64_t next_tag_ = 0;
};

}  // namespace tessera::tasks
