// The property of sums shared by the shared-memory and distributed tests: the same field
// reduced under random tilings gives one bit pattern, the exact sum of its values rounded once
// (reference::exact_sum, computed independently of the library's accumulator).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>

#include <tessera/reduce.hpp>

#include "tests/reference/reference.hpp"
#include "tests/test_support.hpp"

namespace test {

// Values whose plain sum depends on the order: magnitudes over 16 decades, both signs, and
// large values that cancel.
struct Wild {
  double operator()(tessera::Index<3> p) const {
    const double n = noise<3>(p);
    const double scale = std::pow(10.0, std::floor(16 * noise<3>({p[2], p[0], p[1]})) - 8);
    const double big = (p[0] + p[1] + p[2]) % 37 == 0 ? ((p[0] % 2) ? 1e15 : -1e15) : 0.0;
    return (n - 0.45) * scale + big;
  }
};

struct SquarePlusHalf {
  TESSERA_HD double operator()(double v) const { return v * v + 0.5; }
};

inline std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// `tilings` random tilings of a 23 x 17 x 11 grid (the same on every rank: a fixed seed), most
// with uneven last tiles; under mpirun, those that the ranks can share (others are drawn
// again): tessera::sum and the sum of a function, bitwise the exact sums.
inline void expect_exact_sums_for_random_tilings(int tilings) {
  const tessera::Index<3> n{23, 17, 11};
  std::mt19937 rng(2026);
  std::vector<double> values;
  int done = 0;
  for (int draw = 0; done < tilings && draw < 50 * tilings; ++draw) {
    tessera::Index<3> tile;
    for (int a = 0; a < 3; ++a) tile[a] = std::uniform_int_distribution<std::int64_t>(1, n[a])(rng);
    const tessera::Grid<3> grid(n, tile);
    std::unique_ptr<tessera::Field<double, 3>> field;
    try {
      field = std::make_unique<tessera::Field<double, 3>>(grid, 0, tessera::Boundaries<3>{}, "u");
    } catch (const tessera::Error&) {
      continue;  // too few tiles, or no block per rank: the tiling does not fit the rank count
    }
    ++done;
    SCOPED_TRACE(grid.describe());
    tessera::Field<double, 3>& u = *field;
    u.fill(Wild{});
    if (values.empty()) values = u.gather();
    const double want = reference::exact_sum(values);
    const double got = tessera::sum(u);
    EXPECT_EQ(bits_of(got), bits_of(want)) << got << " vs " << want;
    std::vector<double> energy(values.size());
    std::transform(values.begin(), values.end(), energy.begin(), SquarePlusHalf{});
    EXPECT_EQ(bits_of(tessera::sum(u, SquarePlusHalf{})), bits_of(reference::exact_sum(energy)));
  }
  EXPECT_EQ(done, tilings) << "too few tilings fit the rank count";
  // The values are chosen so that the order would show: a plain fold in reverse order differs
  // from one in order.
  EXPECT_NE(std::accumulate(values.begin(), values.end(), 0.0),
            std::accumulate(values.rbegin(), values.rend(), 0.0));
}

}  // namespace test
