// The N-body oracle: the plain serial double loop over arrays, written out (not the app's
// functors), the same arithmetic in the same order: for each target i, sources j = 0 .. n-1 in
// chunks of 64, each summed from zero and added in order (pair_sums, tessera::Pairs' order).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "apps/nbody/nbody.hpp"
#include "tests/reference/fsum.hpp"
#include "tests/reference/pairs.hpp"

namespace reference {

struct NBodyState {
  apps::Bodies b;
  std::vector<double> ax, ay, az;
};

inline void nbody_forces(NBodyState& s, double eps2) {
  const std::size_t n = s.b.x.size();
  s.ax.assign(n, 0.0);
  s.ay.assign(n, 0.0);
  s.az.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    std::array<double, 3> a{0.0, 0.0, 0.0};
    pair_sums(a, static_cast<std::int64_t>(n), [&](std::int64_t sj, std::array<double, 3>& c) {
      const auto j = static_cast<std::size_t>(sj);
      const double dx = s.b.x[j] - s.b.x[i], dy = s.b.y[j] - s.b.y[i], dz = s.b.z[j] - s.b.z[i];
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double inv = 1.0 / std::sqrt(r2);
      const double f = s.b.m[j] * (inv * inv * inv);
      c[0] += dx * f;
      c[1] += dy * f;
      c[2] += dz * f;
    });
    s.ax[i] = a[0];
    s.ay[i] = a[1];
    s.az[i] = a[2];
  }
}

// `steps` kick-drift-kick steps from `start`.
inline NBodyState nbody(const apps::Bodies& start, int steps, double dt, double eps) {
  NBodyState s{start, {}, {}, {}};
  const double eps2 = eps * eps, half = 0.5 * dt;
  nbody_forces(s, eps2);
  const std::size_t n = s.b.x.size();
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < n; ++i) {
      s.b.vx[i] = s.b.vx[i] + half * s.ax[i];
      s.b.vy[i] = s.b.vy[i] + half * s.ay[i];
      s.b.vz[i] = s.b.vz[i] + half * s.az[i];
      s.b.x[i] = s.b.x[i] + dt * s.b.vx[i];
      s.b.y[i] = s.b.y[i] + dt * s.b.vy[i];
      s.b.z[i] = s.b.z[i] + dt * s.b.vz[i];
    }
    nbody_forces(s, eps2);
    for (std::size_t i = 0; i < n; ++i) {
      s.b.vx[i] = s.b.vx[i] + half * s.ax[i];
      s.b.vy[i] = s.b.vy[i] + half * s.ay[i];
      s.b.vz[i] = s.b.vz[i] + half * s.az[i];
    }
  }
  return s;
}

// {kinetic, potential}, each the exact sum of the bodies' energies rounded once (fsum), as
// Tessera's sums are for any tiling.
inline std::vector<double> nbody_energies(const apps::Bodies& b, double eps) {
  const std::size_t n = b.x.size();
  std::vector<double> kinetic(n), potential(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::array<double, 1> phi{0.0};
    pair_sums(phi, static_cast<std::int64_t>(n), [&](std::int64_t sj, std::array<double, 1>& c) {
      const auto j = static_cast<std::size_t>(sj);
      if (j == i) return;
      const double dx = b.x[j] - b.x[i], dy = b.y[j] - b.y[i], dz = b.z[j] - b.z[i];
      c[0] -= b.m[j] / std::sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
    });
    kinetic[i] = 0.5 * b.m[i] * (b.vx[i] * b.vx[i] + b.vy[i] * b.vy[i] + b.vz[i] * b.vz[i]);
    potential[i] = 0.5 * b.m[i] * phi[0];
  }
  return {fsum(kinetic), fsum(potential)};
}

}  // namespace reference
