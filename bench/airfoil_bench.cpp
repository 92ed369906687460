// bench_airfoil: Tessera's Airfoil (apps/airfoil) against a hand-written OpenMP Airfoil on the
// same mesh, in one run. See bench/README.md and docs/performance.md.
//
//   openmp   the five loops over plain arrays; direct loops `omp parallel for`; res_calc and
//            bres_calc over blocks of consecutive edges coloured so that no two blocks of one
//            colour touch the same cell (OP2's OpenMP scheme: blocks of a colour in parallel,
//            the edges of a block in order); update with OpenMP reductions for rms and maxerr
//   tessera  apps::airfoil::Solver: five mesh loops, one task per tile, on StarPU CPU workers
// Both call the same kernels (apps/airfoil/airfoil.hpp), compiled with the same flags in this
// one translation unit. Each variant runs --iterations iterations, --reps times in turn, the
// best and median round reported. The OpenMP twin adds increments in colour order and sums
// rms in thread order, so its bits differ from Tessera's (which follow the serial order): the
// two are compared within a relative tolerance (exit status 1 beyond it).
#include <omp.h>
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

#include "apps/airfoil/solver.hpp"
#include "bench/twin.hpp"

namespace {

using namespace apps::airfoil;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Blocks of `block` consecutive elements, coloured greedily so that blocks of one colour share
// no target; returns, per colour, its blocks' first elements.
std::vector<std::vector<std::int32_t>> colour_blocks(std::int32_t n, int arity,
                                                     const std::int32_t* targets,
                                                     std::int32_t ntargets, std::int32_t block) {
  std::vector<std::uint64_t> used(static_cast<std::size_t>(ntargets), 0);
  std::vector<std::vector<std::int32_t>> colours;
  for (std::int32_t b = 0; b < n; b += block) {
    const std::int32_t end = std::min(n, b + block);
    std::uint64_t taken = 0;
    for (std::int32_t e = b; e < end; ++e)
      for (int i = 0; i < arity; ++i)
        taken |= used[static_cast<std::size_t>(targets[e * arity + i])];
    int c = 0;
    while ((taken >> c) & 1ull) ++c;
    if (c >= 64) {
      std::fprintf(stderr, "more than 64 block colours; use smaller blocks\n");
      std::exit(2);
    }
    for (std::int32_t e = b; e < end; ++e)
      for (int i = 0; i < arity; ++i)
        used[static_cast<std::size_t>(targets[e * arity + i])] |= 1ull << c;
    if (static_cast<int>(colours.size()) <= c) colours.resize(static_cast<std::size_t>(c) + 1);
    colours[static_cast<std::size_t>(c)].push_back(b);
  }
  return colours;
}

class OpenMPAirfoil {
 public:
  OpenMPAirfoil(const Mesh& m, int threads, std::int32_t block)
      : m_(m),
        c_(constants()),
        threads_(threads),
        block_(block),
        q_(free_stream(c_, m.ncell)),
        qold_(q_.size()),
        res_(q_.size(), 0.0),
        adt_(static_cast<std::size_t>(m.ncell)),
        edge_colours_(colour_blocks(m.nedge, 2, m.ecell.data(), m.ncell, block)),
        bedge_colours_(colour_blocks(m.nbedge, 1, m.becell.data(), m.ncell, block)) {}

