// Online rebalancing of a CPU/GPU split (include/tessera/balance.hpp): the measurement from
// StarPU's per-worker busy times and the decision by partition/'s model.
#include "tessera/balance.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "core/grid/field_impl.hpp"
#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "partition/planner.hpp"
#include "partition/tiling.hpp"
#include "tasks/device_classes.hpp"
#include "tasks/engine.hpp"
#include "tasks/submit.hpp"

namespace tessera::detail {

namespace {
// A rebalance's state for the Runtime's life.
struct RetileRate {
  double seconds_per_byte = 0;  // a rebalance's host-side re-tiling (0: not measured)
};

// Seconds per byte of new tile a move's host-side re-tiling takes (allocating, clearing and
// filling the new tiles on the node's threads, FieldStorage::retile_in_place): measured once,
// by filling 64 MiB of fresh memory the same way (a move's own time is no rate: on a small
// grid it is mostly fixed costs); the mean over the ranks (the same decision on every rank).
// 0 in simulation: no memory is touched there, and the simulation charges no host time for
// it. Collective.
double retile_seconds_per_byte(Context& rt) {
  if (rt.simulated) return 0;
  double& rate = rt.state<RetileRate>().seconds_per_byte;
  if (rate <= 0) {
    constexpr std::size_t kBytes = std::size_t{64} << 20, kChunk = std::size_t{1} << 20;
    const std::vector<unsigned char> from(kBytes, 1);  // touched before the clock starts
    void* to = tasks::DataRegistry::allocate(kBytes, false);
    if (to != nullptr) {
      auto* out = static_cast<unsigned char*>(to);
      const auto start = std::chrono::steady_clock::now();
      for_each_on_threads(kBytes / kChunk, [&](std::size_t k) {
        std::memset(out + k * kChunk, 0, kChunk);
        std::memcpy(out + k * kChunk, from.data() + k * kChunk, kChunk);
      });
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      tasks::DataRegistry::deallocate(to, kBytes, false);
      rate = took.count() / static_cast<double>(kBytes);
    }
  }
  return comm::mean_over_ranks({rate}, false)[0];
}
}  // namespace

Rebalanced plan_rebalance(const GridSpec& grid, double gpu_seconds, double cpu_seconds,
                          double threshold, long steps_left, double bytes) {
  Context& rt = live_context("tessera::Balance");
  const partition::Planner planner = rt.planner.for_points(
      {static_cast<double>(grid.point_bytes), static_cast<double>(grid.field_bytes)});
  const int axis = grid.split_axis;
  const auto e = static_cast<double>(grid.extent[static_cast<std::size_t>(axis)]);
  // Where the rates put the split, then whether that pays: Field::retile keeps the GPU tiles
  // below both splits in place (on one rank), so only the planes between the two splits cross
  // the bus (counted as a round trip of their bytes: generous where the GPU part grows, and a
  // GPU tile cut by a shrinking split goes both ways whole).
  // The CPU part's slabs along the axis: the new lattice keeps as many (its step is that of
  // its thickest slab).
  const std::vector<std::int64_t> along = partition::tile_starts(
      grid.extent[static_cast<std::size_t>(axis)], grid.tile[static_cast<std::size_t>(axis)],
      grid.cuts[static_cast<std::size_t>(axis)]);
  const int slabs = static_cast<int>(
      std::count_if(along.begin(), along.end(), [&](std::int64_t s) { return s >= grid.split; }));
  partition::Rebalance r = planner.rebalance(grid.extent, grid.dims, axis, grid.split, gpu_seconds,
                                             cpu_seconds, threshold, 0, 0, slabs);
  if (r.tiles.split_axis == axis) {
    // Growing: the planes between the splits go up. Shrinking: every GPU tile the new split
    // cuts is made again, its planes down and back (from the start of the tile holding it).
    std::int64_t from = std::min(grid.split, r.tiles.split);
    if (r.tiles.split < grid.split)
      for (std::int64_t start : along)
        if (start <= r.tiles.split) from = start;
    const double planes = static_cast<double>(std::max(grid.split, r.tiles.split) - from);
    const double share = rt.ranks > 1 ? static_cast<double>(grid.split) / e : planes / e;
    // On the host, every tile from the lower split's on is made again (the CPU part is cut
    // anew), on several ranks every tile (Field::retile gathers the fields).
    const double recut_bytes = rt.ranks > 1 ? bytes : bytes * (e - static_cast<double>(from)) / e;
    const double move = tasks::bus_round_trip_seconds(static_cast<std::size_t>(bytes * share)) +
                        retile_seconds_per_byte(rt) * recut_bytes;
    r = planner.rebalance(grid.extent, grid.dims, axis, grid.split, gpu_seconds, cpu_seconds,
                          threshold, steps_left, move, slabs);
  }
  Rebalanced out;
  out.move = r.move;
  out.line = r.why;
  if (!r.move) return out;
  // The new lattice keeps every tile of the GPU part below both splits (Field::retile keeps
  // such tiles where they are: only the planes that change part cross the bus) and the cuts
  // across the split axis; the CPU part keeps as many slabs along it as it had (the split was
  // chosen for them).
  const std::int64_t moved = r.tiles.split;
  for (int a = 0; a < grid.dims; ++a) {
    const auto u = static_cast<std::size_t>(a);
    const std::vector<std::int64_t> starts =
        partition::tile_starts(grid.extent[u], grid.tile[u], grid.cuts[u]);
    if (a != axis) {
      out.cuts[u].assign(starts.begin() + 1, starts.end());
      continue;
    }
    for (std::size_t k = 1; k < starts.size() && starts[k] < std::min(grid.split, moved); ++k)
      out.cuts[u].push_back(starts[k]);
    if (grid.split < moved) out.cuts[u].push_back(grid.split);  // the old GPU part stays a tile
    if (moved < grid.extent[u]) {
      out.cuts[u].push_back(moved);
      const auto n = std::min<std::int64_t>(slabs, grid.extent[u] - moved);
      for (std::int64_t c : partition::even_cuts(grid.extent[u] - moved, static_cast<int>(n)))
        out.cuts[u].push_back(moved + c);
    }
  }
  out.split = moved;
  char b[96];
  std::snprintf(b, sizeof(b), "; the GPU part now %s < %lld", axis_name(axis),
                static_cast<long long>(moved));
  out.line += b;
  return out;
}

bool rebalancing_on() { return !live_context("tessera::Balance").planner.hand_set(); }

void mark_balanced_step(long step) {
  live_context("tessera::Balance").engine->submitter().mark_step(step);
}

std::array<double, 2> measured_part_seconds(const GridSpec& grid, const std::vector<long>& marks,
                                            long to) {
  Context& rt = live_context("tessera::Balance");
  std::int64_t gpu_tiles = 1, cpu_tiles = 1;
  for (int a = 0; a < grid.dims; ++a) {
    const auto u = static_cast<std::size_t>(a);
    const std::vector<std::int64_t> starts =
        partition::tile_starts(grid.extent[u], grid.tile[u], grid.cuts[u]);
    const auto n = static_cast<std::int64_t>(starts.size());
    if (a != grid.split_axis) {
      gpu_tiles *= n, cpu_tiles *= n;
      continue;
    }
    const std::int64_t below =
        std::count_if(starts.begin(), starts.end(), [&](std::int64_t s) { return s < grid.split; });
    gpu_tiles *= below, cpu_tiles *= n - below;
  }
  // Waits for the steps submitted: a drain of both parts, which costs next to nothing with the
  // split's tiles pinned to their workers (figures: docs/scheduling.md, docs/simulation.md).
  rt.engine->wait_all();
  const std::map<long, tasks::ClassBusy> busy = rt.engine->submitter().take_step_busy();
  // Each class's busy time shared by the workers that have a tile of its part (the scheduler
  // moves tiles between the workers of a class from step to step, so the busiest worker of a
  // window overstates the step), per step of each marked block.
  auto per_step = [&](double seconds, std::int64_t tiles, int workers, long steps) {
    const std::int64_t busy_workers = std::min<std::int64_t>(tiles, workers);
    return busy_workers > 0 ? seconds / static_cast<double>(busy_workers * std::max(1L, steps))
                            : 0.0;
  };
  std::vector<double> gpu, cpu;
  for (std::size_t k = 0; k < marks.size(); ++k) {
    const long steps = (k + 1 < marks.size() ? marks[k + 1] : to) - marks[k];
    const auto b = busy.find(marks[k]);
    if (b == busy.end() || steps <= 0) continue;
    gpu.push_back(per_step(b->second.cuda_seconds, gpu_tiles, rt.engine->cuda_workers(), steps));
    cpu.push_back(per_step(b->second.cpu_seconds, cpu_tiles, rt.engine->cpu_workers(), steps));
  }
  // The same figures on every rank (the same decision): the mean over the ranks.
  const std::vector<double> mean = comm::mean_over_ranks(
      {partition::recent_step_seconds(gpu), partition::recent_step_seconds(cpu)}, false);
  return {mean[0], mean[1]};
}

void note_balance(const std::string& line) { announce(live_context("tessera::Balance"), line); }

}  // namespace tessera::detail
