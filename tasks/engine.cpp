#include "tasks/engine.hpp"

#include <starpu_profiling.h>

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tasks/device_classes.hpp"
#include "tasks/starpu.hpp"
#include "tessera/error.hpp"

namespace tessera::tasks {

namespace {
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// StarPU 1.4 keeps a second model directory besides STARPU_PERF_MODEL_DIR, its home's
// .starpu/sampling (home: XDG_CACHE_HOME, else STARPU_HOME, else HOME): it creates it at start-up
// (aborting when it cannot) and reads and updates a model it finds there. A named model directory
// is to be the only one (docs/reliability.md), so while StarPU starts and fixes its directories,
// its home is a folder inside the named one; the user's XDG_CACHE_HOME is given back after
// start-up. StarPU 1.3 has no second directory.
class PrivateModelHome {
 public:
  PrivateModelHome() {
#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
    const char* dir = env("STARPU_PERF_MODEL_DIR");
    if (dir == nullptr) return;
    const char* before = std::getenv("XDG_CACHE_HOME");
    had_value_ = before != nullptr;
    if (had_value_) value_ = before;
    setenv("XDG_CACHE_HOME", (std::string(dir) + "/.starpu-home").c_str(), 1);
    set_ = true;
#endif
  }
  ~PrivateModelHome() {
    if (!set_) return;
    if (had_value_)
      setenv("XDG_CACHE_HOME", value_.c_str(), 1);
    else
      unsetenv("XDG_CACHE_HOME");
  }
  PrivateModelHome(const PrivateModelHome&) = delete;
  PrivateModelHome& operator=(const PrivateModelHome&) = delete;

 private:
  bool set_ = false, had_value_ = false;
  std::string value_;
};

// The processing units from which EngineConfig::core_for_program leaves one core to the program:
// with two GPUs, hyperthreaded cores still keep a CPU worker.
constexpr int kPusToLeaveACore = 8;

// How many CPUs this process may run on (its launcher's binding), 0 when unknown.
int bound_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

// With CUDA workers StarPU's default starts a CPU worker on every core but those its CUDA
// workers' threads take, and the program's thread (which submits and waits) has none: it then
// waits for a core while polling workers hold them all, and a run whose tiles are all on the
// GPU takes longer than GPU-only (docs/gpu.md, "A core for the program"). From
// kPusToLeaveACore processing units this process may use. Whether it left one.
bool leave_core_for_program(const EngineConfig& config, starpu_conf& conf) {
  if (!config.core_for_program || config.cpu_workers >= 0 || bound_cpus() < kPusToLeaveACore)
    return false;
  conf.reserve_ncpus = 1;
  return true;
}

void stop(bool distributed) {
#ifdef TESSERA_WITH_MPI
  if (distributed) starpu_mpi_shutdown();
#endif
  (void)distributed;
  if (starpu_is_initialized()) starpu_shutdown();
}
}  // namespace

Capabilities capabilities() {
  Capabilities c;
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  c.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p != nullptr; ++p)
    c.schedulers.push_back((*p)->policy_name);
  c.max_cpus = STARPU_MAXCPUS;
#if defined(STARPU_USE_CUDA) || defined(STARPU_SIMGRID)
  c.cuda = true;  // simulated CUDA workers run simulated CUDA implementations
#endif
#ifdef STARPU_SIMGRID
  c.simulated = true;
#endif
#ifdef STARPU_USE_FXT
  c.fxt = true;
#endif
  return c;
}

double clock_seconds() { return starpu_timing_now() * 1e-6; }

bool smpi_program(int& rank, int& ranks) {
#if defined(STARPU_SIMGRID) && defined(TESSERA_WITH_MPI)
  rank = starpu_mpi_world_rank();
  ranks = starpu_mpi_world_size();
  return true;
#else
  (void)rank, (void)ranks;
  return false;
#endif
}

}  // namespace tessera::tasks

