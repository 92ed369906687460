// What a recorded run says about itself beyond its totals: the task graph rebuilt from the
// tasks' data accesses (critical path, when each task became ready), the bounds of the run,
// why workers idled, and the per-step view. Pure code over RankTrace records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/trace.hpp"

namespace tessera::trace {

/// A task of a multi-rank record: ranks[rank].tasks[index] (rank is the position in the
/// vector, not RankTrace::rank).
struct TaskRef {
  std::size_t rank = 0, index = 0;
};

/// The task graph rebuilt from every rank's tasks in submission order (DependencyTracker).
struct Graph {
  /// Per task, as ranks[r].tasks[i]: when it could have started (its submission and its
  /// predecessors' ends; never after its start) and its longest chain of predecessors
  /// including itself.
  std::vector<std::vector<double>> ready_us, path_us;
  std::vector<TaskRef> critical;  ///< the longest chain, first task first
  /// Data a task of one rank wrote and a task of another read: one StarPU-MPI message.
  struct Message {
    TaskRef from, to;  ///< the writer, and the first reader on the receiving rank
    std::uint64_t bytes = 0;
  };
  std::vector<Message> messages;
  double critical_path_us = -1;  ///< < 0: no task recorded its data
};
Graph rebuild_graph(const std::vector<RankTrace>& ranks);

/// bounds(ranks) with the graph already rebuilt.
Bounds bounds(const std::vector<RankTrace>& ranks, const Graph& graph);

/// The area bound of one rank's tasks on its workers (Bounds::area_bound_us).
double area_bound(const RankTrace& rank);

/// Why one worker idled, over its rank's recorded window.
struct IdleSplit {
  double idle_us = 0;
  /// No task it could run was ready (the graph or the submission starved it).
  double starved_us = 0;
  /// A task it could run (a kind its class ran in this run) was ready on its rank but had
  /// not started: placement or scheduling kept it idle.
  double ready_us = 0;
};
/// One row per (rank, worker, step): idle time before each task is the step of that task;
/// step -1 holds tasks without a step and the idle time after the worker's last task.
struct WorkerStep {
  std::size_t rank = 0;  ///< position in the ranks vector
  int worker = 0, step = -1;
  double busy_us = 0;
  IdleSplit idle;
};
std::vector<WorkerStep> idle_by_worker_and_step(const std::vector<RankTrace>& ranks,
                                                const Graph& graph);
/// Sums those rows per worker (step ignored).
std::vector<WorkerStep> idle_by_worker(const std::vector<WorkerStep>& rows);

/// One step across the run.
struct StepTimes {
  int step = 0;
  std::vector<double> rank_span_us;  ///< per rank: first start to last end of its step tasks
  double busy_max_us = 0, busy_mean_us = 0;  ///< over every worker of every rank
  double imbalance() const { return busy_mean_us > 0 ? busy_max_us / busy_mean_us : 1; }
  /// Bus transfers (RankTrace::transfer_samples) of every rank in this step: on each rank, the
  /// samples after the previous step's boundary up to this one's, a step's boundary being the
  /// latest end of a task of it or of an earlier step.
  std::uint64_t bus_bytes = 0, bus_transfers = 0;
  /// Of bus_bytes, those moved directly between two GPUs (a run on several GPUs: their faces).
  std::uint64_t gpu_to_gpu_bytes = 0;
};
/// Whether a bus joins two GPUs (StarPU names their memory nodes "CUDA <n>").
bool between_gpus(const Transfer& bus);
std::vector<StepTimes> step_times(const std::vector<RankTrace>& ranks);

/// Tasks ready but not started on one rank over its window, averaged in `bins` equal bins.
std::vector<double> ready_curve(const RankTrace& rank, const std::vector<double>& ready_us,
                                int bins);

}  // namespace tessera::trace
