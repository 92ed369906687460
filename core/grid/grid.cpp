// The tile lattice of a Grid, by partition/'s rule, with the checks of its arguments.
#include <climits>

#include "partition/tiling.hpp"
#include "tessera/error.hpp"
#include "tessera/grid.hpp"

namespace tessera::detail {

namespace {
std::string lattice_text(const Extent3& v, int dims) {
  std::string s;
  for (int a = 0; a < dims; ++a) s += (a ? " x " : "") + std::to_string(v[a]);
  return s;
}
}  // namespace

Lattice tile_lattice(const Extent3& extent, const Extent3& tile, int dims) {
  Lattice l;
  for (int a = 0; a < dims; ++a) {
    if (extent[a] <= 0)
      throw Error("grid extent " + std::to_string(extent[a]) + " on axis " + axis_name(a) +
                  " must be positive; give at least 1 point per axis");
    if (tile[a] <= 0)
      throw Error("tile extent " + std::to_string(tile[a]) + " on axis " + axis_name(a) +
                  " must be positive; use the grid extent for a single tile");
  }
  // Points are counted in 64 bits and tiles in int (task tags, StarPU-MPI tags): a product
  // that does not fit would wrap silently into another grid.
  std::int64_t points = 1, tiles = 1;
  Extent3 counts{1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    counts[a] = partition::tile_count_along(extent[a], tile[a]);
    if (__builtin_mul_overflow(points, extent[a], &points))
      throw Error("grid of " + lattice_text(extent, dims) +
                  " points has more points than a 64-bit count holds; give a smaller grid");
    if (counts[a] > INT_MAX || __builtin_mul_overflow(tiles, counts[a], &tiles) ||
        tiles > INT_MAX) {
      Extent3 shown = counts;
      for (int b = a + 1; b < dims; ++b) shown[b] = partition::tile_count_along(extent[b], tile[b]);
      throw Error("grid of " + lattice_text(extent, dims) + " points in tiles of " +
                  lattice_text(tile, dims) + " makes " + lattice_text(shown, dims) +
                  " tiles, more than the " + std::to_string(INT_MAX) +
                  " a grid may have; use larger tiles");
    }
  }
  for (int a = 0; a < dims; ++a) {
    l.tile[a] = partition::clamped_tile(extent[a], tile[a]);
    l.tiles[a] = static_cast<int>(counts[a]);
  }
  return l;
}

}  // namespace tessera::detail
