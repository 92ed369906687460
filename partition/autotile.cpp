#include "partition/autotile.hpp"

#include "partition/gpu_memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera::partition {

namespace {

// The model's constants. A ghost point costs kGhostCost points (a copy out, a copy in, and the
// temporal blocks' recomputed points around a thin tile), and a step ends on average 0.15 of a
// tile after its work would on perfectly shared workers (a worker that starts its last tile
// late; other processes on the cores). Fitted on 2 workers here: first to heat3d (64^3 to
// 256^3) under load, then on a quiet machine to every grid application of the benchmark suite
// at its default and in-cache size (docs/scheduling.md, "Measured"): a quarter of a tile made
// small grids two tiles a worker where one is faster.
constexpr double kGhostCost = 4;
constexpr double kImbalance = 0.15;
// The most tiles per CPU worker the chooser considers.
constexpr int kMostTilesPerWorker = 64;
// The most tiles across the split axis with a GPU part: they cut the GPU slabs too (a lattice),
// each GPU tile a task more (gpu_part_seconds), so that many CPU workers get tiles of about a
// GPU step from a thin CPU part.
constexpr int kMostCrossCuts = 64;

std::string extents_text(const Extent3& e, int dims) {
  std::string s;
  for (int a = 0; a < dims; ++a) s += (a ? "x" : "") + std::to_string(e[a]);
  return s;
}

// A candidate lattice: tiles per axis.
struct Counts {
  std::array<int, 3> n{1, 1, 1};
  int tiles() const { return n[0] * n[1] * n[2]; }
};

// One step of `extent` cut as `c` on `workers` workers of `point_seconds` per point.
double step_seconds(const Extent3& extent, int dims, const Counts& c, int workers,
                    double point_seconds, double task_seconds, double imbalance) {
  double points = 1, ghosts = 0;
  for (int a = 0; a < dims; ++a) points *= static_cast<double>(extent[a]) / c.n[a];
  for (int a = 0; a < dims; ++a)
    if (c.n[a] > 1) ghosts += 2 * points / (static_cast<double>(extent[a]) / c.n[a]);
  const double tile = point_seconds * (points + kGhostCost * ghosts);
  const int rounds = (c.tiles() + workers - 1) / workers;
  return rounds * (tile + task_seconds) + imbalance * tile;
}

// The axes the chooser cuts, slowest first: the free ones but x (rows stay whole: long
// contiguous loops, and ghost layers copied as rows, not one element per row).
std::vector<int> free_axes(const Extent3& fixed, int dims) {
  std::vector<int> axes;
  for (int a = dims - 1; a >= 1; --a)
    if (fixed[a] <= 0) axes.push_back(a);
  return axes;
}

// The best lattice of `extent` for `workers` CPU workers: the fixed axes as given, the two
// slowest free axes cut into 1.. tiles at least kMinThickness thick, the others whole; whole
// rounds of the workers (fewer tiles only where the axes cannot make as many). Slabs of the slowest
// axis first: a second axis is cut only where that predicts a step kSecondAxisGain shorter (its
// cuts multiply the tiles of a GPU part too). Ties within 1 % go to fewer tiles.
constexpr double kSecondAxisGain = 0.1;
Counts best_cpu_counts(const Extent3& extent, int dims, const Extent3& fixed, const Machine& m,
                       int max_second, double* seconds, double imbalance = kImbalance) {
  Counts base;
  for (int a = 0; a < dims; ++a)
    if (fixed[a] > 0) base.n[a] = static_cast<int>(tile_count_along(extent[a], fixed[a]));
  const std::vector<int> axes = free_axes(fixed, dims);
  const int workers = std::max(1, m.cpu_workers);
  const int most = std::max(1, kMostTilesPerWorker * workers);
  auto limit = [&](std::size_t k) {
    if (k >= axes.size()) return 1;
    const std::int64_t e = extent[axes[k]];
    return static_cast<int>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(e / kMinThickness, k == 0 ? most : max_second)));
  };
  const double point = m.cpu_point_seconds > 0 ? m.cpu_point_seconds : kCpuPointSeconds;
  const double task = m.task_seconds > 0 ? m.task_seconds : kTaskSeconds;
  struct Scored {
    Counts c;
    double s;
  };
  // Fewer tiles than workers only where the axes cannot be cut into as many.
  bool enough = static_cast<std::int64_t>(limit(0)) * limit(1) >= workers;
  auto best_of = [&](int first_second, int last_second) {
    Scored best{base, -1};
    for (int second = first_second; second <= last_second; ++second)
      for (int first = 1; first <= limit(0); ++first) {
        Counts c = base;
        if (!axes.empty()) c.n[axes[0]] = first;
        if (axes.size() > 1) c.n[axes[1]] = second;
        const int n = c.tiles();
        if (n > std::max(most, base.tiles())) break;
        if (base.tiles() == 1 && (n > workers ? n % workers != 0 : n < workers && enough)) continue;
        const double s = step_seconds(extent, dims, c, workers, point, task, imbalance);
        if (best.s < 0 || s < best.s * 0.99 || (s <= best.s * 1.01 && n < best.c.tiles()))
          best = {c, s};
      }
    return best;
  };
  Scored best{base, -1};
  for (int pass = 0; pass < 2 && best.s < 0; ++pass, enough = false) {
    best = best_of(1, 1);
    if (limit(1) > 1) {
      const Scored crossed = best_of(2, limit(1));
      // Slabs alone may not make whole rounds: then the crossed lattice, whatever it gains.
      if (crossed.s >= 0 && (best.s < 0 || crossed.s < best.s * (1 - kSecondAxisGain)))
        best = crossed;
    }
  }  // a second pass, without whole rounds, where no lattice makes them
  *seconds = best.s;
  return best.c;
}

}  // namespace