  void iterate() {
    const Mesh& m = m_;
    double* q = q_.data();
    double* qold = qold_.data();
    double* res = res_.data();
    double* adt = adt_.data();
    const double* x = m.x.data();
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int32_t c = 0; c < m.ncell; ++c) SaveSoln{}(q + 4 * c, qold + 4 * c);
    for (int k = 0; k < 2; ++k) {
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (std::int32_t c = 0; c < m.ncell; ++c) {
        const std::int32_t* n = &m.cell[4 * static_cast<std::size_t>(c)];
        AdtCalc{c_}(x + 2 * n[0], x + 2 * n[1], x + 2 * n[2], x + 2 * n[3], q + 4 * c, adt + c);
      }
      for (const auto& blocks : edge_colours_) {
#pragma omp parallel for schedule(dynamic) num_threads(threads_)
        for (std::size_t b = 0; b < blocks.size(); ++b)
          for (std::int32_t e = blocks[b]; e < std::min(m.nedge, blocks[b] + block_); ++e) {
            const std::int32_t* n = &m.edge[2 * static_cast<std::size_t>(e)];
            const std::int32_t* c = &m.ecell[2 * static_cast<std::size_t>(e)];
            ResCalc{c_}(x + 2 * n[0], x + 2 * n[1], q + 4 * c[0], q + 4 * c[1], adt + c[0],
                        adt + c[1], res + 4 * c[0], res + 4 * c[1]);
          }
      }
      for (const auto& blocks : bedge_colours_) {
#pragma omp parallel for schedule(dynamic) num_threads(threads_)
        for (std::size_t b = 0; b < blocks.size(); ++b)
          for (std::int32_t e = blocks[b]; e < std::min(m.nbedge, blocks[b] + block_); ++e) {
            const std::int32_t* n = &m.bedge[2 * static_cast<std::size_t>(e)];
            const std::int32_t c = m.becell[static_cast<std::size_t>(e)];
            BresCalc{c_}(x + 2 * n[0], x + 2 * n[1], q + 4 * c, adt + c, res + 4 * c,
                         &m.bound[static_cast<std::size_t>(e)]);
          }
      }
      double rms = 0.0, maxerr = 0.0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : rms) reduction(max : maxerr)
      for (std::int32_t c = 0; c < m.ncell; ++c)
        Update{}(qold + 4 * c, q + 4 * c, res + 4 * c, adt + c, &rms, &maxerr);
      rms_ = rms;
      maxerr_ = maxerr;
    }
  }
  double rms() const { return std::sqrt(rms_ / static_cast<double>(m_.ncell)); }
  const std::vector<double>& q() const { return q_; }
  std::size_t colours() const { return edge_colours_.size(); }

 private:
  const Mesh& m_;
  Constants c_;
  int threads_;
  std::int32_t block_;
  std::vector<double> q_, qold_, res_, adt_;
  std::vector<std::vector<std::int32_t>> edge_colours_, bedge_colours_;
  double rms_ = 0, maxerr_ = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_airfoil: Tessera's Airfoil against a hand-written OpenMP Airfoil"};
  tessera::Options runtime;
  tessera::add_options(cli, runtime);
  std::vector<int> size{400, 600};
  int iterations = 100, reps = 3, tiles = 0, threads = 0, block = 256;
  cli.add_option("--mesh-size", size, "I J: 3I x J cells (OP2's: 400 600)")->expected(2);
  cli.add_option("--iterations", iterations, "iterations per round")->check(CLI::PositiveNumber);
  cli.add_option("--reps", reps, "rounds")->check(CLI::PositiveNumber);
  cli.add_option("--tiles", tiles, "Tessera tiles (METIS); 0 (default): the library chooses")
      ->check(CLI::NonNegativeNumber);
  cli.add_option("--threads", threads,
                 "OpenMP threads and, unless --ncpu, StarPU CPU workers (default: StarPU's)");
  cli.add_option("--block", block, "OpenMP block size (edges per coloured block)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(cli, argc, argv);
  if (threads > 0 && runtime.cpu_workers < 0) runtime.cpu_workers = threads;
  runtime.cuda_workers = 0;
  runtime.quiet = true;
  runtime.summary = true;  // the tasks' totals: each round's efficiency (its table unprinted)

  const Mesh m = generate_mesh(size[0], size[1]);
  tessera::Runtime rt(runtime);
  if (threads <= 0) threads = rt.cpu_workers();
  Solver solver(m, tiles, tessera::Partitioner::Metis);
  OpenMPAirfoil omp(m, threads, block);
  std::printf(
      "airfoil bench: %d cells, %d edges, %d iterations x %d rounds; Tessera %d tiles, %d CPU "
      "workers, %s; "
      "OpenMP %d threads, %zu edge colours of %d-edge blocks\n",
      m.ncell, m.nedge, iterations, reps, solver.tiles(), rt.cpu_workers(), rt.scheduler().c_str(),
      threads, omp.colours(), block);
  std::vector<double> t_omp, t_tessera, efficiency;
  for (int r = 0; r < reps; ++r) {
    starpu_pause();  // StarPU 1.3's idle workers poll: keep them off the OpenMP threads' cores
    bench::settle();
    double start = now();
    for (int i = 0; i < iterations; ++i) omp.iterate();
    t_omp.push_back(now() - start);
    starpu_resume();
    rt.wait();
    bench::settle();
    rt.clear_recorded();
    start = now();
    for (int i = 0; i < iterations; ++i) solver.iterate();
    rt.wait();
    t_tessera.push_back(now() - start);
    efficiency.push_back(bench::round_efficiency(rt));
  }
  const double rms_tessera = solver.rms(), rms_omp = omp.rms();
  std::printf("openmp   best %.4f s  median %.4f s  (%.3f ms/iteration)\n",
              *std::min_element(t_omp.begin(), t_omp.end()), median(t_omp),
              1e3 * median(t_omp) / iterations);
  std::printf("tessera  best %.4f s  median %.4f s  (%.3f ms/iteration)\n",
              *std::min_element(t_tessera.begin(), t_tessera.end()), median(t_tessera),
              1e3 * median(t_tessera) / iterations);
  const double best_efficiency = bench::at_fastest(t_tessera, efficiency);
  std::printf("ratio OpenMP/Tessera time (best): %.3f; tessera efficiency %.1f %% (best round)\n",
              *std::min_element(t_omp.begin(), t_omp.end()) /
                  *std::min_element(t_tessera.begin(), t_tessera.end()),
              100 * best_efficiency);
  // Same iterations on both sides: rms and the flow field agree to rounding.
  const std::vector<double> q = solver.q();
  double worst = 0, scale = 0;  // the largest difference relative to the largest value
  for (std::size_t k = 0; k < q.size(); ++k) {
    worst = std::max(worst, std::fabs(q[k] - omp.q()[k]));
    scale = std::max(scale, std::fabs(omp.q()[k]));
  }
  worst /= scale;
  const double rms_diff = std::fabs(rms_tessera - rms_omp) / rms_omp;
  std::printf(
      "rms tessera %.17g openmp %.17g (relative difference %.2e); largest q difference %.2e "
      "(relative to max |q|)\n",
      rms_tessera, rms_omp, rms_diff, worst);
  const bool ok = rms_diff < 1e-8 && worst < 1e-10;
  std::printf("%s\n", ok ? "results agree" : "RESULTS DIFFER");
  bench::Case c;  // the suite's JSON line (bench/run.sh); per iteration, best rounds
  c.app = "airfoil";
  c.grid = std::to_string(m.ncell) + "cells";
  c.tile = "metis";
  c.tiles = solver.tiles();
  c.workers = rt.cpu_workers();
  c.threads = threads;
  c.steps = iterations;
  c.points = m.ncell;
  c.omp_s = *std::min_element(t_omp.begin(), t_omp.end()) / iterations;
  c.tessera_s = *std::min_element(t_tessera.begin(), t_tessera.end()) / iterations;
  c.equal = ok;
  c.equality = "rms 1e-8, q 1e-10 relative";
  c.efficiency = best_efficiency;
  bench::json_line(c);
  return ok ? 0 : 1;
}
