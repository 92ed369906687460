// Execution traces as plain data: what one rank recorded, and the outputs built from one or
// more ranks (Chrome/Perfetto JSON, a self-contained HTML report, a text summary). Nothing here
// talks to StarPU or MPI, so a multi-rank run only has to gather each rank's RankTrace and call
// these functions on rank 0.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tessera::trace {

/// One executed task: what it was (its tag, as the runtime submitted it) and when and where
/// it ran. Times are microseconds since the rank's runtime started.
struct TaskEvent {
  std::string stencil;       ///< the stencil (or "reduce") that submitted it
  std::string kind;          ///< "interior", "halo-pack", "boundary", "constant-ghosts", "sum", ...
  std::string field;         ///< the field a halo or reduction task works on; empty for interiors
  int tile = -1, step = -1;  ///< -1 where the task has none
  int worker = -1;           ///< StarPU worker id on its rank
  double submit_us = 0, start_us = 0, end_us = 0;
  double predicted_us = -1;  ///< the scheduler's perfmodel prediction; < 0: none
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
  /// Tasks recorded, kept or counted.
  long task_count() const;
};

/// The task's human-readable name, "<stencil>:<kind>[ <field>][ tile=T][ step=S]", e.g.
/// "heat3d:halo-pack u tile=3 step=7": the one place task names are made.
std::string task_name(const TaskEvent& event);

/// Chrome/Perfetto trace-event JSON: one process per rank (pid = rank), one track per worker.
void write_chrome_json(const std::vector<RankTrace>& ranks, std::ostream& out);

/// A self-contained HTML page (inline SVG, CSS and JS, no network): a Gantt chart per worker,
/// busy/idle per worker, time per task kind, CPU/GPU split, predicted versus measured time.
/// `about` is a line under the heading (the runtime writes its configuration there).
void write_html_report(const std::vector<RankTrace>& ranks, const std::string& about,
                       std::ostream& out);

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

}  // namespace tessera::trace
