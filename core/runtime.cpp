#include "tessera/runtime.hpp"

#include <Kokkos_Core.hpp>
#include <starpu.h>
#include <starpu_profiling.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "core/field_registry.hpp"
#include "core/runtime_state.hpp"
#include "tessera/error.hpp"

namespace tessera {

namespace {

Runtime::State* live = nullptr;

// Measured on heat3d (docs/performance.md): see docs/scheduling.md for the comparison.
constexpr const char* kDefaultScheduler = "dmda";

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// A flag and its STARPU_* variable may agree, but a contradiction would be a silent override
// (StarPU lets the environment win), so it is an error.
void check_agrees(const char* flag, const std::string& value, const char* var) {
  const char* e = env(var);
  if (e != nullptr && value != e)
    throw Error(std::string(flag) + " " + value + " contradicts " + var + "=" + e +
                "; unset " + var + " or drop " + flag);
}

std::string known_schedulers() {
  std::string names;
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p != nullptr; ++p)
    names += std::string(names.empty() ? "" : ", ") + (*p)->policy_name;
  return names;
}

void check_scheduler(const std::string& name, const char* source) {
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p != nullptr; ++p)
    if (name == (*p)->policy_name) return;
  throw Error(std::string("scheduler '") + name + "' (from " + source +
              ") is not a StarPU scheduler; choose one of: " + known_schedulers());
}

// StarPU's own traces (paje.trace for ViTE, tasks.rec) come from FxT, which only some StarPU
// builds have; StarPU writes them into STARPU_FXT_PREFIX at shutdown.
void request_fxt_traces(const std::string& dir) {
#ifdef STARPU_USE_FXT
  setenv("STARPU_FXT_PREFIX", dir.c_str(), 1);
  setenv("STARPU_FXT_TRACE", "1", 0);       // StarPU 1.4 records only when asked
  setenv("STARPU_GENERATE_TRACE", "1", 0);  // paje.trace and tasks.rec at shutdown
#else
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  throw Error("--fxt " + dir + " needs a StarPU built with FxT, and this StarPU " +
              std::to_string(major) + "." + std::to_string(minor) + "." +
              std::to_string(release) +
              " has none; build StarPU with --with-fxt (docs/building.md), or use --trace and "
              "--report, which need no FxT");
#endif
}

}  // namespace

namespace detail {
Runtime::State& runtime_state(const char* what) {
  if (live == nullptr)
    throw Error(std::string(what) + " needs a live tessera::Runtime; create one first in main()");
  return *live;
}
}  // namespace detail