#ifdef STARPU_SIMGRID
// Simulation (docs/simulation.md): a simulating StarPU has its own main(), which starts SimGrid
// and runs starpu_main() as a simulated process. A program built with tessera_add_program has
// its main renamed tessera_simulated_main (the apps include no StarPU header, which would
// rename it to starpu_main), and this hands it over. A program that keeps its main still
// runs: StarPU then attaches its thread at starpu_init, and SimGrid switches between real
// threads, about a hundred times slower with many simulated workers.
// When SimGrid finds the simulated processes deadlocked it says so and ends the simulation, and
// StarPU's main() returns 0 without the program's main having returned: that exit is made a
// failure here (a run that produced no result must not look like one that did).
int tessera_simulated_main(int argc, char** argv) __attribute__((weak));
namespace {
bool simulated_main_returned = false;
void fail_unless_simulated_main_returned() {
  if (simulated_main_returned) return;
  std::fputs(
      "tessera: the simulation ended before the program's main() returned (SimGrid reports a "
      "deadlock above, or the program called exit()); no result: exit status 70\n",
      stderr);
  std::fflush(stderr);
  std::_Exit(70);
}
}  // namespace
extern "C" int starpu_main(int argc, char** argv) {
  std::atexit(fail_unless_simulated_main_returned);
  const int status = tessera_simulated_main(argc, argv);
  simulated_main_returned = true;
  return status;
}
#endif

