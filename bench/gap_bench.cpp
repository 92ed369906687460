// bench_gaps: where the time between a task's end and its successor's start goes. Two chains of
// tasks exchange faces as a stencil's two tiles do: the task of chain t in round k reads the
// face chain 1 - t wrote in round k - 1 (double-buffered, as Tessera's face buffers) and writes
// its own tile and face, so it waits for both tasks of the round before. Each task busy-waits
// --work microseconds. Bare StarPU started by a tessera::Runtime (its scheduler and workers:
// --sched, --ncpu), codelets with a history model as Tessera's have. StarPU's profiling
// timestamps split each link, from the end of the round's last task to the successor's start:
//   release   the last task's data released (its end to release_data_end)
//   deps      the successor's dependencies resolved and its push begun (to push_start)
//   push      the scheduler's decision (push_start to push_end)
//   queue     the successor waiting for a worker to take it (push_end to pop_end)
//   fetch     its data acquired and its function called (pop_end to start)
// separately for the successor on the worker that ran the round's last task ("same": it first
// finishes that task's termination) and on the other ("other": idle, polling). Medians over
// --rounds rounds, after one untimed run that calibrates the model (docs/scheduling.md).
//   bench_gaps --ncpu 2 --sched eager --rounds 1000 --work 200
#include <starpu.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

