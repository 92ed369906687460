// One StarPU session (StarPU-MPI in distributed runs), and the parts that need one: codelets,
// data handles, submission, the recorder. core/'s Runtime owns one Engine.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tasks/codelets.hpp"
#include "tasks/data.hpp"
#include "tasks/idle.hpp"
#include "tasks/recorder.hpp"
#include "tasks/submit.hpp"

namespace tessera::tasks {

/// What the StarPU Tessera was built with can do; known before it starts.
struct Capabilities {
  std::string version;                  ///< e.g. "1.3.10"
  std::vector<std::string> schedulers;  ///< the predefined scheduling policies
  int max_cpus = 0;                     ///< CPU workers it was built for (STARPU_MAXCPUS)
  bool cuda = false, fxt = false;
  /// StarPU's SimGrid mode (docs/simulation.md): tasks are not run, their durations come from
  /// the performance models and the machine from a platform file; CUDA workers are simulated.
  bool simulated = false;
};
Capabilities capabilities();

/// StarPU's clock in seconds (starpu_timing_now): in simulation, the simulated time.
double clock_seconds();

/// Under SimGrid's SMPI (a simulating StarPU built with MPI, docs/simulation.md) the program
/// runs as a simulated process of its own, not as the MPI process: StarPU-MPI initialised MPI
/// on the rank's process before the program started, and MPI may not be called from the
/// program. Then true, with the rank and the number of ranks StarPU-MPI holds; otherwise false.
bool smpi_program(int& rank, int& ranks);

/// How to start: each setting is already resolved against the STARPU_* environment by core/.
struct EngineConfig {
  std::string scheduler;
  int cpu_workers = -1, cuda_workers = -1;  // -1: StarPU's choice
  bool calibrate = false;
  std::string perfmodel_dir;  // empty: StarPU's default
  std::string fxt_dir;        // empty: no FxT traces
  bool quiet = false;         // StarPU's own messages too (unless STARPU_SILENT says otherwise)
  bool record = false;        // record every task (trace, report, summary)
  bool keep_events = false;   // keep each task's record; else only totals (summary only)
  int rank = 0;
  /// Tasks submitted and not finished beyond which submission waits (0: no limit); unless the
  /// user set STARPU_LIMIT_MAX/MIN_SUBMITTED_TASKS.
  int max_submitted = 0;
  /// StarPU's default CPU workers less one, a core for the program's own thread (submitting,
  /// waiting), where the node has cores enough (Engine::left_core_for_program); the runtime asks
  /// for it where CUDA workers may run and the user set no CPU worker count.
  bool core_for_program = false;
  SubmitPolicy policy;  // policy.distributed: start StarPU-MPI
};

class Engine {
 public:
  /// Starts StarPU, its workers paused until the first use; throws tessera::Error when it
  /// cannot.
  explicit Engine(const EngineConfig& config);
  /// Shuts StarPU down (which saves the performance models); the caller waited for the tasks.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// The CPU workers, and the CUDA workers. In the emulated device's split mode
  /// (TESSERA_EMULATED_CUDA=split[:K], docs/gpu.md) the first K CPU workers StarPU started stand
  /// in for CUDA workers: counted here as CUDA workers, not as CPU workers.
  int cpu_workers() const { return cpu_workers_; }
  /// Without STARPU_CALIBRATE or --calibrate: the models record every task's time (engine.cpp).
  bool calibrates_always() const { return calibrates_always_; }
  /// EngineConfig::core_for_program was asked for and StarPU started a CPU worker fewer.
  bool left_core_for_program() const { return left_core_for_program_; }
  int cuda_workers() const { return cuda_workers_; }
  bool distributed() const { return distributed_; }
  /// Waits until every task submitted has run; in a distributed run also for the other
  /// ranks' tasks this rank exchanges data with (collective). Then pauses the workers (they
  /// would poll for tasks while the program works on the host) until the next use.
  void wait_all();
  /// Tasks submitted to StarPU and not finished yet.
  std::size_t pending() const;
  /// Bytes StarPU-MPI counted as sent by this rank (STARPU_MPI_STATS / STARPU_COMM_STATS), or
  /// -1 when it does not count.
  std::int64_t mpi_bytes_sent(int ranks) const;
  /// A copy of `name` that lives as long as the engine (for task tags).
  const char* intern(const std::string& name);

  CodeletRegistry& codelets() { return codelets_; }
  const CodeletRegistry& codelets() const { return codelets_; }
  DataRegistry& data() { return data_; }
  Submitter& submitter() { return *submitter_; }
  const Submitter& submitter() const { return *submitter_; }
  Recorder* recorder() const { return recorder_.get(); }  // null unless recording

 private:
  void start_cuda_stand_ins(int stand_ins);
  void take_back_limits();

  bool distributed_;
  bool set_limits_ = false;  // this engine set STARPU_LIMIT_*_SUBMITTED_TASKS
  int cpu_workers_ = 0, cuda_workers_ = 0;
  bool calibrates_always_ = false;
  bool left_core_for_program_ = false;
  // This engine set STARPU_HISTORY_MAX_ERROR.
  bool set_history_max_error_ = false;
  IdleWorkers idle_;          // before data_ and submitter_, which wake it
  CodeletRegistry codelets_;  // destroyed after the shutdown in ~Engine, which saves the models
  DataRegistry data_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Submitter> submitter_;
  std::deque<std::string> names_;
};

}  // namespace tessera::tasks
