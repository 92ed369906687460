// Runtime flags: parsed with CLI11, either into an application's parser or out of argv.
#include <CLI/CLI.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

namespace {
// CLI11 checks with messages that name the rule (its own print ranges as doubles, and let nan
// through a Range).
// A whole number >= `least` (a count of workers: 0; of ranks along an axis: 1) that the
// option's int holds (CLI11 said "Could not convert: --ncpu = 99999999999").
CLI::Validator count(long least = 0) {
  const std::string rule = "a whole number >= " + std::to_string(least);
  return CLI::Validator(
      [least, rule](std::string& text) -> std::string {
        long v = 0;
        if (!CLI::detail::lexical_cast(text, v) || v < least)
          return "'" + text + "' is not " + rule;
        if (v > std::numeric_limits<int>::max())
          return text + " is above " + std::to_string(std::numeric_limits<int>::max()) +
                 ", the most this option holds; give a smaller count";
        return {};
      },
      "COUNT >= " + std::to_string(least));
}

CLI::Validator share() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !(v >= 0.0 && v <= 1.0))
          return "'" + text + "' is not a number between 0 and 1";
        return {};
      },
      "0..1");
}

CLI::Validator seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !(v >= 0.0) || v == HUGE_VAL)
          return "'" + text + "' is not a number of seconds >= 0 (0: off)";
        return {};
      },
      "SECONDS >= 0");
}

CLI::Validator not_empty(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        return text.empty()
                   ? std::string("an empty ") + what + " was given; name one or drop the flag"
                   : std::string();
      },
      "");
}
}  // namespace

void add_options(CLI::App& app, Options& o) {
  const std::string group = "Tessera runtime";
  app.add_option("--sched", o.scheduler, "StarPU scheduler (eager, dmda, dmdas, heteroprio, ...)")
      ->group(group)
      ->check(not_empty("scheduler"));
  app.add_option("--ncpu", o.cpu_workers, "CPU workers")->group(group)->check(count());
  app.add_option("--ncuda", o.cuda_workers, "CUDA workers")->group(group)->check(count());
  app.add_flag("--calibrate", o.calibrate, "keep calibrating the performance models")->group(group);
  app.add_option("--trace", o.trace, "write a Chrome/Perfetto trace of every task to FILE")
      ->group(group)
      ->check(not_empty("file name"));
  app.add_option("--report", o.report,
                 "write a self-contained HTML report (Gantt chart, busy time, predictions) to FILE")
      ->group(group)
      ->check(not_empty("file name"));
  app.add_option("--perfmodel-dir", o.perfmodel_dir,
                 "read and save StarPU's performance models in DIR (STARPU_PERF_MODEL_DIR)")
      ->group(group)
      ->check(not_empty("directory"));
  app.add_option("--fxt", o.fxt,
                 "also write StarPU's FxT traces (paje.trace, tasks.rec) to DIR; "
                 "needs a StarPU built with FxT")
      ->group(group)
      ->check(not_empty("directory"));
  app.add_flag("--quiet", o.quiet, "print nothing but errors")->group(group);
  app.add_option("--gpu-fraction", o.gpu_fraction,
                 "hand-set share of the tiles run on CUDA workers, the rest on CPU workers "
                 "(default: the scheduler decides)")
      ->group(group)
      ->check(share());
  app.add_option("--rank-grid", o.rank_grid, "ranks per axis of the tile distribution (X Y [Z])")
      ->group(group)
      ->expected(2, 3)
      ->check(count(1));
  app.add_flag("--separate-exchange-tasks{false}", o.fused_exchange,
               "exchange ghost layers in halo-pack and boundary tasks of their own, as the "
               "simulation models assume (default: inside the tasks that read and write the tiles)")
      ->group(group);
  app.add_flag("--keep-gpu-tiles{false}", o.merge_gpu_tiles,
               "keep the tiles of --tile (a tile extent) that run on CUDA workers as given "
               "(default: merged, one per CUDA worker)")
      ->group(group);
  app.add_option("--watchdog", o.watchdog,
                 "end every rank, with a message, when this rank waits and nothing progresses "
                 "for SECONDS (a stopped rank, a deadlocked task); 0: off; default: automatic, "
                 "10 times the longest wait that ended in progress, at least 600 s")
      ->group(group)
      ->check(seconds());
}

Options parse_options(int& argc, char** argv) {
  Options o;
  CLI::App app{"tessera"};
  app.allow_extras();
  app.set_help_flag();
  add_options(app, o);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw Error(std::string("bad runtime flag: ") + e.what() + "; see --help of the program");
  }
  const std::vector<std::string> rest = app.remaining();
  // Keep argv's own storage: copy the leftover arguments back in order.
  int out = 1;
  for (const std::string& r : rest)
    for (int i = out; i < argc; ++i)
      if (r == argv[i]) {
        std::swap(argv[out], argv[i]);
        ++out;
        break;
      }
  argc = out;
  argv[argc] = nullptr;
  return o;
}

}  // namespace tessera
