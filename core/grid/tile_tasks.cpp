#include "core/grid/field_impl.hpp"
#include "core/grid/tile_tasks.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <new>

#include "core/runtime/context.hpp"
#include "tasks/halo.hpp"
#include "tessera/detail/time_block.hpp"
#include "tessera/error.hpp"

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

namespace {
// The points of a tile's window widened by `margin` on every side, as a temporal block's step
// computes them (window_cuts: clipped at the grid's faces, wrapped along a periodic axis).
double widened_points(const GridSpec& grid, const TileWindow& w, std::int64_t margin) {
  double points = 1;
  for (std::size_t a = 0; a < 3; ++a) {
    const bool periodic = static_cast<int>(a) < grid.dims && grid.periodic[a];
    WindowCut cut[3];
    const int cuts = window_cuts(w.origin[a], w.extent[a], margin, grid.extent[a], periodic, cut);
    std::int64_t length = 0;
    for (int k = 0; k < cuts; ++k) length += cut[k].length;
    points *= static_cast<double>(length);
  }
  return points;
}

// The bytes a list of region copies reads and writes, of `element_size` bytes each.
double copied_bytes(const partition::RegionCopyList& list, std::size_t element_size) {
  double points = 0;
  for (int r = 0; r < list.count; ++r)
    points += static_cast<double>(list.region[r].dims[0]) *
              static_cast<double>(list.region[r].dims[1]) *
              static_cast<double>(list.region[r].dims[2]);
  return 2 * points * static_cast<double>(element_size);
}

// What one tile's exchange copies are made of: its call, the call's fields (reads, then
// writes), the tile's read tiles, its task's HaloWork, and whether the task is sized by the bytes
// it streams, a streamed visit's inputs are prefetched, and its faces fetched early.
struct TileCopies {
  const TileTaskCall& call;
  const std::vector<FieldStorage*>& fields;
  const std::vector<tasks::Handle>& read;
  tasks::HaloWork* work;
  int t;
  bool sized_by_bytes, prefetched, early;
  int wrap;  // on several GPUs, the first tile the tile's GPU visits; -1: none
};

// One tile's exchange copies (TileTaskCall::fills, packs): per field filled or packed, the
// regions copied between its tile and the face buffers, appended to the task's buffers
// (`handles`, `modes`) after the kernel's; where a streamed visit reads a face packed ahead or
// from the next slab, those buffers in their place, and what the visit prefetches (`place`).
void add_halo_copies(const TileCopies& tc, std::vector<tasks::Handle>& handles,
                     std::vector<Access>& modes, tasks::Placement& place) {
  const TileTaskCall& call = tc.call;
  const int t = tc.t;
  // The tiles visited just before and after it (where on its GPU), and the plan of that order.
  const int before = call.reverse ? t + 1 : t - 1, next = call.reverse ? t - 1 : t + 1;
  const std::size_t order = call.reverse ? 1 : 0;
  tasks::HaloWork* work = tc.work;
  // One list of region copies between a field's tile and `faces` (appended to the task's
  // buffers in `mode`).
  const auto copies = [&](tasks::HaloWork::Copies& c, const FieldStorage& f, int field,
                          const partition::RegionCopyList& list,
                          const std::vector<tasks::Handle>& faces, Access mode) {
    c.args = &list;
    c.empty = list.count == 0;
    c.tile = field;
    c.first = static_cast<int>(handles.size());
    c.count = static_cast<int>(faces.size());
    tasks::region_copies(f.element_size(), c.cpu, c.cuda);
    handles.insert(handles.end(), faces.begin(), faces.end());
    if (tc.sized_by_bytes) place.streamed_bytes += copied_bytes(list, f.element_size());
    modes.resize(handles.size(), mode);
  };
  std::vector<tasks::Handle> swapped;  // a fill's or pack's faces where one is a ring's
  const auto add = [&](const HaloCopies& h, bool fill, tasks::HaloWork::Copies& c) {
    const HaloTile& tile = h.set->tile(t);
    const HaloTile::Pass& pass = tile.pass[order];
    const FieldStorage& f = *tc.fields[static_cast<std::size_t>(h.field)];
    const std::vector<tasks::Handle>* faces = fill      ? &tile.sources
                                              : h.spare ? &tile.spare_buffers
                                                        : &tile.buffers;
    const partition::RegionCopyList* list = !fill         ? &tile.plan.packs
                                            : h.constants ? &tile.all_ghosts
                                                          : &tile.plan.ghosts;
    if (h.ahead && fill && (pass.ahead_source >= 0 || pass.from_next >= 0)) {
      swapped = *faces;
      if (pass.ahead_source >= 0)  // packed ahead by the tile visited before it
        swapped[static_cast<std::size_t>(pass.ahead_source)] =
            h.set->tile(before).pass[order].ahead_buffer;
      if (pass.from_next >= 0) {  // read from the tile visited after it, before its visit
        swapped[static_cast<std::size_t>(pass.from_next)] = f.impl().tile(next).handle;
        // It, the tile and the visit's read-only fields arrive while the visit before it
        // computes (the tile is there already where that visit read its face).
        if (tc.prefetched) {
          if (place.prefetch.empty()) place.prefetch = tc.read;
          place.prefetch.push_back(f.impl().tile(t).handle);
          place.prefetch.push_back(f.impl().tile(next).handle);
        }
        list = h.constants ? &pass.all_ghosts_from_next : &pass.ghosts_from_next;
      }
      faces = &swapped;
    }
    if (h.ahead && !fill && pass.split()) {
      // Its face towards the next visitor packed first, into its GPU's ring buffer (which
      // that visitor reads in this call), the one its visitor before read from its tile not
      // at all, the others after the kernel into the spares.
      if (pass.ahead >= 0)
        copies(work->ahead[work->aheads++], f, h.field, pass.ahead_pack, {pass.ahead_buffer},
               Access::Write);
      swapped = pass.after_pack_buffers(*faces);
      faces = &swapped;
      list = &pass.after_packs;
    }
    copies(c, f, h.field, *list, *faces, fill ? Access::Read : Access::Write);
    if (fill && tc.early)
      place.fetch_early.insert(place.fetch_early.end(), faces->begin(), faces->end());
    // A prefetched visit's faces from another GPU are copied to its GPU as soon as packed
    // (the neighbour's visit a pass before), not once the visit is ready, and the last slab a
    // GPU visits in a pass prefetches the first of the next (its next visit), as the others
    // prefetch the slab after them.
    if (fill && tc.prefetched && place.visit != tasks::Placement::Visit::None) {
      for (std::size_t k = 0; k < tile.sources.size(); ++k)
        if (on_another_gpu(f, t, tile.plan.sources[k].first))
          place.fetch_early.push_back(tile.sources[k]);
      if (pass.from_next < 0 && tc.wrap >= 0 && tc.wrap != t) {
        if (place.prefetch.empty()) place.prefetch = tc.read;
        place.prefetch.push_back(f.impl().tile(t).handle);
        place.prefetch.push_back(f.impl().tile(tc.wrap).handle);
      }
    }
    if (fill) modes[static_cast<std::size_t>(h.field)] = Access::ReadWrite;
  };
  for (const HaloCopies& h : call.fills) add(h, true, work->fill[work->fills++]);
  for (const HaloCopies& h : call.packs) add(h, false, work->pack[work->packs++]);
}

}  // namespace

