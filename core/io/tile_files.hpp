// Tiles written to files by tasks: one task per tile reads the tile and writes its file on the
// tile's owner (whole or absent: core/runtime/files.hpp), so writing overlaps the tasks submitted
// after it and no rank gathers a field. Field output (core/io/output.cpp) and checkpoints
// (core/io/checkpoint.cpp) both write this way.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "core/runtime/context.hpp"
#include "tessera/detail/field_storage.hpp"

namespace tessera::detail {

/// One tile's file: `header`, the tile's interior values (x fastest, raw), `footer`. Filled
/// before submission; the task sets `error` (when the file could not be written) and
/// `checksum`/`bytes` of the values. Must stay at its address until wait_tile_files.
struct TileFile {
  std::string path, header, footer;
  TileGeometry geometry{};
  std::size_t element_size = 0;
  bool mine = false;  // this rank owns the tile: its task runs here
  std::string error;
  std::uint64_t checksum = 0, bytes = 0;
  tasks::Handle done = nullptr;  // written by the task: places it on the owner, orders the wait
  unsigned char done_byte = 0;
};

/// Throws unless `name` can name files: letters, digits, '_', '-', '.' (not first).
void check_file_name(const std::string& name);

/// FNV-1a, 64 bits, over `size` bytes, continuing from `hash`.
std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = 0xcbf29ce484222325ull);

/// Submits the task that writes tile `t` of `f` into `file` (its path, header and footer set);
/// `what` is the kind's name ("vtk-piece", "checkpoint-tile"). Collective: every rank submits.
void submit_tile_file(FieldStorage& f, int t, TileFile& file, long step, const char* what);
/// Waits for the files' tasks; throws the same tessera::Error on every rank when one of them
/// failed (naming its path). Collective.
void wait_tile_files(std::deque<TileFile>& files, Context& c);

}  // namespace tessera::detail
