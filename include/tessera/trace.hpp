// Execution traces as plain data: what one rank recorded, and the outputs built from one or
// more ranks (Chrome/Perfetto JSON, a self-contained HTML report, a text summary). Nothing here
// talks to StarPU or MPI, so a multi-rank run only has to gather each rank's RankTrace and call
// these functions on rank 0.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::trace {

/// One piece of data (a StarPU handle) a task accessed, and how: enough to rebuild the task
/// graph as StarPU orders it (read after write, write after read, write after write).
struct DataAccess {
  static constexpr std::uint8_t kRead = 1, kWrite = 2;
  /// The data's id: its StarPU-MPI tag in multi-rank runs (the same on every rank), otherwise
  /// an id that is unique on the rank while the data lives.
  std::uint64_t data = 0;
  std::uint64_t bytes = 0;  ///< the data's size
  std::uint8_t mode = 0;    ///< kRead, kWrite or both
};

/// One executed task: what it was (its tag, as the runtime submitted it) and when and where
/// it ran. Times are microseconds since the rank's runtime started.
struct TaskEvent {
  std::string stencil;       ///< the stencil (or "reduce") that submitted it
  std::string kind;          ///< "interior", "halo-pack", "boundary", "constant-ghosts", "sum", ...
  std::string field;         ///< the field a halo or reduction task works on; empty for interiors
  int tile = -1, step = -1;  ///< -1 where the task has none
  int worker = -1;           ///< StarPU worker id on its rank
  /// The worker its tile's placement pinned it to (tasks::Submitter: the tile's device class,
  /// one worker of it per tile); -1 where StarPU chose. `worker` must equal it where set.
  int pinned_worker = -1;
  /// Buffers its placement copies ahead, as soon as they are written (tasks::Placement::
  /// fetch_early: faces from another GPU or rank, an all-pairs task's sources in another
  /// memory); copied where its worker is a GPU, listed on the emulated device's stand-ins too.
  int early_copies = 0;
  double submit_us = 0, start_us = 0, end_us = 0;
  double predicted_us = -1;  ///< the scheduler's perfmodel prediction; < 0: none
  /// The task's place in submission order. Every rank of a multi-rank run submits every task
  /// (StarPU-MPI runs each on one rank), so it is the same number on every rank.
  std::uint64_t seq = 0;
  std::vector<DataAccess> data;  ///< its data, in the order of its buffers
};

/// One StarPU worker: a track of the Gantt chart.
struct Worker {
  int id = 0;
  std::string name;  ///< StarPU's name, e.g. "CPU 0"
  std::string arch;  ///< "cpu" or "cuda"
  int memory_node = 0;
};

/// Bytes StarPU moved over one bus (StarPU without FxT only exposes totals per bus); MPI
/// transfers of multi-rank runs use the same record with `mpi` set.
struct Transfer {
  std::string from, to;
  std::uint64_t bytes = 0, count = 0;
  bool mpi = false;
};

/// Bytes StarPU started moving over one bus since the previous sample, read from its bus
/// counters as a task ended: without FxT, the finest record of transfers over time StarPU
/// gives. `link` is the bus's place in RankTrace::transfers.
struct TransferSample {
  double at_us = 0;
  int link = 0;
  std::uint64_t bytes = 0, count = 0;
};

/// Running totals of one worker's tasks of one kind: what a rank keeps instead of every
/// TaskEvent when only the end-of-run summary is asked for, so that its memory does not grow
/// with the number of tasks. The summary tables count them as they count TaskEvents.
struct TaskTotals {
  int worker = -1;
  std::string kind;
  long tasks = 0;
  double measured_us = 0;  ///< sum of end - start
  long predicted_tasks = 0;
  double predicted_us = 0, measured_with_prediction_us = 0;
};

/// What the performance models predict for a task kind on a worker class where this rank's
/// tasks of that kind did not run, summed over those tasks: the area bound may then place them
/// there too (StarPU's own bound does the same with its models).
struct ModelTime {
  std::string kind, arch;
  long tasks = 0;
  double predicted_us = 0;
};

/// Everything one rank recorded.
struct RankTrace {
  int rank = 0;
  /// The recorded window: first task's start to last task's end. Times count from the rank's
  /// runtime start; ranks merged into one output should start their runtimes together (e.g.
  /// after a barrier), since nothing re-aligns their clocks.
  double begin_us = 0, end_us = 0;
  double wall_us() const { return end_us - begin_us; }
  std::vector<Worker> workers;
  std::vector<TaskEvent> tasks;    ///< every task, when a trace or report was asked for
  std::vector<TaskTotals> totals;  ///< tasks counted but not kept (summary only)
  std::vector<Transfer> transfers;
  std::vector<TransferSample> transfer_samples;  ///< bus transfers over time (with events)
  std::vector<ModelTime> model_times;            ///< only with several worker classes
  /// A summary-only rank keeps no events, so it folds the longest chain of dependent tasks
  /// as they end (DependencyTracker): the critical path of its own tasks, the dependencies
  /// through other ranks' tasks not followed. < 0: not computed (events are kept instead).
  double critical_path_us = -1;
  /// Tasks recorded, kept or counted.
  long task_count() const;
};

/// The task's human-readable name, "<stencil>:<kind>[ <field>][ tile=T][ step=S]", e.g.
/// "heat3d:halo-pack u tile=3 step=7": the one place task names are made.
std::string task_name(const TaskEvent& event);

/// Chrome/Perfetto trace-event JSON: one process per rank (pid = rank), one track per worker.
void write_chrome_json(const std::vector<RankTrace>& ranks, std::ostream& out);

