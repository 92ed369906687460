// What a field's storage holds beyond its public face (include/tessera/detail/field_storage.hpp):
// the tiling and distribution (partition/), the tiles' handles and memory and the halo buffers
// (tasks/). For the library's own files.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "core/grid/slab_pipeline.hpp"
#include "partition/plan.hpp"
#include "partition/tiling.hpp"
#include "tasks/codelets.hpp"
#include "tasks/data.hpp"
#include "tasks/submit.hpp"
#include "tessera/detail/field_storage.hpp"

namespace tessera::detail {

// One tile's part of a halo set: its copy plan, the face buffers it packs and those it reads.
struct HaloTile {
  partition::TileHaloPlan plan;
  std::vector<tasks::Handle> buffers;  // [k]: towards plan.pack_dirs[k], on the tile's owner
  std::vector<tasks::Handle> sources;  // the buffers (of its neighbours) its boundary task reads
  // Constant (Dirichlet) ghost regions, split off plan.ghosts: their values never change and
  // nothing else writes ghost layers, so they are written once, not every step.
  partition::RegionCopyList constants;
  // plan.ghosts and constants in one list: what a block fills where the tile's ghost planes
  // were left behind (slabs::leave_ghost_planes).
  partition::RegionCopyList all_ghosts;
  // One task per face whose boundary function gives some of the tile's ghost regions: the
  // face's function and the task's argument block (its functor and the regions), kept for
  // every exchange.
  struct FunctionTask {
    tasks::Codelet* codelet;  // the function's, resolved with the plan (a name clash throws first)
    std::vector<unsigned char> args;
  };
  std::vector<FunctionTask> functions;
  // A second set of face buffers, for tasks that read one field's faces and pack its new ones
  // in one call (temporal blocks): they pack into these, which then become `buffers` (and
  // their `sources`), so a tile never overwrites faces a neighbour of the same call has still
  // to read. Empty until such a call.
  std::vector<tasks::Handle> spare_buffers, spare_sources;
  // On a streamed grid (slabs::pack_ahead), how the tile's visit meets its neighbours on
  // the same GPU in a pass that visits them in one order: pass[0] in tile order, pass[1] in
  // reverse (a streamed grid's blocks alternate: TileTaskCall::reverse).
  struct Pass {
    // The face (its index in `buffers`) that only the tile's next visitor on the same GPU reads,
    // packed ahead by the tile's block from the values it starts from into `ahead_buffer` (its
    // GPU's, HaloSet::rings) with the regions of `ahead_pack` (into slot 1), the others after
    // the kernel (`after_packs`, into the other buffers in order); -1: none. `ahead_source`:
    // the index in `sources` of the face the tile visited before it packed ahead, read from
    // that tile's ahead_buffer instead; -1: none.
    int ahead = -1, ahead_source = -1;
    tasks::Handle ahead_buffer = nullptr;
    partition::RegionCopyList ahead_pack, after_packs;
    // And the face its visitor before it on the same GPU reads: that visit reads it straight
    // from the tile (`behind`: its index in `buffers`, left out of after_packs; -1: none), which
    // is on the GPU for its own visit next (`from_next`: the index in `sources` of that face,
    // read from the next visited tile's own tile with the regions of `ghosts_from_next` and
    // `all_ghosts_from_next`, plan.ghosts and all_ghosts so rewritten; -1: none).
    int behind = -1, from_next = -1;
    partition::RegionCopyList ghosts_from_next, all_ghosts_from_next;

    // Whether its packs are split (ahead_pack, after_packs).
    bool split() const { return ahead >= 0 || behind >= 0; }
    // `faces` (its packs' buffers, `buffers` or `spare_buffers`) without the two after_packs
    // leaves out: the face packed ahead and the one read from the tile (the later one first).
    std::vector<tasks::Handle> after_pack_buffers(const std::vector<tasks::Handle>& faces) const {
      std::vector<tasks::Handle> out = faces;
      for (int face : {std::max(ahead, behind), std::min(ahead, behind)})
        if (face >= 0) out.erase(out.begin() + face);
      return out;
    }
  };
  std::array<Pass, 2> pass;
};

// The halo buffers and copy plans for one (stencil radius, shape) used on a field, a record
// per tile. It owns the face buffers (both sets) and unregisters them when it goes, if not
// before (release_buffers: a field's handles released, or a retile). Tasks read the plans as
// their argument blocks, so a set goes only once its field's tiles are freed.
struct HaloSet {
  HaloSet() = default;
  HaloSet(const HaloSet&) = delete;
  HaloSet& operator=(const HaloSet&) = delete;
  ~HaloSet() { release_buffers(); }

  /// Unregisters the face buffers (scratch: their data is dropped); the plans stay.
  void release_buffers();
  /// For an exchange that does not pack ahead: where the last call packed faces ahead into the
  /// rings, not into the buffers (slabs::written_ahead), every face is packed again.
  void forget_packed_ahead() {
    if (!packed_ahead) return;
    packed = -1;
    packed_ahead = false;
  }

  HaloTile& tile(int t) { return tiles[static_cast<std::size_t>(t)]; }
  const HaloTile& tile(int t) const { return tiles[static_cast<std::size_t>(t)]; }

