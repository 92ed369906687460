// A box of grid points: where a Loop runs, or the points a Stencil::apply updates.
#pragma once

#include <cstdint>

#include "tessera/grid.hpp"
#include "tessera/index.hpp"

namespace tessera {

/// A box of grid points, lo inclusive, hi exclusive (global indices).
///   tessera::Box<2>::whole(grid).inset(1)        // the interior minus a 1-point margin
///   tessera::Box<2>::face(grid, 0, 1)            // the x-high face (one layer of points)
template <int D>
struct Box {
  Index<D> lo, hi;

  static Box whole(const Grid<D>& g) {
    Box b;
    for (int a = 0; a < D; ++a) {
      b.lo[a] = 0;
      b.hi[a] = g.extent()[a];
    }
    return b;
  }
  /// The `width` layers of points on face (axis, side: 0 low, 1 high).
  static Box face(const Grid<D>& g, int axis, int side, std::int64_t width = 1) {
    Box b = whole(g);
    if (side == 0)
      b.hi[axis] = width;
    else
      b.lo[axis] = g.extent()[axis] - width;
    return b;
  }
  /// This box less `margin` points on every side.
  Box inset(std::int64_t margin) const {
    Box b = *this;
    for (int a = 0; a < D; ++a) {
      b.lo[a] += margin;
      b.hi[a] -= margin;
    }
    return b;
  }
};

}  // namespace tessera
