// A structured grid cut into tiles: the domain every field and stencil lives on.
#pragma once

#include <array>
#include <string>

#include "tessera/error.hpp"  // Grid throws tessera::Error
#include "tessera/index.hpp"

namespace tessera {

namespace detail {
/// The tile lattice of a grid, by partition/'s rule (library): the tile extent used per axis
/// (at most the grid's) and the number of tiles per axis; axes from `dims` on are 1. Throws
/// tessera::Error on a non-positive extent or tile.
struct Lattice {
  Extent3 tile{1, 1, 1};
  std::array<int, 3> tiles{1, 1, 1};
};
Lattice tile_lattice(const Extent3& extent, const Extent3& tile, int dims);
}  // namespace detail

/// Global extent, tile extent (the last tile of an axis may be smaller) and per-axis
/// periodicity. Example: tessera::Grid<3> grid({256, 256, 256}, {256, 256, 32});
template <int D>
class Grid {
  static_assert(D == 2 || D == 3, "tessera::Grid<D>: D must be 2 or 3");

 public:
  Grid(Index<D> extent, Index<D> tile, std::array<bool, D> periodic = {})
      : extent_(extent), tile_(tile), periodic_(periodic) {
    detail::Extent3 e{1, 1, 1}, t{1, 1, 1};
    for (int a = 0; a < D; ++a) {
      e[a] = extent_[a];
      t[a] = tile_[a];
    }
    const detail::Lattice lattice = detail::tile_lattice(e, t, D);
    tiles_ = 1;
    for (int a = 0; a < D; ++a) {
      tile_[a] = lattice.tile[a];
      tiles_ *= lattice.tiles[a];
    }
  }

  const Index<D>& extent() const { return extent_; }
  const Index<D>& tile() const { return tile_; }
  const std::array<bool, D>& periodic() const { return periodic_; }
  std::int64_t points() const {
    std::int64_t p = 1;
    for (int a = 0; a < D; ++a) p *= extent_[a];
    return p;
  }
  int tiles() const { return tiles_; }
  bool operator==(const Grid& o) const {
    for (int a = 0; a < D; ++a)
      if (extent_[a] != o.extent_[a] || tile_[a] != o.tile_[a] || periodic_[a] != o.periodic_[a])
        return false;
    return true;
  }
  bool operator!=(const Grid& o) const { return !(*this == o); }
  std::string describe() const {
    std::string s;
    for (int a = 0; a < D; ++a) s += (a ? "x" : "") + std::to_string(extent_[a]);
    s += " in tiles of ";
    for (int a = 0; a < D; ++a) s += (a ? "x" : "") + std::to_string(tile_[a]);
    return s;
  }

 private:
  Index<D> extent_, tile_;
  std::array<bool, D> periodic_;
  int tiles_ = 1;
};

}  // namespace tessera
