// Reductions: one task per tile writes its tile's result; every rank then folds the tiles'
// results in tile order, so the answer is the same for any schedule, worker or rank count.
#include "core/context.hpp"
#include "core/field_impl.hpp"
#include "core/tile_tasks.hpp"
#include "tessera/reduce.hpp"

namespace tessera::detail {

double reduce_tiles(FieldStorage& s, ReduceOp op, const TaskKind& kind, const ArgBlock& args) {
  tasks::Engine& engine = *s.context().engine;
  TileTaskCall call{&engine.codelets().get("reduce", s.type_name(), kind), {&s}, {}, args};
  call.field = s.impl().tag_name;
  // Per tile: [tile result, one partial per row], in memory only on the tile's owner.
  std::vector<std::vector<double>> partial(static_cast<std::size_t>(s.tiles()));
  for (int t = 0; t < s.tiles(); ++t) {
    const TileGeometry geo = s.geometry(t);
    auto& p = partial[static_cast<std::size_t>(t)];
    const auto size = static_cast<std::size_t>(1 + geo.extent[1] * geo.extent[2]);
    if (s.mine(t)) p.assign(size, 0.0);
    call.extra.push_back(engine.data().register_vector(s.mine(t) ? p.data() : nullptr, size,
                                                       sizeof(double), s.owner(t)));
  }
  submit_tile_tasks(call);
  std::vector<double> tile_result(static_cast<std::size_t>(s.tiles()), 0.0);
  for (int t = 0; t < s.tiles(); ++t) {
    engine.data().unregister(call.extra[static_cast<std::size_t>(t)]);  // waits, brings it home
    if (s.mine(t)) tile_result[static_cast<std::size_t>(t)] = partial[static_cast<std::size_t>(t)][0];
  }
  // Every rank folds every tile's result in tile order: the same bits for any rank count.
  tile_result = s.from_owners(tile_result);
  double acc = 0;
  for (int t = 0; t < s.tiles(); ++t) {
    const double v = tile_result[static_cast<std::size_t>(t)];
    acc = t == 0 ? v : combine(op, acc, v);
  }
  return acc;
}

}  // namespace tessera::detail
