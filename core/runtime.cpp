// The Runtime: resolves the options against the STARPU_* environment, checks them, starts the
// engine (tasks/) and Kokkos, and holds the context every field and stencil works in.
#include "tessera/runtime.hpp"

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/comm.hpp"
#include "core/context.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/error.hpp"

namespace tessera {

namespace {

// The one process-wide pointer: the live runtime's context, for creating fields.
detail::Context* live = nullptr;

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

void check_scheduler(const std::string& name, const char* source, const tasks::Capabilities& caps) {
  std::string names;
  for (const std::string& s : caps.schedulers) {
    if (name == s) return;
    names += (names.empty() ? "" : ", ") + s;
  }
  throw Error(std::string("scheduler '") + name + "' (from " + source +
              ") is not a StarPU scheduler; choose one of: " + names);
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

// The engine's settings: every option resolved against its STARPU_* variable and checked
// against what this StarPU can do. Sets `sched_source` to where the scheduler came from.
tasks::EngineConfig engine_config(const detail::Context& c, std::string& sched_source) {
  const Options& o = c.options;
  const tasks::Capabilities caps = tasks::capabilities();
  tasks::EngineConfig e;
  sched_source = "default";
  if (!o.scheduler.empty()) {
    check_agrees("--sched", o.scheduler, "STARPU_SCHED");
    e.scheduler = o.scheduler;
    sched_source = "--sched";
  } else if (env("STARPU_SCHED") != nullptr) {
    e.scheduler = env("STARPU_SCHED");
    sched_source = "STARPU_SCHED";
  } else {
    e.scheduler = kDefaultScheduler;
  }
  check_scheduler(e.scheduler, sched_source.c_str(), caps);
  if (o.cpu_workers >= 0) {
    check_agrees("--ncpu", std::to_string(o.cpu_workers), "STARPU_NCPU");
    if (o.cpu_workers > caps.max_cpus)
      throw Error("--ncpu " + std::to_string(o.cpu_workers) + " exceeds the " +
                  std::to_string(caps.max_cpus) +
                  " CPU workers this StarPU was built for; rebuild StarPU with "
                  "--enable-maxcpus (docs/building.md) or ask for fewer");
    e.cpu_workers = o.cpu_workers;
  }
  if (o.cuda_workers >= 0) {
    check_agrees("--ncuda", std::to_string(o.cuda_workers), "STARPU_NCUDA");
    if (o.cuda_workers > 0 && !caps.cuda)
      throw Error("--ncuda " + std::to_string(o.cuda_workers) +
                  " but this StarPU has no CUDA support; build StarPU with CUDA (see README)");
    e.cuda_workers = o.cuda_workers;
  }
  if (o.calibrate) {
    check_agrees("--calibrate", "1", "STARPU_CALIBRATE");
    e.calibrate = true;
  }
  if (!o.perfmodel_dir.empty()) {
    check_agrees("--perfmodel-dir", o.perfmodel_dir, "STARPU_PERF_MODEL_DIR");
    e.perfmodel_dir = o.perfmodel_dir;
  }
  if (!o.fxt.empty()) {
    if (!caps.fxt)
      throw Error("--fxt " + o.fxt + " needs a StarPU built with FxT, and this StarPU " +
                  caps.version +
                  " has none; build StarPU with --with-fxt (docs/building.md), or use --trace "
                  "and --report, which need no FxT");
    e.fxt_dir = o.fxt;
  }
  e.quiet = o.quiet;
  e.record = !o.trace.empty() || !o.report.empty() || o.summary;
  e.rank = c.rank;
  e.policy.scheduler = e.scheduler;
  e.policy.gpu_fraction = o.gpu_fraction;
  e.policy.calibrating = o.calibrate;
  e.policy.quiet = o.quiet;
  e.policy.calibrate_command = o.calibrate_command;
#ifdef TESSERA_WITH_MPI
  e.policy.distributed = c.ranks > 1;  // one rank has nothing to exchange: plain StarPU
#endif
  return e;
}

}  // namespace

int process_rank() { return detail::comm::rank(); }

namespace detail {
Context& live_context(const char* what) {
  if (live == nullptr)
    throw Error(std::string(what) + " needs a live tessera::Runtime; create one first in main()");
  return *live;
}
}  // namespace detail

Runtime::Runtime(const Options& options) : context_(std::make_unique<detail::Context>()) {
  if (live != nullptr)
    throw Error("a tessera::Runtime is already alive; create one Runtime per process at a time");
  detail::Context& c = *context_;
  c.options = options;
  detail::comm::start();
  c.rank = detail::comm::rank();
  c.ranks = detail::comm::ranks();
  check_same_options_on_all_ranks(options);

  std::string sched_source;
  const tasks::EngineConfig config = engine_config(c, sched_source);
  c.scheduler = config.scheduler;
  // Every rank records; at shutdown rank 0 merges the ranks' records into one trace and report
  // (each rank checks here that it could write them, so a bad path stops every rank).
  c.recording = detail::Recording(options.trace, options.report);
  c.engine = std::make_unique<tasks::Engine>(config);
  if (tasks::Recorder* recorder = c.engine->recorder()) {
    // Ranks' times are merged unaligned: start their clocks together.
    if (c.ranks > 1) detail::comm::sum(0);
    recorder->start_clock();
  }
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize();
    std::atexit([] {
      if (Kokkos::is_initialized()) Kokkos::finalize();
    });
  }
  // Needs the worker counts StarPU actually started with; on error the engine stops again.
  check_gpu_fraction(options.gpu_fraction, c.engine->cpu_workers(), c.engine->cuda_workers());
  const char* calibrate = env("STARPU_CALIBRATE");
  c.configuration = "tessera: StarPU " + tasks::capabilities().version + ", scheduler " +
                    c.scheduler + " (" + sched_source + "), " +
                    std::to_string(c.engine->cpu_workers()) + " CPU + " +
                    std::to_string(c.engine->cuda_workers()) + " CUDA workers, calibration " +
                    (options.calibrate || (calibrate && std::strcmp(calibrate, "0") != 0)
                         ? "on"
                         : "off") +
                    (options.trace.empty() ? "" : ", trace " + options.trace) +
                    (c.ranks > 1 ? ", " + std::to_string(c.ranks) + " ranks" : "") +
                    (options.report.empty() ? "" : ", report " + options.report);
  if (!options.quiet && c.rank == 0) std::cout << c.configuration << std::endl;
  live = &c;
}

Runtime::~Runtime() {
  detail::Context& c = *context_;
  wait();
  // Fields outliving the runtime give their handles back now, while StarPU is up.
  for (detail::FieldStorage* f : std::vector<detail::FieldStorage*>(c.fields.begin(), c.fields.end()))
    f->release_handles();
  for (detail::HandleOwner* h : std::vector<detail::HandleOwner*>(c.handle_owners.begin(), c.handle_owners.end()))
    h->release_handles();
  if (tasks::Recorder* recorder = c.engine->recorder()) {
    trace::RankTrace mine = recorder->rank_trace();
    if (c.ranks > 1)  // StarPU-MPI's face-buffer traffic into this rank
      mine.transfers.push_back({"other ranks", "rank " + std::to_string(c.rank),
                                static_cast<std::uint64_t>(c.received.bytes),
                                static_cast<std::uint64_t>(c.received.messages), true});
    const std::vector<trace::RankTrace> ranks = detail::Recording::gather(mine);  // collective
    if (c.rank == 0) {
      c.recording.write(ranks, c.configuration);
      if (c.options.summary && !c.options.quiet)
        std::cout << "tessera summary:\n" << trace::summary_table(ranks);
    }
  }
  live = nullptr;
  c.engine.reset();  // shuts StarPU down
}

void Runtime::wait() { context_->engine->wait_all(); }

int Runtime::rank() const { return context_->rank; }
int Runtime::ranks() const { return context_->ranks; }

Traffic Runtime::traffic() const {
  Traffic t;
  t.messages = detail::comm::sum(context_->received.messages);
  t.bytes = detail::comm::sum(context_->received.bytes);
  const std::int64_t sent = context_->engine->mpi_bytes_sent(context_->ranks);
  if (sent >= 0) t.sent_bytes = detail::comm::sum(sent);
  return t;
}

const std::string& Runtime::configuration() const { return context_->configuration; }
const std::string& Runtime::scheduler() const { return context_->scheduler; }
int Runtime::cpu_workers() const { return context_->engine->cpu_workers(); }
int Runtime::cuda_workers() const { return context_->engine->cuda_workers(); }
std::size_t Runtime::tasks_submitted() const { return context_->engine->submitter().submitted(); }
std::size_t Runtime::tasks_pending() const { return context_->engine->pending(); }

trace::RankTrace Runtime::recorded() const {
  tasks::Recorder* recorder = context_->engine->recorder();
  return recorder ? recorder->rank_trace() : trace::RankTrace{};
}

void Runtime::clear_recorded() {
  if (tasks::Recorder* recorder = context_->engine->recorder()) recorder->clear();
}

}  // namespace tessera
