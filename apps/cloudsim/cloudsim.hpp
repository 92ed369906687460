// CloudSim, PSkel's cloud-dynamics cellular automaton (da Silva and Gouvea; the public PSkel
// repository's apps/cloudsim): the temperature of each cell relaxes towards its 4 neighbours
// (heat conduction, constant K) and, in cells with 4 neighbours, is carried by the wind from
// the upwind-side neighbour along x and y; the wind fields are read-only inputs read at the
// point only (tessera::centre: never exchanged). Float arithmetic in PSkel's order, the edge
// and corner cases as PSkel writes them (cells on the grid's edge average their 2 or 3
// neighbours inside the grid and get no wind term).
// Deviations, all in the set-up: PSkel's rand() draws (cloud temperatures, wind
// disturbances) are a per-point hash here, so that tiles fill independently; PSkel's edge
// tests compare rows with the width and columns with the height (the same on its square
// grids), here x with the width and y with the height. PSkel has no separate water field: the
// condensed-water diagnostic printed is the number of cells inside the dew-point band
// [dew - 0.5, dew + 0.5] where the cloud starts (a fused reduction with T's extrema).
#pragma once

#include <cmath>
#include <cstdint>

#include <tessera/tessera.hpp>

namespace apps {

struct CloudParams {
  float k = 0.0243f;  // thermal conductivity (PSkel's K)
  float cell_length = 0.1f;
  // PSkel's deltaT is 0.01: with its winds (15, 12) and cell length 0.1 the wind term moves
  // 1.5 + 1.2 cells per step (CFL > 1), so temperatures grow without bound and overflow to
  // infinity after about 60 steps (PSkel only timed it). 0.001 keeps the same rule stable;
  // --dt 0.01 gives PSkel's exact set-up.
  float dt = 0.001f;
  float ambient = -3.0f;    // atmospheric temperature (C)
  float pressure = 700.0f;  // hPa
  float wind_x = 15, wind_y = 12, disturb = 0.1f;
  float dew_band = 0.5f;  // PSkel's DELTAPO
  int cloud_radius = 20;
};

// PSkel's dew point of the atmosphere (CalculateDewPoint), with its float/double mix.
inline float cloudsim_dew_point(const CloudParams& p) {
  const float kelvin = p.ambient + 273.15f;
  const float mmhg = p.pressure * 0.750062f;
  const float psychrometric = 6.7f * std::pow(10.0f, -4.0f);
  const float depression = 1.2f;
  const float esu = static_cast<float>(
      std::pow(10, ((-2937.4f / kelvin) - 4.9283f * std::log10(kelvin) + 23.5470f)));
  const float rpv = esu * 0.750062f - (psychrometric * mmhg * depression);
  return (186.4905f - 237.3f * std::log10(rpv)) / (std::log10(rpv) - 8.2859f);
}

// A reproducible value in [0, 1) per point and stream (PSkel draws rand()/RAND_MAX).
inline float cloudsim_draw(std::int64_t x, std::int64_t y, std::uint64_t stream) {
  std::uint64_t h = static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ull ^
                    static_cast<std::uint64_t>(y) * 0xC2B2AE3D27D4EB4Full ^
                    stream * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<float>(h >> 40) / 16777216.0f;
}

// The start: ambient temperature, a disc of cloud at the centre (PSkel's row/column loops)
// with temperatures drawn in the dew-point band.
inline float cloudsim_t0(tessera::Index<2> p, std::int64_t nx, std::int64_t ny,
                         const CloudParams& c, float dew) {
  const std::int64_t row = p[1], col = p[0], x0 = ny / 2, y0 = nx / 2, r = c.cloud_radius;
  if (row >= x0 - r && row < x0 + r) {
    const auto s = static_cast<std::int64_t>(
        std::floor(std::sqrt(std::pow(static_cast<float>(r), 2.0) -
                             std::pow(static_cast<float>(x0) - static_cast<float>(row), 2))));
    if (col >= y0 - s && col <= y0 + s) {
      const float lo = dew - c.dew_band, hi = dew + c.dew_band;
      return lo + cloudsim_draw(col, row, 0) * (hi - lo);
    }
  }
  return c.ambient;
}
inline float cloudsim_wind(tessera::Index<2> p, float base, float disturb, std::uint64_t stream) {
  return (base - disturb) + cloudsim_draw(p[0], p[1], stream) * 2 * disturb;
}

// One step at one cell: PSkel's stencilKernel (its input(i, j) is row i = y, column j = x).
struct CloudStep {
  std::int64_t nx, ny;
  CloudParams c;
  // A cell whose four neighbours lie inside the grid (the stencil's interior fast path on CPU
  // workers, docs/api.md): operator()'s arithmetic for that case, without the edge cases.
  TESSERA_HD void interior(tessera::Index<2>, tessera::In<float> t, tessera::In<float> wind_x,
                           tessera::In<float> wind_y, tessera::Out<float> next) const {
    const float in = t(), down = t(0, -1), left = t(-1, 0), right = t(1, 0), up = t(0, 1);
    const float sum = (in - down) + (in - left) + (in - right) + (in - up);
    next = with_wind(in, sum / 4.0f, right, left, up, down, wind_x(), wind_y());
  }
  // PSkel's update from the mean difference and, inside, the wind: towards the upwind
  // neighbour along each axis.
  TESSERA_HD float with_wind(float in, float mean, float right, float left, float up, float down,
                             float xwind, float ywind) const {
    const float xf = xwind > 0 ? 1.0f : -1.0f, yf = ywind > 0 ? 1.0f : -1.0f;
    const float tx = xwind > 0 ? right : left, ty = ywind > 0 ? up : down;
    const float cx = xf * xwind, cy = yf * ywind;
    const float temp_wind =
        (-cx * ((in - tx) / c.cell_length)) - (cy * ((in - ty) / c.cell_length));
    const float result = in + -c.k * mean * c.dt;
    return result + temp_wind * c.dt;
  }
  // Any cell. Every value is read first and the cases are combined with selects, so that the
  // point loop vectorises (docs/api.md). The ghost points beyond the grid's faces are read but
  // never used.
  TESSERA_HD void operator()(tessera::Index<2> p, tessera::In<float> t, tessera::In<float> wind_x,
                             tessera::In<float> wind_y, tessera::Out<float> next) const {
    const std::int64_t x = p[0], y = p[1];
    const float in = t(), down = t(0, -1), left = t(-1, 0), right = t(1, 0), up = t(0, 1);
    const float a = in - down, b = in - left, r = in - right, u = in - up;
    const bool x0 = x == 0, x1 = x == nx - 1, y0 = y == 0, y1 = y == ny - 1;
    const bool inside = !(x0 | x1 | y0 | y1);
    // PSkel's sums in its order of terms: four inside; at an edge the three neighbours within
    // the grid, at a corner the two. One select per case, corners after edges (a chain of
    // nested ternaries left a branch in the loop).
    float sum = (b + r) + u;  // y == 0
    sum = x1 ? (a + b) + u : sum;
    sum = y1 ? (a + b) + r : sum;
    sum = x0 ? (a + u) + r : sum;
    sum = (x1 & y0) ? b + u : sum;
    sum = (x1 & y1) ? a + b : sum;
    sum = (x0 & y1) ? a + r : sum;
    sum = (x0 & y0) ? u + r : sum;
    sum = inside ? ((a + b) + r) + u : sum;
    const float neighbours = inside ? 4.0f : ((x0 | x1) & (y0 | y1)) ? 2.0f : 3.0f;
    const float mean = sum / neighbours;
    // No wind at the edges: temp_wind 0 there.
    next = inside ? with_wind(in, mean, right, left, up, down, wind_x(), wind_y())
                  : (in + -c.k * mean * c.dt) + 0.0f * c.dt;
  }
};

// Cells in the dew-point band (condensed water), and T's extrema, in one pass.
struct CloudCells {
  float lo, hi;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<float> t,
                             tessera::Reducer<tessera::Sum> cells,
                             tessera::Reducer<tessera::Min> tmin,
                             tessera::Reducer<tessera::Max> tmax) const {
    if (t() >= lo && t() <= hi) cells(1.0);
    tmin(t());
    tmax(t());
  }
};

