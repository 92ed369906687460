// Data handles: the buffers tasks read and write (tiles, halo buffers, reduction results),
// registered with StarPU and, in distributed runs, StarPU-MPI.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace tessera::tasks {

class IdleWorkers;
struct Data;  // a StarPU data handle, opaque outside tasks/
using Handle = Data*;

/// What a copy of a tile between two memories moves: its whole buffer, or, once `planes_only`
/// is set, the bytes [first, first + bytes) (its points' planes along the outermost axis, each
/// with its ghost points on the other axes), leaving its ghost planes behind. Set only while
/// every task that reads those ghost planes writes them first, in the memory it runs in (a
/// streamed grid's time blocks: docs/gpu.md, "Grids larger than a GPU"), so they never cross
/// the bus. StarPU 1.4 and later
/// (1.3 copies a reused buffer's whole description, this one's included, into the new data's).
struct Travel {
  std::size_t first = 0, bytes = 0;
  std::atomic<bool> planes_only{false};
};

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
  /// `travel`, where given, says what its copies move (it outlives the handle).
  Handle register_vector(void* data, std::size_t elements, std::size_t element_size, int owner,
                         const Travel* travel = nullptr);
  /// A vector that only this rank's tasks use and no rank sends (a GPU's faces packed ahead,
  /// core/grid's HaloSet::rings), allocated where a task first writes it. Its StarPU-MPI tag
  /// comes from a range of this rank's own, so that the handles registered in the same order on
  /// every rank (register_vector, registered()) keep the same tags.
  Handle register_local_vector(std::size_t elements, std::size_t element_size);
  /// A face buffer of a halo exchange (core/grid's HaloSet), owned by rank `owner`: as
  /// register_vector without host memory, allocated where a task first writes it; with
  /// stand_in_homes, this rank's get host memory as their home (freed when they are
  /// unregistered), as register_local_vector's do.
  Handle register_face(std::size_t elements, std::size_t element_size, int owner);
  /// Whether face buffers get a home in main memory: where an emulated GPU's stand-in has a NUMA
  /// node of its own (tasks/engine.cpp). StarPU evicts a buffer without a home from a RAM node
  /// only to disk (memalloc.c's choose_target), where from a GPU it writes it back to main
  /// memory: the stand-in would keep every face it wrote, and a small one run out of memory.
  void stand_in_homes(bool on) { stand_in_homes_ = on; }
  /// Whether register_vector honours a Travel (the StarPU it runs on reuses buffers without
  /// copying the description that holds it).
  static bool moves_planes_only();
  /// Waits for the tasks using `h`, brings its data back to the host, and forgets it.
  void unregister(Handle h);
  /// Forgets a scratch buffer (a halo buffer) without bringing its data back.
  void unregister_scratch(Handle h);
  /// Host access to a buffer this rank owns: waits for the tasks that write it (and, to
  /// write, those that read it) until release().
  void acquire(Handle h, bool write);
  /// Host access to write every value of `h` (this rank owns it), none read: also where its
  /// values were dropped (after_visit), which acquire() cannot read. Until release().
  void acquire_to_overwrite(Handle h);
  void release(Handle h);
  /// Host read access to a buffer this rank owns that was registered without host memory (a
  /// mesh loop's reduction contributions): waits for the tasks that write it and returns its
  /// data in main memory, valid until release().
  const void* acquire_host(Handle h);
  /// Forgets `h` once the tasks using it have run, without waiting; its data is dropped. Not for
  /// a face buffer (whose home would be freed while tasks use it).
  void unregister_later(Handle h);
  /// For a tile streamed through a GPU's memory (docs/gpu.md, "Grids larger than a GPU"), once
  /// the tasks submitted so far that use `h` have run: `keep`, its values go back to main
  /// memory while the bus is idle and it is the first to leave the GPU (starpu_data_wont_use,
  /// whose copy home StarPU queues behind what was submitted by then: no invalidation of `h` may
  /// be submitted until the tasks have run); else its values are scratch and dropped on every
  /// memory node, nothing written back (starpu_data_invalidate_submit): the next task that uses it
  /// must write what it reads.
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
  struct Home {  // host memory registered as a face buffer's home (stand_in_homes)
    void* memory = nullptr;
    std::size_t bytes = 0;
  };
  static Home allocate_home(std::size_t bytes);
  Handle register_with_home(std::size_t elements, std::size_t element_size, int owner);
  // Frees `h`'s home, if it has one, once `h` is unregistered.
  void free_home(Handle h);

  bool distributed_;
  IdleWorkers& idle_;
  bool stand_in_homes_ = false;
  std::unordered_map<Handle, Home> homes_;
  std::int64_t next_tag_ = 0;
  std::int64_t next_local_tag_ = std::int64_t{1} << 40;  // register_local_vector's
};

}  // namespace tessera::tasks
