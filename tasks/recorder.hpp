// Records every task this rank runs, from StarPU's task profiling (works without FxT), as a
// trace::RankTrace: the tag the task was submitted with, its worker and its times. The outputs
// (trace/) and the gathering of ranks (core/recording.cpp) take it from there.
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "tasks/tag.hpp"
#include "tessera/trace.hpp"

struct starpu_task;

namespace tessera::tasks {

class Recorder {
 public:
  explicit Recorder(int rank) : rank_(rank) {}
  /// Times are kept relative to this call; make it once StarPU is up (after a barrier when
  /// several ranks' records will be merged).
  void start_clock();
  /// Makes `task` report to this recorder when it ends, as `tag`.
  void watch(starpu_task* task, const TaskTag& tag);
  /// This rank's record so far, with StarPU's workers and bus transfer totals. Call after the
  /// tasks of interest have completed and while StarPU is up.
  trace::RankTrace rank_trace() const;
  /// Forgets the tasks and transfers recorded so far (e.g. a calibration sweep before the
  /// measured run).
  void clear();

 private:
  static void task_done(void* watched);
  int rank_;
  double origin_us_ = 0;
  mutable std::mutex mutex_;
  std::vector<trace::TaskEvent> events_;
  mutable std::map<int, trace::Transfer> bus_totals_;  // by StarPU bus id
};

}  // namespace tessera::tasks
