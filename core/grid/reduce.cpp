// Reductions: each task of a loop with reductions writes its tile's results (a Sum's exact
// accumulator, a Min's or Max's value); every rank then gathers every tile's and merges them.
// Sums are exact until rounded once, so the answer is the same bits for any tiling, schedule,
// worker, backend or rank count.
#include "core/grid/reduce.hpp"

#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"

#include <cstring>
#include <limits>

namespace tessera::detail {

struct PendingReduction {
  FieldStorage* field;  // kept alive by the caller (Reduction holds the loop's fields)
  std::vector<ReduceOp> ops;
  // Per tile (tile_points.hpp): one ReduceSlot per reduction, then 2 doubles per reduction per
  // row of its window, in memory on the tile's owner only; no handle where the loop's box
  // misses the tile.
  std::vector<std::vector<double>> partial;
  std::vector<tasks::Handle> handles;
  bool finished = false;

  ~PendingReduction() {
    if (finished) return;
    try {
      tasks::DataRegistry& data = field->context().engine->data();
      for (tasks::Handle h : handles)
        if (h != nullptr) data.unregister(h);
    } catch (...) {
      // The Runtime ended first: StarPU and its handles are gone with it.
    }
  }
};

std::shared_ptr<PendingReduction> start_reduction(TileTaskCall& call, FieldStorage& s,
                                                  const std::vector<ReduceOp>& ops) {
  tasks::Engine& engine = *s.context().engine;
  auto p = std::make_shared<PendingReduction>();
  p->field = &s;
  p->ops = ops;
  const std::size_t slots = ops.size() * sizeof(ReduceSlot) / sizeof(double);
  p->partial.resize(static_cast<std::size_t>(s.tiles()));
  for (int t = 0; t < s.tiles(); ++t) {
    const TileWindow w = tile_window(s.geometry(t), call.lo, call.hi);
    tasks::Handle h = nullptr;
    if (!w.empty()) {
      auto& part = p->partial[static_cast<std::size_t>(t)];
      const auto size =
          slots + 2 * ops.size() * static_cast<std::size_t>(w.extent[1] * w.extent[2]);
      if (s.mine(t)) part.assign(size, 0.0);
      h = engine.data().register_vector(s.mine(t) ? part.data() : nullptr, size, sizeof(double),
                                        s.owner(t));
    }
    p->handles.push_back(h);
  }
  call.extra = p->handles;
  return p;
}

std::vector<double> finish_reduction(PendingReduction& p) {
  FieldStorage& s = *p.field;
  tasks::DataRegistry& data = s.context().engine->data();
  const std::size_t width = p.ops.size() * sizeof(ReduceSlot) / sizeof(double);
  std::vector<double> tile_result(width * static_cast<std::size_t>(s.tiles()), 0.0);
  for (int t = 0; t < s.tiles(); ++t) {
    const auto ut = static_cast<std::size_t>(t);
    if (p.handles[ut] == nullptr) continue;
    data.unregister(p.handles[ut]);  // waits, brings the results home
    if (s.mine(t))
      std::memcpy(&tile_result[ut * width], p.partial[ut].data(), width * sizeof(double));
  }
  p.finished = true;
  // In simulation no task computed a partial result: NaN says so, and fails every comparison
  // (a convergence test ends rather than loops on made-up values).
  if (s.context().simulated)
    return std::vector<double>(p.ops.size(), std::numeric_limits<double>::quiet_NaN());
  // Every rank merges every tile's results (bytes, as the tasks left them).
  tile_result = s.from_owners(tile_result, static_cast<int>(width));
  std::vector<double> out;
  for (std::size_t k = 0; k < p.ops.size(); ++k) {
    ExactSum total{};
    double value = 0.0;
    bool any = false;
    for (int t = 0; t < s.tiles(); ++t) {
      ReduceSlot r;
      std::memcpy(&r,
                  &tile_result[static_cast<std::size_t>(t) * width + k * sizeof r / sizeof(double)],
                  sizeof r);
      if (p.ops[k] == ReduceOp::Sum) {
        total.merge(r.sum);
      } else if (r.any != 0.0) {
        value = any ? extremum(p.ops[k], value, r.value) : r.value;
        any = true;
      }
    }
    out.push_back(p.ops[k] == ReduceOp::Sum   ? total.round()
                  : any                       ? value  // else no value: the identity
                  : p.ops[k] == ReduceOp::Min ? std::numeric_limits<double>::infinity()
                                              : -std::numeric_limits<double>::infinity());
  }
  return out;
}

}  // namespace tessera::detail
