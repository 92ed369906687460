#include "partition/planner.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdio>
#include <vector>

#include "partition/gpu_memory.hpp"
#include "partition/tiling.hpp"

namespace tessera::partition {

Planner::Planner(const Machine& machine, bool speeds_known)
    : machine_(machine), speeds_known_(speeds_known) {}

Planner Planner::for_points(const PointBytes& point) const {
  Planner p = *this;
  p.machine_.point = point;
  return p;
}

TileChoice Planner::automatic(const Extent3& extent, int dims, const Extent3& fixed) const {
  TileChoice c = choose_tiles(extent, dims, fixed, machine_);
  const int axis = c.split_axis;
  if (machine_.ranks <= 1 || hand_set() || axis < 0 || c.split <= 0 || c.split >= extent[axis])
    return c;
  // A split on several ranks: whole classes instead, each tiled as choose_tiles lays it out.
  TileChoice gpu = split_tiles(extent, dims, fixed, machine_, axis, extent[axis]);
  TileChoice cpu = split_tiles(extent, dims, fixed, machine_, axis, 0);
  std::string why = c.summary;
  if (whole_classes(c.split, extent[axis], gpu.step_seconds, cpu.step_seconds, &why) == c.split)
    return c;
  TileChoice& whole = gpu.step_seconds <= cpu.step_seconds ? gpu : cpu;
  whole.summary = why + ": " + whole.summary;  // the whole class's tiles (and memory plan)
  return whole;
}

LatticePlacement Planner::given(const Extent3& extent, int dims, const std::array<Cuts, 3>& cuts,
                                bool may_merge) const {
  if (!places()) return {};
  LatticePlacement p = placed(extent, dims, cuts);
  p.cuts = cuts;
  if (may_merge) merge_gpu_part(extent, dims, &p);
  return p;
}

LatticePlacement Planner::placed(const Extent3& extent, int dims,
                                 const std::array<Cuts, 3>& cuts) const {
  if (!hand_set()) {
    LatticePlacement p = place_lattice(extent, dims, cuts, machine_, speeds_known_);
    p.split = whole_classes(p.split, extent[p.split_axis], p.gpu_only_seconds, p.cpu_only_seconds,
                            &p.summary);
    return p;
  }
  const int axis = split_axis_of(cuts, dims);
  std::vector<std::int64_t> starts{0};
  starts.insert(starts.end(), cuts[axis].begin(), cuts[axis].end());
  starts.push_back(extent[axis]);
  const double wanted = machine_.gpu_share * static_cast<double>(extent[axis]);
  const auto nearest = std::min_element(starts.begin(), starts.end(), [&](auto a, auto b) {
    return std::abs(static_cast<double>(a) - wanted) < std::abs(static_cast<double>(b) - wanted);
  });
  LatticePlacement p;
  p.split_axis = axis;
  p.split = *nearest;
  char b[200];
  std::snprintf(b, sizeof(b),
                "hand-set GPU share %g: tiles below %s %lld of %lld on the CUDA workers, the "
                "others on the CPU workers (the tile start nearest the share)",
                machine_.gpu_share, axis_name(axis), static_cast<long long>(p.split),
                static_cast<long long>(extent[axis]));
  p.summary = b;
  return p;
}

void Planner::merge_gpu_part(const Extent3& extent, int dims, LatticePlacement* p) const {
  const std::array<Cuts, 3>& cuts = p->cuts;  // read before the merged cuts replace them
  const int axis = p->split_axis;
  if (machine_.ranks > 1 || axis < 0 || p->split <= 0) return;
  const bool gpu_only = p->split >= extent[axis];
  if (gpu_only && !hand_set()) return recut_for_gpus(extent, dims, p);
  const Cuts& along = cuts[static_cast<std::size_t>(axis)];
  std::int64_t others = 1;            // tiles per slab of the split axis
  double plane = 1;                   // points per plane of the split axis
  std::vector<double> plane_extents;  // a tile's plane, about (cuts of even tiles)
  for (int a = 0; a < dims; ++a)
    if (a != axis) {
      const auto tiles_a = static_cast<std::int64_t>(cuts[static_cast<std::size_t>(a)].size()) + 1;
      others *= tiles_a;
      plane *= static_cast<double>(extent[static_cast<std::size_t>(a)]);
      // GPU-only, the merged slab spans the plane (the other axes' cuts are dropped below).
      plane_extents.push_back(static_cast<double>(extent[static_cast<std::size_t>(a)]) /
                              static_cast<double>(gpu_only ? 1 : tiles_a));
    }
  const std::int64_t slabs_below =
      1 + std::count_if(along.begin(), along.end(), [&](std::int64_t c) { return c < p->split; });
  const std::int64_t before = slabs_below * others;
  if (!gpu_only) plane /= static_cast<double>(others);  // in one tile of the other axes
  // One slab per CUDA worker, or where that does not fit its GPU, the slabs that stream
  // through it (plan_gpu_memory).
  const int across = static_cast<int>(gpu_only ? 1 : others);
  // Priced as the library's own tiles are (split_step): the GPU's speed where the models give
  // it (plan_gpu_memory prices the bus alone without), a task's cost.
  const double gpu_point = machine_.gpu_point_seconds;
  const double task = machine_.task_seconds > 0 ? machine_.task_seconds : kTaskSeconds;
  const GpuMemoryPlan memory = plan_gpu_memory(plane, p->split, machine_, gpu_point, task, across,
                                               kDeepestStreamDepth, plane_extents);
  if (!memory.possible) return;  // kept as given: Planner::given's caller refuses or evicts
  const std::string bound = memory.streamed ? ", " + memory.why : "";
  const int slabs = static_cast<int>(std::min(memory.slabs, p->split));
  const std::int64_t after = gpu_only ? slabs : slabs * others;
  // Resident, fewer tiles only; streamed, the plan's slabs whatever their count: tiles kept as
  // given on a GPU too small for them would be fetched and evicted by StarPU task by task
  // (heat3d 1024^3 in 16 given slabs on a 4 GiB GPU, simulated: 377 ms a step against 11.7).
  if (after >= before && !memory.streamed) return;
  Cuts merged = even_cuts(p->split, slabs);
  for (std::int64_t c : along)  // the split itself (a tile start), then the CPU part's tiles
    if (c >= p->split) merged.push_back(c);
  if (gpu_only)
    for (Cuts& c : p->cuts) c.clear();
  p->cuts[static_cast<std::size_t>(axis)] = merged;
  p->merged = true;
  p->stream_depth = memory.streamed ? memory.depth : 0;
  // The line's predicted steps priced the tiles as given; the merged part's own, where the
  // GPU's speed is known.
  const std::string step =
      gpu_point > 0 ? ", its predicted step " + seconds_text(memory.step_seconds) : "";
  p->summary += "; the " + std::to_string(before) + " tiles on the CUDA workers " +
                (after > before ? "cut into " : "merged into ") + std::to_string(after) +
                (slabs == 1 || !bound.empty() ? "" : ", one slab per CUDA worker") + bound + step +
                " (a CUDA worker runs its tiles one after another: separate tiles would add only "
                "their tasks' fixed costs and the ghost-layer copies between them)";
}

void Planner::recut_for_gpus(const Extent3& extent, int dims, LatticePlacement* p) const {
  const TileChoice c = gpu_tiles(extent, dims, machine_);
  if (c.split_axis < 0 || !c.gpu_fits) return;  // kept as given: Planner::given's caller refuses
  std::int64_t before = 1, after = 1;
  for (int a = 0; a < dims; ++a) {
    before *= static_cast<std::int64_t>(p->cuts[static_cast<std::size_t>(a)].size()) + 1;
    after *= static_cast<std::int64_t>(c.cuts[static_cast<std::size_t>(a)].size()) + 1;
  }
  // Tiles given as the library's own stay, planned as its (streamed where they do not fit).
  const bool same = c.cuts == p->cuts;
  p->merged = !same;
  p->cuts = c.cuts;
  p->split_axis = c.split_axis;
  p->split = c.split;
  p->stream_depth = c.stream_depth;
  p->summary += "; the " + std::to_string(before) + " tiles on the CUDA workers " +
                (same             ? "kept"
                 : after > before ? "cut into " + std::to_string(after)
                 : after < before ? "merged into " + std::to_string(after)
                                  : "re-cut into " + std::to_string(after)) +
                ", its predicted step " + seconds_text(c.step_seconds) +
                " (the library's tiles for the GPUs alone: " + c.summary + ")";
}

namespace {
// One part of an all-pairs step: `planes` planes of `cross` points in `tiles` tiles on
// `workers` workers, in whole rounds of its thickest tile's chain: that tile's points x
// `points` sources x `pair_seconds`, a task per source tile (`sources`), and the copies of the
// `foreign` source tiles held in another memory than the part's (kSourceCopySeconds each).
// On a GPU (`gpu`) `pair_seconds` is an interaction's time on a full GPU, and a task keeps
// only part of it busy when its tile has few targets: the CUDA pair kernel (pairs.hpp,
// pair_kernel) runs blocks of 32 targets, each target's chunks of 64 sources summed by up to
// 16 lanes at once, so a task of T targets and S sources (here the average source tile) runs
// ceil(T / 32) 32 min(16, ceil(S / 64)) threads, a full GPU from kPairFillThreads.
double pairs_part_seconds(std::int64_t planes, double cross, int tiles, int workers, double points,
                          double pair_seconds, double task_seconds, int sources, int foreign,
                          bool gpu) {
  if (planes <= 0 || tiles <= 0) return 0;
  const std::int64_t thickest = (planes + tiles - 1) / tiles;
  const int rounds = (tiles + std::max(1, workers) - 1) / std::max(1, workers);
  const double targets = static_cast<double>(thickest) * cross;
  double fill = 1;
  if (gpu) {
    const double lanes = std::clamp(std::ceil(points / std::max(1, sources) / 64), 1.0, 16.0);
    fill = std::min(1.0, std::ceil(targets / 32) * 32 * lanes / kPairFillThreads);
  }
  return rounds * (targets * points * pair_seconds / fill + sources * task_seconds +
                   foreign * kSourceCopySeconds);
}

// The cuts of `extent` planes: [0, split) in `gpu_tiles` tiles, the rest in `cpu_tiles`.
Cuts pairs_cuts(std::int64_t extent, std::int64_t split, int gpu_tiles, int cpu_tiles) {
  Cuts along = split > 0 ? even_cuts(split, gpu_tiles) : Cuts{};
  if (split > 0 && split < extent) along.push_back(split);
  if (split < extent)
    for (std::int64_t k : even_cuts(extent - split, cpu_tiles)) along.push_back(split + k);
  return along;
}
}  // namespace

TileChoice Planner::pairs(const Extent3& extent, int dims) const {
  TileChoice out;
  int axis = 0;
  double points = 1;
  for (int a = 0; a < dims; ++a) {
    points *= static_cast<double>(extent[a]);
    if (extent[a] > 1) axis = a;
  }
  const std::int64_t e = extent[axis];
  const double cross = points / static_cast<double>(e);
  const int cpus = std::max(0, machine_.cpu_workers), gpus = std::max(1, machine_.cuda_workers);
  const auto cpu_tiles = [&](std::int64_t planes) {
    return static_cast<int>(std::min<std::int64_t>(std::max(1, cpus), planes));
  };
  const double task = machine_.task_seconds > 0 ? machine_.task_seconds : kTaskSeconds;
  const double fixed = machine_.split_seconds > 0 ? machine_.split_seconds : kSplitSeconds;
  const double tc = machine_.cpu_pair_seconds, tg = machine_.gpu_pair_seconds;
  const bool known = tc > 0 && tg > 0;
  // The GPU part of `planes` planes in `g` tiles beside `c` CPU tiles: a GPU's tile reads the
  // other GPUs' tiles and the CPU part's; a CPU tile the GPUs'.
  const auto gpu_seconds = [&](std::int64_t planes, int g, int c) {
    return pairs_part_seconds(planes, cross, g, gpus, points, tg, task, g + c, g - 1 + c, true);
  };
  // As many GPU tiles as give the shortest GPU part, at most one per CUDA worker: fewer where
  // a GPU's share of the targets would leave much of it idle (pairs_part_seconds); one per
  // CUDA worker without the GPU's pair model.
  const auto gpu_tiles = [&](std::int64_t planes) {
    const int most = static_cast<int>(std::min<std::int64_t>(gpus, planes));
    if (!(tg > 0)) return most;
    const int c = planes < e ? cpu_tiles(e - planes) : 0;
    int best = 1;
    for (int g = 2; g <= most; ++g)
      if (gpu_seconds(planes, g, c) < gpu_seconds(planes, best, c)) best = g;
    return best;
  };
  if (!places()) {
    out.cpu_tiles = cpu_tiles(e);
    out.cuts[axis] = even_cuts(e, out.cpu_tiles);
    out.summary = std::to_string(out.cpu_tiles) + " tiles of all-pairs work along " +
                  axis_name(axis) + ", one per CPU worker";
    return out;
  }
  // One step split at `planes` (the GPU part below): the longer part, plus the fixed cost.
  const auto step = [&](std::int64_t planes, double* gpu_part, double* cpu_part) {
    const int g = planes > 0 ? gpu_tiles(planes) : 0, c = planes < e ? cpu_tiles(e - planes) : 0;
    *gpu_part = gpu_seconds(planes, g, c);
    *cpu_part = pairs_part_seconds(e - planes, cross, c, cpus, points, tc, task, g + c, g, false);
    return std::max(*gpu_part, *cpu_part) + (planes > 0 && planes < e ? fixed : 0.0);
  };
  double gpu_part = 0, cpu_part = 0;
  // A class without its model has no prediction (NaN: "unknown" on the line), not its tasks'
  // fixed costs alone.
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  const double gpu_only = tg > 0 ? step(e, &gpu_part, &cpu_part) : unknown;
  const double cpu_only = cpus <= 0 ? -1 : tc > 0 ? step(0, &gpu_part, &cpu_part) : unknown;
  std::int64_t best_split = -1;
  double best_split_seconds = -1;
  for (std::int64_t planes = 1; planes < e && cpus > 0 && known; ++planes) {
    const double s = step(planes, &gpu_part, &cpu_part);
    if (best_split_seconds < 0 || s < best_split_seconds)
      best_split = planes, best_split_seconds = s;
  }
  std::string chosen;
  if (hand_set()) {
    out.split = std::llround(machine_.gpu_share * static_cast<double>(e));
    chosen = "hand-set GPU share " + std::to_string(machine_.gpu_share);
  } else if (cpus <= 0) {
    out.split = e;  // nothing to weigh
  } else if (!known) {
    out.split = e;
    chosen =
        "every tile on the CUDA workers (no calibrated all-pairs models of both CPU and CUDA "
        "workers to weigh a CPU part against; calibrate to let the planner consider one)";
  } else {
    out.split = e;
    double best = gpu_only;
    if (cpu_only >= 0 && cpu_only < best) out.split = 0, best = cpu_only;
    if (best_split_seconds >= 0 && best_split_seconds < best) {
      chosen = "the GPU part " + std::string(axis_name(axis)) + " < " + std::to_string(best_split) +
               " on the CUDA workers, the rest on the CPU workers";
      out.split = whole_classes(best_split, e, gpu_only, cpu_only, &chosen);
    }
  }
  out.step_seconds = step(out.split, &out.gpu_step_seconds, &out.cpu_step_seconds);
  out.split_axis = axis;
  out.gpu_tiles = out.split > 0 ? gpu_tiles(out.split) : 0;
  out.cpu_tiles = out.split < e ? cpu_tiles(e - out.split) : 0;
  out.cuts[axis] = pairs_cuts(e, out.split, out.gpu_tiles, out.cpu_tiles);
  if (chosen.empty())
    chosen = out.split == e ? "every tile on the CUDA workers" : "every tile on the CPU workers";
  if (out.split > 0 && out.split < e)
    chosen += ", in " + std::to_string(out.gpu_tiles) + " and " + std::to_string(out.cpu_tiles) +
              " tile(s)";
  out.summary = "all-pairs work: " + chosen + " (" +
                predicted_steps_text(gpu_only, cpu_only, axis, best_split, best_split_seconds) +
                (known ? ", modelled)" : ")");
  return out;
}

std::int64_t Planner::whole_classes(std::int64_t split, std::int64_t extent, double gpu_only,
                                    double cpu_only, std::string* why) const {
  if (machine_.ranks <= 1 || split <= 0 || split >= extent) return split;
  const bool gpu = cpu_only < 0 || gpu_only <= cpu_only;
  *why = std::string(gpu ? "every tile on the CUDA workers" : "every tile on the CPU workers") +
         " (on " + std::to_string(machine_.ranks) +
         " ranks whole classes only: a split at one plane would idle one rank's GPU and "
         "another's cores; one rank would have split: " +
         *why + ")";
  return gpu ? extent : 0;
}

DeviceClass Planner::mesh_class(int tile, int tiles) const {
  if (!places()) return DeviceClass::Any;
  if (!hand_set()) return DeviceClass::Cuda;
  return tile < std::lround(machine_.gpu_share * tiles) ? DeviceClass::Cuda : DeviceClass::Cpu;
}

int Planner::mesh_workers(std::string* why) const {
  const int all = std::max(0, machine_.cpu_workers) + std::max(0, machine_.cuda_workers);
  if (!places()) {
    *why = "";
    return all;
  }
  if (hand_set()) {
    *why = "; the first round(" + std::to_string(machine_.gpu_share) +
           " x tiles) on the CUDA workers (hand-set), the others on the CPU workers";
    return all;
  }
  *why = "; every tile on the CUDA workers (a mesh loop is memory-bound: a GPU's work)";
  return machine_.cuda_workers;
}

std::string Planner::rebalancing_off() const {
  if (!places()) return "this run has no CUDA workers";
  if (hand_set()) return "--gpu-fraction fixes the split";
  return "";
}

Rebalance Planner::rebalance(const Extent3& extent, int dims, int axis, std::int64_t split,
                             double gpu_seconds, double cpu_seconds, double threshold,
                             long steps_left, double move_seconds, int cpu_slabs) const {
  if (hand_set()) {
    Rebalance r;
    r.why = "no move: " + rebalancing_off();
    return r;
  }
  return plan_rebalance(extent, dims, axis, split, machine_, gpu_seconds, cpu_seconds, threshold,
                        steps_left, move_seconds, cpu_slabs);
}

double split_seconds_for_bus(double bus_latency_seconds) {
  if (!(bus_latency_seconds > 0)) return kSplitSeconds;
  constexpr double kTransfers = 4;  // a face each way, both ways
  return kSplitSeconds + kTransfers * (bus_latency_seconds - kAssumedBusLatencySeconds);
}

}  // namespace tessera::partition
