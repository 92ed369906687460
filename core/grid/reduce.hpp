// The library side of reductions: partial-result buffers for a loop's tasks.
#pragma once

#include <memory>
#include <vector>

#include "core/grid/tile_tasks.hpp"
#include "tessera/loop.hpp"

namespace tessera::detail {

/// Registers one partial-result buffer per tile the call's window meets (owned by the tile's
/// owner) and hands them to `call.extra`; finish_reduction collects them.
std::shared_ptr<PendingReduction> start_reduction(TileTaskCall& call, FieldStorage& first,
                                                  const std::vector<ReduceOp>& ops);

}  // namespace tessera::detail
