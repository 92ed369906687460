// Fixed-size integer coordinates, usable in host and device code.
#pragma once

#include <array>
#include <cstdint>

#include "tessera/macros.hpp"

namespace tessera {

/// A point or an extent of a D-dimensional grid; axis 0 (x) is the fastest in memory.
///   tessera::Index<3> n{256, 256, 256};
template <int D>
struct Index {
  std::int64_t v[D];
  TESSERA_HD std::int64_t& operator[](int a) { return v[a]; }
  TESSERA_HD std::int64_t operator[](int a) const { return v[a]; }
};

namespace detail {
/// Three extents or coordinates, x first: the library's one spelling of a 3-D size (a 2-D grid
/// has extent 1 along z).
using Extent3 = std::array<std::int64_t, 3>;
}  // namespace detail

inline const char* axis_name(int a) { return a == 0 ? "x" : (a == 1 ? "y" : "z"); }

}  // namespace tessera