void submit_tile_tasks(const TileTaskCall& call) {
  FieldStorage& first = call.reads.empty() ? *call.writes.front() : *call.reads.front();
  tasks::Engine& engine = *first.context().engine;
  std::vector<FieldStorage*> fields = call.reads;
  fields.insert(fields.end(), call.writes.begin(), call.writes.end());
  const int tiles = first.tiles();
  Recording& recording = first.context().recording;  // the report's tile map
  if (recording.maps_tiles()) recording.map_tiles(tasks::stencil_of(*call.codelet), first);
  std::vector<tasks::Handle> read, write, handles;
  std::vector<Access> modes;
  std::vector<std::int64_t> frame(static_cast<std::size_t>(6 + 3 * call.args.frame_fields));
  // A point's bytes in every field's tile, each once (the kernel's buffers), where the tasks'
  // model is sized by what they stream (a simulated time block's); 0: not computed.
  const bool sized_by_bytes =
      tasks::sized_by_streamed_bytes(*call.codelet) ||
      (call.with_halo != nullptr && tasks::sized_by_streamed_bytes(*call.with_halo));
  // A streamed visit's inputs from main memory arrive while the visit before it computes
  // (partition::Machine::visits_prefetched).
  const bool prefetched = first.context().planner.machine().visits_prefetched;
  // On several GPUs whose visits are prefetched, per GPU the first of its streamed tiles, which
  // its last visit prefetches; not where the blocks turn (its last visit is its next one).
  const bool several_gpus = prefetched && engine.cuda_workers() > 1 && !call.turns;
  std::map<int, int> first_of_gpu;
  for (int t = 0; t < tiles && several_gpus && first.grid().stream_depth > 0; ++t)
    if (first.device_class(t) == DeviceClass::Cuda)
      first_of_gpu.emplace(first.impl().plan.device(t).gpu, t);
  double point_bytes = 0;
  if (sized_by_bytes)
    for (const FieldStorage* f : fields) point_bytes += static_cast<double>(f->element_size());
  for (int k = 0; k < tiles; ++k) {
    const int t = call.reverse ? tiles - 1 - k : k;
    const TileWindow w = tile_window(first.geometry(t), call.lo, call.hi);
    if (w.empty()) continue;
    // The prototype block with this tile's frame written in, after the exchange copies'
    // header when the tasks do them; freed by the engine.
    tasks::HaloWork* work = nullptr;
    std::size_t bytes = 0;
    unsigned char* block =
        tasks::new_task_arg(call.args.prototype, call.args.size, call.with_halo != nullptr,
                            call.kernel_cpu, call.kernel_cuda, &work, &bytes);
    unsigned char* kernel_block = block + (bytes - call.args.size);
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
      (k < call.reads.size() ? read : write).push_back(f.impl().tile(t).handle);
    }
    std::memcpy(kernel_block + call.args.frame_offset, frame.data(),
                sizeof(std::int64_t) * frame.size());
    if (!call.extra.empty()) write.push_back(call.extra[static_cast<std::size_t>(t)]);
    tasks::TaskTag tag;
    tag.field = call.field;
    tag.tile = t;
    tag.step = call.step;
    tag.rank = first.owner(t);
    const double point_steps = static_cast<double>(w.extent[0]) * static_cast<double>(w.extent[1]) *
                               static_cast<double>(w.extent[2]) * static_cast<double>(call.steps);
    if (call.before_tile) call.before_tile(t);
    tasks::Placement place = placement_of(first, t, first.on_rank_edge(t) ? 1 : 0);
    place.work = point_steps;
    for (long step = 0; sized_by_bytes && step < call.steps; ++step)
      place.streamed_bytes +=
          point_bytes * widened_points(first.grid(), w, (call.steps - 1 - step) * call.radius);
    // A tile's next block waits for its own last one, and its neighbours' faces were packed
    // before that ended: where they come from another memory, they cross as soon as packed,
    // not once the block is ready (a streamed tile's faces go through main memory with its
    // visit).
    const bool early = !call.fills.empty() && place.visit == tasks::Placement::Visit::None &&
                       faces_cross(first, t);
    if (call.with_halo == nullptr) {
      engine.submitter().submit(*call.codelet, read, write, block, call.args.size, true, tag,
                                place);
      continue;
    }
    // The kernel's buffers, then the face buffers of each fill and each pack.
    handles = read;
    handles.insert(handles.end(), write.begin(), write.end());
    modes.assign(call.modes.begin(), call.modes.end());
    const int unit = first.impl().plan.device(t).gpu;
    const auto found = first_of_gpu.find(unit);
    const int wrap = several_gpus && found != first_of_gpu.end() ? found->second : -1;
    add_halo_copies({call, fields, read, work, t, sized_by_bytes, prefetched, early, wrap}, handles,
                    modes, place);
    engine.submitter().submit_with_modes(*call.with_halo, handles, modes, block, bytes, true, tag,
                                         place);
  }
}

