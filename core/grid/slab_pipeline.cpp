#include "core/grid/slab_pipeline.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/grid/field_impl.hpp"
#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "tasks/halo.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::slabs {

namespace {

// A task that writes `regions` of tile `tile` of `f` (its constant ghosts) on the GPU of the visit
// it opens: write-only where the tile's values were dropped (`discarded`), which makes them
// StarPU's again without reading them; else read-write (its points stay).
void submit_ghost_fill(FieldStorage& f, const std::string& stencil, int tile, bool discarded,
                       partition::RegionCopyList& regions) {
  tasks::Engine& engine = *f.context().engine;
  tasks::Codelet& fill =
      engine.codelets().get(stencil, f.type_name(),
                            discarded ? tasks::scratch_ghosts_kind(f.element_size())
                                      : tasks::constant_ghosts_kind(f.element_size()));
  tasks::Placement opens = placement_of(f, tile);
  opens.visit = tasks::Placement::Visit::Opens;
  engine.submitter().submit(fill, {f.impl().tile(tile).handle}, {}, &regions, sizeof(regions),
                            false, exchange_tag(f, tile, -1), opens);
}

// Makes dropped tile `tile` of `f` StarPU's again before a task writes its points: a write-only
// task writing `regions` (a halo set's constant ghosts; may be none), then the constant ghosts of
// every other planned halo set. The tile's new buffer holds none of them (on a GPU, or on a
// stand-in of its own memory, a fresh allocation), and the tasks that write the tile pack its
// faces with their ghost columns, and the next block of a wider set reads them: before, heat3d
// streamed, stepped and streamed again lost its bits along every slab boundary.
void write_dropped_tile(FieldStorage& f, const std::string& stencil, int tile,
                        partition::RegionCopyList& regions) {
  submit_ghost_fill(f, stencil, tile, true, regions);
  for (auto& [key, set] : f.impl().halos) {
    if (set.tiles.empty()) continue;
    partition::RegionCopyList& constants = set.tile(tile).constants;
    if (&constants != &regions && constants.count > 0)
      submit_ghost_fill(f, stencil, tile, false, constants);
  }
}

// `list` with the regions that read slot `slot` read instead straight from the tile that packs
// that face with `pack` (partition::read_from_tile), whose handle then takes the slot.
partition::RegionCopyList read_from_next(const partition::RegionCopyList& list, int slot,
                                         const partition::RegionCopy& pack) {
  partition::RegionCopyList out = list;
  for (int r = 0; r < out.count; ++r)
    if (out.region[r].src_slot == slot)
      out.region[r] = partition::read_from_tile(list.region[r], pack);
  return out;
}

// A tile's packs split for a streamed block's pass: the face packed ahead into slot 1 of
// ahead_pack, the face its visitor before it reads from the tile left out, the others into
// after_packs, their slots renumbered over the faces left.
void split_packs(const partition::RegionCopyList& packs, HaloTile::Pass& pass) {
  for (int r = 0; r < packs.count; ++r) {
    partition::RegionCopy region = packs.region[r];
    const int face = region.dst_slot - 1;
    if (face == pass.behind) continue;
    partition::RegionCopyList& to = face == pass.ahead ? pass.ahead_pack : pass.after_packs;
    region.dst_slot = face == pass.ahead
                          ? 1
                          : region.dst_slot - (pass.ahead >= 0 && face > pass.ahead) -
                                (pass.behind >= 0 && face > pass.behind);
    to.region[to.count++] = region;
  }
}

// Plans, for a pass over the tiles in order (`reverse`: in reverse), which face of each of this
// rank's GPU tiles its next visitor on the same GPU reads packed ahead, into one of the GPU's two
// rings, and which face a visit reads straight from the next tile. `sizes`: per GPU, the largest
// face packed ahead there, raised to this pass's.
void plan_pass(const FieldStorage& f, HaloSet& set, bool reverse,
               std::map<int, std::int64_t>& sizes) {
  const std::size_t p = reverse ? 1 : 0;
  // Who reads each face buffer: (tile, direction) -> readers.
  std::map<std::pair<int, partition::Dir3>, int> readers;
  for (const HaloTile& tile : set.tiles)
    for (const auto& source : tile.plan.sources) ++readers[source];
  // The face of tile `from` that tile `to` alone reads: its index in from's buffers (`packed`)
  // and in to's sources (`read`).
  const auto only_reader = [&](int from, int to, int& packed, int& read) {
    const HaloTile& tile = set.tile(from);
    const auto& reads = set.tile(to).plan.sources;
    for (std::size_t k = 0; k < tile.plan.pack_dirs.size() && packed < 0; ++k) {
      const std::pair<int, partition::Dir3> face{from, tile.plan.pack_dirs[k]};
      const auto found = std::find(reads.begin(), reads.end(), face);
      if (readers[face] != 1 || found == reads.end()) continue;
      packed = static_cast<int>(k);
      read = static_cast<int>(found - reads.begin());
    }
  };
  for (int t = 0; t + 1 < f.tiles(); ++t) {
    // Tile `a` is visited just before tile `b`, on the same GPU.
    const int a = reverse ? t + 1 : t, b = reverse ? t : t + 1;
    const partition::Plan& plan = f.impl().plan;
    if (!f.mine(t) || !f.mine(t + 1) || f.device_class(t) != DeviceClass::Cuda ||
        plan.device(t) != plan.device(t + 1))
      continue;
    HaloTile::Pass& first = set.tile(a).pass[p];
    HaloTile::Pass& then = set.tile(b).pass[p];
    only_reader(a, b, first.ahead, then.ahead_source);
    only_reader(b, a, then.behind, first.from_next);
    if (first.from_next >= 0) {
      const partition::RegionCopyList& packs = set.tile(b).plan.packs;
      for (int r = 0; r < packs.count; ++r)
        if (packs.region[r].dst_slot == then.behind + 1) {  // a face is one region
          const HaloTile& tile = set.tile(a);
          first.ghosts_from_next =
              read_from_next(tile.plan.ghosts, first.from_next + 1, packs.region[r]);
          first.all_ghosts_from_next =
              read_from_next(tile.all_ghosts, first.from_next + 1, packs.region[r]);
        }
    }
    if (first.ahead < 0) continue;
    std::int64_t& size = sizes[f.impl().plan.device(t).gpu];
    size = std::max(size, set.tile(a).plan.pack_sizes[static_cast<std::size_t>(first.ahead)]);
  }
  for (HaloTile& tile : set.tiles)
    if (tile.pass[p].split()) split_packs(tile.plan.packs, tile.pass[p]);
}

}  // namespace

