// Fixed-size integer coordinates, usable in host and device code.
#pragma once

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

inline const char* axis_name(int a) { return a == 0 ? "x" : (a == 1 ? "y" : "z"); }

}  // namespace tessera
