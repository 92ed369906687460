// bench_cloudsim: Tessera's cloudsim (apps/cloudsim: stencil with centre-only wind inputs)
// against a hand-written OpenMP twin, same grid, same steps, same flags (one translation unit),
// in one run, in interleaved rounds (--reps, the best of each side); the final temperatures
// are compared bit for bit.
//   bench_cloudsim --size 4096 4096 --tile 4096 512 --steps 50 --threads 2
// StarPU's workers are paused while the OpenMP twin runs (StarPU 1.3 workers poll when idle).
#include <omp.h>
#include <starpu.h>

#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/cloudsim/cloudsim.hpp"
#include "bench/twin.hpp"

namespace {

// The twin: whole arrays, x fastest. Interior rows in a branch-free loop with PSkel's
// arithmetic; the edge cells (PSkel's 2- and 3-neighbour cases) through the app's functor.
void twin_step(std::int64_t nx, std::int64_t ny, const apps::CloudParams& c, const float* t,
               const float* wx, const float* wy, float* out, int threads) {
  const apps::CloudStep edge{nx, ny, c};
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t y = 0; y < ny; ++y) {
    auto at_edge = [&](std::int64_t x) {
      const std::int64_t g = x + nx * y;
      edge({x, y}, tessera::In<float>{t + g, nx, 0}, tessera::In<float>{wx + g, 0, 0},
           tessera::In<float>{wy + g, 0, 0}, tessera::Out<float>{out + g});
    };
    if (y == 0 || y == ny - 1) {
      for (std::int64_t x = 0; x < nx; ++x) at_edge(x);
      continue;
    }
    at_edge(0);
    const float* r = t + nx * y;
    for (std::int64_t x = 1; x < nx - 1; ++x) {
      const float in = r[x];
      const float sum = (in - r[x - nx]) + (in - r[x - 1]) + (in - r[x + 1]) + (in - r[x + nx]);
      const float xwind = wx[nx * y + x], ywind = wy[nx * y + x];
      const int xf = xwind > 0 ? 1 : -1, yf = ywind > 0 ? 1 : -1;
      const float tx = r[x + xf], ty = r[x + yf * nx];
      const float cx = static_cast<float>(xf) * xwind, cy = static_cast<float>(yf) * ywind;
      const float temp_wind = (-cx * ((in - tx) / c.cell_length)) - (cy * ((in - ty) / c.cell_length));
      const float result = in + -c.k * (sum / 4.0f) * c.dt;
      out[nx * y + x] = result + temp_wind * c.dt;
    }
    at_edge(nx - 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_cloudsim: Tessera's cloudsim against its OpenMP twin"};
  int threads = 2;
  std::vector<long> size{2048, 2048}, tile{2048, 256};
  long steps = 50;
  tessera::Options opts;
  bench::add_twin_options(cli, opts, steps, threads);
  cli.add_option("--size", size, "grid points per axis")->expected(2);
  cli.add_option("--tile", tile, "tile points per axis")->expected(2);
  int reps = 3;
  bench::add_reps_option(cli, reps);
  CLI11_PARSE(cli, argc, argv);
  try {
    tessera::Runtime rt(bench::twin_runtime(opts, threads));
    tessera::Grid<2> grid({size[0], size[1]}, {tile[0], tile[1]});
    apps::CloudParams params;
    apps::CloudSim sim(grid, params);
    std::vector<float> t = sim.t.gather(), out(t.size());
    const std::vector<float> wx = sim.wind_x.gather(), wy = sim.wind_y.gather();
    const bench::Best best = bench::interleaved_rounds(
        reps, [&] { return bench::seconds_per_step(steps, [&] { sim.advance(); }, [&] { rt.wait(); }); },
        [&] {
          return bench::seconds_per_step(
              steps,
              [&] {
                twin_step(size[0], size[1], params, t.data(), wx.data(), wy.data(), out.data(), threads);
                std::swap(t, out);
              },
              [] {});
        });
    bench::Case c = bench::grid_case("cloudsim", grid, rt.cpu_workers(), threads, steps);
    c.bytes_per_point = 4 * sizeof(float);  // t, wind_x, wind_y read, t_next written
    c.omp_s = best.omp_s;
    c.tessera_s = best.tessera_s;
    c.equal = sim.t.gather() == t;
    starpu_pause();
    c.copy_gbs = bench::copy_bandwidth(static_cast<std::size_t>(grid.points()) * sizeof(float), threads);
    starpu_resume();
    return bench::report(c);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