void start_scratch(FieldStorage& f) {
  if (f.impl().slabs.discarded.empty()) after_visit(f, false);
}

void after_visit(FieldStorage& f, bool keep, int turn) {
  tasks::DataRegistry& data = f.context().engine->data();
  // A kept tile's copy home is queued only once its visit has run, behind what was submitted
  // meanwhile (DataRegistry::after_visit): where that holds this drop (the field became the next
  // advance's scratch), the copy would find no values and StarPU abort ("not initialized"). The
  // first drop after kept visits waits for them; every rank gets here at the same point.
  if (keep) {
    f.impl().slabs.kept_since_wait = true;
  } else if (f.impl().slabs.kept_since_wait) {
    f.context().engine->wait_all();
    f.impl().slabs.kept_since_wait = false;
  }
  f.impl().slabs.discarded.resize(static_cast<std::size_t>(f.tiles()), 0);
  std::map<int, int> last_visited;  // per GPU (its unit), where the blocks turn
  for (int t = 0; t < f.tiles() && turn != 0; ++t)
    if (f.mine(t) && f.device_class(t) == DeviceClass::Cuda) {
      const auto [at, added] = last_visited.emplace(f.impl().plan.device(t).gpu, t);
      if (!added && turn > 0) at->second = t;
    }
  for (int t = 0; t < f.tiles(); ++t)
    if (f.mine(t) && f.device_class(t) == DeviceClass::Cuda) {
      const auto last = last_visited.find(f.impl().plan.device(t).gpu);
      if (last != last_visited.end() && last->second == t) continue;
      data.after_visit(f.impl().tile(t).handle, keep);
      if (!keep) f.impl().slabs.discarded[static_cast<std::size_t>(t)] = 1;
    }
}

void leave_ghost_planes(FieldStorage& f, bool leave) {
  if (leave == f.impl().slabs.ghost_planes_left) return;
  if (leave) {
    bool functions = false;  // their ghosts are written by tasks of their own (exchange())
    for (const auto& face : f.faces().face)
      for (const auto& side : face) functions = functions || side.kind == Boundary::Kind::Function;
    const bool travels = std::any_of(f.impl().tiles.begin(), f.impl().tiles.end(),
                                     [](const FieldTile& t) { return t.travel != nullptr; });
    if (f.grid().stream_depth == 0 || !travels || !f.context().options.fused_exchange || functions)
      return;
    // Tasks submitted before may read the ghost planes (a stencil after exchange()): every
    // rank reaches this call at the same point, once a field (wait_all is collective).
    f.context().engine->wait_all();
  }
  f.impl().slabs.ghost_planes_left = leave;
  if (!leave) f.impl().mark_constants_stale();  // those the visits wrote stayed on the GPUs
  for (FieldTile& tile : f.impl().tiles)
    if (tile.travel != nullptr) tile.travel->planes_only.store(leave, std::memory_order_relaxed);
}

bool ghost_planes_left(const FieldStorage& f) { return f.impl().slabs.ghost_planes_left; }

