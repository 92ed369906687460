// NPB's random numbers (randlc/vranlc), shared by NAS MG (zran3) and NAS FT
// (compute_initial_conditions).
#pragma once

#include <cstdint>

#include <tessera/macros.hpp>

namespace apps {

// NPB's random numbers: x_{k+1} = 5^13 x_k mod 2^46, value x_k / 2^46, seed 314159265 (exact
// integer arithmetic gives the bits of NPB's randlc), on the host and in CUDA bodies.
struct NpbRandom {
  static constexpr std::uint64_t kMod = std::uint64_t(1) << 46;
  static constexpr std::uint64_t kA = 1220703125;  // 5^13
  static constexpr std::uint64_t kSeed = 314159265;
  TESSERA_HD static std::uint64_t mul(std::uint64_t x, std::uint64_t y) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * y) & (kMod - 1));
  }
  TESSERA_HD static std::uint64_t power(std::uint64_t a, std::uint64_t n) {
    std::uint64_t r = 1;
    for (; n != 0; n >>= 1, a = mul(a, a))
      if (n & 1) r = mul(r, a);
    return r;
  }
  TESSERA_HD static double value(std::uint64_t x) {
    return static_cast<double>(x) * (1.0 / static_cast<double>(kMod));
  }
};

}  // namespace apps
