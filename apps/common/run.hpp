// What the applications share: grid options, timing a run and printing its one result line.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <tessera/perfmodels.hpp>
#include <tessera/tessera.hpp>

#include "apps/common/progress.hpp"

namespace apps {

// This process's command line, as the command that calibrates its models.
inline std::string calibrate_command() {
  std::ifstream in("/proc/self/cmdline");
  std::string arg, line;
  while (std::getline(in, arg, '\0'))
    if (arg != "--quiet" && arg != "--calibrate-models") line += (line.empty() ? "" : " ") + arg;
  return line.empty() ? "this program with --calibrate-models" : line + " --calibrate-models";
}

// A CLI11 check that a whole number is at least `low`, with a message that says so (CLI11's
// PositiveNumber prints its range as doubles: "not in range 2.22507e-308 to ...").
inline CLI::Validator at_least(long low) {
  return CLI::Validator(
      [low](std::string& text) -> std::string {
        long v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "'" + text + "' is not a whole number";
        if (v < low) return text + " is below " + std::to_string(low) + "; give at least " + std::to_string(low);
        return {};
      },
      ">=" + std::to_string(low));
}

// --size, --tile and --steps, plus the Tessera runtime flags.
struct RunOptions {
  std::vector<long> size, tile;
  long steps;
  tessera::Options runtime;
  bool calibrate_models = false;

  void add_to(CLI::App& cli) {
    tessera::add_options(cli, runtime);
    const auto n = static_cast<int>(size.size());
    cli.add_option("--size", size, "grid points per axis")->expected(n);
    cli.add_option("--tile", tile, "tile points per axis (the last tile may be smaller)")->expected(n);
    cli.add_option("--steps", steps, "time steps")->check(at_least(1));
    cli.add_flag("--calibrate-models", calibrate_models,
                 "first run steps until every performance model used has enough samples "
                 "(saved in --perfmodel-dir), print them and the prediction error of the run");
    // Every run records its tasks for the end-of-run summary; --quiet turns that off.
    cli.callback([this] {
      runtime.summary = !runtime.quiet;
      runtime.calibrate_command = calibrate_command();
      if (calibrate_models) {
        runtime.calibrate = true;
        runtime.summary = true;  // the prediction error comes from the recorded tasks
      }
    });
  }
  std::string grid_name() const {
    std::string s;
    for (long v : size) s += (s.empty() ? "" : "x") + std::to_string(v);
    return s;
  }
};

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs rounds of `steps` steps until StarPU has enough samples of every codelet x architecture
// x footprint used, then prints the models. Gives up after `max_rounds`, saying what is short.
template <class Step>
void calibrate_models(tessera::Runtime& rt, long steps, Step step, int max_rounds = 100) {
  tessera::perfmodels::Coverage c;
  int round = 0;
  for (; round < max_rounds; ++round) {
    for (long s = 0; s < steps; ++s) step();
    rt.wait();
    c = tessera::perfmodels::coverage(rt);
    if (c.complete()) break;
  }
  if (rt.rank() == 0)  // every rank calibrates its own workers' models; one table is enough
    std::printf("calibration: %d rounds of %ld steps, %zu model entries, %zu short of %u samples\n%s",
              round + 1, steps, c.entries.size(), c.short_entries(), c.minimum,
              tessera::perfmodels::table(c).c_str());
  if (!c.complete() && rt.rank() == 0)
    std::fprintf(stderr, "calibration incomplete after %d rounds (StarPU flushes entries whose "
                 "samples deviate more than STARPU_HISTORY_MAX_ERROR %%); rerun, or use larger "
                 "tiles\n", max_rounds);
  rt.clear_recorded();  // the prediction error is measured on the run that follows
}

// Sets the initial state with `init`, then submits `step` `o.steps` times without waiting in
// between (the runtime keeps a bounded window of tasks in flight); returns the seconds until
// all ran. With --calibrate-models, calibrates first, then sets the initial state again, so the
// result is the one of the same run without calibration, and reports the prediction error of
// the timed run. Unless --quiet, rank 0 prints a progress line at most once per second.
template <class Init, class Step>
double timed_steps(tessera::Runtime& rt, const RunOptions& o, double points, Init init, Step step) {
  init();
  if (o.calibrate_models) {
    calibrate_models(rt, o.steps, step);
    init();  // calibration advanced the fields: start the requested run from the beginning
  }
  rt.wait();
  const double start = now_seconds();
  {
    std::unique_ptr<ProgressLine> progress;
    if (!o.runtime.quiet && rt.rank() == 0)  // one line per run, not per rank
      progress = std::make_unique<ProgressLine>(rt, o.steps, points);
    for (long s = 0; s < o.steps; ++s) {
      step();
      if (progress) progress->submitted(s + 1);
    }
    rt.wait();
  }
  const double seconds = now_seconds() - start;
  if (o.calibrate_models && rt.rank() == 0)
    std::printf("prediction error on a fresh run after calibration:\n%s",
                tessera::trace::summary_table({rt.recorded()}).c_str());
  return seconds;
}

// One line, key=value, so scripts and tests can read it; printed by rank 0 only. The halo
// traffic between ranks is per step, over every rank (0 in a one-rank run); call it on every
// rank (collective).
inline void print_result(const char* app, const RunOptions& o, const tessera::Runtime& rt,
                         int tiles, double seconds, double points, double bytes_per_point,
                         double checksum) {
  const double updates = points * static_cast<double>(o.steps);
  const tessera::Traffic traffic = rt.traffic();
  if (rt.rank() != 0) return;
  std::printf("%s grid=%s tiles=%d steps=%ld seconds=%.4f MLUPS=%.1f GB/s=%.2f checksum=%.17g "
              "ranks=%d halo_messages/step=%.1f halo_bytes/step=%.0f\n",
              app, o.grid_name().c_str(), tiles, o.steps, seconds, updates / seconds / 1e6,
              updates * bytes_per_point / seconds / 1e9, checksum, rt.ranks(),
              static_cast<double>(traffic.messages) / static_cast<double>(o.steps),
              static_cast<double>(traffic.bytes) / static_cast<double>(o.steps));
}

// Runs the application body; an error (bad input is a tessera::Error) is reported and the
// program exits with 2. Under mpirun, an error every rank raised is printed once; one that
// only some ranks raised is printed by them, and they end every rank (tessera::report_error).
template <class Body>
int run_guarded(Body body) {
  try {
    body();
  } catch (const std::exception& e) {
    return tessera::report_error(e, 2);
  }
  return 0;
}

}  // namespace apps
