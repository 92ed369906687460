// Tile decomposition of a structured grid and the halo-copy geometry between tiles.
// Pure code: no StarPU, no CUDA. Everything is three-dimensional here; a 2-D grid has
// extent 1, tile 1 and no halo along z.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "partition/region_copy.hpp"
#include "tessera/boundary.hpp"
#include "tessera/detail/boundary_function.hpp"
#include "tessera/index.hpp"

namespace tessera::partition {

using detail::Extent3;
using Dir3 = std::array<int, 3>;  // each component in {-1, 0, +1}

struct Tile {
  int id = 0;
  std::array<int, 3> coord{};  // position in the tile lattice
  Extent3 origin{};            // global index of the first interior point
  Extent3 extent{};            // interior points per axis
};

// The tile extent used along an axis of `extent` points when `tile` is asked for: at most the
// extent (one tile covers the axis). And how many tiles that makes (the last may be smaller).
// tiles_along narrows to int: callers check tile_count_along first (core/grid/grid.cpp).
std::int64_t clamped_tile(std::int64_t extent, std::int64_t tile);
std::int64_t tile_count_along(std::int64_t extent, std::int64_t tile);
int tiles_along(std::int64_t extent, std::int64_t tile);
// The thinnest tile along such an axis: the last one when `tile` does not divide `extent`.
std::int64_t thinnest_tile(std::int64_t extent, std::int64_t tile);

// An axis cut at explicit positions: `cuts` lists the first index of every tile but the first
// (the uniform lattice of `tile` is {tile, 2 tile, ...}). An empty list on an axis means the
// uniform lattice of the axis' tile extent, so a grid cut uniformly stores no list.
using Cuts = std::vector<std::int64_t>;
// What is wrong with `cuts` as the cuts of an axis of `extent` points (empty: nothing): each
// position inside (0, extent), increasing.
std::string cuts_error(std::int64_t extent, const Cuts& cuts);
// The tile extent whose uniform lattice is exactly `cuts` (every tile that extent, the last at
// most), or 0 when there is none. An empty list is one tile of the whole extent.
std::int64_t uniform_tile_of(std::int64_t extent, const Cuts& cuts);
// The first index of every tile along an axis: {0, cuts...}, or with `cuts` empty the uniform
// lattice of `tile` points.
std::vector<std::int64_t> tile_starts(std::int64_t extent, std::int64_t tile, const Cuts& cuts);
// The largest and the thinnest tile along an axis cut by `cuts` (empty: uniform by `tile`).
std::int64_t largest_tile(std::int64_t extent, std::int64_t tile, const Cuts& cuts);
std::int64_t thinnest_tile(std::int64_t extent, std::int64_t tile, const Cuts& cuts);
// Tiles along such an axis.
std::int64_t tile_count_along(std::int64_t extent, std::int64_t tile, const Cuts& cuts);

// Cuts `extent` into tiles: along each axis at the given tile starts (a lattice: every tile of
// a row along x has the same y and z extents), or uniformly in tiles of `tile` points (the last
// tile of an axis may be smaller). Tiles are numbered x fastest, then y, then z; that order is
// the fixed combination order of reductions.
class Tiling {
 public:
  Tiling(Extent3 extent, Extent3 tile, std::array<bool, 3> periodic);
  // starts[a]: the first index of every tile along axis a (tile_starts), {0} for one tile.
  Tiling(Extent3 extent, std::array<std::vector<std::int64_t>, 3> starts,
         std::array<bool, 3> periodic);

  int size() const { return static_cast<int>(tiles_.size()); }
  const Tile& tile(int id) const { return tiles_[static_cast<std::size_t>(id)]; }
  const std::array<int, 3>& tiles_per_axis() const { return counts_; }
  const Extent3& extent() const { return extent_; }
  // The first index of every tile along `axis`.
  const std::vector<std::int64_t>& starts(int axis) const {
    return starts_[static_cast<std::size_t>(axis)];
  }
  bool periodic(int axis) const { return periodic_[static_cast<std::size_t>(axis)]; }
  // Smallest tile extent along `axis` (the last tile when a uniform tile size does not divide).
  std::int64_t thinnest(int axis) const;
  // The tile holding global point `p` (which must lie inside the extent).
  int tile_at(const Extent3& p) const;
  // The tile at `dir` from `id`, wrapping on periodic axes; -1 past a non-periodic edge.
  int neighbour(int id, Dir3 dir) const;