namespace tessera::tasks {

namespace {
// What starpu_init's failure `ret` means for the user.
Error start_error(int ret, bool distributed) {
  // StarPU 1.4 keeps its workers inside the process's binding, and mpirun binds each of 2 ranks
  // to one core by default: StarPU-MPI takes that core for its thread, none is left for a worker.
  if (ret == -ENODEV && distributed && bound_cpus() == 1 &&
      (STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4))
    return Error(
        "StarPU found no worker it could start: this rank is bound to one core (mpirun binds "
        "each of 2 ranks to a core unless told otherwise) and StarPU-MPI keeps it for its "
        "communication thread; run mpirun with --bind-to none, or bind each rank to several "
        "cores (docs/distributed.md)");
  if (ret == -ENODEV)
    return Error(
        "StarPU found no worker it could start (no CPU worker and no usable GPU); give "
        "--ncpu 1 or more, and check STARPU_NCPU, STARPU_NCUDA and STARPU_WORKERS_*");
  return Error("StarPU failed to start (starpu_init returned " + std::to_string(ret) +
               "); check the STARPU_* environment and the worker counts");
}
}  // namespace

// Unsets the submission limits this engine set (set_limits_): the next Engine may ask for others.
void Engine::take_back_limits() {
  if (!set_limits_) return;
  unsetenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS");
  unsetenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS");
}

// The split mode: the first `stand_ins` CPU workers stand in for CUDA workers (the Submitter
// pins the CUDA class's tiles to them, the planner counts them as CUDA workers); one must stay
// a CPU worker.
void Engine::start_cuda_stand_ins(int stand_ins) {
  if (stand_ins >= cpu_workers_) {
    stop(distributed_);
    take_back_limits();
    throw Error("TESSERA_EMULATED_CUDA=split" +
                (stand_ins > 1 ? ":" + std::to_string(stand_ins) : std::string()) + " stands " +
                std::to_string(stand_ins) +
                " CPU worker(s) in for CUDA workers and leaves the others CPU workers, but "
                "StarPU started " +
                std::to_string(cpu_workers_) + "; give --ncpu " + std::to_string(stand_ins + 1) +
                " or more (docs/gpu.md)");
  }
  std::vector<int> ids(static_cast<std::size_t>(cpu_workers_));
  ids.resize(static_cast<std::size_t>(starpu_worker_get_ids_by_type(
      STARPU_CPU_WORKER, ids.data(), static_cast<unsigned>(ids.size()))));
  // With several memory nodes (STARPU_USE_NUMA=1 on a machine, or a hwloc topology, of two
  // NUMA nodes) the stand-ins are the workers farthest from main memory, where the tiles are
  // registered: a GPU tile's data then crosses between memory nodes through its copy methods,
  // as on a GPU (docs/gpu.md, "Split emulation").
  std::stable_sort(ids.begin(), ids.end(), [](int a, int b) {
    return starpu_worker_get_memory_node(static_cast<unsigned>(a)) >
           starpu_worker_get_memory_node(static_cast<unsigned>(b));
  });
  ids.resize(static_cast<std::size_t>(stand_ins));
  set_cuda_stand_ins(ids);
  data_.stand_in_homes(starpu_worker_get_memory_node(static_cast<unsigned>(ids.front())) !=
                       STARPU_MAIN_RAM);
}

Engine::Engine(const EngineConfig& config)
    : distributed_(config.policy.distributed), data_(config.policy.distributed, idle_) {
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.sched_policy_name = config.scheduler.c_str();
  if (config.cpu_workers >= 0) conf.ncpus = config.cpu_workers;
  if (config.cuda_workers >= 0) conf.ncuda = config.cuda_workers;
  if (config.calibrate) conf.calibrate = 1;
  // Models record from the start. StarPU 1.3 switches a model to calibration the first time it
  // has no prediction for a task, possibly while tasks of that codelet run; its CPU driver then
  // times such a task from a start it never took and aborts ("measured >= 0"; seen on empty model
  // directories). StarPU 1.4 fixed the driver but makes the same switch with a warning per model
  // and footprint ("not calibrated enough ... forcing calibration for this run"), which only
  // repeats the note Tessera gives once (Submitter::report_if_uncalibrated).
  if (!config.calibrate && env("STARPU_CALIBRATE") == nullptr) {
    conf.calibrate = 1;
    calibrates_always_ = true;
  }
  // StarPU drops a timing more than STARPU_HISTORY_MAX_ERROR % (default 50) away from its entry's
  // mean and flushes the entry, with a "Too big deviation ... flushing" line, once such timings
  // are as many as the kept ones: on a fresh entry (it skips the first timing and keeps the
  // second as the mean) one slow or fast timing against one kept does it. Where the workers share
  // cores (a busy machine, more workers than cores) a task is stretched by the time slices it
  // waits, by any factor for a short task, so no band holds (docs/scheduling.md, "Models record
  // every task"). So StarPU keeps every timing: its mean is then what a task took on this machine
  // as loaded. A user's own value is kept (50: StarPU's drop and flush).
  if (env("STARPU_HISTORY_MAX_ERROR") == nullptr) {
    setenv("STARPU_HISTORY_MAX_ERROR", "1000000000", 1);
    set_history_max_error_ = true;  // taken back after start-up: StarPU reads it in starpu_init
  }
#ifdef STARPU_SIMGRID
  // A simulated run maps its buffers onto one small file, a mapping per
  // STARPU_MALLOC_SIMULATION_FOLD MiB (default 1): past vm.max_map_count mappings (65530 by
  // default, 64 GiB) StarPU aborts in its allocator. 64 MiB a mapping lets grids of 4 TiB be
  // simulated; a user's value is kept.
  setenv("STARPU_MALLOC_SIMULATION_FOLD", "64", 0);
#endif
  left_core_for_program_ = leave_core_for_program(config, conf);
  // Tessera has no OpenCL implementations: OpenCL workers could only sit idle.
  if (env("STARPU_NOPENCL") == nullptr) conf.nopencl = 0;
  if (config.quiet && env("STARPU_SILENT") == nullptr) setenv("STARPU_SILENT", "1", 0);
  // A bounded window of tasks in flight: submission blocks while more than the maximum are
  // submitted and not finished, until they are fewer than the minimum, so memory does not
  // grow with the step count (all steps are submitted without waiting). StarPU 1.3 reads the
  // limits only from the environment, at start; a user's own setting of either is kept.
  if (env("STARPU_LIMIT_MAX_SUBMITTED_TASKS") == nullptr &&
      env("STARPU_LIMIT_MIN_SUBMITTED_TASKS") == nullptr && config.max_submitted > 0) {
    setenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS", std::to_string(config.max_submitted).c_str(), 1);
    setenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS",
           std::to_string(config.max_submitted * 9 / 10).c_str(), 1);
    set_limits_ = true;  // taken back at shutdown: the next Engine may ask for others
  }
  // StarPU 1.3 and 1.4 read and save the models under STARPU_PERF_MODEL_DIR.
  if (!config.perfmodel_dir.empty())
    setenv("STARPU_PERF_MODEL_DIR", config.perfmodel_dir.c_str(), 1);
  const PrivateModelHome private_home;  // until the end of start-up
  // The emulated device's split mode (docs/gpu.md): the stand-ins run the CUDA bodies and the
  // other CPU workers the CPU bodies, so each CPU worker gets a model of its own (unless the
  // user said otherwise), which tells the classes' speeds apart (model_class_speeds). StarPU
  // reads it at start-up only; taken back after.
  const int stand_ins = codelets_.cuda_stand_ins();
  const bool per_worker_models =
      stand_ins > 0 && env("STARPU_PERF_MODEL_HOMOGENEOUS_CPU") == nullptr;
  if (per_worker_models) setenv("STARPU_PERF_MODEL_HOMOGENEOUS_CPU", "0", 1);
  // StarPU's own traces (paje.trace for ViTE, tasks.rec) come from FxT; StarPU writes them into
  // STARPU_FXT_PREFIX at shutdown.
  if (!config.fxt_dir.empty()) {
    setenv("STARPU_FXT_PREFIX", config.fxt_dir.c_str(), 1);
    setenv("STARPU_FXT_TRACE", "1", 0);       // StarPU 1.4 records only when asked
    setenv("STARPU_GENERATE_TRACE", "1", 0);  // paje.trace and tasks.rec at shutdown
  }
#ifdef TESSERA_WITH_MPI
  // MPI is already up (core/runtime/comm.cpp), so StarPU-MPI must not initialise it again. A
  // one-rank run uses plain StarPU, without StarPU-MPI's progress thread taking a core from the
  // workers.
  const int ret = distributed_ ? starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf)
                               : starpu_init(&conf);
