// The tile lattice of a Grid, by partition/'s rule, with the checks of its arguments.
#include "partition/tiling.hpp"
#include "tessera/error.hpp"
#include "tessera/grid.hpp"

namespace tessera::detail {

Lattice tile_lattice(const Extent3& extent, const Extent3& tile, int dims) {
  Lattice l;
  for (int a = 0; a < dims; ++a) {
    if (extent[a] <= 0)
      throw Error("grid extent " + std::to_string(extent[a]) + " on axis " + axis_name(a) +
                  " must be positive; give at least 1 point per axis");
    if (tile[a] <= 0)
      throw Error("tile extent " + std::to_string(tile[a]) + " on axis " + axis_name(a) +
                  " must be positive; use the grid extent for a single tile");
    l.tile[a] = partition::clamped_tile(extent[a], tile[a]);
    l.tiles[a] = partition::tiles_along(extent[a], tile[a]);
  }
  return l;
}

}  // namespace tessera::detail