 private:
  Extent3 extent_;
  std::array<std::vector<std::int64_t>, 3> starts_;
  std::array<bool, 3> periodic_;
  std::array<int, 3> counts_{};
  std::vector<Tile> tiles_;
};

// Block distribution of the tile lattice over ranks arranged as a rank grid (ranks numbered x
// fastest): along each axis, tile coordinate c of n goes to block c * p / n of p, so blocks
// differ by at most one tile.
struct Distribution {
  std::array<int, 3> rank_grid{1, 1, 1};  // ranks per axis
  std::vector<int> owner;                 // owner rank of each tile
};

// The rank grid for `ranks` ranks (product = ranks, at most one block per tile along each
// axis) that cuts the fewest grid points: the sum over cut planes of their area, a periodic
// axis cut once more at the wrap. Ties go to the first in (x, y, z) order. {0, 0, 0} when no
// such grid exists (more ranks than tiles, or a prime rank count above every axis' tiles).
std::array<int, 3> choose_rank_grid(const Tiling& tiling, int ranks);
// Points on the rank cuts of `rank_grid` (the quantity choose_rank_grid minimises).
std::int64_t cut_points(const Tiling& tiling, const std::array<int, 3>& rank_grid);
// Owners of every tile for a rank grid whose axes are at most the tile counts.
Distribution distribute(const Tiling& tiling, const std::array<int, 3>& rank_grid);

// What fills a ghost region that has no neighbour tile, per face (rule[axis][0] the low face,
// rule[axis][1] the high face): Dirichlet the constant, Neumann the mirrored interior, Periodic
// the tile across the wrap (the tiling's periodic axes never get here: they have neighbours),
// Function the mirrored interior as Neumann, which the face's function then transforms.
struct FaceRules {
  std::array<std::array<Boundary::Kind, 2>, 3> rule{};
  std::array<std::array<std::uint64_t, 2>, 3>
      constant_bits{};  // the constant, as the element's bytes
};

// Storage layout of one tile buffer: interior extent plus `halo` ghost layers per axis,
// x fastest. Offsets are in elements. With `line` > 1, the elements of a cache line (the
// buffer's start aligned to one), every row's first interior point starts a line: rows are
// padded to whole lines and the tile starts `lead()` elements into its buffer. A point loop's
// vector loads and stores then never straddle two lines: heat3d's 4-step block of a 64x64x32
// slab (4 ghost layers, rows each 32 bytes into a line) took 241-261 us on this project's
// 2-core machine, 149-160 us with its rows aligned (docs/scheduling.md, "Rows that start a
// cache line").
struct TileLayout {
  Extent3 n{}, halo{};
  std::int64_t line = 1;
  std::int64_t stride(int axis) const;
  std::int64_t lead() const;  // elements before the first ghost point
  std::int64_t size() const;  // elements of the buffer
  std::int64_t offset(std::int64_t x, std::int64_t y, std::int64_t z) const;  // interior coords
  // Its points' planes along its outermost axis (z; y where `dims` is 2), each with its ghost
  // points on the other axes: elements [first, first + count) of the buffer, contiguous.
  std::pair<std::int64_t, std::int64_t> planes(int dims) const;
};

// The bytes every tile buffer's start is aligned to, and the elements of that many bytes for
// elements of `element_size` bytes (1, no padding, where they do not divide it).
constexpr std::size_t kCacheLineBytes = 64;
std::int64_t line_elements(std::size_t element_size);

// The copies that make one tile's ghost layers correct for a stencil of `width` and shape:
// `packs` fill the outgoing face buffers (slot 0 = the tile, slot k = k-th packed buffer),
// `ghosts` fill the ghost layers (dst slot 0 = the tile, src slot 0 = the tile itself,
// src slot k = k-th entry of `sources`).
struct TileHaloPlan {
  std::vector<Dir3> pack_dirs;           // buffers this tile writes, by direction
  std::vector<std::int64_t> pack_sizes;  // elements in each
  RegionCopyList packs;
  std::vector<std::pair<int, Dir3>> sources;  // (tile, direction) of buffers read
  RegionCopyList ghosts;
  // Ghost regions whose values a face's boundary function gives, once `ghosts` has put the
  // mirrored interior values there.
  struct FunctionGhosts {
    int axis, side;
    detail::FunctionGhostRegion region;
  };
  std::vector<FunctionGhosts> functions;
};

// Builds the halo plan of every tile. Ghost value rule (shared with the serial reference):
// map the ghost point's global index axis by axis (wrap on a neighbour/periodic axis, mirror
// i -> -1-i on a Neumann or Function face, i -> -i on a NeumannVertex face, whose tile must
// then be at least width + 1 thick); if any axis falls on a Dirichlet face, the value is the
// constant of the lowest such axis; otherwise, if any falls on a Function face, it is that of
// the lowest such axis applied to (the ghost point's global index, the value at the mapped
// interior point); otherwise it is the value at the mapped interior point.
// `halo` is the field's ghost width per axis, `width` the stencil radius (<= halo),
// `box` whether diagonal neighbours are read, `dims` 2 or 3, `line` the tiles' TileLayout::line.
std::vector<TileHaloPlan> plan_halos(const Tiling& tiling, const Extent3& halo,
                                     const FaceRules& rules, int width, bool box, int dims,
                                     std::int64_t line = 1);

/// `ghost`, a region of a tile's ghost layers copied from a face buffer that `pack` filled from
/// the neighbour's tile, copied instead straight from that tile (put in the face buffer's slot):
/// the same elements at the tile's addresses (a streamed visit reads the slab visited after it
/// so, slabs::pack_ahead).
RegionCopy read_from_tile(const RegionCopy& ghost, const RegionCopy& pack);

}  // namespace tessera::partition