#else
  const int ret = starpu_init(&conf);
#endif
  if (per_worker_models) unsetenv("STARPU_PERF_MODEL_HOMOGENEOUS_CPU");
  if (set_history_max_error_) unsetenv("STARPU_HISTORY_MAX_ERROR");
  if (ret != 0) {
    take_back_limits();
    throw start_error(ret, distributed_);
  }
  cpu_workers_ = static_cast<int>(starpu_cpu_worker_get_count());
  if (stand_ins > 0) start_cuda_stand_ins(stand_ins);
  if (config.record) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    recorder_ = std::make_unique<Recorder>(config.rank, config.keep_events);
  }
  SubmitPolicy policy = config.policy;
  policy.name_tasks = !config.fxt_dir.empty();
  submitter_ = std::make_unique<Submitter>(std::move(policy), recorder_.get(), idle_);
  cpu_workers_ -= stand_ins;
  cuda_workers_ = static_cast<int>(starpu_cuda_worker_get_count()) + stand_ins;
  // A rank of its own whose CPU workers take every core it may use: the thread waiting for
  // the last task has no core of its own (the issue-50 case: 2 workers on 2 cores; StarPU's
  // default worker count on a CPU-only node).
  const int cores = bound_cpus();
  idle_.pause_when_drained(!distributed_ && cuda_workers_ == 0 && cores > 0 &&
                           cpu_workers_ >= cores);
  idle_.pause_if_idle();  // until the first submission or data access
}

Engine::~Engine() {
  idle_.stop();  // StarPU shuts down only running workers (and asserts so in 1.4)
  stop(distributed_);
  set_cuda_stand_ins({});
  take_back_limits();
}

void Engine::wait_all() {
  {
    const IdleWorkers::Draining awake(idle_);
#ifdef TESSERA_WITH_MPI
    // Also waits for every rank's messages: once it returns, no rank needs this one's workers
    // until the next submission, which wakes them.
    if (distributed_)
      starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    else
      starpu_task_wait_for_all();
#else
    starpu_task_wait_for_all();
#endif
  }
  submitter_->forget_names();
  submitter_->forget_visits();
  idle_.pause_if_idle(IdleWorkers::kGrace);
}

std::size_t Engine::pending() const {
  return static_cast<std::size_t>(std::max(0, starpu_task_nsubmitted()));
}

std::int64_t Engine::mpi_bytes_sent(int ranks) const {
#ifdef TESSERA_WITH_MPI
  // STARPU_MPI_STATS is StarPU 1.4's name; 1.3's STARPU_COMM_STATS still works in 1.4.
  const char* stats = env("STARPU_MPI_STATS") ? env("STARPU_MPI_STATS") : env("STARPU_COMM_STATS");
  if (!distributed_ || stats == nullptr || std::strcmp(stats, "0") == 0) return -1;
  std::vector<size_t> sent(static_cast<std::size_t>(ranks), 0);
#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
  starpu_mpi_comm_stats_retrieve(sent.data());  // renamed in 1.4, same meaning
#else
  starpu_mpi_comm_amounts_retrieve(sent.data());
#endif
  std::int64_t mine = 0;
  for (size_t b : sent) mine += static_cast<std::int64_t>(b);
  return mine;
#else
  (void)ranks;
  return -1;
#endif
}

const char* Engine::intern(const std::string& name) {
  names_.push_back(name);
  return names_.back().c_str();
}

}  // namespace tessera::tasks
