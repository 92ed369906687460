// The Tessera runtime: StarPU (and Kokkos) started and stopped with one RAII object.
#pragma once

#include <memory>
#include <string>

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
  bool quiet = false;      ///< --quiet: print nothing but errors
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

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace tessera