namespace {
// The per-step seconds of a split's two parts at `to` planes for the GPU part, from those
// measured at `split`: the GPU part's in proportion to its planes; the CPU part's, with
// `cpu_slabs` slabs along the axis, its thickest slab's (even_cuts: the step waits for the
// worker with the thickest tile), from the mean slab's time measured; without slabs, in
// proportion to its planes.
struct PartTimes {
  double gpu, cpu;
  double step() const { return std::max(gpu, cpu); }
};
PartTimes part_times_at(std::int64_t extent, std::int64_t split, double gpu_seconds,
                        double cpu_seconds, int cpu_slabs, std::int64_t to) {
  const auto planes = static_cast<double>(extent - split);
  PartTimes t{gpu_seconds * static_cast<double>(to) / static_cast<double>(split), 0};
  if (cpu_slabs <= 0) {
    t.cpu = cpu_seconds * static_cast<double>(extent - to) / planes;
    return t;
  }
  const double per_plane = cpu_seconds * std::min<double>(cpu_slabs, planes) / planes;
  const std::int64_t slabs = std::min<std::int64_t>(cpu_slabs, extent - to);
  if (slabs <= 0) return t;
  const std::int64_t thickest = (extent - to + slabs - 1) / slabs;  // even_cuts' first slab
  t.cpu = per_plane * static_cast<double>(thickest);
  return t;
}
}  // namespace

std::int64_t rebalanced_split(std::int64_t extent, std::int64_t split, double gpu_seconds,
                              double cpu_seconds, double threshold, int cpu_slabs) {
  if (gpu_seconds <= 0 || cpu_seconds <= 0 || split <= 0 || split >= extent) return split;
  const PartTimes now = part_times_at(extent, split, gpu_seconds, cpu_seconds, cpu_slabs, split);
  if (std::abs(now.gpu - now.cpu) <= threshold * now.step()) return split;
  const double gpu_rate = static_cast<double>(split) / gpu_seconds;
  const double cpu_rate = static_cast<double>(extent - split) / cpu_seconds;
  std::int64_t moved = std::llround(static_cast<double>(extent) * gpu_rate / (gpu_rate + cpu_rate));
  moved = std::min<std::int64_t>(extent - 1, std::max<std::int64_t>(1, moved));
  if (cpu_slabs <= 0) return moved;
  // Whole planes per slab: of the splits near the balance of the rates (within two planes of
  // every slab), the one whose longer part is shortest; of equals, the nearest to `split`.
  const std::int64_t reach = 2 * static_cast<std::int64_t>(cpu_slabs) + 2;
  std::int64_t best = moved;
  double best_step = part_times_at(extent, split, gpu_seconds, cpu_seconds, cpu_slabs, best).step();
  for (std::int64_t to = std::max<std::int64_t>(1, moved - reach);
       to <= std::min<std::int64_t>(extent - 1, moved + reach); ++to) {
    const double step =
        part_times_at(extent, split, gpu_seconds, cpu_seconds, cpu_slabs, to).step();
    if (step < best_step * (1 - 1e-9) ||
        (step <= best_step * (1 + 1e-9) && std::abs(to - split) < std::abs(best - split))) {
      best = to;
      best_step = step;
    }
  }
  return best;
}

double recent_step_seconds(std::vector<double> per_step) {
  if (per_step.empty()) return 0;
  per_step.erase(per_step.begin(),
                 per_step.begin() + static_cast<std::ptrdiff_t>(per_step.size() / 2));
  std::sort(per_step.begin(), per_step.end());
  const std::size_t h = per_step.size() / 2;
  return per_step.size() % 2 == 1 ? per_step[h] : (per_step[h - 1] + per_step[h]) / 2;
}

int choose_mesh_tiles(std::int64_t elements, int workers, int ranks) {
  const std::int64_t w = std::max(1, workers);
  const std::int64_t rounds = std::max<std::int64_t>(
      1, std::min<std::int64_t>(kMostMeshRounds, elements / (w * kMinMeshTile)));
  const std::int64_t tiles = std::min(rounds * w, std::max<std::int64_t>(1, elements));
  return static_cast<int>(std::max<std::int64_t>(tiles, std::min<std::int64_t>(ranks, elements)));
}

Cuts even_cuts(std::int64_t extent, int n) {
  Cuts cuts;
  const std::int64_t base = extent / n, thicker = extent % n;
  std::int64_t at = 0;
  for (int k = 0; k + 1 < n; ++k) {
    at += base + (k < thicker ? 1 : 0);
    cuts.push_back(at);
  }
  return cuts;
}

