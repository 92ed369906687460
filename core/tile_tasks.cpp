#include "core/field_impl.hpp"
#include "core/tile_tasks.hpp"

#include <cstdlib>
#include <cstring>

#include "core/context.hpp"

namespace tessera::detail {

void submit_tile_tasks(const TileTaskCall& call) {
  FieldStorage& first = *call.reads.front();
  tasks::Engine& engine = *first.context().engine;
  std::vector<FieldStorage*> fields = call.reads;
  fields.insert(fields.end(), call.writes.begin(), call.writes.end());
  const int tiles = first.tiles();
  std::vector<tasks::Handle> read, write;
  std::vector<std::int64_t> frame(static_cast<std::size_t>(6 + 3 * call.args.frame_fields));
  for (int t = 0; t < tiles; ++t) {
    // The prototype block with this tile's frame written in; freed by the engine.
    auto* block = static_cast<unsigned char*>(std::malloc(call.args.size));
    std::memcpy(block, call.args.prototype, call.args.size);
    const TileGeometry g0 = first.geometry(t);
    for (int a = 0; a < 3; ++a) {
      frame[a] = g0.origin[a];
      frame[3 + a] = g0.extent[a];
    }
    read.clear();
    write.clear();
    for (std::size_t k = 0; k < fields.size(); ++k) {
      FieldStorage& f = *fields[k];
      if (k < static_cast<std::size_t>(call.args.frame_fields)) {
        const TileGeometry g = f.geometry(t);
        frame[6 + 3 * k] = g.offset0;
        frame[7 + 3 * k] = g.stride_y;
        frame[8 + 3 * k] = g.stride_z;
      }
      (k < call.reads.size() ? read : write).push_back(f.impl().handles[static_cast<std::size_t>(t)]);
    }
    std::memcpy(block + call.args.frame_offset, frame.data(), sizeof(std::int64_t) * frame.size());
    if (!call.extra.empty()) write.push_back(call.extra[static_cast<std::size_t>(t)]);
    tasks::TaskTag tag;
    tag.field = call.field;
    tag.tile = t;
    tag.step = call.step;
    tag.rank = first.owner(t);
    engine.submitter().submit(*call.codelet, read, write, block, call.args.size, true, tag,
                              {tiles, first.on_rank_edge(t) ? 1 : 0});
  }
}

}  // namespace tessera::detail
