#include "tessera/runtime.hpp"

#include <Kokkos_Core.hpp>
#include <starpu.h>
#include <starpu_profiling.h>

#include <algorithm>
#ifdef TESSERA_WITH_MPI
#include <starpu_mpi.h>
#endif

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/comm.hpp"
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

void stop_starpu(bool distributed) {
#ifdef TESSERA_WITH_MPI
  if (distributed) starpu_mpi_shutdown();
#endif
  if (starpu_is_initialized()) starpu_shutdown();
}

// In a distributed run every rank must also wait for the others' tasks it exchanges with.
void wait_for_all_tasks(bool distributed) {
#ifdef TESSERA_WITH_MPI
  if (distributed) {
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    return;
  }
#endif
  (void)distributed;
  starpu_task_wait_for_all();
}

// A hand-set split needs a worker of each kind it pins tiles to.
void check_gpu_fraction(double fraction, int cpu_workers, int cuda_workers) {
  if (fraction < 0) return;
  std::ostringstream f;
  f << "--gpu-fraction " << fraction;
  if (fraction > 1)
    throw Error(f.str() + " is above 1; give the share of tiles for the GPU, between 0 and 1");
  if (fraction > 0 && cuda_workers == 0)
    throw Error(f.str() + " pins tiles to CUDA workers, but there are none (StarPU without CUDA, no "
                "GPU, or --ncuda 0); leave --gpu-fraction unset or run where a GPU is");
  if (fraction < 1 && cpu_workers == 0)
    throw Error(f.str() + " pins tiles to CPU workers, but there are none (--ncpu 0); use "
                "--gpu-fraction 1 or give CPU workers");
}

// Every rank must run the same program with the same options, or they would build different
// task graphs (and StarPU-MPI tags) and hang: compare the parsed options and the command line.
// The recording options count too: ranks that record gather their traces at shutdown.
void check_same_options_on_all_ranks(const Options& o) {
  std::string bytes = o.scheduler + '\0' + std::to_string(o.cpu_workers) + '\0' +
                      std::to_string(o.cuda_workers) + '\0' + std::to_string(o.calibrate) +
                      '\0' + std::to_string(o.quiet) + '\0' + std::to_string(o.gpu_fraction) +
                      '\0' + o.trace + '\0' + o.report + '\0' + std::to_string(o.summary) +
                      '\0' + o.perfmodel_dir + '\0' + o.fxt + '\0';
  for (int p : o.rank_grid) bytes += std::to_string(p) + ',';
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  bytes.append(std::istreambuf_iterator<char>(cmdline), std::istreambuf_iterator<char>());
  detail::comm::require_equal(detail::comm::hash(bytes), "the options or command line",
                              "start every rank with the same arguments");
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

int process_rank() { return detail::comm::rank(); }

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
  detail::comm::start();
  s.rank = detail::comm::rank();
  s.ranks = detail::comm::ranks();
  check_same_options_on_all_ranks(options);

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
  // Every rank records; at shutdown rank 0 merges the ranks' records into one trace and report
  // (each rank checks here that it could write them, so a bad path stops every rank).
  if (!options.trace.empty() || !options.report.empty() || options.summary)
    s.trace = std::make_unique<TraceRecorder>(options.trace, options.report, s.rank);

#ifdef TESSERA_WITH_MPI
  // A one-rank run (no mpirun, or -np 1) has nothing to exchange: plain StarPU then, without
  // StarPU-MPI's progress thread, which would take a core away from the workers.
  s.distributed = s.ranks > 1;
  // MPI is already up (comm::start), so StarPU-MPI must not initialise it again.
  const int ret = s.distributed ? starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf)
                                : starpu_init(&conf);
#else
  const int ret = starpu_init(&conf);
#endif
  if (ret != 0)
    throw Error("StarPU failed to start (starpu_init returned " + std::to_string(ret) +
                "); check the STARPU_* environment and the worker counts");
  if (s.trace) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    // Ranks' times are merged unaligned: start their clocks together.
    if (s.ranks > 1) detail::comm::sum(0);
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
  try {  // needs the worker counts StarPU actually started with
    check_gpu_fraction(options.gpu_fraction, s.cpu_workers, s.cuda_workers);
  } catch (const Error&) {
    TraceRecorder::active = nullptr;
    stop_starpu(s.distributed);
    throw;
  }
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
                    (s.ranks > 1 ? ", " + std::to_string(s.ranks) + " ranks" : "") +
                    (options.report.empty() ? "" : ", report " + options.report);
  if (!options.quiet && s.rank == 0) std::cout << s.configuration << std::endl;
  live = &s;
}

Runtime::~Runtime() {
  State& s = *state_;
  wait();
  // Fields outliving the runtime give their StarPU handles back now, while StarPU is up.
  for (detail::FieldStorage* f : std::vector<detail::FieldStorage*>(s.fields.begin(), s.fields.end()))
    detail::release_field(*f);
  if (s.trace) {
    trace::RankTrace mine = s.trace->rank_trace();
    if (s.ranks > 1)  // StarPU-MPI's face-buffer traffic into this rank
      mine.transfers.push_back({"other ranks", "rank " + std::to_string(s.rank),
                                static_cast<std::uint64_t>(s.received.bytes),
                                static_cast<std::uint64_t>(s.received.messages), true});
    const std::vector<trace::RankTrace> ranks = gather_rank_traces(mine);  // collective
    if (s.rank == 0) {
      s.trace->write(ranks, s.configuration);
      if (s.options.summary && !s.options.quiet)
        std::cout << "tessera summary:\n" << trace::summary_table(ranks);
    }
    TraceRecorder::active = nullptr;
  }
  live = nullptr;
  stop_starpu(s.distributed);
}

void Runtime::wait() {
  wait_for_all_tasks(state_->distributed);
  state_->task_names.clear();
}

int Runtime::rank() const { return state_->rank; }
int Runtime::ranks() const { return state_->ranks; }

Traffic Runtime::traffic() const {
  Traffic t;
  t.messages = detail::comm::sum(state_->received.messages);
  t.bytes = detail::comm::sum(state_->received.bytes);
#ifdef TESSERA_WITH_MPI
  // STARPU_MPI_STATS is StarPU 1.4's name; 1.3's STARPU_COMM_STATS still works in 1.4.
  const char* stats = env("STARPU_MPI_STATS") ? env("STARPU_MPI_STATS") : env("STARPU_COMM_STATS");
  if (state_->distributed && stats != nullptr && std::strcmp(stats, "0") != 0) {
    std::vector<size_t> sent(static_cast<std::size_t>(state_->ranks), 0);
#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
    starpu_mpi_comm_stats_retrieve(sent.data());  // renamed in 1.4, same meaning
#else
    starpu_mpi_comm_amounts_retrieve(sent.data());
#endif
    std::int64_t mine = 0;
    for (size_t b : sent) mine += static_cast<std::int64_t>(b);
    t.starpu_bytes = detail::comm::sum(mine);
  }
#endif
  return t;
}

const std::string& Runtime::configuration() const { return state_->configuration; }
const std::string& Runtime::scheduler() const { return state_->scheduler; }
int Runtime::cpu_workers() const { return state_->cpu_workers; }
int Runtime::cuda_workers() const { return state_->cuda_workers; }
std::size_t Runtime::tasks_submitted() const { return state_->tasks_submitted.load(); }
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
