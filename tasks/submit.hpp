// Task submission: one task of a codelet over handles, with an argument block and a typed tag.
// The only way tasks enter StarPU.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "partition/gpu_memory.hpp"
#include "partition/plan.hpp"
#include "tasks/data.hpp"
#include "tasks/tag.hpp"
#include "tessera/detail/task.hpp"

struct starpu_task;

namespace tessera::tasks {

struct Codelet;
class IdleWorkers;
class Recorder;

/// How a task is placed: its priority (higher first, for priority-aware schedulers) and the
/// device the plan placed its tile on (partition::Plan: a class of workers and, for a grid's GPU
/// tile, its GPU; CUDA only where the codelet has a CUDA implementation). `work`: the points the
/// task computes times the steps it advances (a tile task's), kept as its flops in its model's
/// history (the depth chooser's point cost, tasks::model_point_cost); 0: none.
struct Placement {
  int priority = 0;
  partition::Device device;
  double work = 0;
  /// A tile streamed through a GPU's memory (Grid::stream_depth): on each CUDA worker, a visit
  /// (Visit::Runs, a block's task) may start only once the visit kVisitsAhead before it ended,
  /// so that a GPU holds only the slabs the plan sized for, not every tile whose task is ready
  /// (StarPU would fetch them all, and evict what it needs next). A task that allocates the tile's
  /// scratch for its next visit (Visit::Opens) waits as that visit does.
  enum class Visit { None, Opens, Runs };
  Visit visit = Visit::None;
  /// A team task (tessera::Team): on CPU workers it keeps its team (any of them, none pinned);
  /// where it runs a CUDA body, on its tile's worker as any task.
  bool team = false;
  /// Buffers the task reads from another memory while it waits for more than them (an all-pairs
  /// task's sources: it waits for the one before it on the same accumulators; a tile's block,
  /// its neighbours' faces: it waits for its own last block): on a CUDA worker each is copied
  /// into that GPU's memory as soon as its last writer ends (a sequentially consistent
  /// acquisition, released once there), not when the task becomes ready (issue 48 (c), (d)).
  std::vector<Handle> fetch_early;
  /// A streamed visit's (Visit::Runs) inputs from main memory: its own tile, the slab after it,
  /// whose face it reads from its tile, and its read-only fields' tiles. On its CUDA worker they
  /// are prefetched into the GPU's memory as soon as the visit two before it ends, so that they
  /// cross the bus while the visit before it computes (kVisitsPrefetched).
  std::vector<Handle> prefetch;
  /// A tile task's bytes read and written: each step's window (a temporal block's widened by the
  /// steps still to come: it recomputes its neighbours' edges) times a point's bytes in its
  /// fields, and its exchange copies. In simulation a time block's model prices it by these
  /// (its flops there, tasks/codelets.cpp), not by its buffers: those count every ghost plane
  /// and face buffer at every step, which a block reads once or not at all.
  double streamed_bytes = 0;
};

/// The slab pipeline's depths, which the planner sizes a GPU's memory by: one definition each,
/// in partition/ (gpu_memory.hpp).
using partition::kVisitsAhead;
using partition::kVisitsPrefetched;

/// The handles of one task group, as submit() takes them without copying: a vector, an
/// initializer list (`{h}`, alive until the call returns) or none (`{}`).
struct Handles {
  const Handle* data = nullptr;
  std::size_t size = 0;
  Handles() = default;
  Handles(const std::vector<Handle>& v) : data(v.data()), size(v.size()) {}  // NOLINT: implicit
  // The list's array lives until the end of the full expression: the submit() call.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  Handles(std::initializer_list<Handle> l) : data(l.begin()), size(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
};

/// The run's settings that submission needs.
struct SubmitPolicy {
  std::string scheduler;
  bool calibrating = false;  // the run calibrates: no message about uncalibrated models
  bool quiet = false;
  // Says the uncalibrated-model message: rank 0 only (ranks share the model directory, and two
  // ranks' lines interleave into one garbled line under mpirun).
  bool says_uncalibrated = true;
  std::string calibrate_command;  // how to calibrate, for the uncalibrated-model message
  bool distributed = false;       // every rank submits every task through StarPU-MPI
  bool name_tasks = false;        // give StarPU each task's name (its FxT traces show them)
};

/// Per device class, the seconds its workers spent running tasks (in simulation, simulated
/// seconds).
struct ClassBusy {
  double cpu_seconds = 0, cuda_seconds = 0;
};

class Submitter {
 public:
  /// Wakes `idle`'s workers before every submission (a task submitted to paused workers waits).
  /// Made after StarPU started: it reads the workers of each class.
  Submitter(SubmitPolicy policy, Recorder* recorder, IdleWorkers& idle);

