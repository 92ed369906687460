// Sums are exact and rounded once: the same bits for any tiling, scheduler and worker count,
// equal to the exact sum of the values computed independently (reference::exact_sum, an fsum).
// Min and max are the extreme values.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <tessera/reduce.hpp>

#include "tests/reduce_cases.hpp"

namespace {

struct Energy {
  TESSERA_HD double operator()(double v) const { return v * v + 0.5; }
};

class ReduceMatchesReference : public testing::TestWithParam<test::Config> {};

// The property: 20 random tilings (uneven last tiles mostly), one bit pattern, the exact sum.
TEST_P(ReduceMatchesReference, SumIsTheExactSumForEveryTiling) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_exact_sums_for_random_tilings(20);
}

TEST_P(ReduceMatchesReference, SumMinMaxAndSumOfFunction) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<3> grid({23, 17, 11}, {6, 5, 4});
  tessera::Field<double, 3> u(grid, 1, {}, "u");
  u.fill([](tessera::Index<3> p) { return test::noise<3>(p) - 0.3; });
  const std::vector<double> values = u.gather();
  EXPECT_EQ(tessera::sum(u), reference::exact_sum(values));
  EXPECT_EQ(tessera::min(u), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(tessera::max(u), *std::max_element(values.begin(), values.end()));
  std::vector<double> energy(values.size());
  std::transform(values.begin(), values.end(), energy.begin(), Energy{});
  EXPECT_EQ(tessera::sum(u, Energy{}), reference::exact_sum(energy));
}

TEST_P(ReduceMatchesReference, IntegerAndByteFieldsIn2D) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({31, 19}, {8, 7});
  tessera::Field<std::int32_t, 2> k(grid, 1, {}, "k");
  tessera::Field<std::uint8_t, 2> b(grid, 1, {}, "b");
  k.fill([](tessera::Index<2> p) {
    return static_cast<std::int32_t>(test::noise<2>(p) * 2000) - 1000;
  });
  b.fill([](tessera::Index<2> p) { return static_cast<std::uint8_t>(test::noise<2>(p) * 255); });
  const auto kv = k.gather();
  const auto bv = b.gather();
  EXPECT_EQ(tessera::sum(k), static_cast<double>(std::accumulate(kv.begin(), kv.end(), 0LL)));
  EXPECT_EQ(tessera::sum(b), static_cast<double>(std::accumulate(bv.begin(), bv.end(), 0LL)));
  EXPECT_EQ(tessera::min(k), *std::min_element(kv.begin(), kv.end()));
  EXPECT_EQ(tessera::max(b), *std::max_element(bv.begin(), bv.end()));
}

// inf and nan reach a sum as IEEE addition would give them, whatever the tiling.
TEST_P(ReduceMatchesReference, InfinityAndNanPropagate) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({9, 7}, {4, 3});
  tessera::Field<double, 2> u(grid, 0, {}, "u");
  const double inf = std::numeric_limits<double>::infinity();
  u.fill([&](tessera::Index<2> p) { return p[0] == 8 && p[1] == 6 ? inf : 1e308; });
  EXPECT_EQ(tessera::sum(u), inf);
  u.fill([&](tessera::Index<2> p) { return p[0] == 0 ? -inf : p[0] == 8 ? inf : 1.0; });
  EXPECT_TRUE(std::isnan(tessera::sum(u)));
  // Partial sums past the largest double, an exact total within it.
  u.fill([](tessera::Index<2> p) { return p[1] < 3 ? 1e307 : p[1] < 6 ? -1e307 : 1.0; });
  EXPECT_EQ(tessera::sum(u), 9.0);
}

// At namespace scope: nvcc cannot instantiate a kernel template on a function-local type.
struct Average {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = 0.25 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
};

// After stencil steps submitted asynchronously, a reduction sees the final values.
TEST_P(ReduceMatchesReference, ReductionWaitsForPendingSteps) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({40, 30}, {10, 10}, {true, true});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), next(grid, 1, {}, "next");
  u.fill([](tessera::Index<2> p) { return test::noise<2>(p); });
  const double before = tessera::sum(u);
  tessera::Stencil<2> avg("average", tessera::Shape::Star, 1);
  for (int s = 0; s < 10; ++s) {
    avg.apply(Average{}, tessera::in(u), tessera::out(next));
    tessera::swap(u, next);
  }
  // Periodic averaging conserves the total (up to rounding) but changes the values.
  EXPECT_NEAR(tessera::sum(u), before, 1e-9);
  EXPECT_LT(tessera::max(u) - tessera::min(u), 1.0);
  EXPECT_EQ(tessera::sum(u), reference::exact_sum(u.gather()));
}

INSTANTIATE_TEST_SUITE_P(Config, ReduceMatchesReference, testing::ValuesIn(test::configs()),
                         test::config_name);

}  // namespace
