// What the application-vs-OpenMP-twin benchmarks share: timing steps and the report.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <starpu.h>

#include <tessera/grid.hpp>
#include <tessera/runtime.hpp>
#include <tessera/trace.hpp>

namespace bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The options every twin benchmark takes besides its sizes: the runtime's, --steps, --threads.
inline void add_twin_options(CLI::App& cli, tessera::Options& opts, long& steps, int& threads) {
  tessera::add_options(cli, opts);
  cli.add_option("--steps", steps, "time steps (>= 2)")->check(CLI::Range(2L, 100000000L));
  cli.add_option("--threads", threads, "OpenMP threads, and StarPU CPU workers unless --ncpu");
}

// After parsing: quiet, and as many CPU workers as OpenMP threads unless --ncpu says otherwise;
// the tasks' totals recorded (Options::summary, its table unprinted): each round's efficiency.
inline tessera::Options twin_runtime(tessera::Options opts, int threads) {
  opts.quiet = true;
  opts.summary = true;
  if (opts.cpu_workers < 0) opts.cpu_workers = threads;
  return opts;
}

// One untimed step (first-time set-up: ghost plans, codelets, first touch), then steps - 1
// timed ones; sync() waits for submitted work. Seconds per step.
template <class Step, class Sync>
double seconds_per_step(long steps, Step step, Sync sync) {
  step();
  sync();
  const double t0 = now();
  for (long k = 1; k < steps; ++k) step();
  sync();
  return (now() - t0) / static_cast<double>(steps - 1);
}

// Before each side's round: a pause long enough that the other side's threads have stopped
// polling. libgomp's idle threads spin about 7.5 ms after a parallel region before they sleep
// (measured on the 2-core machine of docs/performance.md), Tessera's workers 0.2 ms after a
// wait; either would otherwise take cycles from the next round's threads.
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

// Interleaved rounds, the best of each side: the host's noise (up to 2x between invocations of
// one case on the shared 2-core machine) then hits both sides alike. Each of `reps` rounds
// times tessera_round() (seconds per step), then twin_round() with StarPU's workers paused
// (StarPU 1.3's idle workers poll, which would take the twin's cores). Both sides advance the
// same steps per round, so their final results stay comparable.
// Tessera's best round also gives its efficiency (round_efficiency).
struct Best {
  double tessera_s = 1e300, omp_s = 1e300;
  double efficiency = -1;
};

// The efficiency of the tasks run since the record was last cleared (rt.clear_recorded()):
// max(critical path, area bound) / makespan (trace::Bounds; the run summary's line), so that a
// ratio that falls shows whether the workers waited or the tasks got slower. -1: nothing recorded
// (a runtime without Options::summary, trace or report).
inline double round_efficiency(const tessera::Runtime& rt) {
  const tessera::trace::Bounds b = tessera::trace::bounds({rt.recorded()});
  return b.makespan_us > 0 ? b.efficiency() : -1;
}

// values[k] of the round k whose time seconds[k] was the shortest (the best round's figure).
inline double at_fastest(const std::vector<double>& seconds, const std::vector<double>& values) {
  return values[static_cast<std::size_t>(std::min_element(seconds.begin(), seconds.end()) -
                                         seconds.begin())];
}

// The line every twin benchmark prints beside its ratio, after `label` (its table's column).
inline void print_efficiency(const char* label, double efficiency) {
  std::printf("%sefficiency %.1f %% (best round: max(critical path, area bound) / makespan)\n",
              label, 100 * efficiency);
}

template <class TesseraRound, class TwinRound>
Best interleaved_rounds(tessera::Runtime& rt, int reps, TesseraRound tessera_round,
                        TwinRound twin_round) {
  Best best;
  for (int r = 0; r < reps; ++r) {
    settle();
    rt.clear_recorded();
    const double s = tessera_round();
    if (s < best.tessera_s) {
      best.tessera_s = s;
      best.efficiency = round_efficiency(rt);
    }
    starpu_pause();
    settle();
    best.omp_s = std::min(best.omp_s, twin_round());
    starpu_resume();
  }
  return best;
}

// The --reps option of the twin benchmarks.
inline void add_reps_option(CLI::App& cli, int& reps) {
  cli.add_option("--reps", reps, "interleaved rounds (Tessera, then the twin); the best of each")
      ->check(CLI::Range(1, 1000));
}

// The same with blocks of steps: advance(n) submits n steps (e.g. Stencil::advance, several
// per exchange): one untimed step, then steps - 1 timed ones in one call.
template <class Advance, class Sync>
double seconds_per_step_in_blocks(long steps, Advance advance, Sync sync) {
  advance(1);
  sync();
  const double t0 = now();
  advance(steps - 1);
  sync();
  return (now() - t0) / static_cast<double>(steps - 1);
}

