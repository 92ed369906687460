// bench_tasks: the cost of a task on the task path, Tessera against bare StarPU, with empty
// task bodies so that only the runtime is measured. In one process, on the same StarPU:
//   starpu          starpu_task_create + submit of an empty codelet over one vector handle (RW),
//                   with a history-based model as Tessera's codelets have
//   starpu-nomodel  the same codelet without a model
//   tessera-task    tessera::Task::submit of an empty body over update_tile(f, t)
//   tessera-loop    tessera::Loop::apply of an empty functor (InOut) over a field of `--tiles`
//                   one-point tiles: one apply submits one task per tile (the stencil path's
//                   submit_tile_tasks)
// Each task uses one of `--tiles` tiles in turn, so consecutive tasks are independent and a
// tile's tasks form a chain, the same for every variant. Each of `--reps` rounds runs every
// variant once; per variant the best round's microseconds per task for submission (the main
// thread until the last task is submitted) and in total (until every task has run) are printed,
// as a table and, with --json, as JSON lines. Target (issue 13): Tessera's total per task at most
// twice bare StarPU's.
//   bench_tasks --tasks 20000 --tiles 64 --sched eager --ncpu 2 --json
#include <starpu.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "bench/twin.hpp"

namespace {

void empty_cpu(void**, void*) {}

struct EmptyBody {
  void cpu(tessera::TileView<double, 2>) const {}
};

struct EmptyPoint {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::InOut<double>) const {}
};

struct Timing {
  std::vector<double> submit, total;  // seconds per task, one per round
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_tasks: per-task cost, Tessera against bare StarPU (empty tasks)"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  long tasks = 20000;
  int tiles = 64, reps = 5;
  bool json = false;
  cli.add_option("--tasks", tasks, "tasks per variant and round")->check(CLI::PositiveNumber);
  cli.add_option("--tiles", tiles, "tiles (independent chains of tasks)")
      ->check(CLI::PositiveNumber);
  cli.add_option("--reps", reps, "rounds")->check(CLI::PositiveNumber);
  cli.add_flag("--json", json, "also print one JSON line per variant");
  CLI11_PARSE(cli, argc, argv);
  const char* env_sched = std::getenv("STARPU_SCHED");
  if (opts.scheduler.empty() && (env_sched == nullptr || *env_sched == '\0'))
    opts.scheduler = "eager";
  tasks = (tasks + tiles - 1) / tiles * tiles;  // whole loop applies

  try {
    tessera::Runtime rt(opts);
    tessera::Grid<2> grid({tiles, 1}, {1, 1});
    tessera::Field<double, 2> f(grid, 0, {}, "f");
    f.fill([](tessera::Index<2>) { return 0.0; });
    rt.wait();

    // Bare StarPU: one one-double vector per tile, an empty codelet with and without a model.
    std::vector<double> values(static_cast<std::size_t>(tiles), 0.0);
    std::vector<starpu_data_handle_t> handles(static_cast<std::size_t>(tiles));
    for (int t = 0; t < tiles; ++t)
      starpu_vector_data_register(&handles[static_cast<std::size_t>(t)], STARPU_MAIN_RAM,
                                  reinterpret_cast<uintptr_t>(&values[static_cast<std::size_t>(t)]),
                                  1, sizeof(double));
    starpu_perfmodel model{};
    model.type = STARPU_HISTORY_BASED;
    model.symbol = "bench_tasks.empty";
    starpu_codelet with_model, no_model;
    for (starpu_codelet* cl : {&with_model, &no_model}) {
      starpu_codelet_init(cl);
      cl->where = STARPU_CPU;
      cl->cpu_funcs[0] = empty_cpu;
      cl->nbuffers = 1;
      cl->modes[0] = STARPU_RW;
      cl->name = "empty";
    }
    with_model.model = &model;

    auto bare = [&](starpu_codelet* cl) {
      for (long k = 0; k < tasks; ++k) {
        starpu_task* task = starpu_task_create();
        task->cl = cl;
        task->handles[0] = handles[static_cast<std::size_t>(k % tiles)];
        if (starpu_task_submit(task) != 0) {
          std::fprintf(stderr, "starpu_task_submit failed\n");
          std::exit(2);
        }
      }
    };
    const tessera::Task empty_task("bench-empty");
    const tessera::Loop<2> empty_loop("bench-empty-loop");
    auto tessera_task = [&] {
      for (long k = 0; k < tasks; ++k)
        empty_task.submit(EmptyBody{}, tessera::update_tile(f, static_cast<int>(k % tiles)));
    };
    auto tessera_loop = [&] {
      for (long k = 0; k < tasks / tiles; ++k) empty_loop.apply(EmptyPoint{}, tessera::inout(f));
    };

    const char* names[] = {"starpu", "starpu-nomodel", "tessera-task", "tessera-loop"};
    std::vector<Timing> timing(4);
    // Tessera pauses StarPU's workers whenever a wait leaves nothing to run (tasks/idle.hpp) and
    // wakes them on its own submissions; bare StarPU tasks bypass that, so the harness resumes
    // the workers around them and leaves them paused again, as Tessera expects to find them.
    auto run = [&](int v) {
      const bool bare_starpu = v < 2;
      if (bare_starpu) starpu_resume();
      const double t0 = bench::now();
      switch (v) {
        case 0: bare(&with_model); break;
        case 1: bare(&no_model); break;
        case 2: tessera_task(); break;
        default: tessera_loop(); break;
      }
      const double t1 = bench::now();
      starpu_task_wait_for_all();
      if (bare_starpu) starpu_pause();
      rt.wait();
      const double t2 = bench::now();
      timing[static_cast<std::size_t>(v)].submit.push_back((t1 - t0) / static_cast<double>(tasks));
      timing[static_cast<std::size_t>(v)].total.push_back((t2 - t0) / static_cast<double>(tasks));
    };
    for (int v = 0; v < 4; ++v) run(v);  // warm-up: codelets, models, allocator
    for (auto& t : timing) t = Timing{};
    for (int r = 0; r < reps; ++r)
      for (int v = 0; v < 4; ++v) run(v);

    std::printf("bench_tasks tasks=%ld tiles=%d workers=%d sched=%s reps=%d (best round)\n", tasks,
                tiles, rt.cpu_workers(), rt.scheduler().c_str(), reps);
    std::printf("%-16s %12s %12s %10s\n", "variant", "submit us", "total us", "vs starpu");
    const double base = *std::min_element(timing[0].total.begin(), timing[0].total.end());
    for (int v = 0; v < 4; ++v) {
      const double s = *std::min_element(timing[v].submit.begin(), timing[v].submit.end()) * 1e6;
      const double t = *std::min_element(timing[v].total.begin(), timing[v].total.end()) * 1e6;
      std::printf("%-16s %12.3f %12.3f %10.2f\n", names[v], s, t, t / (base * 1e6));
      if (json)
        std::printf(
            "{\"bench\":\"tasks\",\"variant\":\"%s\",\"tasks\":%ld,\"tiles\":%d,\"workers\":%d,"
            "\"sched\":\"%s\",\"submit_us\":%.4f,\"total_us\":%.4f,\"vs_starpu\":%.3f}\n",
            names[v], tasks, tiles, rt.cpu_workers(), rt.scheduler().c_str(), s, t,
            t / (base * 1e6));
    }
    for (starpu_data_handle_t h : handles) starpu_data_unregister(h);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