namespace {

void busy(void**, void* arg) {
  const double us = *static_cast<const double*>(arg);
  const double t0 = starpu_timing_now();
  while (starpu_timing_now() - t0 < us) {}
}

double us_of(const timespec& t) {
  timespec copy = t;  // StarPU 1.3 takes a non-const pointer
  return starpu_timing_timespec_to_us(&copy);
}

constexpr int kParts = 6;
constexpr const char* kPartNames[kParts] = {"release", "deps", "push", "queue", "fetch", "total"};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The rounds, submitted at once; every task kept (not destroyed) for its profiling record.
std::vector<starpu_task*> run_rounds(
    starpu_codelet& cl, long rounds, double& work, const std::array<starpu_data_handle_t, 2>& tile,
    const std::array<std::array<starpu_data_handle_t, 2>, 2>& face) {
  std::vector<starpu_task*> tasks;
  for (long k = 0; k < rounds; ++k)
    for (int t = 0; t < 2; ++t) {
      starpu_task* task = starpu_task_create();
      task->cl = &cl;
      task->cl_arg = &work;
      task->handles[0] = tile[static_cast<std::size_t>(t)];
      task->handles[1] = face[static_cast<std::size_t>(1 - t)][static_cast<std::size_t>(k % 2)];
      task->handles[2] = face[static_cast<std::size_t>(t)][static_cast<std::size_t>((k + 1) % 2)];
      task->destroy = 0;
      if (starpu_task_submit(task) != 0) throw tessera::Error("bench_gaps: submit failed");
      tasks.push_back(task);
    }
  starpu_task_wait_for_all();
  return tasks;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_gaps: the parts of the gap between dependent tasks (bare StarPU)"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  long rounds = 1000;
  double work = 200;
  bool json = false;
  cli.add_option("--rounds", rounds, "rounds of two tasks")->check(CLI::Range(2L, 1000000L));
  cli.add_option("--work", work, "microseconds each task busy-waits")->check(CLI::Range(0.0, 1e6));
  cli.add_flag("--json", json, "also print one JSON line");
  CLI11_PARSE(cli, argc, argv);
  opts.quiet = true;
  try {
    tessera::Runtime rt(opts);
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    std::array<double, 2> tile_value{};
    std::array<std::array<double, 2>, 2> face_value{};
    std::array<starpu_data_handle_t, 2> tile{};
    std::array<std::array<starpu_data_handle_t, 2>, 2> face{};
    for (std::size_t t = 0; t < 2; ++t) {
      starpu_variable_data_register(&tile[t], STARPU_MAIN_RAM,
                                    reinterpret_cast<uintptr_t>(&tile_value[t]), sizeof(double));
      for (std::size_t p = 0; p < 2; ++p)
        starpu_variable_data_register(&face[t][p], STARPU_MAIN_RAM,
                                      reinterpret_cast<uintptr_t>(&face_value[t][p]),
                                      sizeof(double));
    }
    starpu_perfmodel model{};
    model.type = STARPU_HISTORY_BASED;
    model.symbol = "bench_gaps.busy";
    starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.where = STARPU_CPU;
    cl.cpu_funcs[0] = busy;
    cl.nbuffers = 3;
    cl.modes[0] = STARPU_RW;
    cl.modes[1] = STARPU_R;
    cl.modes[2] = STARPU_W;
    cl.model = &model;
    cl.name = "busy";

    // Tessera pauses idle workers (tasks/idle.hpp) and wakes them for its own submissions only:
    // bare StarPU tasks need them resumed.
    starpu_resume();
    for (starpu_task* t : run_rounds(cl, std::min(rounds, 50L), work, tile, face))
      starpu_task_destroy(t);  // untimed: calibrates the model
    const std::vector<starpu_task*> tasks = run_rounds(cl, rounds, work, tile, face);
    starpu_pause();

    // Per link: the successor and the round's last task before it.
    std::array<std::array<std::vector<double>, kParts>, 2> parts;  // [other, same][part]
    for (long k = 1; k < rounds; ++k) {
      const starpu_profiling_task_info* a =
          tasks[static_cast<std::size_t>(2 * (k - 1))]->profiling_info;
      const starpu_profiling_task_info* b =
          tasks[static_cast<std::size_t>(2 * (k - 1) + 1)]->profiling_info;
      const starpu_profiling_task_info* last = us_of(a->end_time) >= us_of(b->end_time) ? a : b;
      for (int t = 0; t < 2; ++t) {
        const starpu_profiling_task_info* s =
            tasks[static_cast<std::size_t>(2 * k + t)]->profiling_info;
        const double at[kParts + 1] = {us_of(last->end_time),
                                       us_of(last->release_data_end_time),
                                       us_of(s->push_start_time),
                                       us_of(s->push_end_time),
                                       us_of(s->pop_end_time),
                                       us_of(s->start_time),
                                       0};
        auto& into = parts[s->workerid == last->workerid ? 1 : 0];
        for (int p = 0; p + 1 < kParts; ++p)
          into[static_cast<std::size_t>(p)].push_back(at[p + 1] - at[p]);
        into[kParts - 1].push_back(at[kParts - 1] - at[0]);
      }
    }
    for (starpu_task* t : tasks) starpu_task_destroy(t);
    for (std::size_t t = 0; t < 2; ++t) {
      starpu_data_unregister(tile[t]);
      for (std::size_t p = 0; p < 2; ++p) starpu_data_unregister(face[t][p]);
    }

    std::printf("bench_gaps rounds=%ld work=%g us workers=%d sched=%s (medians, us)\n", rounds,
                work, rt.cpu_workers(), rt.scheduler().c_str());
    std::printf("%-10s", "successor");
    for (const char* n : kPartNames) std::printf(" %8s", n);
    std::printf(" %8s\n", "links");
    const char* side[2] = {"other", "same"};
    for (int w = 0; w < 2; ++w) {
      std::printf("%-10s", side[w]);
      for (int p = 0; p < kParts; ++p)
        std::printf(" %8.2f",
                    median(parts[static_cast<std::size_t>(w)][static_cast<std::size_t>(p)]));
      std::printf(" %8zu\n", parts[static_cast<std::size_t>(w)][0].size());
      if (json) {
        std::printf(
            "{\"bench\":\"gaps\",\"sched\":\"%s\",\"workers\":%d,\"work_us\":%g,\"successor\":\"%"
            "s\"",
            rt.scheduler().c_str(), rt.cpu_workers(), work, side[w]);
        for (int p = 0; p < kParts; ++p)
          std::printf(",\"%s_us\":%.3f", kPartNames[p],
                      median(parts[static_cast<std::size_t>(w)][static_cast<std::size_t>(p)]));
        std::printf("}\n");
      }
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
