// bench_cardiac: Tessera's cardiac (apps/cardiac: diffusion, reaction and recovery in one stencil)
// against a hand-written OpenMP twin of the classic code, same grid, same steps, same flags
// (one translation unit), in one run, in interleaved rounds (--reps, the best of each side); the
// final e and r are compared bit for bit.
//   bench_cardiac --dims 2 --size 2048 2048 --tile 2048 256 --steps 50
//   bench_cardiac --dims 3 --size 192 192 192 --tile 192 192 32 --steps 20
// StarPU's workers are paused while the OpenMP twin runs (StarPU 1.3 workers poll when idle).
#include <omp.h>
#include <starpu.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/cardiac/cardiac.hpp"
#include "apps/common/blocking.hpp"
#include "bench/twin.hpp"

namespace {

// The OpenMP twin: padded arrays, vertex-centred mirror ghosts, the diffusion loop, then the
// reaction and recovery fused per point (the same arithmetic as the apps' functors).
template <int D>
struct Twin {
  std::array<std::int64_t, 3> n;
  std::int64_t gz, sx, sy;
  std::vector<double> ep, en, r;
  apps::AlievPanfilov m;
  apps::CardiacStep st;

  explicit Twin(std::array<std::int64_t, 3> size) : n(size) {
    gz = D == 3 ? 1 : 0;
    sx = n[0] + 2;
    sy = sx * (n[1] + 2);
    ep.assign(static_cast<std::size_t>(sy * (n[2] + 2 * gz)), 0.0);
    en = ep;
    r = ep;
    st = apps::cardiac_step(m, n[0], D);
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          ep[at(x, y, z)] = x >= n[0] / 2 ? 1.0 : 0.0;
          r[at(x, y, z)] = y >= n[1] / 2 ? 1.0 : 0.0;
        }
  }
  std::int64_t at(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return (x + 1) + (y + 1) * sx + (z + gz) * sy;
  }

  void step(int threads) {
    double* e = ep.data();
    double* o = en.data();
    double* rr = r.data();
#pragma omp parallel num_threads(threads)
    {
#pragma omp for collapse(2) schedule(static)
      for (std::int64_t z = 0; z < n[2]; ++z)
        for (std::int64_t y = 0; y < n[1]; ++y) {
          e[at(-1, y, z)] = e[at(1, y, z)];
          e[at(n[0], y, z)] = e[at(n[0] - 2, y, z)];
        }
#pragma omp for collapse(2) schedule(static)
      for (std::int64_t z = 0; z < n[2]; ++z)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          e[at(x, -1, z)] = e[at(x, 1, z)];
          e[at(x, n[1], z)] = e[at(x, n[1] - 2, z)];
        }
      if (D == 3) {
#pragma omp for collapse(2) schedule(static)
        for (std::int64_t y = 0; y < n[1]; ++y)
          for (std::int64_t x = 0; x < n[0]; ++x) {
            e[at(x, y, -1)] = e[at(x, y, 1)];
            e[at(x, y, n[2])] = e[at(x, y, n[2] - 2)];
          }
      }
#pragma omp for collapse(2) schedule(static)
      for (std::int64_t z = 0; z < n[2]; ++z)
        for (std::int64_t y = 0; y < n[1]; ++y)
          for (std::int64_t x = 0; x < n[0]; ++x) {
            const std::int64_t c = at(x, y, z);
            double E;
            if (D == 2)
              E = e[c] + st.alpha * (e[c + 1] + e[c - 1] - 4.0 * e[c] + e[c + sx] + e[c - sx]);
            else
              E = e[c] + st.alpha * (e[c + 1] + e[c - 1] - 6.0 * e[c] + e[c + sx] + e[c - sx] +
                                     e[c + sy] + e[c - sy]);
            double R = rr[c];
            E = E - st.dt * (m.k * E * (E - m.a) * (E - 1.0) + E * R);
            R = R + st.dt * (m.eps + m.mu1 * R / (E + m.mu2)) * (-R - m.k * E * (E - m.b - 1.0));
            o[c] = E;
            rr[c] = R;
          }
    }
    std::swap(ep, en);
  }

  std::vector<double> interior(const std::vector<double>& v) const {
    std::vector<double> out;
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x)
          out.push_back(v[static_cast<std::size_t>(at(x, y, z))]);
    return out;
  }
};

template <int D>
int run(const std::vector<long>& size, const std::vector<long>& tile, long steps, int threads,
        int reps, int depth, tessera::Options opts) {
  if (size.size() != static_cast<std::size_t>(D) || tile.size() != static_cast<std::size_t>(D)) {
    std::fprintf(stderr, "--size and --tile need %d values for --dims %d\n", D, D);
    return 2;
  }
  tessera::Runtime rt(bench::twin_runtime(opts, threads));
  tessera::Index<D> s, t;
  std::array<std::int64_t, 3> n{1, 1, 1};
  for (int a = 0; a < D; ++a) {
    s[a] = size[static_cast<std::size_t>(a)];
    t[a] = tile[static_cast<std::size_t>(a)];
    n[a] = s[a];
  }
  tessera::Grid<D> grid(s, t);
  apps::Cardiac<D> model(grid, depth);
  Twin<D> twin(n);
  const bench::Best best = bench::interleaved_rounds(
      rt, reps,
      [&] {
        return bench::seconds_per_step_in_blocks(
            steps, [&](long k) { model.advance(k); }, [&] { rt.wait(); });
      },
      [&] {
        return bench::seconds_per_step(
            steps, [&] { twin.step(threads); }, [] {});
      });
  bench::Case c =
      bench::grid_case("cardiac" + std::to_string(D) + "d", grid, rt.cpu_workers(), threads, steps);
  c.bytes_per_point = 4 * sizeof(double);  // e and r read, e_next and r written
  c.steps_per_exchange = model.depth;
  c.omp_s = best.omp_s;
  c.tessera_s = best.tessera_s;
  c.efficiency = best.efficiency;
  c.equal = model.e.gather() == twin.interior(twin.ep) && model.r.gather() == twin.interior(twin.r);
  starpu_pause();
  c.copy_gbs =
      bench::copy_bandwidth(static_cast<std::size_t>(grid.points()) * sizeof(double), threads);
  starpu_resume();
  return bench::report(c);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_cardiac: Tessera's cardiac against its OpenMP twin"};
  int dims = 2, threads = 2;
  std::vector<long> size{1024, 1024}, tile{1024, 256};
  long steps = 50;
  tessera::Options opts;
  tessera::add_options(cli, opts);
  cli.add_option("--dims", dims, "2 or 3")->check(CLI::IsMember({2, 3}));
  cli.add_option("--size", size, "grid points per axis")->expected(2, 3);
  cli.add_option("--tile", tile, "tile points per axis")->expected(2, 3);
  cli.add_option("--steps", steps, "time steps (>= 2)")->check(CLI::Range(2L, 1000000L));
  cli.add_option("--threads", threads, "OpenMP threads, and StarPU CPU workers unless --ncpu");
  int reps = 3, depth = tessera::kAutoDepth;
  bench::add_reps_option(cli, reps);
  apps::add_steps_per_exchange(cli, depth);
  CLI11_PARSE(cli, argc, argv);
  opts.quiet = true;
  try {
    return dims == 2 ? run<2>(size, tile, steps, threads, reps, depth, opts)
                     : run<3>(size, tile, steps, threads, reps, depth, opts);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
