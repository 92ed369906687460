// bench_jacobi2d and bench_life: a 2-D application (apps/jacobi2d, apps/life) against its
// hand-written OpenMP twin, same grid, same steps, same flags (one translation unit), in one
// run, in interleaved rounds (--reps, the best of each side); the final fields are compared bit
// for bit (exit status 1 if they differ).
//   bench_jacobi2d --size 1024 1024 --tile 1024 128 --steps 1000 --threads 2
//   bench_life --size 4096 4096 --tile 4096 512 --steps 100 --threads 2
//   bench_jacobi2d --size 1024 1024 --tile 1024 128 --steps 1000 --steps-per-exchange 8
// (--steps-per-exchange N: Tessera advances N steps per halo exchange, Stencil::advance.)
// The twins are what a careful programmer writes by hand: padded arrays with a ghost ring, an
// omp parallel for over rows and a plain inner x loop the compiler vectorises; jacobi2d keeps
// its zero ring, life refreshes its periodic ring every step (rows, then columns with the
// corners). The arithmetic is the apps' functors', in the same order. StarPU's workers are
// paused while the twin runs (StarPU 1.3 workers poll when idle).
#include <omp.h>
#include <starpu.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/common/blocking.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"
#include "apps/life/life.hpp"
#include "bench/twin.hpp"

namespace {

// A padded nx x ny array with a one-point ghost ring, x fastest.
template <class T>
struct Padded {
  std::int64_t nx, ny, sy;
  std::vector<T> v;
  Padded(std::int64_t x, std::int64_t y)
      : nx(x), ny(y), sy(x + 2), v(static_cast<std::size_t>((x + 2) * (y + 2)), T(0)) {}
  T* row(std::int64_t y) { return v.data() + (y + 1) * sy + 1; }  // interior point (0, y)
  const T* row(std::int64_t y) const { return v.data() + (y + 1) * sy + 1; }
  std::vector<T> interior() const {
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(nx * ny));
    for (std::int64_t y = 0; y < ny; ++y) out.insert(out.end(), row(y), row(y) + nx);
    return out;
  }
};