struct CloudSim {
  CloudParams params;
  float dew;
  std::int64_t nx, ny;
  tessera::Stencil<2> step{"cloudsim", tessera::Shape::Star, 1};
  int depth;  // steps per halo exchange (temporal blocking); the fields' ghost layers
  // The functor counts only the neighbours inside the grid (PSkel's edge rule): the ghost values
  // beyond the grid's faces are never read, and Dirichlet faces let the steps run in blocks.
  // The winds never change: exchanged once, as deep as the blocks read them.
  tessera::Field<float, 2> t, next, wind_x, wind_y;

  // `steps_per_exchange`: steps per halo exchange, each block in one task per tile
  // (tessera::kAutoDepth: the deepest the tiles allow); the result is the same for any.
  CloudSim(const tessera::Grid<2>& grid, CloudParams p,
           int steps_per_exchange = tessera::kAutoDepth)
      : params(p),
        dew(cloudsim_dew_point(p)),
        nx(grid.extent()[0]),
        ny(grid.extent()[1]),
        depth(steps_per_exchange == tessera::kAutoDepth ? step.auto_depth(grid)
                                                        : steps_per_exchange),
        t(grid, depth, tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0)), "t"),
        next(grid, depth, tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0)), "t_next"),
        wind_x(grid, depth, {}, "wind_x"),
        wind_y(grid, depth, {}, "wind_y") {
    init();
    wind_x.fill(
        [this](tessera::Index<2> q) { return cloudsim_wind(q, params.wind_x, params.disturb, 1); });
    wind_y.fill(
        [this](tessera::Index<2> q) { return cloudsim_wind(q, params.wind_y, params.disturb, 2); });
  }

  // The starting cloud (again, e.g. after a calibration sweep); the winds never change.
  void init() {
    t.fill([this](tessera::Index<2> q) { return cloudsim_t0(q, nx, ny, params, dew); });
  }

  // `steps` steps, `depth` per exchange; the result ends in t.
  void advance(long steps = 1) {
    step.advance(CloudStep{nx, ny, params}, t, next, steps, depth, tessera::in(wind_x, wind_y));
  }

  // [cells in the dew-point band, min T, max T]
  std::array<double, 3> cells() const {
    return tessera::Loop<2>("cloudsim-cells")
        .apply(CloudCells{dew - params.dew_band, dew + params.dew_band}, tessera::in(t),
               tessera::reductions(tessera::Sum{}, tessera::Min{}, tessera::Max{}))
        .get();
  }
};

}  // namespace apps