std::vector<HaloSet*> add_packs(TileTaskCall& call, const std::vector<FieldStorage*>& written,
                                std::size_t first, bool allowed) {
  std::vector<HaloSet*> packed(written.size(), nullptr);
  if (!allowed || written.size() > tasks::HaloWork::kMax) return packed;
  for (std::size_t j = 0; j < written.size(); ++j)
    if ((packed[j] = written[j]->pack_target()) != nullptr)
      call.packs.push_back({static_cast<int>(first + j), packed[j]});
  return packed;
}

void add_halo_work(TileTaskCall& call, const std::string& name, const std::string& types,
                   const TaskKind& kind) {
  if (call.fills.empty() && call.packs.empty()) return;
  if (call.fills.size() > tasks::HaloWork::kMax || call.packs.size() > tasks::HaloWork::kMax)
    throw Error("internal: more than " + std::to_string(tasks::HaloWork::kMax) +
                " fields filled or packed by one task");
  const FieldStorage& first = call.reads.empty() ? *call.writes.front() : *call.reads.front();
  call.with_halo =
      &first.context().engine->codelets().get(name, types, tasks::with_halo_work(kind));
  call.kernel_cpu = kind.cpu;
  call.kernel_cuda = kind.cuda;
  call.modes.assign(call.reads.size(), kind.first);
  // The written tiles, and the extra buffer (e.g. partial results) with them.
  call.modes.resize(call.reads.size() + call.writes.size() + (call.extra.empty() ? 0 : 1),
                    kind.rest);
}

}  // namespace tessera::detail
