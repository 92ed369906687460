// A structured grid cut into tiles: the domain every field and stencil lives on.
#pragma once

#include <array>
#include <string>

#include "tessera/error.hpp"
#include "tessera/index.hpp"

namespace tessera {

/// Global extent, tile extent (the last tile of an axis may be smaller) and per-axis
/// periodicity. Example: tessera::Grid<3> grid({256, 256, 256}, {256, 256, 32});
template <int D>
class Grid {
  static_assert(D == 2 || D == 3, "tessera::Grid<D>: D must be 2 or 3");

 public:
  Grid(Index<D> extent, Index<D> tile, std::array<bool, D> periodic = {})
      : extent_(extent), tile_(tile), periodic_(periodic) {
    for (int a = 0; a < D; ++a) {
      if (extent_[a] <= 0)
        throw Error("grid extent " + std::to_string(extent_[a]) + " on axis " + axis_name(a) +
                    " must be positive; give at least 1 point per axis");
      if (tile_[a] <= 0)
        throw Error("tile extent " + std::to_string(tile_[a]) + " on axis " + axis_name(a) +
                    " must be positive; use the grid extent for a single tile");
      if (tile_[a] > extent_[a]) tile_[a] = extent_[a];  // one tile covers the axis
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
  int tiles() const {
    std::int64_t t = 1;
    for (int a = 0; a < D; ++a) t *= (extent_[a] + tile_[a] - 1) / tile_[a];
    return static_cast<int>(t);
  }
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
};

}  // namespace tessera