// Copy bandwidth (GB/s, read + write) of an OpenMP copy loop over `bytes` per array with
// `threads` threads: the best of 5 copies, after 2 untimed ones. Measured in the same run as the
// case, on arrays of the case's size, so that an in-cache case is held against an in-cache copy.
inline double copy_bandwidth(std::size_t bytes, int threads) {
  const std::int64_t n = static_cast<std::int64_t>(bytes / sizeof(double)) + 1;
  std::vector<double> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) {
    a[static_cast<std::size_t>(i)] = static_cast<double>(i & 1023);
    b[static_cast<std::size_t>(i)] = 0.0;
  }
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const double* src = r % 2 ? b.data() : a.data();
    double* dst = r % 2 ? a.data() : b.data();
    const double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i];
    if (r >= 2) best = std::min(best, now() - t0);
  }
  return 16.0 * static_cast<double>(n) / best / 1e9;
}

// One case of the suite (bench/run.sh) as one JSON line. `bytes_per_point`: the compulsory
// memory traffic of one point update (each field read and written once); 0 where the
// application is not memory-bound (nbody, airfoil), and then no roofline fraction.
struct Case {
  std::string app, grid, tile;
  int tiles = 0, workers = 0, threads = 0;
  long steps = 0;
  int steps_per_exchange = 1;  // Tessera's temporal blocking depth
  double points = 0;           // point updates per step
  double bytes_per_point = 0;
  double omp_s = 0, tessera_s = 0;  // seconds per step
  bool equal = false;
  std::string equality = "bitwise";
  double copy_gbs = 0;
  double efficiency = -1;  // Tessera's best round (round_efficiency); -1: not measured
};

inline void json_line(const Case& c) {
  const double gbs = c.bytes_per_point * c.points / c.tessera_s / 1e9;
  std::printf(
      "{\"bench\":\"app\",\"app\":\"%s\",\"grid\":\"%s\",\"tile\":\"%s\",\"tiles\":%d,"
      "\"workers\":%d,\"threads\":%d,\"steps\":%ld,\"steps_per_exchange\":%d,\"omp_s\":%.6g,"
      "\"tessera_s\":%.6g,"
      "\"ratio\":%.4f,\"omp_mlups\":%.1f,\"tessera_mlups\":%.1f,\"copy_gbs\":%.2f,",
      c.app.c_str(), c.grid.c_str(), c.tile.c_str(), c.tiles, c.workers, c.threads, c.steps,
      c.steps_per_exchange, c.omp_s, c.tessera_s, c.omp_s / c.tessera_s, c.points / c.omp_s / 1e6,
      c.points / c.tessera_s / 1e6, c.copy_gbs);
  if (c.bytes_per_point > 0 && c.copy_gbs > 0)
    std::printf("\"tessera_gbs\":%.2f,\"roofline\":%.3f,", gbs, gbs / c.copy_gbs);
  else
    std::printf("\"tessera_gbs\":null,\"roofline\":null,");
  if (c.efficiency >= 0)
    std::printf("\"efficiency\":%.3f,", c.efficiency);
  else
    std::printf("\"efficiency\":null,");
  std::printf("\"equal\":%s,\"equality\":\"%s\"}\n", c.equal ? "true" : "false",
              c.equality.c_str());
  std::fflush(stdout);
}

template <class V>
std::string dims(const V& v, int n) {
  std::string s;
  for (int a = 0; a < n; ++a) s += (a ? "x" : "") + std::to_string(v[a]);
  return s;
}

// A case on a tessera::Grid<D>: its extent, tiles and points, the run's workers and threads.
template <int D>
Case grid_case(const std::string& app, const tessera::Grid<D>& grid, int workers, int threads,
               long steps) {
  Case c;
  c.app = app;
  c.grid = dims(grid.extent(), D);
  c.tile = dims(grid.tile(), D);
  c.tiles = grid.tiles();
  c.workers = workers;
  c.threads = threads;
  c.steps = steps;
  c.points = static_cast<double>(grid.points());
  return c;
}

// The report: a table for people and the JSON line for bench/run.sh; returns the exit status
// (1 when the results differ).
inline int report(const Case& c) {
  std::printf("%s grid=%s tile=%s tiles=%d steps=%ld threads=%d workers=%d\n", c.app.c_str(),
              c.grid.c_str(), c.tile.c_str(), c.tiles, c.steps, c.threads, c.workers);
  std::printf("  openmp   %.6f s/step  %.1f MLUPS\n", c.omp_s, c.points / c.omp_s / 1e6);
  std::printf("  tessera  %.6f s/step  %.1f MLUPS\n", c.tessera_s, c.points / c.tessera_s / 1e6);
  std::printf("  tessera/openmp time ratio %.2f; results %s\n", c.tessera_s / c.omp_s,
              c.equal ? (c.equality + " equal").c_str() : "DIFFER");
  if (c.efficiency >= 0) print_efficiency("  tessera ", c.efficiency);
  json_line(c);
  return c.equal ? 0 : 1;
}

}  // namespace bench
