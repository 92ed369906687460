// The cases of user tasks, all-pairs interactions and grid hierarchies that the shared-memory
// and distributed tests share, and the error-message helper of their error tests.
#pragma once

#include <cmath>
#include <string>

#include <tessera/levels.hpp>
#include <tessera/task.hpp>

#include "tests/reference/mg.hpp"
#include "tests/test_support.hpp"

namespace test {

// dst(z, y, x) = src(x, y, z) for the points of dst's tile that src's tile holds.
struct TransposeBlock {
  void cpu(tessera::TileView<const double, 3> src, tessera::TileView<double, 3> dst) const {
    for (std::int64_t z = 0; z < src.extent[2]; ++z)
      for (std::int64_t y = 0; y < src.extent[1]; ++y)
        for (std::int64_t x = 0; x < src.extent[0]; ++x) {
          const std::int64_t dx = src.origin[2] + z - dst.origin[0],
                             dy = src.origin[1] + y - dst.origin[1],
                             dz = src.origin[0] + x - dst.origin[2];
          if (dx >= 0 && dx < dst.extent[0] && dy >= 0 && dy < dst.extent[1] && dz >= 0 &&
              dz < dst.extent[2])
            dst(dx, dy, dz) = src(x, y, z);
        }
  }
};

// An nx x ny x nz array in z slabs of `slab` transposed into y slabs of `pencil` of the
// nz x ny x nx array, one task per (destination tile, source tile): the reference's bits.
inline void expect_transpose_matches_reference(std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                               std::int64_t slab, std::int64_t pencil) {
  tessera::Grid<3> slabs({nx, ny, nz}, {nx, ny, slab}), pencils({nz, ny, nx}, {nz, pencil, nx});
  tessera::Field<double, 3> u(slabs, 0, {}, "u"), v(pencils, 0, {}, "v");
  u.fill([](tessera::Index<3> p) { return noise<3>(p); });
  tessera::Task transpose("transpose");
  for (int d = 0; d < pencils.tiles(); ++d)
    for (int s = 0; s < slabs.tiles(); ++s)
      transpose.submit(TransposeBlock{}, tessera::read_tile(u, s), tessera::update_tile(v, d));
  const std::vector<double> a = u.gather(), b = v.gather();
  std::vector<double> want(b.size());
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) want[z + nz * (y + ny * x)] = a[x + nx * (y + ny * z)];
  expect_bitwise_equal(b, want);
}

// NAS MG class S with top tiles `tile_z` thick: the final residual and solution bitwise those
// of the serial reference, and rnm2 within NPB's tolerance of the official value. `one_task`:
// how many coarse levels run as one task per V-cycle (apps::Mg::one_task_levels; -1: any).
inline void expect_mg_class_s_verified(std::int64_t tile_z,
                                       std::int64_t min_points = apps::Mg::kMinTilePoints,
                                       int min_tiles = 1, bool coarse_task = true,
                                       int one_task = -1) {
  const apps::MgClass s = apps::mg_class("S");
  reference::MgReference ref(s.n);
  ref.run(s.iterations);
  apps::Mg mg(s.n, tile_z, 1, min_points, min_tiles, coarse_task);
  if (one_task >= 0) EXPECT_EQ(mg.one_task_levels, one_task);
  mg.initialise();
  mg.resid_top();
  for (int it = 0; it < s.iterations; ++it) {
    mg.mg3p();
    mg.resid_top();
  }
  expect_bitwise_equal(mg.R(mg.lt).gather(), ref.r[static_cast<std::size_t>(mg.lt - 1)].interior());
  expect_bitwise_equal(mg.U(mg.lt).gather(), ref.u[static_cast<std::size_t>(mg.lt - 1)].interior());
  const double rnm2 = mg.rnm2(mg.norms().get(0));
  EXPECT_LE(std::fabs(rnm2 - s.verify_value) / s.verify_value, 1e-8) << "rnm2 " << rnm2;
}

// The message of the tessera::Error that `f` throws, or "no error".
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const tessera::Error& e) { return e.what(); }
  return "no error";
}

}  // namespace test
