// bench_heat3d: Tessera's heat3d against a hand-written OpenMP 7-point stencil and a copy
// loop, on the same grid, in one run. See bench/README.md and docs/performance.md.
//
// Variants (all on an N^3 grid of doubles, alpha 0.1, Dirichlet boundary: x-low face 1.0,
// every other face 0.0, interior starting at 0 -- apps::heat3d_boundaries()):
//   copy     b[i] = a[i] over two arrays of N^3 doubles, OpenMP; GB/s counts read + write
//   openmp   one (N+2)^3 array pair with a constant 1-point ghost shell, omp parallel for
//            collapse(2) over z, y, inner x loop, arrays swapped every step
//   tessera  tessera::Stencil<3> applying apps::Heat3d tile by tile on StarPU CPU workers
// Each variant runs --warmup steps, then --reps rounds, each round timing one copy, --steps
// OpenMP steps and --steps Tessera steps in turn (so that a machine shared with other work
// disturbs all three alike); the best and the median round are reported. StarPU's workers
// are paused while the copy and OpenMP run (StarPU 1.3 workers poll when idle). Tessera's
// final field is gathered and compared bit for bit with the OpenMP one (both run
// warmup + reps * steps steps).
#include <omp.h>
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

#include "apps/common/blocking.hpp"
#include "apps/heat3d/heat3d.hpp"
#include "bench/twin.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Stats {
  double best = 0, median = 0, worst = 0;  // seconds per step (copy: seconds per copy)
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {v.front(), median, v.back()};
}

// 64-byte aligned array of doubles, not initialised (first touch happens in parallel loops).
struct Array {
  double* p = nullptr;
  explicit Array(std::size_t n) {
    const std::size_t bytes = (n * sizeof(double) + 63) / 64 * 64;
    p = static_cast<double*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) {
      std::fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
      std::exit(2);
    }
  }
  ~Array() { std::free(p); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
};

// ---- (c) copy bandwidth ------------------------------------------------------------------
void copy_loop(const double* a, double* b, std::int64_t n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) b[i] = a[i];
}

// ---- (a) OpenMP baseline -----------------------------------------------------------------
// Layout: (nx+2) x (ny+2) x (nz+2), x fastest; ghost shell = the Dirichlet values.
struct Baseline {
  std::int64_t nx, ny, nz, sy, sz;
  std::int64_t size() const { return sz * (nz + 2); }
  std::int64_t at(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return x + y * sy + z * sz;
  }
};

// The same arithmetic, in the same order, as apps::Heat3d.
void baseline_step(const Baseline& g, const double* u, double* next, double alpha, int threads) {
  const std::int64_t sy = g.sy, sz = g.sz, nx = g.nx;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (std::int64_t z = 1; z <= g.nz; ++z)
    for (std::int64_t y = 1; y <= g.ny; ++y) {
      const double* c = u + g.at(0, y, z);
      double* o = next + g.at(0, y, z);
      for (std::int64_t x = 1; x <= nx; ++x)
        o[x] = c[x] + alpha * (c[x - 1] + c[x + 1] + c[x - sy] + c[x + sy] + c[x - sz] + c[x + sz] -
                               6.0 * c[x]);
    }
}

// Ghost shell: x-low face 1.0, every other ghost point 0.0 (edges and corners are never read
// by the 7-point stencil); interior 0. Written with the loop order of the step (first touch).
void baseline_init(const Baseline& g, double* u, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t z = 0; z < g.nz + 2; ++z)
    for (std::int64_t y = 0; y < g.ny + 2; ++y)
      for (std::int64_t x = 0; x < g.nx + 2; ++x) {
        const bool x_low_face = x == 0 && y >= 1 && y <= g.ny && z >= 1 && z <= g.nz;
        u[g.at(x, y, z)] = x_low_face ? 1.0 : 0.0;
      }
}