  std::vector<HaloTile> tiles;          // empty until the set is planned
  tasks::DataRegistry* data = nullptr;  // where the face buffers are registered
  long version = -1;                    // field version the ghost layers reflect
  long packed = -1;     // field version the face buffers hold (packed by halo-pack tasks or by
                        // the tasks that wrote the field)
  bool spares = false;  // the tiles' spare buffers are made
  // The tiles' passes planned (slabs::pack_ahead), and the last call packed faces
  // ahead, into the rings: the buffers towards the next visitors hold nothing current.
  bool ahead_planned = false, packed_ahead = false;
  // Its two passes (HaloTile::pass) leave out different faces of some tile's packs after a
  // visit: its blocks visit the tiles in order only (never planned so; a guard).
  bool one_way = false;
  // Per GPU (its CUDA worker's unit) two face buffers that its tiles pack ahead into in turn:
  // the one a visit reads its lower face from and the one it packs for the next. Always in use,
  // they stay in the GPU's memory (a face buffer per tile would leave it, written back to main
  // memory, and dropping them instead frees and allocates GPU memory every visit).
  std::map<int, std::array<tasks::Handle, 2>> rings;
  // Its constant ghost regions were written where the tiles' ghost planes stayed behind (on a
  // GPU: slabs::leave_ghost_planes): fill_constant_ghosts writes them again.
  bool constants_stale = false;
};

// One tile of a field: its data handle and, on its owner, the host memory under it. It frees
// both when it goes (the handle first: unregistering brings the data home into that memory),
// unless a retile's record for the same box took them over.
struct FieldTile {
  FieldTile() = default;
  FieldTile(const FieldTile&) = delete;
  FieldTile& operator=(const FieldTile&) = delete;
  ~FieldTile() { free(); }

  /// Unregisters the handle and frees the memory (what there is of them).
  void free();
  /// Takes over `from`'s handle and memory (not its rank edge: that depends on the tiling).
  void take(FieldTile& from);

  tasks::DataRegistry* data = nullptr;  // where `handle` is registered
  tasks::Handle handle = nullptr;
  void* memory = nullptr;  // host memory, null for other ranks' tiles
  std::size_t bytes = 0;   // the memory's size
  bool pinned = true;      // allocated pinned (not by a retile)
  bool rank_edge = false;  // a neighbour belongs to another rank
  // A streamed tile's copies (slabs::leave_ghost_planes); null for the others. Lives as
  // long as the handle, whose copies read it.
  std::unique_ptr<tasks::Travel> travel;
};

struct FieldStorage::Impl {
  FieldTile& tile(int t) { return tiles[static_cast<std::size_t>(t)]; }
  const FieldTile& tile(int t) const { return tiles[static_cast<std::size_t>(t)]; }
  // Tile t's values were dropped (`discarded`).
  bool dropped(int t) const {
    const auto k = static_cast<std::size_t>(t);
    return k < slabs.discarded.size() && slabs.discarded[k] != 0;
  }
  // Tile t's ghost planes stay in its GPU's memory while its planes travel (leave_ghost_planes).
  bool planes_left(int t) const { return slabs.ghost_planes_left && tile(t).travel != nullptr; }
  // The constant ghost regions of every planned halo set are written again before they are read.
  void mark_constants_stale() {
    for (auto& [key, set] : halos) set.constants_stale = !set.tiles.empty();
  }

  partition::Tiling tiling;
  partition::Distribution distribution;
  int rank = 0;  // this process's rank
  // Where each tile runs (partition::place_tiles, from the grid's split and stream depth).
  partition::Plan plan;
  // By (width, box). Before the tiles: destroyed after them, once the tiles' tasks, which read
  // the sets' plans, are done.
  std::map<std::pair<int, bool>, HaloSet> halos;
  std::vector<FieldTile> tiles;    // in tile order, which is the handles' registration order
  const char* tag_name = nullptr;  // the field's name, interned for task tags
  bool released = false;
  SlabState slabs;  // streamed (core/grid/slab_pipeline.hpp)
};

// How tile `tile` of `f`'s tasks are placed: its device class, and on a grid streamed through
// the GPUs' memory every task that uses a tile on a GPU is a visit of it, in order
// (tasks::Placement::Visit::Runs).
tasks::Placement placement_of(const FieldStorage& f, int tile, int priority = 0);
/// A task tag of tile `tile` of `f` carrying the field's name and the step of the stencil
/// application it serves (-1: none, a task made once).
tasks::TaskTag exchange_tag(const FieldStorage& f, int tile, long step);
/// Whether tile `tile`'s ghost layers come from another GPU or rank, whose faces its blocks
/// fetch as soon as they are packed (tasks::Placement::fetch_early).
bool faces_cross(const FieldStorage& f, int tile);
/// Whether tile `from`, a neighbour of `tile` (both this rank's GPU tiles), runs on another of
/// this rank's GPUs than `tile`: their faces cross between the GPUs.
bool on_another_gpu(const FieldStorage& f, int tile, int from);

// Calls work(0 .. n-1) on up to the machine's hardware threads, each index once; returns when
// all have run. For host-side copies between steps (a retile's new tiles), while StarPU's
// workers have nothing to run.
template <class Work>
void for_each_on_threads(std::size_t n, const Work& work) {
  std::atomic<std::size_t> next{0};
  auto run = [&] {
    for (std::size_t k = next++; k < n; k = next++) work(k);
  };
  const std::size_t threads =
      std::min<std::size_t>(n, std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < threads; ++k) pool.emplace_back(run);
  run();
  for (std::thread& t : pool) t.join();
}

}  // namespace tessera::detail