void refill_ghosts(FieldStorage& f, const std::string& stencil, int width, bool box, int tile,
                   bool left_too) {
  const auto t = static_cast<std::size_t>(tile);
  const bool discarded = f.impl().dropped(tile);
  const bool left = left_too && f.impl().planes_left(tile);
  if (!discarded && !left) return;
  // Plans the set's constant regions, once, writing those of the tiles not discarded: this one
  // is still marked, so that a read-write task does not find its dropped values.
  f.fill_constant_ghosts(stencil, width, box);
  auto& constants = f.impl().halos[{width, box}].tile(tile).constants;
  if (discarded) {
    f.impl().slabs.discarded[t] = 0;
    write_dropped_tile(f, stencil, tile, constants);
  } else if (constants.count > 0) {
    submit_ghost_fill(f, stencil, tile, false, constants);
  }
}

void restore_dropped(FieldStorage& f, const std::string& task, int tile) {
  if (!f.impl().dropped(tile)) return;
  f.impl().slabs.discarded[static_cast<std::size_t>(tile)] = 0;
  static partition::RegionCopyList no_regions{};  // read by the tasks (not copied): never freed
  write_dropped_tile(f, task, tile, no_regions);
}

// Plans both passes of a streamed set (plan_pass), once a set, and gives each GPU two ring
// buffers, each as large as any face packed ahead into it: its tiles take them in turn by tile
// parity, in either order (a visit reads the one its visitor before packed and packs into the
// other). Both passes leave out of the packs after a visit the same faces (those between two
// tiles of a GPU), so the faces the first exchange packs (submit_packs) serve either.
void plan_ahead(const FieldStorage& f, HaloSet& set) {
  if (set.ahead_planned) return;
  set.ahead_planned = true;
  std::map<int, std::int64_t> sizes;
  plan_pass(f, set, false, sizes);
  plan_pass(f, set, true, sizes);
  for (const HaloTile& tile : set.tiles) {
    const auto left_out = [](const HaloTile::Pass& p) { return std::minmax(p.ahead, p.behind); };
    if (left_out(tile.pass[0]) != left_out(tile.pass[1])) set.one_way = true;
  }
  for (const auto& [unit, size] : sizes)
    for (tasks::Handle& h : set.rings[unit])
      h = set.data->register_local_vector(static_cast<std::size_t>(size), f.element_size());
  for (int t = 0; t < f.tiles(); ++t)
    for (HaloTile::Pass& pass : set.tile(t).pass)
      if (pass.ahead >= 0)
        pass.ahead_buffer = set.rings[f.impl().plan.device(t).gpu][static_cast<std::size_t>(t % 2)];
}

HaloSet* pack_ahead(FieldStorage& f, HaloSet* set) {
  if (set == nullptr || f.grid().stream_depth == 0) return nullptr;
  plan_ahead(f, *set);
  for (const HaloTile& tile : set->tiles)
    if (tile.pass[0].ahead >= 0 || tile.pass[0].from_next >= 0) return set;
  return nullptr;
}

void written_ahead(HaloSet* set) {
  if (set != nullptr) set->packed_ahead = true;
}

// On a streamed grid whose visits are prefetched, the faces between two of this rank's GPUs that
// the call just submitted read: their values are dead (the next call packs its faces into them),
// and each is held in the memory of both GPUs and in main memory, where StarPU keeps it until it
// needs the room, evicting the slabs the next visits need first. Dropped, their memory is free
// for the slabs again.
void drop_faces_between_gpus(const FieldStorage& f, const HaloSet& set) {
  tasks::DataRegistry& data = f.context().engine->data();
  for (int t = 0; t < f.tiles(); ++t) {
    const HaloTile& tile = set.tile(t);
    if (!f.mine(t) || f.device_class(t) != DeviceClass::Cuda) continue;
    for (std::size_t k = 0; k < tile.sources.size(); ++k)
      if (on_another_gpu(f, t, tile.plan.sources[k].first))
        data.after_visit(tile.sources[k], false);
  }
}

void check_holds_values(const FieldStorage& f, const char* use) {
  if (f.grid().stream_depth == 0) return;
  const bool dropped = std::find(f.impl().slabs.discarded.begin(), f.impl().slabs.discarded.end(),
                                 1) != f.impl().slabs.discarded.end();
  if (comm::sum(dropped ? 1 : 0) > 0) throw Error(no_values(use, f.name()));
}

std::string no_values(const char* use, const std::string& field) {
  return std::string(use) + " of field '" + field +
         "', which holds no values on the GPUs: a time block's scratch (advance()'s next) on a "
         "grid streamed through their memory is dropped after each visit, not written back; "
         "read u, advance()'s result (for the step before the last: advance steps - 1, copy u, "
         "advance 1), or write this field first (fill, apply's out)";
}

}  // namespace tessera::detail::slabs
