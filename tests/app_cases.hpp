// The application cases the shared-memory and distributed tests share: cardiac (and cloudsim)
// run on tiles against their serial references.
#pragma once

#include <algorithm>

#include "apps/cardiac/cardiac.hpp"
#include "apps/cloudsim/cloudsim.hpp"
#include "tests/reference/cardiac.hpp"
#include "tests/reference/cloudsim.hpp"
#include "tests/test_support.hpp"

namespace test {

// Runs cardiac for `steps` steps, from the classic start or (noisy) from values that differ
// near every face, so that the boundary rule matters, `depth` steps per exchange (default: the
// app's, the deepest the tiles allow); e and r bitwise equal to the serial reference, and the
// extrema reduction equal to the reference's min and max of e.
template <int D>
void expect_cardiac_matches_reference(const tessera::Grid<D>& grid, int steps, bool noisy,
                                      int depth = tessera::kAutoDepth) {
  apps::Cardiac<D> model(grid, depth);
  if (noisy) {
    model.e.fill([](tessera::Index<D> p) { return noise<D>(p); });
    model.r.fill([](tessera::Index<D> p) { return 0.3 * noise<D>(p); });
  }
  std::array<std::int64_t, 3> n{1, 1, 1};
  for (int a = 0; a < D; ++a) n[a] = grid.extent()[a];
  const reference::CardiacState start{model.e.gather(), model.r.gather()};
  model.advance(steps);
  const reference::CardiacState want = reference::cardiac<D>(n, steps, start);
  expect_bitwise_equal(model.e.gather(), want.e);
  expect_bitwise_equal(model.r.gather(), want.r);
  const auto ex = model.extrema();
  EXPECT_EQ(ex[0], *std::min_element(want.e.begin(), want.e.end()));
  EXPECT_EQ(ex[1], *std::max_element(want.e.begin(), want.e.end()));
  EXPECT_LT(ex[0], ex[1]);  // a wave, not a constant (nor NaN)
}

// Runs cloudsim for `steps` steps (PSkel's dt too, while it is still finite), `depth` steps per
// exchange (default: the app's, the deepest the tiles allow); temperatures bitwise equal to the
// serial reference, the band count and extrema equal to the reference's.
inline void expect_cloudsim_matches_reference(const tessera::Grid<2>& grid, int steps, float dt,
                                              int depth = tessera::kAutoDepth) {
  apps::CloudParams params;
  params.cloud_radius = static_cast<int>(std::min(grid.extent()[0], grid.extent()[1]) / 3);
  params.dt = dt;
  apps::CloudSim sim(grid, params, depth);
  const std::vector<float> t0 = sim.t.gather();
  sim.advance(steps);
  const std::vector<float> want =
      reference::cloudsim(grid.extent()[0], grid.extent()[1], steps, t0, sim.wind_x.gather(),
                          sim.wind_y.gather(), params);
  const std::vector<float> got = sim.t.gather();
  expect_bitwise_equal(got, want);
  const auto cells = sim.cells();
  double band = 0;
  for (float v : want)
    band += (v >= sim.dew - params.dew_band && v <= sim.dew + params.dew_band) ? 1 : 0;
  EXPECT_EQ(cells[0], band);
  EXPECT_EQ(cells[1], *std::min_element(want.begin(), want.end()));
  EXPECT_EQ(cells[2], *std::max_element(want.begin(), want.end()));
  if (dt < 0.005f) EXPECT_GT(band, 0);  // PSkel's step soon drives every cell out of the band
  EXPECT_LT(cells[1], cells[2]);
}

}  // namespace test
