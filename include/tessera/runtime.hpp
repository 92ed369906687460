// The Tessera runtime: StarPU (and Kokkos) started and stopped with one RAII object.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/trace.hpp"

namespace CLI {
class App;
}

namespace tessera {

/// Runtime settings. Each one left unset defers to the matching STARPU_* environment variable,
/// then to Tessera's default; setting one that contradicts the environment is an error.
struct Options {
  std::string scheduler;   ///< --sched (STARPU_SCHED); default dmda
  int cpu_workers = -1;    ///< --ncpu (STARPU_NCPU); default: StarPU's choice
  int cuda_workers = -1;   ///< --ncuda (STARPU_NCUDA); default: StarPU's choice
  bool calibrate = false;  ///< --calibrate (STARPU_CALIBRATE=1): keep refining the perfmodels
  std::string trace;       ///< --trace FILE: a Chrome/Perfetto trace of every task
  std::string report;      ///< --report FILE: a self-contained HTML report of the run
  bool summary = false;    ///< record every task and print a summary table at the end
  std::string perfmodel_dir;  ///< --perfmodel-dir DIR (STARPU_PERF_MODEL_DIR): models' home
  std::string fxt;         ///< --fxt DIR: StarPU's own FxT traces (needs a StarPU with FxT)
  bool quiet = false;      ///< --quiet: print nothing but errors
  /// How to rerun this program to calibrate its models, for the uncalibrated-model message.
  std::string calibrate_command = "this program with --calibrate";
};

/// Adds the runtime flags to an application's CLI11 parser (which then rejects unknown flags):
///   CLI::App cli{"heat3d"}; tessera::Options opts; tessera::add_options(cli, opts);
void add_options(CLI::App& app, Options& options);

/// Parses the runtime flags out of argv and removes them, leaving the rest for the caller
/// (e.g. GoogleTest). Throws tessera::Error on a malformed runtime flag.
Options parse_options(int& argc, char** argv);

/// Starts StarPU and Kokkos; the destructor waits for every task and shuts them down. One
/// Runtime may be alive at a time; Fields and Stencils need one. Prints the effective
/// configuration once unless quiet.
class Runtime {
 public:
  explicit Runtime(const Options& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Waits until every submitted task has finished.
  void wait();
  /// One line: StarPU version, scheduler, workers, calibration, and where each came from.
  const std::string& configuration() const;
  const std::string& scheduler() const;
  int cpu_workers() const;
  int cuda_workers() const;

  /// Tasks submitted so far, and those of them not finished yet: progress = 1 - pending/submitted.
  std::size_t tasks_submitted() const;
  std::size_t tasks_pending() const;
  /// The tasks recorded so far (needs --trace, --report or Options::summary; else empty).
  trace::RankTrace recorded() const;
  /// Forgets the recorded tasks, e.g. those of a calibration sweep before a measured run.
  void clear_recorded();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace tessera