Runtime::Runtime(const Options& options) : state_(std::make_unique<State>()) {
  if (live != nullptr)
    throw Error("a tessera::Runtime is already alive; create one Runtime per process at a time");
  State& s = *state_;
  s.options = options;

  starpu_conf conf;
  starpu_conf_init(&conf);
  std::string sched_source = "default";
  if (!options.scheduler.empty()) {
    check_agrees("--sched", options.scheduler, "STARPU_SCHED");
    s.scheduler = options.scheduler;
    sched_source = "--sched";
  } else if (env("STARPU_SCHED") != nullptr) {
    s.scheduler = env("STARPU_SCHED");
    sched_source = "STARPU_SCHED";
  } else {
    s.scheduler = kDefaultScheduler;
  }
  check_scheduler(s.scheduler, sched_source.c_str());
  conf.sched_policy_name = s.scheduler.c_str();

  if (options.cpu_workers >= 0) {
    check_agrees("--ncpu", std::to_string(options.cpu_workers), "STARPU_NCPU");
    if (options.cpu_workers > STARPU_MAXCPUS)
      throw Error("--ncpu " + std::to_string(options.cpu_workers) + " exceeds the " +
                  std::to_string(STARPU_MAXCPUS) +
                  " CPU workers this StarPU was built for; rebuild StarPU with "
                  "--enable-maxcpus (docs/building.md) or ask for fewer");
    conf.ncpus = options.cpu_workers;
  }
  if (options.cuda_workers >= 0) {
    check_agrees("--ncuda", std::to_string(options.cuda_workers), "STARPU_NCUDA");
#ifndef STARPU_USE_CUDA
    if (options.cuda_workers > 0)
      throw Error("--ncuda " + std::to_string(options.cuda_workers) +
                  " but this StarPU has no CUDA support; build StarPU with CUDA (see README)");
#endif
    conf.ncuda = options.cuda_workers;
  }
  if (options.calibrate) {
    check_agrees("--calibrate", "1", "STARPU_CALIBRATE");
    conf.calibrate = 1;
  }
  // Tessera has no OpenCL implementations: OpenCL workers could only sit idle.
  if (env("STARPU_NOPENCL") == nullptr) conf.nopencl = 0;
  // --quiet also silences StarPU's own messages, unless STARPU_SILENT says otherwise.
  if (options.quiet && env("STARPU_SILENT") == nullptr) setenv("STARPU_SILENT", "1", 0);
  if (!options.perfmodel_dir.empty()) {
    // StarPU 1.3 and 1.4 read and save the models under STARPU_PERF_MODEL_DIR.
    check_agrees("--perfmodel-dir", options.perfmodel_dir, "STARPU_PERF_MODEL_DIR");
    setenv("STARPU_PERF_MODEL_DIR", options.perfmodel_dir.c_str(), 1);
  }
  if (!options.fxt.empty()) request_fxt_traces(options.fxt);
  if (!options.trace.empty() || !options.report.empty() || options.summary)
    s.trace = std::make_unique<TraceRecorder>(options.trace, options.report);

  const int ret = starpu_init(&conf);
  if (ret != 0)
    throw Error("StarPU failed to start (starpu_init returned " + std::to_string(ret) +
                "); check the STARPU_* environment and the worker counts");
  if (s.trace) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    s.trace->start_clock();
    TraceRecorder::active = s.trace.get();
  }
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize();
    std::atexit([] {
      if (Kokkos::is_initialized()) Kokkos::finalize();
    });
  }
  s.cpu_workers = static_cast<int>(starpu_cpu_worker_get_count());
  s.cuda_workers = static_cast<int>(starpu_cuda_worker_get_count());
  const char* calibrate = env("STARPU_CALIBRATE");
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  s.configuration = "tessera: StarPU " + std::to_string(major) + "." + std::to_string(minor) +
                    "." + std::to_string(release) + ", scheduler " + s.scheduler + " (" +
                    sched_source + "), " + std::to_string(s.cpu_workers) + " CPU + " +
                    std::to_string(s.cuda_workers) + " CUDA workers, calibration " +
                    (options.calibrate || (calibrate && std::strcmp(calibrate, "0") != 0)
                         ? "on"
                         : "off") +
                    (options.trace.empty() ? "" : ", trace " + options.trace) +
                    (options.report.empty() ? "" : ", report " + options.report);
  if (!options.quiet) std::cout << s.configuration << std::endl;
  live = &s;
}

Runtime::~Runtime() {
  State& s = *state_;
  starpu_task_wait_for_all();
  // Fields outliving the runtime give their StarPU handles back now, while StarPU is up.
  for (detail::FieldStorage* f : std::vector<detail::FieldStorage*>(s.fields.begin(), s.fields.end()))
    detail::release_field(*f);
  if (s.trace) {
    s.trace->write(s.configuration);
    if (s.options.summary && !s.options.quiet)
      std::cout << "tessera summary:\n" << trace::summary_table({s.trace->rank_trace()});
    TraceRecorder::active = nullptr;
  }
  live = nullptr;
  starpu_shutdown();
}

void Runtime::wait() {
  starpu_task_wait_for_all();
  state_->task_names.clear();
}

const std::string& Runtime::configuration() const { return state_->configuration; }
const std::string& Runtime::scheduler() const { return state_->scheduler; }
int Runtime::cpu_workers() const { return state_->cpu_workers; }
int Runtime::cuda_workers() const { return state_->cuda_workers; }
std::size_t Runtime::tasks_submitted() const { return state_->tasks_submitted; }
std::size_t Runtime::tasks_pending() const {
  return static_cast<std::size_t>(std::max(0, starpu_task_nsubmitted()));
}

trace::RankTrace Runtime::recorded() const {
  return state_->trace ? state_->trace->rank_trace() : trace::RankTrace{};
}

void Runtime::clear_recorded() {
  if (state_->trace) state_->trace->clear();
}

}  // namespace tessera
