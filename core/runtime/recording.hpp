// The run's trace outputs (--trace, --report): paths checked before StarPU starts, every
// rank's record gathered at the end, and the files written by rank 0 (core/runtime/files.hpp: a
// temporary file renamed when complete, every write checked).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/trace.hpp"

namespace tessera::detail {

class FieldStorage;

class Recording {
 public:
  Recording() = default;
  /// Checks that the output paths (either may be empty) are writable, without touching them,
  /// and that they are two different files.
  Recording(std::string json_path, std::string html_path);
  /// Every rank's record, in rank order, on every rank (collective in multi-rank runs).
  static std::vector<trace::RankTrace> gather(const trace::RankTrace& mine);
  /// Writes the files asked for from the records of every rank, each whole or not at all;
  /// throws tessera::Error when one cannot be written.
  void write(const std::vector<trace::RankTrace>& ranks, const std::string& title) const;
  /// Whether the outputs draw tile maps (a report was asked for).
  bool maps_tiles() const { return !html_path_.empty(); }
  /// Notes where the tiles of `stencil` (an interned name) lie: those of `field`'s grid, with
  /// their owners; once per name.
  void map_tiles(const char* stencil, const FieldStorage& field);
  /// Notes where the elements of the mesh `mesh` (any key that names it) lie, replacing what
  /// was noted for it before; `map.loops` is filled by map_loop.
  void map_partitions(const void* mesh, trace::PartitionMap map);
  /// Notes that the loop `loop` runs over the mesh `mesh`: its tasks' tiles are the mesh's.
  void map_loop(const void* mesh, const std::string& loop);

 private:
  std::string json_path_, html_path_;
  std::set<const char*> mapped_;  // interned names seen
  std::map<std::string, trace::TileMap> maps_;
  std::map<const void*, trace::PartitionMap> meshes_;  // a mesh's loops, and its map once noted
};

}  // namespace tessera::detail