namespace {

// The GPU part of `planes` planes along `axis` in the GPUs' memory (plan_gpu_memory): a slab
// per CUDA worker, or more that stream through it at most `deepest` steps a visit, cut into
// `across` tiles along the other axes (the CPU part's cuts there), a task each.
GpuMemoryPlan gpu_part(const Extent3& extent, int dims, int axis, std::int64_t planes,
                       const Machine& m, double gpu_point, double task, int across,
                       int deepest = kDeepestStreamDepth) {
  double plane = 1;
  std::vector<double> plane_extents;  // a tile's, where the plane is one tile
  for (int a = 0; a < dims; ++a)
    if (a != axis) {
      plane *= static_cast<double>(extent[a]);
      if (across == 1) plane_extents.push_back(static_cast<double>(extent[a]));
    }
  if (axis == dims - 1 || !m.ghost_planes_stay)
    return plan_gpu_memory(plane, planes, m, gpu_point, task, across, deepest, plane_extents);
  // Only the outermost axis's planes lie whole in a tile's buffer, so that a visit can move
  // its points and leave its ghost planes: slabs along another axis carry theirs.
  Machine carried = m;
  carried.ghost_planes_stay = false;
  return plan_gpu_memory(plane, planes, carried, gpu_point, task, across, deepest, plane_extents);
}

}  // namespace

namespace {

// The text of the core speed the lines say is assumed ("2.50"), where no model recorded a
// core's work (core_speed_assumed).
std::string assumed_core_ns() { return std::to_string(kCpuPointSeconds * 1e9).substr(0, 4); }
bool core_speed_assumed(const Machine& m) {
  return !(m.cpu_point_seconds > 0) || m.cpu_point_assumed;
}

// The GPU part's slab cuts `slabs` (of `planes` planes) with each slab's edges cut off, `edge`
// planes each, where a slab meets another GPU's or (`cpu_above`) the CPU part
// (GpuMemoryPlan::edge_planes).
Cuts with_edges(const Cuts& slabs, std::int64_t planes, bool cpu_above, std::int64_t edge) {
  std::vector<std::int64_t> starts{0};
  starts.insert(starts.end(), slabs.begin(), slabs.end());
  Cuts out;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::int64_t a = starts[k];
    const std::int64_t b = k + 1 < starts.size() ? starts[k + 1] : planes;
    if (k > 0) out.push_back(a);
    if (k > 0 && b - a > 2 * edge) out.push_back(a + edge);
    if ((k + 1 < starts.size() || cpu_above) && b - a > 2 * edge) out.push_back(b - edge);
  }
  return out;
}

// The cuts of the fixed axes (uniform tiles of the given extent).
void fixed_cuts(const Extent3& extent, int dims, const Extent3& fixed, TileChoice* out) {
  for (int a = 0; a < dims; ++a)
    if (fixed[a] > 0) {
      const std::vector<std::int64_t> starts = tile_starts(extent[a], fixed[a], {});
      out->cuts[a].assign(starts.begin() + 1, starts.end());
    }
}

struct Speeds {
  double cpu_point, gpu_point, task, split;
};
Speeds speeds_of(const Machine& m) {
  const double cpu = m.cpu_point_seconds > 0 ? m.cpu_point_seconds : kCpuPointSeconds;
  return {cpu, m.gpu_point_seconds > 0 ? m.gpu_point_seconds : cpu / kGpuSpeedup,
          m.task_seconds > 0 ? m.task_seconds : kTaskSeconds,
          m.split_seconds > 0 ? m.split_seconds : kSplitSeconds};
}

// A CPU part beside a streamed one, cut in `c`'s slabs along the split axis, on `workers` workers:
// the grid advances at the streamed depth (one depth a grid), so each slab's blocks compute its
// points, the planes they recompute of its neighbours' edges (recomputed_share) and copy its two
// faces in and out, a plane of each a step (kStreamedFaceCopyPlanes), where step_seconds' ghost
// cost is fitted to shallow blocks. Simulated, heat3d 1024^3 with 15 cores: 13-plane CPU tiles at
// depth 8 priced by their points alone made the split 0.88x the GPU alone; at depth 10, their
// edges priced twice (that ghost cost, then the recomputed planes) gave the cores 127 planes and
// 79.4 ms a step where 184 gave 67.5.
constexpr double kStreamedFaceCopyPlanes = 4;
double streamed_cpu_seconds(const Extent3& extent, int dims, const Counts& c, int axis, int workers,
                            const Speeds& v, int depth) {
  double points = 1;
  for (int a = 0; a < dims; ++a) points *= static_cast<double>(extent[a]) / c.n[a];
  const double thickness = static_cast<double>(extent[axis]) / c.n[axis];
  const int rounds = (c.tiles() + std::max(1, workers) - 1) / std::max(1, workers);
  return rounds *
         (v.cpu_point * points *
              (1 + recomputed_share(depth, thickness) + kStreamedFaceCopyPlanes / thickness) +
          v.task);
}

