// How a mesh loop task finds the slot of a written indirect argument: one int32 per (element,
// map index). A code >= 0 is the target's index among the tile's own elements; a code < 0 names
// an increment slot (buffer k of the argument's slot buffers, offset in it). partition/ writes
// the codes, the loop task (detail/mesh_loop.hpp) and the combine kernels read them.
#pragma once

#include <cstdint>

#include "tessera/macros.hpp"

namespace tessera::detail::mesh_codes {

constexpr int kOffsetBits = 22;  // offsets below 4,194,304 per slot buffer
constexpr std::int32_t kMaxOffset = (1 << kOffsetBits) - 1;
constexpr std::int32_t kMaxBuffers = (1 << (31 - kOffsetBits)) - 1;  // 511 buffers
/// Buffers a mesh task may have when it runs on a CUDA worker (its kernels take one pointer
/// per buffer in a single kernel parameter).
constexpr int kMaxDeviceBuffers = 96;

TESSERA_HD std::int32_t slot(std::int32_t buffer, std::int32_t offset) {
  return -1 - ((buffer << kOffsetBits) | offset);
}
TESSERA_HD std::int32_t slot_buffer(std::int32_t code) { return (-1 - code) >> kOffsetBits; }
TESSERA_HD std::int32_t slot_offset(std::int32_t code) { return (-1 - code) & kMaxOffset; }

/// A plan that adds slots to targets, as an int32 array {m, m targets, m + 1 starts, entries}:
/// target j takes entries[starts[j]] .. entries[starts[j + 1] - 1], in that order. Combine plans
/// (entries are slot codes) and local gathers (entries are local slots) share the layout.
struct TargetPlan {
  std::int32_t m;
  const std::int32_t* targets;
  const std::int32_t* starts;
  const std::int32_t* entries;
  TESSERA_HD explicit TargetPlan(const std::int32_t* plan)
      : m(plan[0]),
        targets(plan + 1),
        starts(plan + 1 + plan[0]),
        entries(plan + 2 + 2 * plan[0]) {}
};

}  // namespace tessera::detail::mesh_codes
