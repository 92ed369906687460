// The Tessera runtime: StarPU (and Kokkos) started and stopped with one RAII object.
#pragma once

#include <cstdint>
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tessera/trace.hpp"

namespace CLI {
class App;
}

namespace tessera {

namespace detail {
struct Context;
}

/// Tessera's version, the CMake project version (e.g. "0.1.0"): what the applications'
/// `--version` and the configuration line print.
const char* version();

/// Runtime settings. Each one left unset defers to the matching STARPU_* environment variable,
/// then to Tessera's default; setting one that contradicts the environment is an error.
struct Options {
  std::string scheduler;      ///< --sched (STARPU_SCHED); default dmda
  int cpu_workers = -1;       ///< --ncpu (STARPU_NCPU); default: StarPU's choice
  int cuda_workers = -1;      ///< --ncuda (STARPU_NCUDA); default: StarPU's choice
  bool calibrate = false;     ///< --calibrate (STARPU_CALIBRATE=1): keep refining the perfmodels
  std::string trace;          ///< --trace FILE: a Chrome/Perfetto trace of every task
  std::string report;         ///< --report FILE: a self-contained HTML report of the run
  bool summary = false;       ///< record every task and print a summary table at the end
  std::string perfmodel_dir;  ///< --perfmodel-dir DIR (STARPU_PERF_MODEL_DIR): models' home
  std::string fxt;            ///< --fxt DIR: StarPU's own FxT traces (needs a StarPU with FxT)
  bool quiet = false;         ///< --quiet: print nothing but errors
  /// --gpu-fraction F: a hand-set split, PSkel-style, never moved by a Balance. A grid's tiles
  /// below the tile start nearest the share F of its slowest cut axis's planes run every task
  /// on CUDA workers, the others on CPU workers (a mesh: its first round(F x tiles) tiles).
  /// Unset (< 0), the placement planner decides (docs/scheduling.md): the automatic default.
  double gpu_fraction = -1;
  /// --rank-grid X Y [Z]: ranks per axis of the block distribution of tiles (product = number
  /// of ranks); empty: the grid that cuts the fewest points (docs/distributed.md)
  std::vector<int> rank_grid;
  /// Tasks in flight (submitted, not finished) beyond which submitting waits for some to
  /// finish, so that memory stays flat however many steps a program submits without waiting.
  /// 0: no limit. STARPU_LIMIT_MAX_SUBMITTED_TASKS and _MIN_, when set, take precedence.
  int max_submitted_tasks = 20000;
  /// --watchdog SECONDS: when this rank waits (for its tasks, in Runtime::wait, in a
  /// collective) and nothing progresses (no task finishes, none is submitted) for that long,
  /// print which rank waited for what and end every rank (exit status 3), instead of hanging
  /// on a rank that stopped (SIGSTOP) or a deadlocked task. 0: off. -1 (the default):
  /// automatic, 10 times the longest wait of the run that ended in progress and at least 600 s
  /// (TESSERA_WATCHDOG_MIN_SECONDS; docs/reliability.md). A time given must exceed the
  /// longest task.
  double watchdog = -1;
  /// Ghost-layer exchanges inside the tile tasks (default): the task that reads a tile first
  /// copies its neighbours' face buffers into the tile's ghost layers, and the task that writes
  /// a tile packs its faces after its kernel, so a stencil step is one task per tile instead of
  /// three (halo-pack, boundary, interior). The traces then show "interior+halo" (and
  /// "time-block+halo", "loop+halo") tasks, with halo-pack tasks only where no writer packed.
  /// false (--separate-exchange-tasks): halo-pack and boundary tasks of their own.
  bool fused_exchange = true;
  /// Tiles given as a tile extent (Grid(extent, tile), the applications' --tile) that the
  /// placement planner puts on the CUDA workers are merged in a single-rank run, one slab per
  /// CUDA worker (default): a worker runs its tiles one after another, so separate tiles there
  /// cost a task each and the ghost copies between them. false (--keep-gpu-tiles): kept as
  /// given, e.g. to study them in a trace. Values are the same bits either way.
  bool merge_gpu_tiles = true;
  /// How to rerun this program to calibrate its models, for the uncalibrated-model message.
  std::string calibrate_command = "this program with --calibrate";
  /// The scheduler this program prefers when neither --sched nor STARPU_SCHED names one (mg:
  /// peager); empty: Tessera's default. The configuration line then says where it came from.
  std::string default_scheduler;
};

/// Face-buffer traffic between ranks, summed over every rank.
struct Traffic {
  std::int64_t messages = 0;  ///< face buffers StarPU-MPI received for the tasks of a rank
  std::int64_t bytes = 0;     ///< their bytes
  /// bytes StarPU-MPI itself counted as sent (STARPU_COMM_STATS=1), else -1
  std::int64_t sent_bytes = -1;
};

/// This process's MPI rank, 0 without MPI; usable before a Runtime exists (e.g. to print an
/// error on rank 0 only).
int process_rank();

/// For main's error handler; returns the exit status to use (`status`). One process: prints
/// the message. Under mpirun, an error that every rank raised alike (the same bad input) is
/// printed once, by rank 0, and every rank returns; an error that only some ranks raised is
/// printed by each of them, which then end every rank (MPI_Abort with `status`) within a few
/// seconds instead of leaving the others waiting for them forever:
///   try { run(); } catch (const std::exception& e) { return tessera::report_error(e); }
int report_error(const std::exception& error, int status = 2);

/// Adds the runtime flags to an application's CLI11 parser (which then rejects unknown flags):
///   CLI::App cli{"heat3d"}; tessera::Options opts; tessera::add_options(cli, opts);
void add_options(CLI::App& app, Options& options);

/// Parses the runtime flags out of argv and removes them, leaving the rest for the caller
/// (e.g. GoogleTest). Throws tessera::Error on a malformed runtime flag.
Options parse_options(int& argc, char** argv);

/// Starts StarPU (StarPU-MPI, and MPI unless the program did, when built with MPI) and Kokkos;
/// the destructor waits for every task and shuts them down. One
/// Runtime may be alive at a time; Fields and Stencils need one. Prints the effective
/// configuration once unless quiet.
class Runtime {
 public:
  explicit Runtime(const Options& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Waits until every submitted task has finished (on every rank: collective under MPI).
  void wait();
  /// Ends the run's outputs: waits for every task, writes the --trace and --report files (each
  /// whole, through a temporary file, or not at all) and prints the summary. Collective; throws
  /// tessera::Error on every rank when a file could not be written. The destructor calls it
  /// unless it was called (there a failure prints its message and exits with status 1), but not
  /// while an exception unwinds: a failed run writes no trace and prints no summary.
  void finish();
  /// One line: StarPU version, scheduler, workers, calibration, and where each came from.
  const std::string& configuration() const;
  const std::string& scheduler() const;
  int cpu_workers() const;
  int cuda_workers() const;
  /// Why a Balance moves no CPU/GPU split in this run ("" where it may): no CUDA workers, or a
  /// hand-set --gpu-fraction.
  std::string rebalancing_off() const;
  /// Whether this is a simulated run: Tessera built against a StarPU in SimGrid mode
  /// (docs/simulation.md). Tasks are scheduled but not run, each takes the time its
  /// performance model predicts on the simulated platform; fields hold no values (fill does
  /// nothing, gather and at give zeros, reductions NaN) and files of values (Output,
  /// Checkpoint, Restart) are refused.
  bool simulated() const;
  /// The runtime's clock in seconds, for timing a run: in simulation, the simulated time.
  double seconds() const;
  /// This process's rank and the number of ranks (0 and 1 when not run under mpirun).
  int rank() const;
  int ranks() const;
  /// Face-buffer traffic between ranks since start-up. Collective: call it on every rank.
  Traffic traffic() const;

  /// Tasks submitted so far, and those of them not finished yet: progress = 1 - pending/submitted.
  std::size_t tasks_submitted() const;
  std::size_t tasks_pending() const;
  /// The tasks recorded so far (needs --trace, --report or Options::summary; else empty).
  trace::RankTrace recorded() const;
  /// Forgets the recorded tasks, e.g. those of a calibration sweep before a measured run.
  void clear_recorded();

  /// The runtime's context (core/runtime/context.hpp): for the library's own use.
  detail::Context& context() const { return *context_; }

 private:
  std::unique_ptr<detail::Context> context_;
};

}  // namespace tessera
