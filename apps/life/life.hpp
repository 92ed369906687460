// Conway's Game of Life on uint8 cells (1 alive, 0 dead), 8 neighbours, periodic wrap.
#pragma once

#include <cstdint>

#include <tessera/tessera.hpp>

namespace apps {

struct Life {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<std::uint8_t> c,
                             tessera::Out<std::uint8_t> next) const {
    const int n =
        c(-1, -1) + c(0, -1) + c(1, -1) + c(-1, 0) + c(1, 0) + c(-1, 1) + c(0, 1) + c(1, 1);
    next = static_cast<std::uint8_t>(n == 3 || (n == 2 && c() != 0) ? 1 : 0);
  }
};

// A reproducible random start, about one cell in three alive.
inline std::uint8_t life_seed(tessera::Index<2> p) {
  std::uint64_t h = static_cast<std::uint64_t>(p[0]) * 0x9E3779B97F4A7C15ull ^
                    static_cast<std::uint64_t>(p[1]) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<std::uint8_t>(h % 3 == 0 ? 1 : 0);
}

}  // namespace apps
