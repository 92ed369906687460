// Unstructured meshes cut into tiles: which tile owns each element of each set, each tile's
// elements renumbered, its import halo (the other tiles' elements its maps reach) and export
// lists, the maps in tile-local numbers, the plans that combine indirect increments in a fixed
// order, and colourings. Pure code (METIS when built with it): no StarPU, no runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::partition {

/// A map between two sets as the partitioner sees it: `arity` global indices of set `to` per
/// element of set `from` (element-major).
struct MeshMap {
  int from = 0, to = 0;
  int arity = 1;
  const std::int32_t* indices = nullptr;
};

enum class MeshMethod {
  Metis,  ///< METIS k-way on the primary set's adjacency through the maps
  Block   ///< contiguous ranges of the primary set, in element order
};

/// Whether this build has METIS.
bool have_metis();

/// One set cut into tiles. Local numbers: a tile's own elements first, in ascending global
/// order (so a tile visits its elements in the global order: increments stay in that order),
/// then its import halo, grouped by owner tile (ascending) and ascending global order within.
struct SetTiles {
  bool partitioned = false;
  std::vector<std::int32_t> tile;   // per element: the owner tile
  std::vector<std::int32_t> local;  // per element: its index among its owner's elements
  std::vector<std::vector<std::int32_t>> owned;      // [tile]: global ids, ascending
  std::vector<std::vector<std::int32_t>> halo;       // [tile]: global ids of its import halo
  std::vector<std::vector<std::int32_t>> sources;    // [t]: owners of t's halo, ascending
  std::vector<std::vector<std::int32_t>> consumers;  // [u]: tiles whose halo holds u's elements
  /// [u][k]: u-local indices that consumers[u][k] imports, in its halo order. A tile's halo is
  /// the concatenation, over its sources in order, of what each exports to it.
  std::vector<std::vector<std::vector<std::int32_t>>> exports;
};

struct MeshPartition {
  int tiles = 0;
  std::vector<SetTiles> sets;
  /// [map][tile]: per own element of the map's `from` set (local order) and per index, the
  /// target's local number in the `to` set's tile (own elements, then halo).
  std::vector<std::vector<std::vector<std::int32_t>>> map_local;
  /// [tile]: the other tiles it exchanges halo elements with, through any set, ascending.
  std::vector<std::vector<std::int32_t>> neighbours;
};

/// Cuts set `primary` into `tiles` tiles by `method` and gives every set connected to it
/// through maps a tiling that follows it: an element of a set mapped to a tiled set goes with
/// the tile of its first target (edges with their first cell), an element only mapped to goes
/// with the tile of the first element that maps to it (nodes with their first cell), and
/// elements nothing maps to with tile 0. Deterministic: the same input gives the same tiles.
/// Throws std::invalid_argument when METIS is asked for but absent or fails.
MeshPartition partition_mesh(const std::vector<std::int64_t>& set_sizes,
                             const std::vector<MeshMap>& maps, int primary, int tiles,
                             MeshMethod method);

/// How the increments a loop makes through one map (at the indices in `mask`, bit i = index i)
/// reach their targets. A target whose contributors all lie in its owner's tile is updated in
/// place by that tile's loop task, in element order. Every other target ("shared") gets each
/// contribution in a slot of the contributing tile's slot buffer for the target's owner; the
/// owner then adds the slots in the order of the contributing elements' global numbers (then
/// index order), so the result is that of a serial loop whatever the tiling or schedule.
struct IncrementPlan {
  /// [t]: per own element of the map's `from` set and per map index: a slot code
  /// (tessera/detail/mesh_codes.hpp); entries of indices outside the mask are 0.
  std::vector<std::vector<std::int32_t>> codes;
  std::vector<std::vector<std::int32_t>> dests;  // [t]: owners its slot buffers go to
  std::vector<std::vector<std::int64_t>>
      slot_counts;                                 // [t][k]: slots in the buffer for dests[t][k]
  std::vector<std::vector<std::int32_t>> sources;  // [u]: tiles with a slot buffer for u
  std::vector<std::vector<std::int32_t>>
      source_buffer;  // [u][j]: k of that buffer in dests[sources[u][j]]
  /// [u]: {m, m target local numbers, m + 1 starts, entries}; an entry is a slot code whose
  /// buffer is j (the j-th source) and offset the slot in that source's buffer for u.
  std::vector<std::vector<std::int32_t>> combine;
  /// On a CUDA worker a tile's elements run at once, so in-place increments would race: there
  /// every increment to the tile's own targets goes to a local slot of its own instead, and a
  /// second kernel adds each target's local slots in element order (the same bits as the CPU,
  /// no atomics). [t]: like codes, with every code >= 0 replaced by its local slot.
  std::vector<std::vector<std::int32_t>> device_codes;
  std::vector<std::int64_t> local_slots;  // [t]: local slots of tile t
  /// [t]: {m, m target local numbers, m + 1 starts, local slots}: each target's local slots in
  /// (element, index) order.
  std::vector<std::vector<std::int32_t>> local_gather;
};

/// The increment plan of `map` at the indices in `mask`. `reverse` adds every shared target's
/// slots in the opposite order: only for tests that must see the order matter.
IncrementPlan plan_increments(const MeshPartition& p, const MeshMap& map, unsigned mask,
                              bool reverse = false);

/// A target of `map` reached twice at the indices in `mask` (two elements, or two indices of
/// one element), as a message naming both; empty when every target is reached at most once.
std::string first_conflict(const MeshMap& map, std::int64_t from_size, unsigned mask);

/// Targets reached from each of `n` elements: `arity` indices per element into `targets` ones.
struct ElementTargets {
  int arity = 1;
  const std::int32_t* indices = nullptr;
  std::int64_t targets = 0;
};

/// Greedy colouring of `n` elements in element order: no two elements of one colour share a
/// target through any of `maps` (each with its own targets), so the elements of one colour may
/// increment in parallel. Returns each element's colour (0, 1, ...).
std::vector<std::int32_t> colour_elements(std::int64_t n, const std::vector<ElementTargets>& maps);

}  // namespace tessera::partition