std::string dims(const std::vector<long>& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

void print_variant(const char* name, const Stats& s, double points, double copy_gbs) {
  const double mlups = points / s.best / 1e6;
  const double gbs = points * 16.0 / s.best / 1e9;
  std::printf("%-8s s/step=%.5f median=%.5f worst=%.5f MLUPS=%.1f GB/s=%.2f", name, s.best,
              s.median, s.worst, mlups, gbs);
  if (copy_gbs > 0) std::printf(" of_copy=%.2f", gbs / copy_gbs);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_heat3d: Tessera heat3d vs a hand-written OpenMP stencil vs copy bandwidth"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  std::vector<long> size{256, 256, 256}, tile{256, 256, 32};
  int steps = 10, reps = 8, warmup = 3, threads = 0, depth = tessera::kAutoDepth;
  double alpha = 0.1;
  bool tessera_only = false;
  cli.add_option("--size", size, "grid points per axis (x y z)")->expected(3);
  cli.add_option("--tile", tile, "Tessera tile points per axis (x y z)")->expected(3);
  cli.add_option("--steps", steps, "time steps per repetition")->check(CLI::PositiveNumber);
  cli.add_option("--reps", reps, "timed rounds (one repetition of each variant per round)")
      ->check(CLI::PositiveNumber);
  cli.add_option("--warmup", warmup, "untimed steps first (also calibrates StarPU's models)")
      ->check(CLI::NonNegativeNumber);
  cli.add_option("--threads", threads,
                 "OpenMP threads; also the Tessera CPU workers unless --ncpu or STARPU_NCPU "
                 "is given (default: as many as Tessera's CPU workers)")
      ->check(CLI::PositiveNumber);
  cli.add_option("--alpha", alpha, "dt/h^2 (<= 1/6 for stability)");
  apps::add_steps_per_exchange(cli, depth);
  cli.add_flag("--tessera-only", tessera_only,
               "skip the copy and OpenMP variants (and the bitwise check)");
  CLI11_PARSE(cli, argc, argv);

  const char* env_ncpu = std::getenv("STARPU_NCPU");
  if (threads > 0 && opts.cpu_workers < 0 && (env_ncpu == nullptr || *env_ncpu == '\0'))
    opts.cpu_workers = threads;

  const std::int64_t nx = size[0], ny = size[1], nz = size[2];
  const double points = static_cast<double>(nx) * ny * nz;
  const long total_steps = static_cast<long>(warmup) + static_cast<long>(reps) * steps;
  int rc = 0;
  opts.summary = true;  // the tasks' totals: each round's efficiency (its table unprinted)
  opts.quiet = true;
  try {
    tessera::Runtime rt(opts);
    if (threads == 0) threads = std::max(1, rt.cpu_workers());
    // Tessera's fields, and a warm-up that also calibrates the scheduler's perfmodels.
    tessera::Grid<3> grid({nx, ny, nz}, {tile[0], tile[1], tile[2]});
    const std::string tile_str = dims({grid.tile()[0], grid.tile()[1], grid.tile()[2]});
    tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
    depth = apps::steps_per_exchange(heat, grid, depth);
    tessera::Field<double, 3> u(grid, depth, apps::heat3d_boundaries(), "u");
    tessera::Field<double, 3> next(grid, depth, apps::heat3d_boundaries(), "next");
    std::printf(
        "bench_heat3d grid=%s tile=%s threads=%d workers=%d sched=%s steps=%d reps=%d "
        "warmup=%d alpha=%g steps_per_exchange=%d\n",
        dims(size).c_str(), tile_str.c_str(), threads, rt.cpu_workers(), rt.scheduler().c_str(),
        steps, reps, warmup, alpha, depth);
    if (rt.cpu_workers() != threads)
      std::printf("note: %d Tessera CPU workers but %d OpenMP threads\n", rt.cpu_workers(),
                  threads);

    u.fill([](tessera::Index<3>) { return 0.0; });
    next.fill([](tessera::Index<3>) { return 0.0; });
    const apps::Heat3d update{alpha};
    auto submit_steps = [&](int n) { heat.advance(update, u, next, n, depth); };
    rt.wait();
    submit_steps(warmup);
    rt.wait();

    // StarPU 1.3's CPU workers poll while idle (non-blocking drivers): paused, they sleep
    // and leave the cores to the OpenMP threads. Only the harness does this.
    starpu_pause();

    // The baseline's and the copy's arrays (first touch by the OpenMP threads).
    const std::int64_t n = nx * ny * nz;
    const Baseline g{nx, ny, nz, nx + 2, (nx + 2) * (ny + 2)};
    std::unique_ptr<Array> ca, cb, bu, bv;
    double* ou = nullptr;
    double* ov = nullptr;
    if (!tessera_only) {
      ca = std::make_unique<Array>(static_cast<std::size_t>(n));
      cb = std::make_unique<Array>(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t i = 0; i < n; ++i) {
        ca->p[i] = static_cast<double>(i & 1023);
        cb->p[i] = 0.0;
      }
      for (int w = 0; w < 2; ++w) copy_loop(ca->p, cb->p, n, threads);
      bu = std::make_unique<Array>(static_cast<std::size_t>(g.size()));
      bv = std::make_unique<Array>(static_cast<std::size_t>(g.size()));
      baseline_init(g, bu->p, threads);
      baseline_init(g, bv->p, threads);
      ou = bu->p;
      ov = bv->p;
      for (int s = 0; s < warmup; ++s) {
        baseline_step(g, ou, ov, alpha, threads);
        std::swap(ou, ov);
      }
    }

    // Interleaved rounds (copy, OpenMP, Tessera) so that all three see the same machine.
    std::vector<double> t_copy, t_omp, t_tes, t_submit, efficiency;
    for (int r = 0; r < reps; ++r) {
      if (!tessera_only) {
        double t0 = now();
        copy_loop(r % 2 ? cb->p : ca->p, r % 2 ? ca->p : cb->p, n, threads);
        t_copy.push_back(now() - t0);
        bench::settle();  // each side starts after the same settle (docs/performance.md)
        t0 = now();
        for (int s = 0; s < steps; ++s) {
          baseline_step(g, ou, ov, alpha, threads);
          std::swap(ou, ov);
        }
        t_omp.push_back((now() - t0) / steps);
        // libgomp's idle threads spin a while before they sleep; let them settle so that
        // they do not steal cycles from Tessera's workers and main thread.
        bench::settle();
      }
      starpu_resume();
      rt.clear_recorded();
      const double t0 = now();
      submit_steps(steps);
      t_submit.push_back((now() - t0) / steps);
      rt.wait();
      t_tes.push_back((now() - t0) / steps);
      efficiency.push_back(bench::round_efficiency(rt));
      starpu_pause();
    }
    starpu_resume();

    double copy_gbs = 0;
    Stats so;
    if (!tessera_only) {
      const Stats sc = stats(t_copy);
      copy_gbs = 16.0 * static_cast<double>(n) / sc.best / 1e9;
      std::printf("%-8s s/copy=%.5f median=%.5f worst=%.5f GB/s=%.2f (read+write, %" PRId64
                  " doubles)\n",
                  "copy", sc.best, sc.median, sc.worst, copy_gbs, n);
      so = stats(t_omp);
      print_variant("openmp", so, points, copy_gbs);
    }
    const Stats ts = stats(t_tes);
    print_variant("tessera", ts, points, copy_gbs);
    std::printf("tessera  tiles=%d submit s/step=%.5f (median; main thread, overlaps the run)\n",
                grid.tiles(), stats(t_submit).median);
    const double best_efficiency = bench::at_fastest(t_tes, efficiency);
    bench::print_efficiency("tessera  ", best_efficiency);

    if (!tessera_only) {
      std::printf("ratio    tessera/openmp MLUPS best=%.3f median=%.3f (target >= 0.9)\n",
                  so.best / ts.best, so.median / ts.median);
      const std::vector<double> got = u.gather();
      std::int64_t differ = 0;
      double max_diff = 0;
      std::size_t k = 0;
      for (std::int64_t z = 1; z <= nz; ++z)
        for (std::int64_t y = 1; y <= ny; ++y)
          for (std::int64_t x = 1; x <= nx; ++x, ++k) {
            const double want = ou[g.at(x, y, z)];
            if (std::memcmp(&want, &got[k], sizeof(double)) != 0) {
              ++differ;
              max_diff = std::max(max_diff, std::fabs(want - got[k]));
            }
          }
      double checksum = 0;
      for (double x : got) checksum += x;
      std::printf("check    after %ld steps: tessera %s openmp bitwise (%" PRId64
                  " points differ, max |diff| %.3g), checksum=%.17g\n",
                  total_steps, differ == 0 ? "==" : "!=", differ, max_diff, checksum);
      if (differ != 0) rc = 1;
      bench::Case c;  // the suite's JSON line (bench/run.sh): best rounds, copy of this run
      c.app = "heat3d";
      c.grid = dims(size);
      c.tile = tile_str;
      c.tiles = grid.tiles();
      c.workers = rt.cpu_workers();
      c.threads = threads;
      c.steps = total_steps;
      c.points = points;
      c.bytes_per_point = 2 * sizeof(double);
      c.omp_s = so.best;
      c.tessera_s = ts.best;
      c.equal = differ == 0;
      c.copy_gbs = copy_gbs;
      c.steps_per_exchange = depth;
      c.efficiency = best_efficiency;
      bench::json_line(c);
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return rc;
}