// What a split beside a streamed GPU part must gain of the GPU-only step to be taken: the CPU
// part's blocks wait, once a pass, on the visit of the GPU's slab beside it, so the two parts'
// steps are coupled as the model does not price them. Simulated, jacobi2d 49152^2 on 4 GPUs of
// 4 GiB with 12 cores: a split predicted 4 % shorter ran 6 % faster at y 45644 and 16 % slower
// at y 45623 (docs/simulation.md, "Grids larger than the GPU"); one GPU with 15 cores, one
// predicted 28 % shorter ran 26 % faster.
constexpr double kStreamedSplitGain = 0.10;

// One step of the grid split at `planes` along `axis`: the longer of the two parts (-1 where
// the CPU part cannot be: no CPU workers, or thinner than kMinThickness, or the GPU part does
// not fit even streamed); `c` and `cpu_seconds` the CPU part's lattice and step, `deepest`
// (where asked) the most steps a visit of a streamed GPU part may take.
double split_step(const Extent3& extent, int dims, const Extent3& fixed, const Machine& m, int axis,
                  std::int64_t planes, Counts* c, double* cpu_seconds, int* deepest = nullptr) {
  const Speeds v = speeds_of(m);
  const std::int64_t e = extent[axis];
  *cpu_seconds = 0;
  if (deepest != nullptr) *deepest = kDeepestStreamDepth;
  if (planes < e && (m.cpu_workers <= 0 || e - planes < kMinThickness)) return -1.0;
  if (planes >= e) {  // GPU-only
    const GpuMemoryPlan gpu = gpu_part(extent, dims, axis, planes, m, v.gpu_point, v.task, 1);
    return gpu.possible ? gpu.step_seconds : -1.0;
  }
  if (planes <= 0) {  // CPU-only
    *c = best_cpu_counts(extent, dims, fixed, m, kMostCrossCuts, cpu_seconds, 0.0);
    return *cpu_seconds;
  }
  Extent3 cpu_extent = extent;
  cpu_extent[axis] = e - planes;
  // A GPU part that streams through the GPUs' memory is cut along the split axis only: cut
  // across too (a lattice: the CPU part's cuts), each slab's visit would be many small tasks.
  GpuMemoryPlan gpu = gpu_part(extent, dims, axis, planes, m, v.gpu_point, v.task, 1);
  if (!gpu.possible) return -1.0;
  // No imbalance term: each CPU worker runs its own tile of each round, pinned there (the
  // shared-queue imbalance of CPU-only runs does not arise), and what the model misses the
  // measured rebalancing corrects.
  *c = best_cpu_counts(cpu_extent, dims, fixed, m, gpu.streamed ? 1 : kMostCrossCuts, cpu_seconds,
                       0.0);
  const int across = c->tiles() / c->n[axis];
  if (!gpu.streamed) {
    if (across > 1) gpu = gpu_part(extent, dims, axis, planes, m, v.gpu_point, v.task, across);
    return std::max(gpu.step_seconds, *cpu_seconds) + v.split;
  }
  // Streamed: one depth for the grid, so the CPU part's slabs recompute their neighbours' edges
  // at the GPU part's depth (streamed_cpu_seconds). Where that costs more than the bus saves,
  // a shallower one: each depth the GPU part may take, the shortest step of both.
  double best = -1;
  for (int d = gpu.depth; d >= 2; d -= 2) {
    const GpuMemoryPlan g = gpu_part(extent, dims, axis, planes, m, v.gpu_point, v.task, 1, d);
    const double cpu = streamed_cpu_seconds(cpu_extent, dims, *c, axis, m.cpu_workers, v, g.depth);
    const double step = std::max(g.step_seconds, cpu);
    if (best < 0 || step < best) {
      best = step;
      *cpu_seconds = cpu;
      if (deepest != nullptr) *deepest = d;
    }
  }
  return best + v.split;
}

}  // namespace

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof(b), s < 1e-3 ? "%.0f us" : "%.2f ms", s < 1e-3 ? s * 1e6 : s * 1e3);
  return b;
}

std::string predicted_steps_text(double gpu_only, double cpu_only, int axis, std::int64_t split,
                                 double split_step) {
  // < 0: the class has no workers; NaN: its model is not calibrated.
  const auto text = [](double seconds) {
    return std::isnan(seconds) ? std::string("unknown")
           : seconds >= 0      ? seconds_text(seconds)
                               : std::string("impossible");
  };
  std::string s = "predicted step: GPU-only " + text(gpu_only) + ", CPU-only " + text(cpu_only);
  if (split_step >= 0)
    s += ", split at " + std::string(axis_name(axis)) + " " + std::to_string(split) + ": " +
         seconds_text(split_step);
  return s;
}

