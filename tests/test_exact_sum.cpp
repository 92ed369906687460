// The exact accumulator (tessera/detail/exact_sum.hpp) against an independent oracle
// (reference::fsum, Shewchuk's algorithm as math.fsum has it) on adversarial inputs: massive
// cancellation, values spread over the whole exponent range, subnormals, signed zeros, inf and
// nan, in shuffled orders and split across merged accumulators.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/detail/exact_sum.hpp>

#include "tests/reference/fsum.hpp"

namespace {

using tessera::detail::ExactSum;
using tessera::detail::SumFront;

std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Through the front (as loops add), one value at a time straight in, and split in `parts`
// merged accumulators: all must give the same bits.
double front_sum(const std::vector<double>& v, int parts = 1) {
  ExactSum total{};
  const std::size_t per =
      (v.size() + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts);
  for (std::size_t start = 0; start < v.size() || start == 0; start += per) {
    ExactSum part{};
    SumFront front;
    for (std::size_t i = start; i < std::min(v.size(), start + per); ++i) front.add(v[i], part);
    front.flush(part);
    total.merge(part);
    if (per == 0) break;
  }
  return total.round();
}
// Through the CPU's vectorised batches (several batches and a partial one for long inputs).
double batch_sum(const std::vector<double>& v) {
  ExactSum total{};
  tessera::detail::SumBatch batch;
  for (double x : v) batch.add(x, total);
  batch.flush(total);
  return total.round();
}
double direct_sum(const std::vector<double>& v) {
  ExactSum s{};
  for (double x : v) s.add(x);
  return s.round();
}

void expect_exact(std::vector<double> v, const char* what) {
  const double want = reference::fsum(v);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 4; ++round) {
    EXPECT_EQ(bits(front_sum(v)), bits(want))
        << what << ": front, order " << round << " gives " << front_sum(v) << ", want " << want;
    EXPECT_EQ(bits(front_sum(v, 3)), bits(want)) << what << ": three merged parts";
    EXPECT_EQ(bits(direct_sum(v)), bits(want)) << what << ": direct";
    EXPECT_EQ(bits(batch_sum(v)), bits(want)) << what << ": batches";
    std::shuffle(v.begin(), v.end(), rng);
  }
}

TEST(ExactSum, Cancellation) {
  expect_exact({1e308, 1.0, -1e308}, "1e308 + 1 - 1e308");
  expect_exact({1.0, 1e100, 1.0, -1e100}, "1 + 1e100 + 1 - 1e100");
  expect_exact({1e16, 1.0, -1e16, 1e-16}, "a tie broken by a tiny value");
  expect_exact({0.1, 0.2, -0.3}, "0.1 + 0.2 - 0.3");
  // 2^53 + 1 + 1: plain double addition in this order gives 2^53, the exact sum 2^53 + 2.
  expect_exact({9007199254740992.0, 1.0, 1.0}, "two halves of an ulp");
  // Exactly half an ulp above 1: ties to even (1.0); with a tiny extra value, up.
  expect_exact({1.0, std::ldexp(1.0, -53)}, "tie to even");
  expect_exact({1.0, std::ldexp(1.0, -53), std::ldexp(1.0, -1074)}, "just above the tie");
  expect_exact({1.0, std::ldexp(1.0, -53), -std::ldexp(1.0, -1074)}, "just below the tie");
}