#if defined(BENCH_JACOBI2D)
constexpr const char* kApp = "jacobi2d";
using Cell = float;
struct Twin {
  Padded<float> u, next, f;
  float h2;
  Twin(std::int64_t nx, std::int64_t ny, float h2_) : u(nx, ny), next(nx, ny), f(nx, ny), h2(h2_) {
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) f.row(y)[x] = apps::jacobi2d_source({x, y}, nx, ny);
  }
  void step(int threads) {
    const std::int64_t nx = u.nx, sy = u.sy;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t y = 0; y < u.ny; ++y) {
      const float* c = u.row(y);
      const float* s = f.row(y);
      float* o = next.row(y);
      for (std::int64_t x = 0; x < nx; ++x)
        o[x] = 0.25f * (c[x - 1] + c[x + 1] + c[x - sy] + c[x + sy] + h2 * s[x]);
    }
    std::swap(u.v, next.v);
  }
  const Padded<float>& result() const { return u; }
};
#else
constexpr const char* kApp = "life";
using Cell = std::uint8_t;
struct Twin {
  Padded<std::uint8_t> c, next;
  Twin(std::int64_t nx, std::int64_t ny, float) : c(nx, ny), next(nx, ny) {
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) c.row(y)[x] = apps::life_seed({x, y});
  }
  void step(int threads) {
    const std::int64_t nx = c.nx, ny = c.ny, sy = c.sy;
    // The periodic ring: rows first, then the columns (the corners come with them).
    std::copy(c.row(ny - 1), c.row(ny - 1) + nx, c.row(-1));
    std::copy(c.row(0), c.row(0) + nx, c.row(ny));
    for (std::int64_t y = -1; y <= ny; ++y) {
      c.row(y)[-1] = c.row(y)[nx - 1];
      c.row(y)[nx] = c.row(y)[0];
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t y = 0; y < ny; ++y) {
      const std::uint8_t* r = c.row(y);
      std::uint8_t* o = next.row(y);
      for (std::int64_t x = 0; x < nx; ++x) {
        const int alive = r[x];
        const int n = r[x - 1 - sy] + r[x - sy] + r[x + 1 - sy] + r[x - 1] + r[x + 1] +
                      r[x - 1 + sy] + r[x + sy] + r[x + 1 + sy];
        o[x] = static_cast<std::uint8_t>(n == 3 || (n == 2 && alive != 0) ? 1 : 0);
      }
    }
    std::swap(c.v, next.v);
  }
  const Padded<std::uint8_t>& result() const { return c; }
};
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{std::string("bench_") + kApp + ": Tessera's " + kApp + " against its OpenMP twin"};
  int threads = 2;
  std::vector<long> size{4096, 4096}, tile{4096, 512};
  long steps = 100;
  tessera::Options opts;
  bench::add_twin_options(cli, opts, steps, threads);
  cli.add_option("--size", size, "grid points per axis")->expected(2);
  cli.add_option("--tile", tile, "tile points per axis")->expected(2);
  int depth = tessera::kAutoDepth, reps = 3;
  bench::add_reps_option(cli, reps);
  apps::add_steps_per_exchange(cli, depth);
  CLI11_PARSE(cli, argc, argv);
  try {
    tessera::Runtime rt(bench::twin_runtime(opts, threads));
    const std::int64_t nx = size[0], ny = size[1];
#if defined(BENCH_JACOBI2D)
    tessera::Grid<2> grid({nx, ny}, {tile[0], tile[1]});
    const auto zero = tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0));
    tessera::Stencil<2> stencil("jacobi2d", tessera::Shape::Star, 1);
    depth = apps::steps_per_exchange(stencil, grid, depth);
    tessera::Field<float, 2> u(grid, depth, zero, "u"), next(grid, depth, zero, "next"),
        f(grid, depth, zero, "f");
    f.fill([&](tessera::Index<2> p) { return apps::jacobi2d_source(p, nx, ny); });
    u.fill([](tessera::Index<2>) { return 0.0f; });
    const float h = 1.0f / static_cast<float>(nx + 1);
    auto tessera_steps = [&](long n) {
      stencil.advance(apps::Jacobi2d{h * h}, u, next, n, depth, tessera::in(f));
    };
    tessera::Field<float, 2>& result = u;
    const double bytes_per_point = 3 * sizeof(float);  // u and f read, next written
#else
    tessera::Grid<2> grid({nx, ny}, {tile[0], tile[1]}, {true, true});
    tessera::Stencil<2> stencil("life", tessera::Shape::Box, 1);
    depth = apps::steps_per_exchange(stencil, grid, depth);
    tessera::Field<std::uint8_t, 2> cells(grid, depth, {}, "cells"), next(grid, depth, {}, "next");
    cells.fill(apps::life_seed);
    const float h = 0;
    auto tessera_steps = [&](long n) { stencil.advance(apps::Life{}, cells, next, n, depth); };
    tessera::Field<std::uint8_t, 2>& result = cells;
    const double bytes_per_point = 2 * sizeof(std::uint8_t);
#endif
    Twin twin(nx, ny, h * h);
    rt.wait();
    const bench::Best best = bench::interleaved_rounds(
        rt, reps,
        [&] { return bench::seconds_per_step_in_blocks(steps, tessera_steps, [&] { rt.wait(); }); },
        [&] {
          return bench::seconds_per_step(
              steps, [&] { twin.step(threads); }, [] {});
        });
    starpu_pause();
    bench::Case c = bench::grid_case(kApp, grid, rt.cpu_workers(), threads, steps);
    c.bytes_per_point = bytes_per_point;
    c.steps_per_exchange = depth;
    c.omp_s = best.omp_s;
    c.tessera_s = best.tessera_s;
    c.efficiency = best.efficiency;
    c.copy_gbs =
        bench::copy_bandwidth(static_cast<std::size_t>(grid.points()) * sizeof(Cell), threads);
    starpu_resume();
    c.equal = result.gather() == twin.result().interior();
    return bench::report(c);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