TileChoice split_tiles(const Extent3& extent, int dims, const Extent3& fixed, const Machine& m,
                       int axis, std::int64_t split) {
  TileChoice out;
  fixed_cuts(extent, dims, fixed, &out);
  const int cpus = std::max(0, m.cpu_workers), gpus = std::max(1, m.cuda_workers);
  const Speeds v = speeds_of(m);
  const std::int64_t e = extent[axis];
  const std::int64_t best = std::min(e, std::max<std::int64_t>(0, split));
  Counts c_best;
  double cpu_seconds = 0;
  int deepest = kDeepestStreamDepth;
  const double step =
      split_step(extent, dims, fixed, m, axis, best, &c_best, &cpu_seconds, &deepest);
  const GpuMemoryPlan memory = gpu_part(extent, dims, axis, best, m, v.gpu_point, v.task,
                                        best < e ? c_best.tiles() / c_best.n[axis] : 1, deepest);
  const double gpu_seconds = best > 0 ? memory.step_seconds : 0;
  const int slabs = static_cast<int>(std::min<std::int64_t>(memory.slabs, best));
  out.stream_depth = best > 0 && memory.streamed && memory.possible ? memory.depth : 0;
  out.gpu_fits = best <= 0 || memory.possible;
  Cuts along = even_cuts(best, std::max(1, slabs));
  if (memory.edge_planes > 0) along = with_edges(along, best, best < e, memory.edge_planes);
  const int gpu_layers = best > 0 ? static_cast<int>(along.size()) + 1 : 0;
  if (best > 0 && best < e) along.push_back(best);
  if (best < e)
    for (std::int64_t k : even_cuts(e - best, c_best.n[axis])) along.push_back(best + k);
  out.cuts[axis] = along;
  int others = 1;
  for (int a = 0; a < dims; ++a)
    if (fixed[a] > 0) others *= static_cast<int>(tile_count_along(extent[a], fixed[a]));
  if (best < e)
    for (int a : free_axes(fixed, dims))
      if (a != axis) {
        out.cuts[a] = even_cuts(extent[a], c_best.n[a]);
        others *= c_best.n[a];
      }
  out.split_axis = axis;
  out.split = best;
  out.gpu_tiles = gpu_layers * others;
  out.cpu_tiles = best < e ? c_best.tiles() : 0;
  out.gpu_step_seconds = best > 0 ? gpu_seconds : 0;
  out.cpu_step_seconds = cpu_seconds;
  out.step_seconds = step >= 0 ? step : std::max(gpu_seconds, cpu_seconds);
  double plane = 1;  // points per plane of the split axis
  for (int a = 0; a < dims; ++a) plane *= a == axis ? 1.0 : static_cast<double>(extent[a]);
  auto points = [&](std::int64_t planes) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.3g points", plane * static_cast<double>(planes));
    return std::string(b);
  };
  const std::string gpu_text =
      std::to_string(out.gpu_tiles) + " tiles (" + points(best) + ") for " + std::to_string(gpus) +
      " CUDA worker(s), " + seconds_text(gpu_seconds) + " per step" +
      (best > 0 && !memory.why.empty() ? " (" + memory.why + ")" : "") +
      (best > 0 && memory.exchange_seconds > 0
           ? " (the faces between GPUs " + seconds_text(memory.exchange_seconds) +
                 (memory.edge_planes > 0 ? ", crossing while the rest computes: edges of " +
                                               std::to_string(memory.edge_planes) + " planes first)"
                                         : ")")
           : "");
  // What the prediction rests on: the models, or the assumed speeds where they say nothing.
  const std::string core_assumed =
      core_speed_assumed(m) ? ", a core assumed " + assumed_core_ns() + " ns a point" : "";
  const std::string assumed = m.gpu_point_seconds > 0
                                  ? core_assumed + ")"
                                  : core_assumed + ", a GPU assumed " +
                                        std::to_string(static_cast<int>(kGpuSpeedup)) +
                                        " times a core)";
  out.summary =
      best == e ? gpu_text + " (modelled" + assumed
                : "GPU part " + std::string(axis_name(axis)) + " < " + std::to_string(best) + ": " +
                      gpu_text + "; CPU part: " + std::to_string(out.cpu_tiles) + " tiles (" +
                      points(e - best) + ") for " + std::to_string(cpus) + " CPU workers, " +
                      seconds_text(cpu_seconds) + " per step (modelled" + assumed;
  return out;
}

