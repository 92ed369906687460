#include "core/field_impl.hpp"
#include "core/tile_tasks.hpp"

#include <cstdlib>
#include <cstring>

#include "core/context.hpp"

#include <algorithm>

namespace tessera::detail {

TileWindow tile_window(const TileGeometry& tile, const Extent3& lo, const Extent3& hi) {
  TileWindow w;
  for (int a = 0; a < 3; ++a) {
    w.origin[a] = std::max(tile.origin[a], lo[a]);
    w.extent[a] = std::min(tile.origin[a] + tile.extent[a], hi[a]) - w.origin[a];
  }
  return w;
}

void submit_tile_tasks(const TileTaskCall& call) {
  FieldStorage& first = call.reads.empty() ? *call.writes.front() : *call.reads.front();
  tasks::Engine& engine = *first.context().engine;
  std::vector<FieldStorage*> fields = call.reads;
  fields.insert(fields.end(), call.writes.begin(), call.writes.end());
  const int tiles = first.tiles();
  std::vector<tasks::Handle> read, write;
  std::vector<std::int64_t> frame(static_cast<std::size_t>(6 + 3 * call.args.frame_fields));
  for (int t = 0; t < tiles; ++t) {
    const TileWindow w = tile_window(first.geometry(t), call.lo, call.hi);
    if (w.empty()) continue;
    // The prototype block with this tile's frame written in; freed by the engine.
    auto* block = static_cast<unsigned char*>(std::malloc(call.args.size));
    std::memcpy(block, call.args.prototype, call.args.size);
    for (int a = 0; a < 3; ++a) {
      frame[a] = w.origin[a];
      frame[3 + a] = w.extent[a];
    }
    read.clear();
    write.clear();
    for (std::size_t k = 0; k < fields.size(); ++k) {
      FieldStorage& f = *fields[k];
      if (k < static_cast<std::size_t>(call.args.frame_fields)) {
        const TileGeometry g = f.geometry(t);
        // The window's first point: each field's own strides (halo widths may differ).
        frame[6 + 3 * k] = g.offset0 + (w.origin[0] - g.origin[0]) +
                           (w.origin[1] - g.origin[1]) * g.stride_y +
                           (w.origin[2] - g.origin[2]) * g.stride_z;
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
