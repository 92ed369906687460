// Records every task from StarPU's task profiling information (works without FxT) into a
// trace::RankTrace, and writes the outputs asked for: Chrome/Perfetto JSON (--trace) and the
// HTML report (--report). The summary and the calibration report read the same record.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/trace.hpp"

struct starpu_task;

namespace tessera {

// Every rank's record, in rank order, on every rank: a collective call in multi-rank runs,
// the record itself in one-rank runs.
std::vector<trace::RankTrace> gather_rank_traces(const trace::RankTrace& mine);

class TraceRecorder {
 public:
  // Checks that the output paths (either may be empty) are writable, before StarPU starts.
  TraceRecorder(std::string json_path, std::string html_path, int rank = 0);
  // Times are kept relative to this call; make it right after starpu_init.
  void start_clock();
  // Hooked as the callback of every task while recording; `task` is the task itself.
  static void task_done(void* task);
  // This rank's record so far, with StarPU's workers and bus transfer totals. Call after the
  // tasks of interest have completed and while StarPU is up.
  trace::RankTrace rank_trace() const;
  // Forgets the tasks and transfers recorded so far (e.g. a calibration sweep before the
  // measured run).
  void clear();
  // Writes the files asked for from the records of `ranks` (all ranks of the run, merged).
  void write(const std::vector<trace::RankTrace>& ranks, const std::string& title) const;
  static TraceRecorder* active;

 private:
  std::string json_path_, html_path_;
  int rank_;
  double origin_us_ = 0;
  mutable std::mutex mutex_;
  std::vector<trace::TaskEvent> events_;
  mutable std::map<int, trace::Transfer> bus_totals_;  // by StarPU bus id
};

}  // namespace tessera
