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
#include "apps/common/blocking.hpp"
#include "bench/twin.hpp"

namespace {

// The twin: whole arrays with one ghost layer (zeros, never used), x fastest. Interior rows in a
// branch-free loop with PSkel's arithmetic, upwind neighbours chosen by value so that it
// vectorises as Tessera's point loop does; the edge cells (PSkel's 2- and 3-neighbour cases)
// through the app's functor.
struct Twin {
  std::int64_t nx, ny, sx;
  std::vector<float> t, out, wx, wy;  // t and out padded (stride sx); the winds not

  Twin(std::int64_t nx_, std::int64_t ny_, const std::vector<float>& t0, std::vector<float> wind_x,
       std::vector<float> wind_y)
      : nx(nx_),
        ny(ny_),
        sx(nx_ + 2),
        t(static_cast<std::size_t>((nx_ + 2) * (ny_ + 2)), 0.0f),
        out(t),
        wx(std::move(wind_x)),
        wy(std::move(wind_y)) {
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) t[at(x, y)] = t0[static_cast<std::size_t>(x + nx * y)];
  }
  std::size_t at(std::int64_t x, std::int64_t y) const {
    return static_cast<std::size_t>(x + 1 + (y + 1) * sx);
  }

  void step(const apps::CloudParams& c, int threads) {
    const apps::CloudStep edge{nx, ny, c};
    const float* tp = t.data();
    float* op = out.data();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t y = 0; y < ny; ++y) {
      const float* r = tp + at(0, y);
      float* o = op + at(0, y);
      const float* wxr = wx.data() + nx * y;
      const float* wyr = wy.data() + nx * y;
      auto at_edge = [&](std::int64_t x) {
        edge({x, y}, tessera::In<float>{r + x, sx, 0}, tessera::In<float>{wxr + x, 0, 0},
             tessera::In<float>{wyr + x, 0, 0}, tessera::Out<float>{o + x});
      };
      if (y == 0 || y == ny - 1) {
        for (std::int64_t x = 0; x < nx; ++x) at_edge(x);
        continue;
      }
      at_edge(0);
#pragma omp simd
      for (std::int64_t x = 1; x < nx - 1; ++x) {
        const float in = r[x], down = r[x - sx], left = r[x - 1], right = r[x + 1], up = r[x + sx];
        const float sum = (in - down) + (in - left) + (in - right) + (in - up);
        const float xwind = wxr[x], ywind = wyr[x];
        const float xf = xwind > 0 ? 1.0f : -1.0f, yf = ywind > 0 ? 1.0f : -1.0f;
        const float tx = xwind > 0 ? right : left, ty = ywind > 0 ? up : down;
        const float cx = xf * xwind, cy = yf * ywind;
        const float temp_wind =
            (-cx * ((in - tx) / c.cell_length)) - (cy * ((in - ty) / c.cell_length));
        const float result = in + -c.k * (sum / 4.0f) * c.dt;
        o[x] = result + temp_wind * c.dt;
      }
      at_edge(nx - 1);
    }
    std::swap(t, out);
  }

  std::vector<float> interior() const {
    std::vector<float> v;
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) v.push_back(t[at(x, y)]);
    return v;
  }
};

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
  int reps = 3, depth = tessera::kAutoDepth;
  bench::add_reps_option(cli, reps);
  apps::add_steps_per_exchange(cli, depth);
  CLI11_PARSE(cli, argc, argv);
  try {
    tessera::Runtime rt(bench::twin_runtime(opts, threads));
    tessera::Grid<2> grid({size[0], size[1]}, {tile[0], tile[1]});
    apps::CloudParams params;
    apps::CloudSim sim(grid, params, depth);
    Twin twin(size[0], size[1], sim.t.gather(), sim.wind_x.gather(), sim.wind_y.gather());
    const bench::Best best = bench::interleaved_rounds(
        rt, reps,
        [&] {
          return bench::seconds_per_step_in_blocks(
              steps, [&](long n) { sim.advance(n); }, [&] { rt.wait(); });
        },
        [&] {
          return bench::seconds_per_step(
              steps, [&] { twin.step(params, threads); }, [] {});
        });
    bench::Case c = bench::grid_case("cloudsim", grid, rt.cpu_workers(), threads, steps);
    c.bytes_per_point = 4 * sizeof(float);  // t, wind_x, wind_y read, t_next written
    c.steps_per_exchange = sim.depth;
    c.omp_s = best.omp_s;
    c.tessera_s = best.tessera_s;
    c.efficiency = best.efficiency;
    c.equal = sim.t.gather() == twin.interior();
    starpu_pause();
    c.copy_gbs =
        bench::copy_bandwidth(static_cast<std::size_t>(grid.points()) * sizeof(float), threads);
    starpu_resume();
    return bench::report(c);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
