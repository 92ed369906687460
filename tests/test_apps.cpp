// The applications built on loops and centre-only inputs match their serial references bitwise for
// every tiling, scheduler and worker count.
#include "tests/app_cases.hpp"

namespace {

class AppMatchesReference : public testing::TestWithParam<test::Config> {};

TEST_P(AppMatchesReference, Cardiac2dAcrossTilings) {
  tessera::Runtime rt(test::options(GetParam()));
  for (const auto& grid :
       {tessera::Grid<2>({128, 24}, {128, 24}), tessera::Grid<2>({128, 24}, {40, 7}),
        tessera::Grid<2>({128, 24}, {64, 2})}) {
    SCOPED_TRACE(grid.describe());
    test::expect_cardiac_matches_reference<2>(grid, 30, false);
    test::expect_cardiac_matches_reference<2>(grid, 10, true);
  }
  // Temporal blocks of every depth (r updated in place on the ghost points a block computes),
  // the last block shorter, tiles cutting both axes; the blocks refresh the mirror faces.
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    test::expect_cardiac_matches_reference<2>(tessera::Grid<2>({128, 24}, {40, 8}), 11, true,
                                              depth);
  }
}

TEST_P(AppMatchesReference, Cardiac3dAcrossTilings) {
  tessera::Runtime rt(test::options(GetParam()));
  for (const auto& grid :
       {tessera::Grid<3>({128, 10, 6}, {128, 10, 6}), tessera::Grid<3>({128, 10, 6}, {50, 4, 3})}) {
    SCOPED_TRACE(grid.describe());
    test::expect_cardiac_matches_reference<3>(grid, 20, false);
    test::expect_cardiac_matches_reference<3>(grid, 10, true);
  }
  test::expect_cardiac_matches_reference<3>(tessera::Grid<3>({128, 10, 8}, {50, 5, 4}), 7, true, 3);
}

TEST_P(AppMatchesReference, CloudsimAcrossTilings) {
  tessera::Runtime rt(test::options(GetParam()));
  for (const auto& grid :
       {tessera::Grid<2>({40, 36}, {40, 36}), tessera::Grid<2>({40, 36}, {13, 8}),
        tessera::Grid<2>({37, 41}, {10, 41})}) {
    SCOPED_TRACE(grid.describe());
    test::expect_cloudsim_matches_reference(grid, 12, 0.001f);
    test::expect_cloudsim_matches_reference(grid, 6, 0.01f);      // PSkel's own (unstable) step
    test::expect_cloudsim_matches_reference(grid, 7, 0.001f, 1);  // one step per exchange
  }
  // Blocks of 3 steps, the last one shorter, on tiles every block fits.
  test::expect_cloudsim_matches_reference(tessera::Grid<2>({40, 36}, {10, 9}), 11, 0.001f, 3);
}

INSTANTIATE_TEST_SUITE_P(Config, AppMatchesReference, testing::ValuesIn(test::configs()),
                         test::config_name);

}  // namespace
