// Process-wide state of the live Runtime, shared by core/ and tasks/.
#pragma once

#include <cstdint>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <starpu.h>

#include "core/trace.hpp"
#include "tessera/detail/task.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

class FieldStorage;

struct Codelet {
  std::string symbol, name;
  starpu_perfmodel model;
  starpu_codelet cl;
  starpu_data_access_mode modes[2];  // of the first group of buffers, and of the rest
  long submitted = 0;                // tasks submitted: perfmodels::coverage skips unused ones
  // Data footprints (tile shapes) of the tasks submitted: the model entries this run uses,
  // which calibration must fill and the uncalibrated-model message looks at once each.
  std::set<std::uint32_t> footprints;
};

}  // namespace tessera::detail

namespace tessera {

struct Runtime::State {
  Options options;
  std::string scheduler, configuration;
  int cpu_workers = 0, cuda_workers = 0;
  // Codelets and perfmodels must outlive starpu_shutdown, which saves the models.
  std::map<std::string, std::unique_ptr<detail::Codelet>> codelets;
  // Task names live until the tasks have run (starpu_task::name is not copied).
  std::deque<std::string> task_names;
  std::set<detail::FieldStorage*> fields;
  long steps = 0;
  int rank = 0, ranks = 1;
  bool distributed = false;  // StarPU-MPI in use: built with MPI and more than one rank
  // StarPU-MPI tag of the next registered handle: every rank registers the same handles in
  // the same order (same program, same options: checked at start-up), so tags agree.
  std::int64_t next_tag = 0;
  Traffic received;  // face buffers this rank's tasks received (counted at submission)
  // Set when tasks are recorded (--trace, --report, summary): every task's callback feeds it.
  std::unique_ptr<TraceRecorder> trace;
  // Read by the applications' progress-line thread while the main thread submits.
  std::atomic<std::size_t> tasks_submitted{0};
  // Whether the run has said once that a performance model is uncalibrated.
  bool uncalibrated_reported = false;
};

namespace detail {
// The live runtime's state; throws tessera::Error naming `what` when none is alive.
Runtime::State& runtime_state(const char* what);
}  // namespace detail

}  // namespace tessera
