// Online rebalancing of a CPU/GPU split (include/tessera/balance.hpp): the measurement from
// StarPU's per-worker busy times and the decision by partition/'s model.
#include "tessera/balance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "partition/autotile.hpp"
#include "partition/tiling.hpp"
#include "tasks/device_classes.hpp"

namespace tessera::detail {

Rebalanced plan_rebalance(const GridSpec& grid, double gpu_seconds, double cpu_seconds,
                          double threshold, long steps_left, double bytes) {
  Context& rt = live_context("tessera::Balance");
  partition::Machine m;
  m.cpu_workers = static_cast<int>(comm::sum(rt.engine->cpu_workers()));
  m.cuda_workers = static_cast<int>(comm::sum(rt.engine->cuda_workers()));
  const int axis = grid.split_axis;
  const auto e = static_cast<double>(grid.extent[static_cast<std::size_t>(axis)]);
  // Where the rates put the split, then whether that pays: Field::retile keeps the GPU tiles
  // below both splits in place (on one rank), so only the planes between the two splits cross
  // the bus (counted as a round trip of their bytes: generous where the GPU part grows, and a
  // GPU tile cut by a shrinking split goes both ways whole).
  partition::Rebalance r = partition::plan_rebalance(grid.extent, grid.dims, axis, grid.split, m,
                                                     gpu_seconds, cpu_seconds, threshold, 0, 0);
  if (r.tiles.split_axis == axis) {
    // Growing: the planes between the splits go up. Shrinking: every GPU tile the new split
    // cuts is made again, its planes down and back (from the start of the tile holding it).
    const auto u = static_cast<std::size_t>(axis);
    std::int64_t from = std::min(grid.split, r.tiles.split);
    if (r.tiles.split < grid.split)
      for (std::int64_t start : partition::tile_starts(grid.extent[u], grid.tile[u], grid.cuts[u]))
        if (start <= r.tiles.split) from = start;
    const double planes = static_cast<double>(std::max(grid.split, r.tiles.split) - from);
    const double share = rt.ranks > 1 ? static_cast<double>(grid.split) / e : planes / e;
    const double move = tasks::bus_round_trip_seconds(static_cast<std::size_t>(bytes * share));
    r = partition::plan_rebalance(grid.extent, grid.dims, axis, grid.split, m, gpu_seconds,
                                  cpu_seconds, threshold, steps_left, move);
  }
  Rebalanced out;
  out.move = r.move;
  out.line = r.why;
  if (!r.move) return out;
  // The new lattice keeps every tile of the GPU part below both splits (Field::retile keeps
  // such tiles where they are: only the planes that change part cross the bus) and the cuts
  // across the split axis; the CPU part gets as many slabs along it as the model gives it.
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
      int slabs = 1;
      for (std::int64_t c : r.tiles.cuts[u]) slabs += c > moved ? 1 : 0;
      for (std::int64_t c : partition::even_cuts(grid.extent[u] - moved, slabs))
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

std::array<double, 2> measured_part_seconds(const GridSpec& grid, long steps) {
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
  // Waits for the steps submitted (a drain of both parts: with the split's tiles pinned to their
  // workers, nothing measurable in simulation at every 10 steps, docs/simulation.md; a wait for
  // only the older steps, starpu_task_wait_for_n_submitted, gave windows too uneven to compare).
  rt.engine->wait_all();
  const tasks::ClassBusy busy = tasks::take_class_busy();
  // Each class's busy time shared by the workers that have a tile of its part (the scheduler
  // moves tiles between the workers of a class from step to step, so the busiest worker of a
  // window overstates the step), per step of the window.
  auto step = [&](double seconds, std::int64_t tiles, int workers) {
    const std::int64_t busy_workers = std::min<std::int64_t>(tiles, workers);
    return busy_workers > 0 ? seconds / static_cast<double>(busy_workers * std::max(1L, steps))
                            : 0.0;
  };
  const double gpu = step(busy.cuda_seconds, gpu_tiles, rt.engine->cuda_workers());
  const double cpu = step(busy.cpu_seconds, cpu_tiles, rt.engine->cpu_workers());
  // The same figures on every rank (the same decision): the mean over the ranks, in ns.
  const double per = 1e-9 / static_cast<double>(rt.ranks);
  return {static_cast<double>(comm::sum(std::llround(gpu * 1e9))) * per,
          static_cast<double>(comm::sum(std::llround(cpu * 1e9))) * per};
}

void note_balance(const std::string& line) { announce(live_context("tessera::Balance"), line); }

}  // namespace tessera::detail