/// Where the tiles of one grid lie, for the report's tile map: the tasks of `stencil` (a
/// stencil or loop name) with tile index t worked on tiles[t].
struct TileMap {
  std::string stencil;
  int dims = 3;
  std::int64_t extent[3] = {1, 1, 1};  ///< the grid's points per axis
  struct Box {
    std::int64_t origin[3] = {0, 0, 0}, extent[3] = {1, 1, 1};
    int rank = 0;  ///< the tile's owner
  };
  std::vector<Box> tiles;
};

/// Where the elements of a partitioned mesh lie, for the report's partition map: element e
/// lies in tile tile[e] and is drawn as the polygon through the points corner[e * corners + k]
/// (k < corners; one corner: a dot). The tasks of `loops` with tile index t worked on tile t.
struct PartitionMap {
  std::string set;                   ///< the set whose elements are drawn, e.g. "cells"
  std::vector<std::string> loops;    ///< the loops over the mesh's sets
  std::vector<int> owner;            ///< per tile: its rank
  std::vector<std::int32_t> tile;    ///< per element: its tile
  int corners = 1;                   ///< points per element
  std::vector<std::int32_t> corner;  ///< per element, `corners` indices of points
  std::vector<double> xy;            ///< the points: x, y of each
};

/// A self-contained HTML page (inline SVG, CSS and JS, no network): how far the run was from
/// its bounds, a Gantt chart per worker with the critical path outlined, the tasks ready over
/// time, why workers idled, the per-step view, busy/idle per worker, time per task kind,
/// CPU/GPU split, predicted versus measured time, and a map of the tiles of `maps` (and of
/// the mesh partitions of `meshes`) coloured by the worker that ran most of each tile's tasks.
/// `about` is a line under the heading (the runtime writes its configuration there).
void write_html_report(const std::vector<RankTrace>& ranks, const std::string& about,
                       std::ostream& out, const std::vector<TileMap>& maps = {},
                       const std::vector<PartitionMap>& meshes = {});

/// Per task kind: how many tasks, their total measured time and, over the tasks that had a
/// prediction, predicted versus measured.
struct KindTotals {
  std::string kind;
  long tasks = 0;
  double measured_us = 0;
  long predicted_tasks = 0;
  double predicted_us = 0, measured_with_prediction_us = 0;
  /// (predicted - measured) / measured over the predicted tasks; NaN without predictions.
  double prediction_error() const;
};
std::vector<KindTotals> totals_by_kind(const std::vector<RankTrace>& ranks);

/// Busy time of each worker of one rank (sum of its tasks' durations).
struct WorkerTotals {
  int rank = 0;
  Worker worker;
  long tasks = 0;
  double busy_us = 0, wall_us = 0;
  double busy_fraction() const { return wall_us > 0 ? busy_us / wall_us : 0; }
};
std::vector<WorkerTotals> totals_by_worker(const std::vector<RankTrace>& ranks);

/// The end-of-run table: per worker busy %, tasks and time per kind (one rank), or per rank
/// min/avg/max of busy %, tasks and busy time (several ranks); then predicted versus measured
/// time per kind where the scheduler predicted.
std::string summary_table(const std::vector<RankTrace>& ranks);

/// Rebuilds a task graph as StarPU's sequential data consistency orders it: tasks are added in
/// submission order, and each depends on the last writer of every data it accesses and, when it
/// writes the data, on every reader since that write. What is kept per data is folded (the
/// longest path and the latest end through it), so memory grows with the data, not the tasks.
class DependencyTracker {
 public:
  /// What the next task in submission order waits for, over all its predecessors.
  struct Before {
    double path_us = 0;   ///< the longest chain of predecessors, in task time
    long via = -1;        ///< the predecessor that ends that chain; -1: none
    double ready_us = 0;  ///< when the last predecessor ended (0 without predecessors)
  };
  Before before(const std::vector<DataAccess>& data) const;
  /// Adds that task, called `task` by the caller: its chain (`path_us`: Before::path_us plus
  /// its own time) and its end.
  void add(const std::vector<DataAccess>& data, long task, double path_us, double end_us);
  /// The task that last wrote `data`; -1: none added.
  long writer(std::uint64_t data) const;

 private:
  struct Reach {
    double path_us = 0;
    long task = -1;
    double end_us = 0;
  };
  struct State {
    Reach writer;   // the last writer
    Reach readers;  // the longest chain and latest end among the readers since that write
  };
  std::unordered_map<std::uint64_t, State> data_;
};

/// How far a run was from the best possible (StarVZ's and StarPU's bounds, without FxT).
struct Bounds {
  double makespan_us = 0;  ///< first task start to last task end, over every rank
  /// The longest chain of dependent tasks, summing their measured times (transfers and
  /// messages between them not counted); < 0: unknown. A lower bound of the makespan.
  double critical_path_us = -1;
  /// The critical path was folded per rank (summary-only multi-rank runs): chains through
  /// other ranks' tasks were not followed, so it may be shorter than the run's.
  bool critical_path_per_rank = false;
  long critical_path_tasks = 0;  ///< tasks on that chain (0 when folded without events)
  /// The shortest time to run each rank's tasks on its workers ignoring dependencies (tasks
  /// may be split between workers; each kind takes its mean measured time on each worker
  /// class where it ran), the largest over the ranks. A lower bound of the makespan.
  double area_bound_us = 0;
  /// max(critical path, area bound) / makespan: 1 is the best either bound allows.
  double efficiency() const;
};
Bounds bounds(const std::vector<RankTrace>& ranks);

}  // namespace tessera::trace
