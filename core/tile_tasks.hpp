// The per-tile submission loop: the one function through which stencils, reductions (and
// loops) put their tasks on tiles.
#pragma once

#include <vector>

#include "tasks/codelets.hpp"
#include "tasks/data.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/detail/task.hpp"

namespace tessera::detail {

/// What every task of one call shares.
struct TileTaskCall {
  tasks::Codelet* codelet;
  std::vector<FieldStorage*> reads;   // their tiles are the first buffers
  std::vector<FieldStorage*> writes;  // then these tiles
  ArgBlock args;                      // frame fields: reads, then writes
  long step = -1;                     // the step in the tasks' tags; -1: none
  const char* field = nullptr;        // the field named in the tags (interned); null: none
  /// Per tile, one more written buffer after the fields' tiles (e.g. a reduction's partial
  /// results); empty: none.
  std::vector<tasks::Handle> extra;
};

/// Submits one task per tile of the call's fields (all on one tiling), in tile order. Tiles
/// at a rank edge go first (priority): their new values feed the faces other ranks wait for.
void submit_tile_tasks(const TileTaskCall& call);

}  // namespace tessera::detail