namespace {

// The GPU part along `axis` with `m`'s CUDA workers: the split where the GPU part (a slab per
// CUDA worker) and the CPU part (tiled for the CPU workers by the model) take a step in the
// shortest time; the GPU part is cut like the CPU part along the other axes (a lattice), at most
// kMostCrossCuts times. A hand-set share (Machine::gpu_share) puts it there instead.
TileChoice choose_split(const Extent3& extent, int dims, const Extent3& fixed, const Machine& m,
                        int axis) {
  const int cpus = std::max(0, m.cpu_workers);
  const std::int64_t e = extent[axis];
  Counts c;
  double cpu_seconds = 0;
  if (m.gpu_share >= 0) {
    std::int64_t planes = std::llround(std::min(1.0, m.gpu_share) * static_cast<double>(e));
    if (e - planes < kMinThickness || cpus == 0) planes = e;  // too thin for a CPU part
    TileChoice hand = split_tiles(extent, dims, fixed, m, axis, planes);
    hand.summary =
        "hand-set GPU share " + std::to_string(m.gpu_share).substr(0, 4) + ": " + hand.summary;
    return hand;
  }
  // Every split on a coarse grid of planes, then every plane around the best.
  const std::int64_t stride = std::max<std::int64_t>(1, e / 128);
  std::int64_t best = e;
  double best_seconds = split_step(extent, dims, fixed, m, axis, e, &c, &cpu_seconds);
  // For the summary: GPU-only (e planes), CPU-only (0, the coarse pass's first) and the best
  // split with both parts.
  const double gpu_only = best_seconds;
  double cpu_only = -1, best_split_seconds = -1;
  std::int64_t best_split = -1;
  auto consider = [&](std::int64_t planes) {
    const double s = split_step(extent, dims, fixed, m, axis, planes, &c, &cpu_seconds);
    if (s >= 0 && (best_seconds < 0 || s < best_seconds)) best = planes, best_seconds = s;
    if (planes == 0) cpu_only = s;
    if (planes > 0 && s >= 0 && (best_split_seconds < 0 || s < best_split_seconds))
      best_split = planes, best_split_seconds = s;
  };
  for (std::int64_t planes = 0; planes < e; planes += stride) consider(planes);
  const std::int64_t around = best < e ? best : std::max<std::int64_t>(0, best_split);
  for (std::int64_t planes = std::max<std::int64_t>(0, around - stride);
       planes <= std::min(e - 1, around + stride); ++planes)
    consider(planes);
  // Beside a streamed GPU part a split must gain kStreamedSplitGain of the GPU-only step.
  const Speeds v = speeds_of(m);
  const bool streamed =
      gpu_only >= 0 && gpu_part(extent, dims, axis, e, m, v.gpu_point, v.task, 1).streamed;
  const bool too_little =
      streamed && best > 0 && best < e && best_seconds > (1 - kStreamedSplitGain) * gpu_only;
  if (too_little) best = e, best_seconds = gpu_only;
  TileChoice chosen = split_tiles(extent, dims, fixed, m, axis, best);
  if (too_little)
    chosen.summary += "; a CPU part beside the streamed one would gain less than " +
                      std::to_string(static_cast<int>(kStreamedSplitGain * 100)) + " %";
  else if (best == e)
    chosen.summary += "; a CPU part would lengthen the step";
  chosen.summary +=
      "; " + predicted_steps_text(gpu_only, cpu_only, axis, best_split, best_split_seconds);
  return chosen;
}

}  // namespace

GpuLayout cheapest_gpu_layout(const Extent3& extent, int dims, const Extent3& fixed,
                              const Machine& m) {
  const std::vector<int> axes = free_axes(fixed, dims);
  if (axes.empty() || m.cuda_workers <= 0) return {};
  // The user's layout (a hand-set share), and where no layout is possible: the slowest axis on
  // every GPU.
  const GpuLayout every_gpu{axes[0], m.cuda_workers, -1, -1};
  if (m.gpu_share >= 0) return every_gpu;
  const Speeds v = speeds_of(m);
  GpuLayout best, slowest;  // the cheapest of all, and of the slowest axis's
  double default_step = -1;
  for (int axis : axes)
    // On several ranks the GPUs are every rank's, each rank's taking its own blocks: all of them.
    for (int k = m.cuda_workers; k >= (m.ranks <= 1 ? 1 : m.cuda_workers); --k) {
      Machine mk = m;
      mk.cuda_workers = k;
      const GpuMemoryPlan p =
          gpu_part(extent, dims, axis, extent[axis], mk, v.gpu_point, v.task, 1);
      if (!p.possible) continue;
      if (axis == axes[0] && k == m.cuda_workers) default_step = p.step_seconds;
      // Ties go to the first considered: the slowest axis, the most GPUs.
      const GpuLayout here{axis, k, p.step_seconds, -1};
      if (best.step_seconds < 0 || here.step_seconds < best.step_seconds) best = here;
      if (axis == axes[0] && (slowest.step_seconds < 0 || here.step_seconds < slowest.step_seconds))
        slowest = here;
    }
  // Another axis only where it is kLayoutGain shorter than the slowest axis's best: the other
  // rules (streaming, a CPU part) were fitted on slabs of the slowest axis.
  GpuLayout out = best.step_seconds < 0 ? every_gpu : best;
  if (out.axis != axes[0] && slowest.step_seconds >= 0 &&
      !(out.step_seconds < (1 - kLayoutGain) * slowest.step_seconds))
    out = slowest;
  out.default_step_seconds = default_step;
  return out;
}

namespace {
// "; GPU slabs along y on 4 of 4 GPU(s): ..." where `layout` is not the slowest free axis on
// every GPU (choose_tiles' summary and gpu_tiles'), else "".
std::string layout_text(const GpuLayout& layout, int slowest_axis, int gpus) {
  if (layout.axis == slowest_axis && layout.gpus == gpus) return "";
  return "; GPU slabs along " + std::string(axis_name(layout.axis)) + " on " +
         std::to_string(layout.gpus) + " of " + std::to_string(gpus) +
         " GPU(s): " + seconds_text(layout.step_seconds) + " GPU-only, against " +
         (layout.default_step_seconds >= 0 ? seconds_text(layout.default_step_seconds)
                                           : std::string("impossible")) +
         " along " + axis_name(slowest_axis) + " on every GPU";
}
}  // namespace

