// What the applications share: grid options, timing a run and printing its one result line.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tessera/balance.hpp>
#include <tessera/checkpoint.hpp>
#include <tessera/output.hpp>
#include <tessera/perfmodels.hpp>
#include <tessera/tessera.hpp>

#include "apps/common/blocking.hpp"
#include "apps/common/option_checks.hpp"
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

// --version: prints the Tessera version the program was built with and exits.
// --version, and CLI11's failures said plainly (plain_failure): what every application's
// command line has.
inline void add_common_flags(CLI::App& cli) {
  cli.set_version_flag("--version", std::string("tessera ") + tessera::version());
  cli.failure_message(plain_failure);
}

// --size, --tile and --steps, plus the Tessera runtime flags and --version.
struct RunOptions {
  std::vector<long> size, tile;
  long steps;
  tessera::Options runtime;
  bool calibrate_models = false;
  // Online rebalancing of a CPU/GPU split (tessera::Balance): measured every N steps, 0: off
  // (the default: each measurement drains the pipeline, docs/scheduling.md).
  long rebalance_every = 0;
  // What --size counts, for --help (nbody: bodies).
  std::string size_help = "grid points per axis";
  // What to do when the run's result is not finite (print_result refuses it): the app's
  // stability rule, e.g. cloudsim's "give a smaller --dt".
  std::string diverged_fix = "check the physics options against the scheme's stability limit";

  void add_to(CLI::App& cli) {
    tessera::add_options(cli, runtime);
    add_common_flags(cli);
    const auto n = static_cast<int>(size.size());
    cli.add_option("--size", size, size_help)->expected(n)->check(whole());
    cli.add_option("--tile", tile,
                   "tile points per axis (the last tile may be smaller; 0 on an axis: the library "
                   "chooses along it; default: the library chooses, or the application's tiles)")
        ->expected(n)
        ->check(whole());
    cli.add_option("--steps", steps, "time steps")->check(at_least(1));
    cli.add_option("--rebalance-every", rebalance_every,
                   "with a CPU/GPU split (automatic tiles with CUDA workers): measure both parts "
                   "every N steps and move the split where they differ by more than 5 % and "
                   "the move pays for itself (e.g. 10; default 0: never)")
        ->check(at_least(0));
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
  // Field output and checkpoints (add_io_options; the apps whose state is registered in a
  // State). `about` is set by the app: what a restart must match (size and physics options,
  // not the tiling, schedule or rank count).
  long output_every = 0, checkpoint_every = 0;
  std::string output_dir = "output", checkpoint_dir = "checkpoints", restart, about;
  // Not an option: the step a --restart began at (timed_blocks sets it), so that the result
  // line's rates count the steps this run computed, not the ones before the checkpoint.
  long restart_step = 0;
  // Not an option: the runtime's clock when the timed steps began (timed_blocks sets it); a
  // simulated run's result line gives it (started=), the origin of a simulated platform's
  // speed profiles (scripts/sim/hetero.sh).
  double started = 0;
  long computed_steps() const { return steps - restart_step; }

  void add_io_options(CLI::App& cli) {
    cli.add_option("--output-every", output_every,
                   "write the fields for ParaView (VTK .pvti/.vti in --output-dir) every N steps "
                   "and at step 0")
        ->check(at_least(1));
    cli.add_option("--output-dir", output_dir,
                   "directory of --output-every's files (default output)")
        ->check(named("directory name", "output"));
    cli.add_option("--checkpoint-every", checkpoint_every,
                   "checkpoint the fields every N steps into --checkpoint-dir/step-<N>")
        ->check(at_least(1));
    cli.add_option("--checkpoint-dir", checkpoint_dir,
                   "directory of the checkpoints (default checkpoints)")
        ->check(named("directory name", "checkpoints"));
    cli.add_option("--restart", restart,
                   "start from this checkpoint directory (e.g. checkpoints/step-00000100) and run "
                   "up to --steps; any tiling or rank count")
        ->check(named("checkpoint directory", "checkpoints/step-00000100"));
  }
  // --steps-per-exchange (the apps whose step is one single-field stencil): temporal
  // blocking, tessera::Stencil::advance; auto (kAutoDepth) by default.
  int steps_per_exchange = tessera::kAutoDepth;
  void add_time_block_option(CLI::App& cli) { add_steps_per_exchange(cli, steps_per_exchange); }
  std::string grid_name() const {
    std::string s;
    for (long v : size) s += (s.empty() ? "" : "x") + std::to_string(v);
    return s;
  }
};

// The fields that carry an application's state from one step to the next, by name: what
// --output-every writes, --checkpoint-every saves and --restart restores. Holds references to
// the Field objects (which keep their meaning across swaps).
class State {
 public:
  template <class T, int D>
  State& add(const std::string& name, tessera::Field<T, D>& f) {
    write_.push_back([name, &f](tessera::Output& out, long step) { out.write(f, step, name); });
    save_.push_back([name, &f](tessera::Checkpoint& ck) { ck.add(name, f); });
    restore_.push_back([name, &f](const tessera::Restart& r) { r.restore(name, f); });
    return *this;
  }
  void write(tessera::Output& out, long step) const {
    for (const auto& w : write_) w(out, step);
  }
  void save(tessera::Checkpoint& ck) const {
    for (const auto& s : save_) s(ck);
  }
  void restore(const tessera::Restart& r) const {
    for (const auto& s : restore_) s(r);
  }

