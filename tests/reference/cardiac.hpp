// Serial reference of the Aliev-Panfilov model (apps/cardiac): a plain port of the classic
// finite-difference code on one padded array per field, never optimised. Each step: mirror
// the ghost faces vertex-centred (ghost -1 takes interior 1), the diffusion loop, then the
// reaction loop and the recovery loop (which reads the e just updated).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "apps/cardiac/cardiac.hpp"

namespace reference {

struct CardiacState {
  std::vector<double> e, r;  // interior, x fastest
};

// From `start` (e and r at every point, x fastest), `steps` steps.
template <int D>
CardiacState cardiac(std::array<std::int64_t, 3> n, int steps, const CardiacState& start) {
  const apps::AlievPanfilov m;
  const apps::CardiacStep st = apps::cardiac_step(m, n[0], D);
  const std::int64_t gz = D == 3 ? 1 : 0;
  const std::int64_t sx = n[0] + 2, sy = sx * (n[1] + 2), total = sy * (n[2] + 2 * gz);
  auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    return (x + 1) + (y + 1) * sx + (z + gz) * sy;
  };
  std::vector<double> ep(static_cast<std::size_t>(total), 0.0), en = ep, r(ep.size(), 0.0);
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x = 0; x < n[0]; ++x) {
        const auto g = static_cast<std::size_t>(x + n[0] * (y + n[1] * z));
        ep[at(x, y, z)] = start.e[g];
        r[at(x, y, z)] = start.r[g];
      }
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y) {
        ep[at(-1, y, z)] = ep[at(1, y, z)];
        ep[at(n[0], y, z)] = ep[at(n[0] - 2, y, z)];
      }
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t x = 0; x < n[0]; ++x) {
        ep[at(x, -1, z)] = ep[at(x, 1, z)];
        ep[at(x, n[1], z)] = ep[at(x, n[1] - 2, z)];
      }
    if (D == 3)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          ep[at(x, y, -1)] = ep[at(x, y, 1)];
          ep[at(x, y, n[2])] = ep[at(x, y, n[2] - 2)];
        }
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const std::int64_t c = at(x, y, z);
          if (D == 2)
            en[c] =
                ep[c] + st.alpha * (ep[c + 1] + ep[c - 1] - 4.0 * ep[c] + ep[c + sx] + ep[c - sx]);
          else
            en[c] = ep[c] + st.alpha * (ep[c + 1] + ep[c - 1] - 6.0 * ep[c] + ep[c + sx] +
                                        ep[c - sx] + ep[c + sy] + ep[c - sy]);
        }
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const std::int64_t c = at(x, y, z);
          en[c] = en[c] - st.dt * (m.k * en[c] * (en[c] - m.a) * (en[c] - 1.0) + en[c] * r[c]);
        }
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const std::int64_t c = at(x, y, z);
          r[c] = r[c] + st.dt * (m.eps + m.mu1 * r[c] / (en[c] + m.mu2)) *
                            (-r[c] - m.k * en[c] * (en[c] - m.b - 1.0));
        }
    std::swap(ep, en);
  }
  CardiacState out;
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x = 0; x < n[0]; ++x) {
        out.e.push_back(ep[at(x, y, z)]);
        out.r.push_back(r[at(x, y, z)]);
      }
  return out;
}

}  // namespace reference
