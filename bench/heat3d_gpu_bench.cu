// bench_heat3d_gpu: Tessera's heat3d on a GPU, GPU-only and CPU+GPU, against a hand-written
// single-kernel CUDA 7-point stencil and a device-to-device copy (the bandwidth ceiling), on
// the same grid in one run. See bench/README.md and docs/performance.md.
//
// Variants (N^3 doubles, alpha 0.1, x-low face 1.0, every other face 0.0, as apps::Heat3d):
//   copy      cudaMemcpy device to device of N^3 doubles; GB/s counts read + write
//   kernel    the hand-written baseline: one (N+2)^3 array pair on the device with a constant
//             ghost shell, one launch per step, a thread per (x, y) column marching along z
//   gpu       Tessera with 0 CPU workers and 1 CUDA worker, in the --tile tiles, which the
//             planner merges into one tile for the one CUDA worker (Planner::merge_gpu_part)
//   gpu-kept  the same with the --tile tiles kept as given (--keep-gpu-tiles): one task per
//             tile and the ghost-layer copies between them, what merging saves
//   auto      Tessera with --ncpu CPU workers and 1 CUDA worker: the scheduler (dmda by
//             default) splits the tiles between them from its calibrated performance models
//   fraction  Tessera as auto, but a hand-set share of the tiles pinned to the GPU
//             (PSkel-style; --fractions 0.5,0.75,1), the rest to the CPU workers
// StarPU allows one runtime at a time, so each Tessera variant runs its own warm-up and rounds
// in turn. Every variant's final field is compared bit for bit with the kernel's after the
// same number of steps; this file is compiled with -fmad=false so no side fuses a multiply-add
// the other does not (the stencil is memory-bound; FMA contraction changes nothing measurable).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

#include "apps/heat3d/heat3d.hpp"

namespace {

#define BENCH_CUDA(call)                                                        \
  do {                                                                          \
    const cudaError_t err_ = (call);                                            \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(2);                                                             \
    }                                                                           \
  } while (0)

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Layout of the baseline: (nx+2) x (ny+2) x (nz+2), x fastest; the ghost shell holds the
// Dirichlet values and is never written.
struct Shell {
  std::int64_t nx, ny, nz;
  TESSERA_HD std::int64_t sy() const { return nx + 2; }
  TESSERA_HD std::int64_t sz() const { return (nx + 2) * (ny + 2); }
  std::int64_t size() const { return sz() * (nz + 2); }
};

// One thread per interior (x, y) column, marching along z; the arithmetic is apps::Heat3d's,
// in the same order.
__global__ void heat_kernel(const double* __restrict__ u, double* __restrict__ next, Shell g,
                            double alpha) {
  const std::int64_t x = 1 + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = 1 + blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  if (x > g.nx || y > g.ny) return;
  const std::int64_t sy = g.sy(), sz = g.sz();
  for (std::int64_t z = 1; z <= g.nz; ++z) {
    const std::int64_t i = x + y * sy + z * sz;
    const double c = u[i];
    next[i] =
        c + alpha * (u[i - 1] + u[i + 1] + u[i - sy] + u[i + sy] + u[i - sz] + u[i + sz] - 6.0 * c);
  }
}

void shell_init(const Shell& g, std::vector<double>& host) {
  host.assign(static_cast<std::size_t>(g.size()), 0.0);
  for (std::int64_t z = 1; z <= g.nz; ++z)
    for (std::int64_t y = 1; y <= g.ny; ++y)
      host[static_cast<std::size_t>(y * g.sy() + z * g.sz())] = 1.0;
}

struct Measured {
  std::string name;
  double best_s = 0, median_s = 0;  // per step (copy: per copy)
  std::string detail;
};

