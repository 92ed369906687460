// How a mesh loop task finds the slot of a written indirect argument: one int32 per (element,
// map index). A code >= 0 is the target's index among the tile's own elements; a code < 0 names
// an increment slot (buffer k of the argument's slot buffers, offset in it). partition/ writes
// the codes, the loop task (detail/mesh_loop.hpp) and the combine kernels read them.
#pragma once

#include <cstdint>

#include "tessera/macros.hpp"

namespace tessera::detail::mesh_codes {

constexpr int kOffsetBits = 22;                     // offsets below 4,194,304 per slot buffer
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

}  // namespace tessera::detail::mesh_codes
