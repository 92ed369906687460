// Records every task this rank runs, from StarPU's task profiling (works without FxT), as a
// trace::RankTrace: the tag the task was submitted with, its worker and its times; or, when
// only the summary is asked for, running totals per worker and kind (memory flat in the number
// of tasks), and the critical path folded as tasks end. The outputs
// (trace/) and the gathering of ranks (core/runtime/recording.cpp) take it from there.
#pragma once

#include <map>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tasks/tag.hpp"
#include "tessera/trace.hpp"

struct starpu_task;

namespace tessera::tasks {

class Recorder {
 public:
  /// keep_events: keep every task's TaskEvent (a trace or report needs them); otherwise only
  /// TaskTotals per (worker, kind), enough for trace::summary_table.
  Recorder(int rank, bool keep_events) : rank_(rank), keep_events_(keep_events) {}
  /// Times are kept relative to this call; make it once StarPU is up (after a barrier when
  /// several ranks' records will be merged).
  void start_clock();
  /// Makes `task` report to this recorder when it ends, as `tag`, with its data and their
  /// modes (named by their StarPU-MPI tags when `distributed`). Call in submission order.
  void watch(starpu_task* task, const TaskTag& tag, bool distributed);
  /// This rank's record so far, with StarPU's workers and bus transfer totals. Call after the
  /// tasks of interest have completed and while StarPU is up.
  trace::RankTrace rank_trace() const;
  /// Forgets the tasks and transfers recorded so far (e.g. a calibration sweep before the
  /// measured run).
  void clear();

 private:
  static void task_done(void* watched);
  // Summary only: folds the ended tasks into the critical path in submission order, as far
  // as every earlier task has ended (the others wait in ended_). Under mutex_.
  void fold(std::uint64_t order, std::vector<trace::DataAccess> data, double duration_us);
  int rank_;
  bool keep_events_;
  double origin_us_ = 0;
  mutable std::mutex mutex_;
  std::vector<trace::TaskEvent> events_;
  // Without events: totals by (worker, kind), keyed by the kind's interned name, and the
  // window from the first start to the last end.
  std::map<std::pair<int, const char*>, trace::TaskTotals> totals_;
  double first_start_us_ = 0, last_end_us_ = 0;
  std::uint64_t watched_ = 0;  // tasks watched so far: the next one's order
  std::uint64_t folded_ = 0;   // tasks folded into the critical path so far
  std::map<std::uint64_t, std::pair<std::vector<trace::DataAccess>, double>> ended_;
  // With several worker classes: one worker of each (class name, worker id), and per (kind,
  // class where a task of it did not run) what the models predicted there.
  std::vector<std::pair<std::string, int>> classes_;
  std::map<std::pair<std::string, std::string>, trace::ModelTime> model_times_;
  std::vector<std::pair<std::string, double>> predict_elsewhere(starpu_task* task,
                                                                int worker) const;
  void add_elsewhere(const std::vector<std::pair<std::string, double>>& predicted,
                     const char* kind);
  trace::DependencyTracker tracker_;
  double critical_path_us_ = 0;
  // Reads (and so resets) StarPU's bus counters: adds them to bus_totals_ and, where a bus
  // moved data, a sample at `at_us` to samples_. Under mutex_.
  void sample_buses(double at_us) const;
  mutable std::map<int, trace::Transfer> bus_totals_;                   // by StarPU bus id
  mutable std::vector<std::pair<int, trace::TransferSample>> samples_;  // (bus id, sample)
};

}  // namespace tessera::tasks
