// bench_nbody: Tessera's nbody (apps/nbody: all-pairs interactions on tiles of bodies) against a
// hand-written OpenMP all-pairs loop, same bodies, same steps, same flags (one translation
// unit), in one run, in interleaved rounds (--reps, the best of each side); final positions
// and velocities are compared bit for bit.
//   bench_nbody --size 16384 --tile 1024 --steps 5 --threads 2
// StarPU's workers are paused while the OpenMP twin runs (StarPU 1.3 workers poll when idle).
#include <omp.h>
#include <starpu.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/nbody/nbody.hpp"
#include "bench/twin.hpp"

namespace {

// The twin: arrays; each thread takes targets, each target sums its sources in chunks of 64
// (each from zero, the chunk sums added in order: tessera::Pairs' order, so the bits agree).
constexpr std::int64_t kChunk = 64;
struct Twin {
  apps::Bodies b;
  std::vector<double> ax, ay, az;
  double eps2, dt;
  int threads;

  void forces() {
    const std::int64_t n = static_cast<std::int64_t>(b.x.size());
    const double *x = b.x.data(), *y = b.y.data(), *z = b.z.data(), *m = b.m.data();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) {
      double sx = 0.0, sy = 0.0, sz = 0.0;
      const double xi = x[i], yi = y[i], zi = z[i];
      for (std::int64_t c = 0; c < n; c += kChunk) {
        double cx = 0.0, cy = 0.0, cz = 0.0;
        for (std::int64_t j = c; j < n && j < c + kChunk; ++j) {
          const double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
          const double r2 = dx * dx + dy * dy + dz * dz + eps2;
          const double inv = 1.0 / std::sqrt(r2);
          const double s = m[j] * (inv * inv * inv);
          cx += dx * s;
          cy += dy * s;
          cz += dz * s;
        }
        sx += cx;
        sy += cy;
        sz += cz;
      }
      ax[i] = sx;
      ay[i] = sy;
      az[i] = sz;
    }
  }
  void kick(double h) {
    const std::int64_t n = static_cast<std::int64_t>(b.x.size());
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) {
      b.vx[i] = b.vx[i] + h * ax[i];
      b.vy[i] = b.vy[i] + h * ay[i];
      b.vz[i] = b.vz[i] + h * az[i];
    }
  }
  void step() {
    const double h = 0.5 * dt;
    const std::int64_t n = static_cast<std::int64_t>(b.x.size());
    kick(h);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) {
      b.x[i] = b.x[i] + dt * b.vx[i];
      b.y[i] = b.y[i] + dt * b.vy[i];
      b.z[i] = b.z[i] + dt * b.vz[i];
    }
    forces();
    kick(h);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_nbody: Tessera's nbody against its OpenMP twin"};
  int threads = 2;
  long n = 16384, tile = 1024, steps = 5;
  std::uint64_t seed = 12345;
  tessera::Options opts;
  bench::add_twin_options(cli, opts, steps, threads);
  cli.add_option("--size", n, "bodies");
  cli.add_option("--tile", tile, "bodies per tile");
  int reps = 3;
  bench::add_reps_option(cli, reps);
  CLI11_PARSE(cli, argc, argv);
  try {
    tessera::Runtime rt(bench::twin_runtime(opts, threads));
    const apps::Bodies start = apps::plummer(n, seed);
    apps::NBodyParams p;
    apps::NBody sim(n, tile, start, p);
    const std::size_t un = static_cast<std::size_t>(n);
    Twin twin{start,
              std::vector<double>(un),
              std::vector<double>(un),
              std::vector<double>(un),
              p.eps * p.eps,
              p.dt,
              threads};
    starpu_pause();
    twin.forces();
    starpu_resume();
    const bench::Best best = bench::interleaved_rounds(
        rt, reps,
        [&] {
          return bench::seconds_per_step(
              steps, [&] { sim.step(); }, [&] { rt.wait(); });
        },
        [&] {
          return bench::seconds_per_step(
              steps, [&] { twin.step(); }, [] {});
        });
    bench::Case c;
    c.app = "nbody";  // "MLUPS" here: million pair interactions per second; compute-bound
    c.grid = std::to_string(n);
    c.tile = std::to_string(tile);
    c.tiles = sim.grid.tiles();
    c.workers = rt.cpu_workers();
    c.threads = threads;
    c.steps = steps;
    c.points = static_cast<double>(n) * static_cast<double>(n);
    c.omp_s = best.omp_s;
    c.tessera_s = best.tessera_s;
    c.efficiency = best.efficiency;
    c.equal = sim.x.gather() == twin.b.x && sim.y.gather() == twin.b.y &&
              sim.z.gather() == twin.b.z && sim.vx.gather() == twin.b.vx &&
              sim.vy.gather() == twin.b.vy && sim.vz.gather() == twin.b.vz;
    return bench::report(c);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
