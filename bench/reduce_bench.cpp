// bench_reduce: the cost of sums. A Jacobi step (apps/jacobi2d, float) followed by a
// tessera::sum of the field every step, as a convergence test does, and a sum of a double
// field alone, against hand-written sums of the same values in the same run (a plain serial
// double loop, and an OpenMP one on --threads threads), in interleaved rounds (--reps; the best
// of each, and the range). The same source builds against any Tessera revision, so two builds
// can be compared run for run.
//   bench_reduce --size 1024 1024 --tile 1024 128 --steps 200 --reps 5 --threads 2
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/jacobi2d/jacobi2d.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Range {
  double best = 1e300, worst = 0;
  void add(double t) {
    best = std::min(best, t);
    worst = std::max(worst, t);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_reduce: a sum every step, and sums alone, against hand-written sums"};
  tessera::Options runtime;
  tessera::add_options(cli, runtime);
  std::vector<long> size{1024, 1024}, tile{1024, 128};
  int steps = 200, reps = 5, threads = 2;
  cli.add_option("--size", size, "nx ny")->expected(2);
  cli.add_option("--tile", tile, "tx ty")->expected(2);
  cli.add_option("--steps", steps, "steps (and sums) per round");
  cli.add_option("--reps", reps, "interleaved rounds");
  cli.add_option("--threads", threads, "OpenMP threads of the hand-written sum");
  CLI11_PARSE(cli, argc, argv);
  const long nx = size[0], ny = size[1];

  tessera::Runtime rt(runtime);
  const tessera::Grid<2> grid({nx, ny}, {tile[0], tile[1]});
  const auto zero = tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0));
  tessera::Stencil<2> jacobi("jacobi2d", tessera::Shape::Star, 1);
  tessera::Field<float, 2> u(grid, 1, zero, "u"), next(grid, 1, zero, "next"),
      f(grid, 1, zero, "f");
  f.fill([&](tessera::Index<2> p) { return apps::jacobi2d_source(p, nx, ny); });
  tessera::Field<double, 2> d(grid, 0, {}, "d");
  d.fill([](tessera::Index<2> p) { return 1.0 / (1.0 + static_cast<double>(p[0] + 3 * p[1])); });
  const std::vector<double> dv = d.gather();
  const float h = 1.0f / static_cast<float>(nx + 1);

  Range step_only, step_sum, sum_only, sum_float, serial, openmp;
  double checksum = 0, total = 0, hand = 0;
  for (int r = 0; r < reps; ++r) {
    u.fill([](tessera::Index<2>) { return 0.0f; });
    rt.wait();
    double t0 = now();
    for (int s = 0; s < steps; ++s) {
      jacobi.apply(apps::Jacobi2d{h * h}, tessera::in(u, f), tessera::out(next));
      tessera::swap(u, next);
    }
    rt.wait();
    step_only.add((now() - t0) / steps);

    u.fill([](tessera::Index<2>) { return 0.0f; });
    rt.wait();
    t0 = now();
    for (int s = 0; s < steps; ++s) {
      jacobi.apply(apps::Jacobi2d{h * h}, tessera::in(u, f), tessera::out(next));
      tessera::swap(u, next);
      checksum = tessera::sum(u);  // waits: the step and the sum, every step
    }
    step_sum.add((now() - t0) / steps);

    t0 = now();
    for (int s = 0; s < steps; ++s) total = tessera::sum(d);
    sum_only.add((now() - t0) / steps);

    t0 = now();
    for (int s = 0; s < steps; ++s) checksum = tessera::sum(u);
    sum_float.add((now() - t0) / steps);

    t0 = now();
    for (int s = 0; s < steps; ++s) {
      double acc = 0;
      for (double v : dv) acc += v;
      hand = acc;
      __asm__ volatile("" ::: "memory");
    }
    serial.add((now() - t0) / steps);

    t0 = now();
    for (int s = 0; s < steps; ++s) {
      double acc = 0;
      const double* p = dv.data();
      const long n = static_cast<long>(dv.size());
#pragma omp parallel for reduction(+ : acc) num_threads(threads)
      for (long i = 0; i < n; ++i) acc += p[i];
      hand = acc;
      __asm__ volatile("" ::: "memory");
    }
    openmp.add((now() - t0) / steps);
  }
  auto ms = [](const Range& r) { return 1e3 * r.best; };
  auto hi = [](const Range& r) { return 1e3 * r.worst; };
  std::printf(
      "reduce grid=%ldx%ld tiles=%d steps=%d reps=%d\n"
      "  step          %.3f ms (best; worst %.3f)\n"
      "  step+sum      %.3f ms (best; worst %.3f)  sum's share %.3f ms\n"
      "  sum (double)  %.3f ms (best; worst %.3f)\n"
      "  sum (float)   %.3f ms (best; worst %.3f)\n"
      "  hand serial   %.3f ms (best; worst %.3f)\n"
      "  hand omp x%d   %.3f ms (best; worst %.3f)\n"
      "reduce checksum=%.17g total=%.17g hand=%.17g\n",
      nx, ny, grid.tiles(), steps, reps, ms(step_only), hi(step_only), ms(step_sum), hi(step_sum),
      ms(step_sum) - ms(step_only), ms(sum_only), hi(sum_only), ms(sum_float), hi(sum_float),
      ms(serial), hi(serial), threads, ms(openmp), hi(openmp), checksum, total, hand);
  rt.finish();
}