TileChoice gpu_tiles(const Extent3& extent, int dims, const Machine& m) {
  const Extent3 free{0, 0, 0};
  const GpuLayout layout = cheapest_gpu_layout(extent, dims, free, m);
  if (layout.axis < 0) return {};
  Machine used = m;
  used.cuda_workers = layout.gpus;
  TileChoice c = split_tiles(extent, dims, free, used, layout.axis, extent[layout.axis]);
  c.summary += layout_text(layout, free_axes(free, dims)[0], m.cuda_workers);
  return c;
}

TileChoice choose_tiles(const Extent3& extent, int dims, const Extent3& fixed, const Machine& m) {
  TileChoice out;
  const int cpus = std::max(0, m.cpu_workers), gpus = std::max(0, m.cuda_workers);
  const std::vector<int> axes = free_axes(fixed, dims);
  fixed_cuts(extent, dims, fixed, &out);

  if (gpus > 0 && !axes.empty()) {
    // The GPU part's axis and GPU count by their own prices (GPU-only), then its split there.
    const GpuLayout layout = cheapest_gpu_layout(extent, dims, fixed, m);
    Machine used = m;
    used.cuda_workers = layout.gpus;
    TileChoice chosen = choose_split(extent, dims, fixed, used, layout.axis);
    chosen.summary += layout_text(layout, axes[0], gpus);
    return chosen;
  }

  double seconds = 0;
  const Counts c =
      best_cpu_counts(extent, dims, fixed, m, kMostTilesPerWorker * std::max(1, cpus), &seconds);
  for (int a : axes) out.cuts[a] = even_cuts(extent[a], c.n[a]);
  out.cpu_tiles = c.tiles();
  out.step_seconds = out.cpu_step_seconds = seconds;
  Extent3 largest{1, 1, 1};
  for (int a = 0; a < dims; ++a)
    largest[a] = out.cuts[a].empty() ? extent[a] : largest_tile(extent[a], 0, out.cuts[a]);
  out.summary =
      std::to_string(out.cpu_tiles) + " tiles of " + extents_text(largest, dims) + " for " +
      std::to_string(std::max(1, cpus)) + " CPU workers, " + seconds_text(seconds) +
      " per step (modelled" +
      (core_speed_assumed(m) ? ", at an assumed " + assumed_core_ns() + " ns per point" : "") + ")";
  return out;
}

Rebalance plan_rebalance(const Extent3& extent, int dims, int axis, std::int64_t split,
                         const Machine& machine, double gpu_seconds, double cpu_seconds,
                         double threshold, long steps_left, double move_seconds, int cpu_slabs) {
  Rebalance r;
  char b[200];
  const std::int64_t e = extent[axis];
  const std::int64_t moved =
      rebalanced_split(e, split, gpu_seconds, cpu_seconds, threshold, cpu_slabs);
  std::snprintf(b, sizeof(b), "GPU part %s per step, CPU part %s",
                seconds_text(gpu_seconds).c_str(), seconds_text(cpu_seconds).c_str());
  r.why = b;
  if (moved == split) {
    r.why += gpu_seconds > 0 && cpu_seconds > 0 ? ": within the threshold" : ": not measured";
    return r;
  }
  // Per-point times as measured: the GPU part's slab(s), the CPU part's busiest worker
  // against an even share of the CPU part's points.
  double plane = 1;
  for (int a = 0; a < dims; ++a) plane *= a == axis ? 1.0 : static_cast<double>(extent[a]);
  Machine m = machine;
  const int gpus = std::max(1, m.cuda_workers), cpus = std::max(1, m.cpu_workers);
  m.gpu_point_seconds = gpu_seconds * std::min<double>(gpus, split) / (plane * split);
  m.cpu_point_seconds = cpu_seconds * cpus / (plane * static_cast<double>(e - split));
  m.gpu_share = -1;
  r.tiles = split_tiles(extent, dims, {0, 0, 0}, m, axis, moved);
  // The gain: now the longer part, then the longer of the two parts at the measured rates.
  const double now = part_times_at(e, split, gpu_seconds, cpu_seconds, cpu_slabs, split).step();
  const double then = part_times_at(e, split, gpu_seconds, cpu_seconds, cpu_slabs, moved).step();
  r.gain_seconds = now - then;
  std::snprintf(b, sizeof(b),
                ": split %lld -> %lld gains %s per step, %s over %ld steps, "
                "against %s to move",
                static_cast<long long>(split), static_cast<long long>(moved),
                seconds_text(r.gain_seconds).c_str(),
                seconds_text(r.gain_seconds * steps_left).c_str(), steps_left,
                seconds_text(move_seconds).c_str());
  r.why += b;
  r.move = r.gain_seconds * static_cast<double>(steps_left) > move_seconds;
  if (!r.move) r.why += ": not worth it";
  return r;
}