TEST(ExactSum, OverflowingPartialSumsAndResults) {
  const double big = std::numeric_limits<double>::max();
  // (The oracle's partial sums would overflow here: the expected values are given.)
  for (const auto& v : {std::vector<double>{big, big, -big}, {-big, big, big}, {big, -big, big}}) {
    EXPECT_EQ(front_sum(v), big);
    EXPECT_EQ(front_sum(v, 3), big);
    EXPECT_EQ(direct_sum(v), big);
  }
  EXPECT_EQ(front_sum({big, big, 1.0, -big, -big}), 1.0);
  std::vector<double> lots(400, big);  // partial sums far past the largest double, in batches
  lots.insert(lots.end(), 400, -big);
  lots.push_back(0.5);
  EXPECT_EQ(batch_sum(lots), 0.5);
  EXPECT_EQ(front_sum(lots, 3), 0.5);
  EXPECT_EQ(direct_sum(lots), 0.5);
  // The exact sum exceeds the largest double: inf, as IEEE rounding gives.
  const double two = direct_sum({big, big});
  EXPECT_EQ(two, std::numeric_limits<double>::infinity());
  EXPECT_EQ(front_sum({big, big}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(front_sum({-big, -big, big / 4}), -std::numeric_limits<double>::infinity());
  // Max plus less than half an ulp stays max.
  EXPECT_EQ(front_sum({big, std::ldexp(1.0, 969)}), big);
}

TEST(ExactSum, ManyTinyValuesAndSubnormals) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  expect_exact(std::vector<double>(100000, tiny), "100000 x denorm_min");
  std::vector<double> v(20000, 1e-300);
  v.push_back(1.0);
  v.push_back(-1.0);
  expect_exact(v, "1e-300s around a cancelled 1");
  std::vector<double> sub;
  for (int k = 1; k < 52; ++k) sub.push_back(std::ldexp(1.0, -1074 + k) * (k % 2 ? 1 : -1));
  expect_exact(sub, "alternating subnormals");
  // The result itself subnormal, from normal values.
  expect_exact({std::numeric_limits<double>::min(), -std::numeric_limits<double>::min() / 2 * 1.5},
               "a subnormal difference");
  // Many small values next to one large one: each far below the large one's ulp.
  std::vector<double> w(50000, 1e-20);
  w.push_back(1e20);
  expect_exact(w, "1e20 + 50000 x 1e-20");
}

TEST(ExactSum, RandomValuesOverTheWholeRange) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> exponent(-1070, 1000);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> v(1000);
    for (double& x : v)
      x = std::ldexp(mantissa(rng), trial % 2 ? exponent(rng) : exponent(rng) / 20);
    expect_exact(v, "random exponents");
  }
}

TEST(ExactSum, SignsAndZeros) {
  EXPECT_EQ(bits(direct_sum({})), bits(0.0));
  EXPECT_EQ(bits(front_sum({})), bits(0.0));
  EXPECT_EQ(bits(front_sum({-0.0, -0.0})), bits(-0.0));
  EXPECT_EQ(bits(direct_sum({-0.0})), bits(-0.0));
  EXPECT_EQ(bits(front_sum({-0.0, 0.0})), bits(0.0));
  EXPECT_EQ(bits(front_sum({1.5, -1.5})), bits(0.0));
  EXPECT_EQ(bits(front_sum({-0.0, -0.0}, 2)), bits(-0.0));
  EXPECT_EQ(bits(batch_sum(std::vector<double>(300, -0.0))), bits(-0.0));
  EXPECT_EQ(bits(batch_sum({})), bits(0.0));
  expect_exact({-1.0, -2.0, -1e-30}, "negative");
  expect_exact({-1e300, -1e300, 3e300, -1e-300}, "mixed signs");
}

TEST(ExactSum, InfAndNanAsIeee) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_EQ(front_sum({1.0, inf, -5.0}), inf);
  EXPECT_EQ(front_sum({1.0, -inf, 1e308, 1e308}), -inf);
  EXPECT_TRUE(std::isnan(front_sum({1.0, inf, -inf})));
  EXPECT_TRUE(std::isnan(front_sum({nan, 1.0})));
  EXPECT_TRUE(std::isnan(front_sum({1.0, 2.0, nan}, 3)));
  EXPECT_TRUE(std::isnan(direct_sum({inf, nan})));
  std::vector<double> many(1000, 1.0);
  many[517] = -inf;
  EXPECT_EQ(batch_sum(many), -inf);
  many[900] = nan;
  EXPECT_TRUE(std::isnan(batch_sum(many)));
}

// The superaccumulator normalises its words before they could overflow: 2^40 - 1 copies of a
// value with every mantissa bit set, made by merging an accumulator with itself.
TEST(ExactSum, ManyMergesStayExact) {
  const double value = std::ldexp(9007199254740991.0, 900);  // (2^53 - 1) 2^900
  ExactSum one{};
  one.add(value);
  ExactSum total{};
  for (int k = 0; k < 40; ++k) {  // total = 2 total + value: (2^40 - 1) values
    const ExactSum copy = total;
    total.merge(copy);
    total.merge(one);
  }
  EXPECT_EQ(bits(total.round()), bits(reference::fsum({std::ldexp(value, 40), -value})));
  EXPECT_NE(total.round(), std::ldexp(value, 40));  // the difference is visible
}

}  // namespace
