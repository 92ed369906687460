// The per-tile submission loop: the one function through which stencils, reductions (and
// loops) put their tasks on tiles.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tasks/codelets.hpp"
#include "tasks/data.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/detail/task.hpp"

namespace tessera::detail {

struct HaloSet;

/// A field whose exchange copies the call's tasks do themselves (tasks::HaloWork): `field`
/// indexes the call's reads, then its writes.
struct HaloCopies {
  int field;
  const HaloSet* set;
  bool spare = false;      // packs into the set's spare face buffers (FieldStorage::pack_spare)
  bool constants = false;  // fills the constant ghost regions too (HaloTile::all_ghosts)
  // Of a set whose tiles pack a face ahead (slabs::pack_ahead): a fill reads the face of
  // the tile visited before from its ring buffer (HaloTile::Pass::ahead_source), a pack into the
  // spares packs that face first, into the ring (HaloTile::Pass::ahead_buffer), and the others
  // after.
  bool ahead = false;
};

/// What every task of one call shares.
struct TileTaskCall {
  tasks::Codelet* codelet;
  std::vector<FieldStorage*> reads;   // their tiles are the first buffers
  std::vector<FieldStorage*> writes;  // then these tiles
  ArgBlock args;                      // frame fields: reads, then writes
  long step = -1;                     // the step in the tasks' tags; -1: none
  long steps = 1;                     // the steps each task advances (a temporal block's)
  int radius = 0;  // a temporal block's: each step's window is widened by it per step to come
  const char* field = nullptr;  // the field named in the tags (interned); null: none
  /// Per tile, one more written buffer after the fields' tiles (e.g. a reduction's partial
  /// results); empty: none.
  std::vector<tasks::Handle> extra;
  /// The points visited, [lo, hi) in global indices: tiles outside get no task, the others a
  /// frame clipped to it. Default: every point.
  Extent3 lo{0, 0, 0};
  Extent3 hi{INT64_MAX, INT64_MAX, INT64_MAX};
  /// Read fields whose ghost layers each task fills from the face buffers before its kernel
  /// (the field's tile then read and written), and written fields whose face buffers it packs
  /// after (FieldStorage::exchange_in_tasks, pack_target). With either, the tasks are of
  /// `with_halo` (the kind's "+halo" codelet; set by add_halo_work).
  std::vector<HaloCopies> fills, packs;
  tasks::Codelet* with_halo = nullptr;
  KernelFn kernel_cpu = nullptr, kernel_cuda = nullptr;  // the kind's own entries
  std::vector<Access> modes;  // the kind's modes: of the reads, then of the writes
  /// A streamed grid's blocks turn (`turns`): every other one visits the tiles in reverse
  /// (`reverse`), so that a GPU's last slab of a pass is its first of the next, and the two
  /// slabs at an edge between two GPUs are visited at opposite ends of a pass, each a pass's
  /// time before its neighbour needs its face (an order that never turns makes a GPU's first visit
  /// wait for the face the GPU below packs on its last one). Results do not depend on it.
  bool turns = false, reverse = false;
  /// Called before each tile's task is submitted (a streamed grid's scratch refill,
  /// slabs::refill_ghosts); empty: nothing.
  std::function<void(int)> before_tile;
};

/// Makes the call's tasks pack the faces of the fields they write, `written` (its fields from
/// index `first` of the call's), for the next exchange of each (FieldStorage::pack_target);
/// nothing when `allowed` is false or more than HaloWork::kMax are written. Returns per field
/// the set packed (null: none), for FieldStorage::written after submission.
std::vector<HaloSet*> add_packs(TileTaskCall& call, const std::vector<FieldStorage*>& written,
                                std::size_t first, bool allowed);

/// Resolves the call's "+halo" codelet for `kind` (of stencil or loop `name` on element types
/// `types`) when it has fills or packs.
void add_halo_work(TileTaskCall& call, const std::string& name, const std::string& types,
                   const TaskKind& kind);

/// The part of a tile inside [lo, hi): its global origin and extent (0 along some axis when
/// they do not meet).
struct TileWindow {
  Extent3 origin, extent;
  bool empty() const { return extent[0] <= 0 || extent[1] <= 0 || extent[2] <= 0; }
};
TileWindow tile_window(const TileGeometry& tile, const Extent3& lo, const Extent3& hi);

/// Submits one task per tile of the call's fields (all on one tiling) that meets the call's
/// window, in tile order (reverse: in reverse). Tiles
/// at a rank edge go first (priority): their new values feed the faces other ranks wait for.
void submit_tile_tasks(const TileTaskCall& call);

}  // namespace tessera::detail