namespace {
// One part of a placed lattice: the tiles from `first` to `last` (tile indices along the split
// axis) of every column across it, in whole rounds of `workers`, each round the part's largest
// tile and a task. `starts`: per axis, the tile starts and the extent.
double lattice_part_seconds(const std::array<std::vector<std::int64_t>, 3>& starts, int dims,
                            int axis, std::size_t first, std::size_t last, int workers,
                            double point_seconds, double task_seconds) {
  if (first >= last) return 0;
  std::int64_t tiles = 1;
  double largest = 1;  // points of the part's largest tile
  for (int a = 0; a < dims; ++a) {
    const std::vector<std::int64_t>& at = starts[a];
    const std::size_t from = a == axis ? first : 0, to = a == axis ? last : at.size() - 1;
    std::int64_t thickest = 0;
    for (std::size_t k = from; k < to; ++k) thickest = std::max(thickest, at[k + 1] - at[k]);
    tiles *= static_cast<std::int64_t>(to - from);
    largest *= static_cast<double>(thickest);
  }
  const std::int64_t w = std::max(1, workers);
  const std::int64_t rounds = (tiles + w - 1) / w;  // whole rounds: the last may be partial
  return static_cast<double>(rounds) * (largest * point_seconds + task_seconds);
}
}  // namespace

int split_axis_of(const std::array<Cuts, 3>& cuts, int dims) {
  for (int a = dims - 1; a >= 0; --a)
    if (!cuts[a].empty()) return a;
  return dims - 1;
}

LatticePlacement place_lattice(const Extent3& extent, int dims, const std::array<Cuts, 3>& cuts,
                               const Machine& m, bool speeds_known) {
  LatticePlacement p;
  const Speeds v = speeds_of(m);
  const int axis = split_axis_of(cuts, dims);
  const std::size_t slabs = cuts[axis].size() + 1;
  std::array<std::vector<std::int64_t>, 3> starts;
  for (int a = 0; a < dims; ++a) {
    starts[a] = {0};
    starts[a].insert(starts[a].end(), cuts[a].begin(), cuts[a].end());
    starts[a].push_back(extent[a]);
  }
  std::int64_t across = 1;  // tiles per slab of the split axis
  for (int a = 0; a < dims; ++a)
    if (a != axis) across *= static_cast<std::int64_t>(cuts[a].size()) + 1;
  // A part's step on its class; -1 where it cannot run there. A GPU part larger than the GPUs'
  // memory streams (Planner::merge_gpu_part cuts it into the slabs that do): priced as it
  // streams, not as if it fitted.
  const auto part = [&](std::size_t first, std::size_t last, bool gpu) {
    if (!gpu)
      return lattice_part_seconds(starts, dims, axis, first, last, m.cpu_workers, v.cpu_point,
                                  v.task);
    const double resident = lattice_part_seconds(starts, dims, axis, first, last,
                                                 std::max(1, m.cuda_workers), v.gpu_point, v.task);
    const std::int64_t planes = starts[axis][last] - starts[axis][first];
    const bool whole = first == 0 && last == slabs;  // merged, the other axes' cuts dropped
    const GpuMemoryPlan memory = gpu_part(extent, dims, axis, planes, m, v.gpu_point, v.task,
                                          whole ? 1 : static_cast<int>(across));
    if (!memory.streamed) return resident;
    return memory.possible ? memory.step_seconds : -1.0;
  };
  p.split_axis = axis;
  p.gpu_only_seconds = part(0, slabs, true);
  p.cpu_only_seconds = m.cpu_workers > 0 ? part(0, slabs, false) : -1;
  for (std::size_t k = 1; k < slabs && m.cpu_workers > 0; ++k) {
    const double gpu = part(0, k, true);
    if (gpu < 0) continue;
    const double step = std::max(gpu, part(k, slabs, false)) + v.split;
    if (p.split_seconds < 0 || step < p.split_seconds) {
      p.split_seconds = step;
      p.best_split = cuts[axis][k - 1];
    }
  }
  const std::string alternatives = predicted_steps_text(p.gpu_only_seconds, p.cpu_only_seconds,
                                                        axis, p.best_split, p.split_seconds);
  p.split = extent[axis];  // every tile on the CUDA workers
  if (!speeds_known) {
    p.summary =
        "every tile on the CUDA workers (no calibrated models of both CPU and CUDA "
        "workers to weigh a CPU part against; calibrate to let the planner consider one)";
    return p;
  }
  double best = p.gpu_only_seconds;
  std::string chosen = "every tile on the CUDA workers";
  if (p.cpu_only_seconds >= 0 && (best < 0 || p.cpu_only_seconds < best)) {
    best = p.cpu_only_seconds;
    p.split = 0;
    chosen = "every tile on the CPU workers";
  }
  if (p.split_seconds >= 0 && (best < 0 || p.split_seconds < best)) {
    p.split = p.best_split;
    chosen = "tiles below " + std::string(axis_name(axis)) + " " + std::to_string(p.split) +
             " on the CUDA workers, the others on the CPU workers";
  }
  p.summary = chosen + " (" + alternatives + ", modelled)";
  return p;
}

}  // namespace tessera::partition