 private:
  std::vector<std::function<void(tessera::Output&, long)>> write_;
  std::vector<std::function<void(tessera::Checkpoint&)>> save_;
  std::vector<std::function<void(const tessera::Restart&)>> restore_;
};

// The checkpoint directory of `step`: zero-padded, so that they list in step order.
inline std::string checkpoint_path(const RunOptions& o, long step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08ld", step);
  return o.checkpoint_dir + "/" + name;
}

// Before any task: --checkpoint-dir must be a directory, or name one that can be created (not
// a file, nor a path under one; the flag refuses an empty name), else the run would fail at
// its first checkpoint, mid-run.
inline void check_checkpoint_dir(const RunOptions& o) {
  if (o.checkpoint_every <= 0) return;
  std::error_code ec;
  for (std::filesystem::path p = o.checkpoint_dir; !p.empty(); p = p.parent_path()) {
    if (!std::filesystem::exists(p, ec)) {
      if (p == p.parent_path()) break;
      continue;
    }
    if (!std::filesystem::is_directory(p, ec))
      throw tessera::Error(
          "--checkpoint-dir " + o.checkpoint_dir + ": " +
          (p == o.checkpoint_dir ? std::string("it is a file") : "'" + p.string() + "' is a file") +
          ", not a directory; give a directory for the checkpoints (created if missing), e.g. "
          "--checkpoint-dir checkpoints");
    break;
  }
}

// Restarts `state` from --restart: checks that the checkpoint was written by this program
// with the same size and physics options and is not past --steps; returns its step.
inline long restart_from(const RunOptions& o, const State& state) {
  tessera::Restart r(o.restart);
  if (r.about() != o.about)
    throw tessera::Error("checkpoint " + o.restart + " was written by '" + r.about() +
                         "', this run is '" + o.about +
                         "'; restart with the same program, --size and options (the tiling and "
                         "rank count may differ)");
  if (r.step() > o.steps)
    throw tessera::Error("checkpoint " + o.restart + " is at step " + std::to_string(r.step()) +
                         ", past --steps " + std::to_string(o.steps) + "; give --steps " +
                         std::to_string(r.step()) + " or more");
  state.restore(r);
  return r.step();
}

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs rounds of `steps` steps until StarPU has enough samples of every codelet x architecture
// x footprint used, then prints the models. Gives up after `max_rounds`, saying what is short.
// Each round starts from the initial state (`init()`), as a run does, so that the tasks of a
// run's first steps are sampled too (halo-pack tasks, before tasks that write the fields pack
// their faces). `advance(n)` submits n steps.
template <class Init, class Advance>
void calibrate_models(tessera::Runtime& rt, long steps, Init init, Advance advance,
                      int max_rounds = 100) {
  tessera::perfmodels::Coverage c;
  int round = 0;
  for (; round < max_rounds; ++round) {
    init();
    advance(steps);
    rt.wait();
    c = tessera::perfmodels::coverage(rt);
    if (c.complete()) break;
  }
  if (rt.rank() == 0)  // every rank calibrates its own workers' models; one table is enough
    std::printf(
        "calibration: %d rounds of %ld steps, %zu model entries, %zu short of %u samples\n%s",
        round + 1, steps, c.entries.size(), c.short_entries(), c.minimum,
        tessera::perfmodels::table(c).c_str());
  if (!c.complete() && rt.rank() == 0)
    std::fprintf(stderr,
                 "calibration incomplete after %d rounds (StarPU flushes entries whose "
                 "samples deviate more than STARPU_HISTORY_MAX_ERROR %%); rerun, or use larger "
                 "tiles\n",
                 max_rounds);
  rt.clear_recorded();  // the prediction error is measured on the run that follows
}

// Sets the initial state with `init`, then submits `o.steps` steps without waiting in between
// (the runtime keeps a bounded window of tasks in flight), `block` at a time through
// `advance(n)` (n <= block: shorter where a run, an output or a checkpoint ends); returns the
// seconds until all ran. With --calibrate-models, calibrates first, then sets the initial state
// again, so the result is the one of the same run without calibration, and reports the
// prediction error of the timed run. Unless --quiet, rank 0 prints a progress line at most once
// per second. With `state` (the fields that carry the run from step to step): --restart,
// --output-every and --checkpoint-every.
template <class Init, class Advance>
double timed_blocks(tessera::Runtime& rt, RunOptions& o, double points, Init init, Advance advance,
                    long block, const State* state = nullptr,
                    const std::function<void(long)>& after_block = {}) {
  if (state != nullptr) check_checkpoint_dir(o);
  // --rebalance-every moves a CPU/GPU split: say when this run cannot have one, rather than
  // ignore the flag without a word.
  const std::string off = rt.rebalancing_off();
  if (o.rebalance_every > 0 && !o.runtime.quiet && rt.rank() == 0 && !off.empty())
    std::fprintf(stderr,
                 "tessera: --rebalance-every %ld does nothing in this run: it moves the split of "
                 "a grid between CUDA and CPU workers, and %s\n",
                 o.rebalance_every, off.c_str());
  init();
  if (o.calibrate_models) {
    calibrate_models(rt, o.steps, init, advance);
    init();  // calibration advanced the fields: start the requested run from the beginning
  }
  // Field output, checkpoints and restart (the apps that give their State): written by tasks
  // while the following steps run; a checkpoint is committed (manifest, rename) at the next
  // one or at the end, so that the steps in between are not held up by its writing.
  long first = 0;
  if (state != nullptr && !o.restart.empty()) first = restart_from(o, *state);
  o.restart_step = first;
  std::unique_ptr<tessera::Output> output;
  if (state != nullptr && o.output_every > 0) {
    output = std::make_unique<tessera::Output>(o.output_dir);
    if (first % o.output_every == 0) state->write(*output, first);
  }
  std::unique_ptr<tessera::Checkpoint> checkpoint;
  rt.wait();
  // The runtime's clock: in a simulated run (docs/simulation.md), the simulated time.
  const double start = rt.seconds();
  o.started = start;
  {
    std::unique_ptr<ProgressLine> progress;
    // One line per run, not per rank. Not in a simulated run: the line's thread would call
    // StarPU from outside SimGrid's simulated threads, which SimGrid does not allow.
    if (!o.runtime.quiet && rt.rank() == 0 && !rt.simulated())
      progress = std::make_unique<ProgressLine>(rt, o.steps, points);
    for (long done = first; done < o.steps;) {
      long n = std::min(block, o.steps - done);
      if (output) n = std::min(n, o.output_every - done % o.output_every);
      if (state != nullptr && o.checkpoint_every > 0)
        n = std::min(n, o.checkpoint_every - done % o.checkpoint_every);
      advance(n);
      done += n;
      if (after_block) after_block(done);  // a step boundary: e.g. a rebalance
      if (output && done % o.output_every == 0) state->write(*output, done);
      if (state != nullptr && o.checkpoint_every > 0 && done % o.checkpoint_every == 0) {
        if (checkpoint) checkpoint->commit();
        checkpoint = std::make_unique<tessera::Checkpoint>(checkpoint_path(o, done), done, o.about);
        state->save(*checkpoint);
      }
      if (progress) progress->submitted(done);
    }
    if (checkpoint) checkpoint->commit();
    if (output) output->finish();
    rt.wait();
  }
  const double seconds = rt.seconds() - start;
  if (o.calibrate_models && rt.rank() == 0)
    std::printf("prediction error on a fresh run after calibration:\n%s",
                tessera::trace::summary_table({rt.recorded()}).c_str());
  return seconds;
}

// The fields of `grid` balanced by --rebalance-every (tessera::Balance; nothing without a
// CPU/GPU split), and what the run ended with: the split, the parts' measured seconds per
// step and the moves (rank 0, unless quiet).
template <int D>
struct Rebalancing {
  tessera::Balance<D> balance;
  // The run's planner decides whether a split moves (a hand-set --gpu-fraction never does).
  explicit Rebalancing(const RunOptions& o) : balance(0.05, o.rebalance_every) {}
  std::function<void(long)> hook(long steps) {
    return [this, steps](long done) { balance.at_step(done, steps); };
  }
  // For the result line (printed even when quiet): where the split ended and the moves.
  std::string result_fields(const tessera::Grid<D>& grid) const {
    if (grid.split_axis() < 0) return "";
    return " split=" +
           std::string(grid.split_axis() == 2   ? "z"
                       : grid.split_axis() == 1 ? "y"
                                                : "x") +
           "<" + std::to_string(grid.split()) + "/" +
           std::to_string(grid.extent()[grid.split_axis()]) +
           " rebalances=" + std::to_string(balance.moves().size());
  }
  void print(const tessera::Grid<D>& grid, const tessera::Runtime& rt, bool quiet) const {
    if (quiet || rt.rank() != 0 || grid.split_axis() < 0) return;
    const auto& m = balance.measured();
    std::printf(
        "balance: GPU part %s < %lld of %lld; measured per step: GPU part %.3f ms, CPU "
        "part %.3f ms; %zu rebalance(s)\n",
        grid.split_axis() == 2   ? "z"
        : grid.split_axis() == 1 ? "y"
                                 : "x",
        static_cast<long long>(grid.split()),
        static_cast<long long>(grid.extent()[grid.split_axis()]), m[0] * 1e3, m[1] * 1e3,
        balance.moves().size());
  }
};

// timed_blocks one step at a time: `step()` submits one step.
template <class Init, class Step>
double timed_steps(tessera::Runtime& rt, RunOptions& o, double points, Init init, Step step,
                   const State* state = nullptr) {
  return timed_blocks(
      rt, o, points, init,
      [&](long n) {
        for (long s = 0; s < n; ++s) step();
      },
      1, state);
}

// Throws when a run's result is not finite: the scheme diverged, or the input held nan or inf.
// A run that ends in nan must not end in success (exit status 0) with checksum=nan. `what`
// names the value (e.g. "checksum"), `fix` what to change. Every rank holds the same reduced
// value, so under mpirun every rank throws alike and the message is printed once.
inline void require_finite(const std::string& app, const std::string& what, double value,
                           long steps, const std::string& fix) {
  if (std::isfinite(value)) return;
  char text[64];
  std::snprintf(text, sizeof(text), "%g", value);
  throw tessera::Error(app + ": the result is not finite after " + std::to_string(steps) +
                       " steps (" + what + "=" + text +
                       "): the run diverged or its input held nan or inf; " + fix);
}

// One line, key=value, so scripts and tests can read it; printed by rank 0 only. steps= is the
// run's last step; after a --restart, from_step= says where it began, and the rates and the
// traffic per step count the steps this run computed, not those before the checkpoint. In a
// simulated run `seconds` is simulated time, the line ends with simulated=1 and the checksum
// reads "simulated" (no values exist). A checksum that is not finite ends the run with an
// error (require_finite, o.diverged_fix) instead of the line. The halo
// traffic between ranks is per step, over every rank (0 in a one-rank run); call it on every
// rank (collective).
inline void print_result(const char* app, const RunOptions& o, const tessera::Runtime& rt,
                         int tiles, double seconds, double points, double bytes_per_point,
                         double checksum, const std::string& more = "") {
  const double computed = static_cast<double>(o.computed_steps());
  const double updates = points * computed;
  const double per_step = computed > 0 ? 1.0 / computed : 0.0;  // a restart at the last step
  const tessera::Traffic traffic = rt.traffic();
  if (!rt.simulated()) require_finite(app, "checksum", checksum, o.steps, o.diverged_fix);
  if (rt.rank() != 0) return;
  char sum[32];
  std::snprintf(sum, sizeof(sum), "%.17g", checksum);
  const std::string from =
      o.restart_step > 0 ? " from_step=" + std::to_string(o.restart_step) : std::string();
  std::printf(
      "%s grid=%s tiles=%d steps=%ld seconds=%.4f MLUPS=%.1f GB/s=%.2f checksum=%s "
      "ranks=%d halo_messages/step=%.1f halo_bytes/step=%.0f%s%s%s\n",
      app, o.grid_name().c_str(), tiles, o.steps, seconds, updates / seconds / 1e6,
      updates * bytes_per_point / seconds / 1e9, rt.simulated() ? "simulated" : sum, rt.ranks(),
      static_cast<double>(traffic.messages) * per_step,
      static_cast<double>(traffic.bytes) * per_step, rt.simulated() ? " simulated=1" : "",
      from.c_str(),
      (more + (rt.simulated() ? " started=" + std::to_string(o.started) : "")).c_str());
}

// Runs the application body; an error (bad input is a tessera::Error) is reported and the
// program exits with 2. Under mpirun, an error every rank raised is printed once; one that
// only some ranks raised is printed by them, and they end every rank (tessera::report_error).
template <class Body>
int run_guarded(Body body) {
  try {
    body();
  } catch (const std::exception& e) { return tessera::report_error(e, 2); }
  return 0;
}

}  // namespace apps
