// NAS FT on user tasks: the checksums of every iteration bitwise those of the serial reference
// (tests/reference/ft.hpp) for every scheduler and worker count and for tilings that do and do
// not divide the grid; class S verified against NPB's official checksums; one perturbed initial
// value fails verification; bad sizes and classes are refused with the fix.
#include <gmock/gmock.h>

#include <complex>
#include <map>
#include <tuple>

#include "apps/ft/ft.hpp"
#include "tests/reference/ft.hpp"
#include "tests/tile_cases.hpp"

namespace {

std::vector<double> flat(const std::vector<std::complex<double>>& sums) {
  std::vector<double> out;
  for (const auto& s : sums) {
    out.push_back(s.real());
    out.push_back(s.imag());
  }
  return out;
}

// The reference's checksums, computed once per problem.
const std::vector<std::complex<double>>& reference_sums(std::int64_t nx, std::int64_t ny,
                                                        std::int64_t nz, int it) {
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int>,
                  std::vector<std::complex<double>>>
      done;
  auto& sums = done[{nx, ny, nz, it}];
  if (sums.empty()) sums = reference::FtReference(nx, ny, nz).run(it);
  return sums;
}

std::vector<std::complex<double>> run_ft(std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                         int iterations, std::int64_t slab_z,
                                         std::int64_t pencil_x) {
  apps::Ft ft(nx, ny, nz, slab_z, pencil_x);
  ft.setup();
  ft.forward();
  for (int it = 0; it < iterations; ++it) ft.iterate();
  return ft.checksums();
}

class Ft : public testing::TestWithParam<test::Config> {};

TEST_P(Ft, ClassSMatchesReferenceBitwiseAndVerifies) {
  tessera::Runtime rt(test::options(GetParam()));
  const apps::FtClass s = apps::ft_class("S");
  const auto& want = reference_sums(s.nx, s.ny, s.nz, s.iterations);
  for (auto tiles : {std::pair<std::int64_t, std::int64_t>{8, 8}, {64, 16}}) {
    SCOPED_TRACE("slabs " + std::to_string(tiles.first) + " thick, pencils " +
                 std::to_string(tiles.second));
    const auto sums = run_ft(s.nx, s.ny, s.nz, s.iterations, tiles.first, tiles.second);
    test::expect_bitwise_equal(flat(sums), flat(want));
    EXPECT_TRUE(apps::ft_verified(s, sums));
  }
}

TEST_P(Ft, UnevenTilesOfABoxMatchReferenceBitwise) {
  tessera::Runtime rt(test::options(GetParam()));
  // Three different extents (an x/z mix-up shows) and tiles that do not divide them.
  test::expect_bitwise_equal(flat(run_ft(32, 16, 8, 3, 3, 5)), flat(reference_sums(32, 16, 8, 3)));
}

INSTANTIATE_TEST_SUITE_P(Config, Ft, testing::ValuesIn(test::configs()), test::config_name);

TEST(FtVerification, OnePerturbedInitialValueFailsVerification) {
  tessera::Options o;
  o.quiet = true;
  tessera::Runtime rt(o);
  const apps::FtClass s = apps::ft_class("S");
  apps::Ft ft(s.nx, s.ny, s.nz, 8, 8);
  ft.setup();
  const std::vector<double> v = ft.slabs().gather();
  // The real part of point (1, 3, 5), NPB's first sampled point: evolve spreads a value by far
  // less than a grid spacing, so the checksums see changes at or next to their samples only.
  const std::int64_t at = 2 * (1 + 64 * (3 + 64 * 5));
  ft.slabs().fill([&](tessera::Index<3> p) {
    const std::int64_t g = p[0] + 128 * (p[1] + 64 * p[2]);
    return g == at ? v[static_cast<std::size_t>(g)] + 1e-3 : v[static_cast<std::size_t>(g)];
  });
  ft.forward();
  for (int it = 0; it < s.iterations; ++it) ft.iterate();
  const auto sums = ft.checksums();
  EXPECT_FALSE(apps::ft_verified(s, sums)) << "checksum 1: " << sums[0];
  // The unperturbed run passes: the failure is the perturbation's.
  EXPECT_TRUE(apps::ft_verified(s, reference_sums(s.nx, s.ny, s.nz, s.iterations)));
}

TEST(FtErrors, BadClassesAndSizesAreRefusedWithTheFix) {
  using testing::HasSubstr;
  EXPECT_THAT(test::error_of([] { apps::ft_class("U", 48, 64, 64, 6); }),
              HasSubstr("FT class U: x size 48 is not a power of two from 2 to 2^20; give --size"));
  EXPECT_THAT(test::error_of([] { apps::ft_class("U", 64, 64, 1, 6); }),
              HasSubstr("z size 1 is not a power of two"));
  EXPECT_THAT(test::error_of([] { apps::ft_class("U", 8, 8, 8, 0); }),
              HasSubstr("give --iterations 1 or more"));
  EXPECT_THAT(test::error_of([] { apps::ft_class("Q"); }),
              HasSubstr("--class Q is not an FT class; give S, W, A, B"));
  EXPECT_EQ(apps::ft_class("W").nz, 32);
  EXPECT_FALSE(apps::ft_verified(apps::ft_class("U", 8, 8, 8, 2), {{1.0, 1.0}, {1.0, 1.0}}));
}

}  // namespace
