// Online rebalancing of a CPU/GPU split (include/tessera/balance.hpp): the measurement from
// StarPU's per-worker busy times and the decision by partition/'s model.
#include "tessera/balance.hpp"

#include <cmath>
#include <iostream>

#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "partition/autotile.hpp"
#include "tasks/device_classes.hpp"

namespace tessera::detail {

Rebalanced plan_rebalance(const GridSpec& grid, double gpu_seconds, double cpu_seconds,
                          double threshold, long steps_left, double bytes) {
  Context& rt = live_context("tessera::Balance");
  partition::Machine m;
  m.cpu_workers = static_cast<int>(comm::sum(rt.engine->cpu_workers()));
  m.cuda_workers = static_cast<int>(comm::sum(rt.engine->cuda_workers()));
  const int axis = grid.split_axis;
  const double share =
      static_cast<double>(grid.split) / static_cast<double>(grid.extent[static_cast<std::size_t>(axis)]);
  // Field::retile takes the GPU part to main memory and the new GPU part back.
  const double move = tasks::bus_round_trip_seconds(static_cast<std::size_t>(bytes * share));
  const partition::Rebalance r =
      partition::plan_rebalance(grid.extent, grid.dims, axis, grid.split, m, gpu_seconds,
                                cpu_seconds, threshold, steps_left, move);
  Rebalanced out;
  out.move = r.move;
  out.line = r.why;
  if (r.move) {
    out.cuts = r.tiles.cuts;
    out.split = r.tiles.split;
    out.line += "; now " + r.tiles.summary;
  }
  return out;
}

std::array<double, 2> measured_part_seconds(long steps) {
  Context& rt = live_context("tessera::Balance");
  rt.engine->wait_all();
  const tasks::ClassBusy busy = tasks::take_class_busy();
  // The same figures on every rank (the same decision): the mean over the ranks, in ns.
  const double ranks = static_cast<double>(rt.ranks);
  const double per = 1e-9 / ranks / static_cast<double>(std::max(1L, steps));
  return {static_cast<double>(comm::sum(std::llround(busy.cuda_seconds * 1e9))) * per,
          static_cast<double>(comm::sum(std::llround(busy.cpu_seconds * 1e9))) * per};
}

void note_balance(const std::string& line) {
  Context& rt = live_context("tessera::Balance");
  rt.configuration += "\n" + line;
  if (!rt.options.quiet && rt.rank == 0) std::cout << line << std::endl;
}

}  // namespace tessera::detail