void print(const Measured& m, double points, double copy_gbs) {
  const double gbs = points * 16.0 / m.best_s / 1e9;
  std::printf("%-14s s/step=%.6f median=%.6f MLUPS=%.1f GB/s=%.1f", m.name.c_str(), m.best_s,
              m.median_s, points / m.best_s / 1e6, gbs);
  if (copy_gbs > 0) std::printf(" of_copy=%.2f", gbs / copy_gbs);
  if (!m.detail.empty()) std::printf(" %s", m.detail.c_str());
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "bench_heat3d_gpu: Tessera heat3d on a GPU (GPU-only, CPU+GPU) vs a hand-written "
      "CUDA stencil vs device copy bandwidth"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  std::vector<long> size{512, 512, 512}, tile{512, 512, 32};
  int steps = 20, reps = 5, warmup = 20;
  double alpha = 0.1;
  std::vector<std::string> variants{"copy", "kernel", "gpu", "gpu-kept", "auto"};
  std::vector<double> fractions;
  cli.add_option("--size", size, "grid points per axis (x y z)")->expected(3);
  cli.add_option("--tile", tile, "Tessera tile points per axis (x y z)")->expected(3);
  cli.add_option("--steps", steps, "time steps per round")->check(CLI::PositiveNumber);
  cli.add_option("--reps", reps, "timed rounds per variant")->check(CLI::PositiveNumber);
  cli.add_option("--warmup", warmup, "untimed steps first per Tessera variant (calibrates models)")
      ->check(CLI::NonNegativeNumber);
  cli.add_option("--alpha", alpha, "dt/h^2 (<= 1/6 for stability)");
  cli.add_option("--variants", variants, "any of copy kernel gpu gpu-kept auto")->delimiter(',');
  cli.add_option("--fractions", fractions,
                 "hand-set GPU shares of the tiles to run as 'fraction' variants, e.g. 0.5,0.75,1")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0));
  CLI11_PARSE(cli, argc, argv);
  auto wants = [&](const char* v) {
    return std::find(variants.begin(), variants.end(), v) != variants.end();
  };

  const Shell g{size[0], size[1], size[2]};
  const double points = static_cast<double>(g.nx) * g.ny * g.nz;
  const long total_steps = static_cast<long>(warmup) + static_cast<long>(reps) * steps;
  std::printf("bench_heat3d_gpu grid=%ldx%ldx%ld tile=%ldx%ldx%ld steps=%d reps=%d warmup=%d\n",
              size[0], size[1], size[2], tile[0], tile[1], tile[2], steps, reps, warmup);

  // The hand-written kernel, run for as many steps as each Tessera variant: its final
  // interior is the value every variant must reproduce bit for bit.
  std::vector<double> want;
  double copy_gbs = 0;
  Measured kernel;
  {
    std::vector<double> host;
    shell_init(g, host);
    const std::size_t bytes = host.size() * sizeof(double);
    double *du = nullptr, *dv = nullptr;
    BENCH_CUDA(cudaMalloc(&du, bytes));
    BENCH_CUDA(cudaMalloc(&dv, bytes));
    BENCH_CUDA(cudaMemcpy(du, host.data(), bytes, cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(dv, host.data(), bytes, cudaMemcpyHostToDevice));
    const dim3 block(128, 2);
    const dim3 blocks(static_cast<unsigned>((g.nx + block.x - 1) / block.x),
                      static_cast<unsigned>((g.ny + block.y - 1) / block.y));
    auto step = [&] {
      heat_kernel<<<blocks, block>>>(du, dv, g, alpha);
      std::swap(du, dv);
    };
    if (wants("copy")) {
      std::vector<double> t;
      for (int r = 0; r < reps + 1; ++r) {  // the first copy is a warm-up
        const double t0 = now();
        BENCH_CUDA(cudaMemcpy(dv, du, bytes, cudaMemcpyDeviceToDevice));
        BENCH_CUDA(cudaDeviceSynchronize());
        if (r > 0) t.push_back(now() - t0);
      }
      copy_gbs = 2.0 * static_cast<double>(bytes) / best(t) / 1e9;
      std::printf("%-14s s/copy=%.6f GB/s=%.1f (read+write, %zu bytes)\n", "copy", best(t),
                  copy_gbs, bytes);
      BENCH_CUDA(cudaMemcpy(dv, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    std::vector<double> t;
    for (int s = 0; s < warmup; ++s) step();
    BENCH_CUDA(cudaDeviceSynchronize());
    for (int r = 0; r < reps; ++r) {
      const double t0 = now();
      for (int s = 0; s < steps; ++s) step();
      BENCH_CUDA(cudaDeviceSynchronize());
      t.push_back((now() - t0) / steps);
    }
    BENCH_CUDA(cudaGetLastError());
    kernel = {"kernel", best(t), median(t), ""};
    if (wants("kernel")) print(kernel, points, copy_gbs);
    BENCH_CUDA(cudaMemcpy(host.data(), du, bytes, cudaMemcpyDeviceToHost));
    want.reserve(static_cast<std::size_t>(points));
    for (std::int64_t z = 1; z <= g.nz; ++z)
      for (std::int64_t y = 1; y <= g.ny; ++y)
        for (std::int64_t x = 1; x <= g.nx; ++x)
          want.push_back(host[static_cast<std::size_t>(x + y * g.sy() + z * g.sz())]);
    BENCH_CUDA(cudaFree(du));
    BENCH_CUDA(cudaFree(dv));
  }
  // Tessera variants: each gets a fresh Runtime with its own worker set.
  struct Variant {
    std::string name;
    tessera::Options options;
  };
  std::vector<Variant> runs;
  for (const char* name : {"gpu", "gpu-kept"}) {
    if (!wants(name)) continue;
    tessera::Options o = opts;
    o.cpu_workers = 0;
    o.cuda_workers = 1;
    if (std::string(name) == "gpu-kept") o.merge_gpu_tiles = false;
    runs.push_back({name, o});
  }
  if (wants("auto")) {
    tessera::Options o = opts;
    if (o.cuda_workers < 0) o.cuda_workers = 1;
    runs.push_back({"auto", o});
  }
  for (double f : fractions) {
    tessera::Options o = opts;
    if (o.cuda_workers < 0) o.cuda_workers = 1;
    o.gpu_fraction = f;
    std::ostringstream name;
    name << "fraction=" << f;
    runs.push_back({name.str(), o});
  }

  int rc = 0;
  std::vector<Measured> results;
  try {
    for (Variant& v : runs) {
      tessera::Runtime rt(v.options);
      tessera::Grid<3> grid({size[0], size[1], size[2]}, {tile[0], tile[1], tile[2]});
      tessera::Field<double, 3> u(grid, 1, apps::heat3d_boundaries(), "u");
      tessera::Field<double, 3> next(grid, 1, apps::heat3d_boundaries(), "next");
      u.fill([](tessera::Index<3>) { return 0.0; });
      next.fill([](tessera::Index<3>) { return 0.0; });
      tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
      auto submit_steps = [&](int n) {
        for (int s = 0; s < n; ++s) {
          heat.apply(apps::Heat3d{alpha}, tessera::in(u), tessera::out(next));
          tessera::swap(u, next);
        }
      };
      submit_steps(warmup);
      rt.wait();
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        const double t0 = now();
        submit_steps(steps);
        rt.wait();
        t.push_back((now() - t0) / steps);
      }
      const std::vector<double> got = u.gather();
      std::int64_t differ = 0;
      for (std::size_t k = 0; k < got.size(); ++k)
        if (std::memcmp(&got[k], &want[k], sizeof(double)) != 0) ++differ;
      if (differ != 0) rc = 1;
      std::ostringstream detail;
      detail << "workers=" << rt.cpu_workers() << "cpu+" << rt.cuda_workers()
             << "cuda tiles=" << grid.tiles() << " sched=" << rt.scheduler()
             << " check=" << (differ ? "!=" : "==") << "kernel(" << differ
             << " points differ after " << total_steps << " steps)";
      results.push_back({v.name, best(t), median(t), detail.str()});
      print(results.back(), points, copy_gbs);
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  // Ratios of best rounds, against the issue's targets (docs/performance.md).
  auto find = [&](const std::string& name) -> const Measured* {
    for (const Measured& m : results)
      if (m.name == name) return &m;
    return nullptr;
  };
  if (copy_gbs > 0)
    std::printf("ratio    kernel/copy GB/s=%.3f (target >= 0.8)\n",
                points * 16.0 / kernel.best_s / 1e9 / copy_gbs);
  const Measured* gpu = find("gpu");
  const Measured* automatic = find("auto");
  if (gpu)
    std::printf("ratio    gpu/kernel MLUPS=%.3f (target >= 0.9)\n", kernel.best_s / gpu->best_s);
  if (gpu && automatic)
    std::printf("ratio    auto/gpu MLUPS=%.3f (target >= 1.0)\n", gpu->best_s / automatic->best_s);
  const Measured* best_fraction = nullptr;
  for (const Measured& m : results)
    if (m.name.rfind("fraction=", 0) == 0 && (!best_fraction || m.best_s < best_fraction->best_s))
      best_fraction = &m;
  if (best_fraction && automatic)
    std::printf("ratio    auto/best-hand-set (%s) MLUPS=%.3f (target >= 0.97)\n",
                best_fraction->name.c_str(), best_fraction->best_s / automatic->best_s);
  return rc;
}