  /// Submits one task of `c`: `first` handles get the kind's first mode, `rest` its second.
  /// `arg` is the kernel's argument; when `owned`, it was allocated with std::malloc and is
  /// freed after the task (or at once, by ranks that do not run it).
  /// No heap allocation here for up to kInlineBuffers handles (the common case).
  void submit(Codelet& c, Handles first, Handles rest, void* arg, std::size_t arg_size, bool owned,
              TaskTag tag, Placement place);
  /// The same for a kind whose buffers each carry their own mode (a mesh loop: one mode per
  /// argument, as its access descriptors say); `modes[i]` is the mode of `handles[i]`.
  void submit_with_modes(Codelet& c, const std::vector<Handle>& handles,
                         const std::vector<detail::Access>& modes, void* arg, std::size_t arg_size,
                         bool owned, TaskTag tag, Placement place);
  /// Tasks this rank submitted to StarPU so far (read by the progress-line thread).
  std::size_t submitted() const { return submitted_.load(); }
  /// Every submission so far, of tasks this rank runs and of those other ranks run (the
  /// watchdog reads it from its thread: a rank that submits is not stuck).
  std::uint64_t submissions() const { return submissions_.load(); }
  /// Drops the task names kept for StarPU; call once every task has run.
  void forget_names() { names_.clear(); }
  /// Releases the StarPU tags of the streamed visits (Placement::Visit); call once every task
  /// has run: the next visits start a new chain.
  void forget_visits();
  /// Tasks submitted from now on are timed as part of step `step` (tessera::Balance marks each
  /// step boundary of a split grid's run); < 0: not timed. Switches StarPU's task profiling on.
  void mark_step(long step);
  /// Per marked step, the seconds each device class's workers spent running its tasks, of the
  /// tasks that ended since the previous call (every one of them after a wait for all tasks).
  std::map<long, ClassBusy> take_step_busy();

 private:
  void report_if_uncalibrated(Codelet& c, starpu_task* task);
  static constexpr std::size_t kInlineBuffers = 16;
  void submit_any(Codelet& c, const Handle* handles, const int* modes, std::size_t n, void* arg,
                  std::size_t arg_size, bool owned, TaskTag tag, Placement place);
  SubmitPolicy policy_;
  Recorder* recorder_;  // null unless recording
  IdleWorkers& idle_;
  std::atomic<std::size_t> submitted_{0};
  std::atomic<std::uint64_t> submissions_{0};
  bool uncalibrated_reported_ = false;
  std::deque<std::string> names_;  // StarPU keeps task->name as a pointer
  // The CPU and the CUDA workers' ids: a split grid's tiles are pinned to them round-robin.
  std::vector<int> class_workers_[2];
  // Per class, the worker each tile number was pinned to (worker_of_tile): this rank's tiles
  // round-robin over `ids`, in the order their first task was submitted.
  std::map<int, int> tile_workers_[2];
  int worker_of_tile(bool cuda, int tile, const std::vector<int>& ids);
  // Per worker, the StarPU tags of its last streamed visits (Placement::streamed), newest last.
  void chain_visit(starpu_task* task, int worker, bool runs, const std::vector<Handle>& prefetch);
  std::map<int, std::deque<std::uint64_t>> visits_;
  std::vector<std::uint64_t> visit_tags_;  // every tag given since the last forget_visits
  std::uint64_t next_visit_tag_ = std::uint64_t{1} << 62;  // clear of StarPU-MPI's tags
  // Step timing (mark_step): the mark of the tasks submitted now, and per mark what the ended
  // ones ran (filled by their callbacks, on StarPU's threads).
  static void timed_task_done(void* mark);
  long step_mark_ = -1;
  std::mutex step_mutex_;
  std::map<long, ClassBusy> step_busy_;
};

}  // namespace tessera::tasks
