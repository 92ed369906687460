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
  float k = 0.0243f;          // thermal conductivity (PSkel's K)
  float cell_length = 0.1f;
  // PSkel's deltaT is 0.01: with its winds (15, 12) and cell length 0.1 the wind term moves
  // 1.5 + 1.2 cells per step (CFL > 1), so temperatures grow without bound and overflow to
  // infinity after about 60 steps (PSkel only timed it). 0.001 keeps the same rule stable;
  // --dt 0.01 gives PSkel's exact set-up.
  float dt = 0.001f;
  float ambient = -3.0f;      // atmospheric temperature (C)
  float pressure = 700.0f;    // hPa
  float wind_x = 15, wind_y = 12, disturb = 0.1f;
  float dew_band = 0.5f;      // PSkel's DELTAPO
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
                    static_cast<std::uint64_t>(y) * 0xC2B2AE3D27D4EB4Full ^ stream * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<float>(h >> 40) / 16777216.0f;
}

// The start: ambient temperature, a disc of cloud at the centre (PSkel's row/column loops)
// with temperatures drawn in the dew-point band.
inline float cloudsim_t0(tessera::Index<2> p, std::int64_t nx, std::int64_t ny, const CloudParams& c,
                         float dew) {
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
  TESSERA_HD void operator()(tessera::Index<2> p, tessera::In<float> t, tessera::In<float> wind_x,
                             tessera::In<float> wind_y, tessera::Out<float> next) const {
    const std::int64_t x = p[0], y = p[1];
    const float in = t();
    // The interior, almost every cell, first: four neighbours and the wind, and a division by
    // the constant 4 (the same bits as by a count of 4, without a divide instruction).
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1) {
      const float sum = (in - t(0, -1)) + (in - t(-1, 0)) + (in - t(1, 0)) + (in - t(0, 1));
      const float xwind = wind_x(), ywind = wind_y();
      const int xf = xwind > 0 ? 1 : -1, yf = ywind > 0 ? 1 : -1;
      const float tx = xf > 0 ? t(1, 0) : t(-1, 0);
      const float cx = static_cast<float>(xf) * xwind;
      const float ty = yf > 0 ? t(0, 1) : t(0, -1);
      const float cy = static_cast<float>(yf) * ywind;
      const float temp_wind = (-cx * ((in - tx) / c.cell_length)) - (cy * ((in - ty) / c.cell_length));
      const float result = in + -c.k * (sum / 4.0f) * c.dt;
      next = result + temp_wind * c.dt;
      return;
    }
    // The edges: two neighbours at a corner, three elsewhere, no wind.
    float sum;
    int neighbours = 3;
    if (x == 0 && y == 0) {
      sum = (in - t(0, 1)) + (in - t(1, 0));
      neighbours = 2;
    } else if (x == 0 && y == ny - 1) {
      sum = (in - t(0, -1)) + (in - t(1, 0));
      neighbours = 2;
    } else if (x == nx - 1 && y == ny - 1) {
      sum = (in - t(0, -1)) + (in - t(-1, 0));
      neighbours = 2;
    } else if (x == nx - 1 && y == 0) {
      sum = (in - t(-1, 0)) + (in - t(0, 1));
      neighbours = 2;
    } else if (x == 0) {
      sum = (in - t(0, -1)) + (in - t(0, 1)) + (in - t(1, 0));
    } else if (y == ny - 1) {
      sum = (in - t(0, -1)) + (in - t(-1, 0)) + (in - t(1, 0));
    } else if (x == nx - 1) {
      sum = (in - t(0, -1)) + (in - t(-1, 0)) + (in - t(0, 1));
    } else {  // y == 0
      sum = (in - t(-1, 0)) + (in - t(1, 0)) + (in - t(0, 1));
    }
    const float conduction = -c.k * (sum / static_cast<float>(neighbours)) * c.dt;
    const float result = in + conduction;
    next = result + 0.0f * c.dt;
  }
};

// Cells in the dew-point band (condensed water), and T's extrema, in one pass.
struct CloudCells {
  float lo, hi;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<float> t, tessera::Reducer<tessera::Sum> cells,
                             tessera::Reducer<tessera::Min> tmin, tessera::Reducer<tessera::Max> tmax) const {
    if (t() >= lo && t() <= hi) cells(1.0);
    tmin(t());
    tmax(t());
  }
};

struct CloudSim {
  CloudParams params;
  float dew;
  std::int64_t nx, ny;
  tessera::Field<float, 2> t, next, wind_x, wind_y;
  tessera::Stencil<2> step{"cloudsim", tessera::Shape::Star, 1};

  CloudSim(const tessera::Grid<2>& grid, CloudParams p)
      : params(p),
        dew(cloudsim_dew_point(p)),
        nx(grid.extent()[0]),
        ny(grid.extent()[1]),
        t(grid, 1, tessera::Boundaries<2>::all(tessera::Boundary::neumann()), "t"),
        next(grid, 1, tessera::Boundaries<2>::all(tessera::Boundary::neumann()), "t_next"),
        wind_x(grid, 0, {}, "wind_x"),
        wind_y(grid, 0, {}, "wind_y") {
    init();
    wind_x.fill([this](tessera::Index<2> q) { return cloudsim_wind(q, params.wind_x, params.disturb, 1); });
    wind_y.fill([this](tessera::Index<2> q) { return cloudsim_wind(q, params.wind_y, params.disturb, 2); });
  }

  // The starting cloud (again, e.g. after a calibration sweep); the winds never change.
  void init() {
    t.fill([this](tessera::Index<2> q) { return cloudsim_t0(q, nx, ny, params, dew); });
  }

  void advance() {
    step.apply(CloudStep{nx, ny, params},
               tessera::in(t, tessera::centre(wind_x), tessera::centre(wind_y)), tessera::out(next));
    tessera::swap(t, next);
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
