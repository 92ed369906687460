// NAS MG's slab tasks: resid and psinv on one z slab of a tiled level, reading its neighbours'
// planes in place (CPU rows and CUDA bodies, both from the operators of operators.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "apps/mg/gpu.hpp"
#include "apps/mg/operators.hpp"

namespace apps {

// The tiled levels on one rank, where every tile is a z slab (whole x-y planes) and its
// neighbours' planes are in the same memory: resid and psinv as one task per slab that reads
// the planes next to it straight from the slabs below and above (t - 1 and t + 1, periodic),
// and wraps x and y itself, instead of a halo-pack, a boundary copy and the stencil per tile
// (three links of the chain per operator, and the copies). Both update in place, as NPB does
// (psinv writes u, resid r; no third field, no swap). The same arithmetic as Resid and Psinv
// at every point, so the same bits as the stencils.
namespace slab {

// Rows of a z slab between its neighbours: plane -1 is the last plane of `below`, plane nz the
// first of `above`; y wraps (the slab holds whole planes).
struct Planes {
  tessera::TileView<const double, 3> below, here, above;
  const double* row(std::int64_t y, std::int64_t z) const {
    const std::int64_t ny = here.extent[1];
    y = y < 0 ? ny - 1 : (y == ny ? 0 : y);
    if (z < 0) return &below(0, y, below.extent[2] - 1);
    if (z == here.extent[2]) return &above(0, y, 0);
    return &here(0, y, z);
  }
  // coarse::cross_sums of row (y, z), x wrapped: f[x + 1] and c[x + 1] for x in [-1, nx].
  void cross_sums(std::int64_t y, std::int64_t z, double* __restrict f,
                  double* __restrict c) const {
    const std::int64_t nx = here.extent[0];
    const double *ym = row(y - 1, z), *yp = row(y + 1, z), *zm = row(y, z - 1), *zp = row(y, z + 1);
    const double *mm = row(y - 1, z - 1), *pm = row(y + 1, z - 1), *mp = row(y - 1, z + 1),
                 *pp = row(y + 1, z + 1);
    for (std::int64_t x = 0; x < nx; ++x) {
      f[x + 1] = ym[x] + yp[x] + zm[x] + zp[x];
      c[x + 1] = mm[x] + pm[x] + mp[x] + pp[x];
    }
    f[0] = f[nx];  // the same four values, added in the same order, as at x = nx - 1
    c[0] = c[nx];
    f[nx + 1] = f[1];
    c[nx + 1] = c[1];
  }
};

#if TESSERA_CUDA_BODIES
// A field of a slab and its neighbours read as In reads it, centred on point (x, y, z) of the
// slab: x and y wrap, plane -1 is below's last, plane nz above's first (the CUDA bodies).
struct SlabIn {
  tessera::TileView<const double, 3> below, here, above;
  std::int64_t x, y, z;
  TESSERA_HD double operator()(int dx = 0, int dy = 0, int dz = 0) const {
    const auto wrap = [](std::int64_t i, std::int64_t n) {
      return i < 0 ? n - 1 : (i == n ? 0 : i);
    };
    const std::int64_t i = wrap(x + dx, here.extent[0]), j = wrap(y + dy, here.extent[1]),
                       k = z + dz;
    if (k < 0) return below(i, j, below.extent[2] - 1);
    if (k == here.extent[2]) return above(i, j, 0);
    return here(i, j, k);
  }
};
struct ResidAt {
  apps::Resid k;
  tessera::TileView<const double, 3> below, here, above;
  const double* v;
  std::int64_t vsy, vsz;
  View r;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    r(x, y, z) = k.of(SlabIn{below, here, above, x, y, z}, v[x + y * vsy + z * vsz]);
  }
};
struct PsinvAt {
  apps::Psinv k;
  tessera::TileView<const double, 3> below, here, above;
  View u;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    u(x, y, z) = k.of(SlabIn{below, here, above, x, y, z}, k.from_zero ? 0.0 : u(x, y, z));
  }
};
#endif

// r = v - A u on one slab: views u below, here and above, then v (the top's right-hand side)
// and r, or only r, read as v (NPB's resid(u, r, r), in place).
struct Resid {
  apps::Resid k;
  void cpu(tessera::TileView<const double, 3> below, tessera::TileView<const double, 3> here,
           tessera::TileView<const double, 3> above, tessera::TileView<const double, 3> v,
           View r) const {
    run(Planes{below, here, above}, v.data, v.sy, v.sz, r);
  }
  void cpu(tessera::TileView<const double, 3> below, tessera::TileView<const double, 3> here,
           tessera::TileView<const double, 3> above, View r) const {
    run(Planes{below, here, above}, r.data, r.sy, r.sz, r);
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<const double, 3> below,
            tessera::TileView<const double, 3> here, tessera::TileView<const double, 3> above,
            tessera::TileView<const double, 3> v, View r) const {
    for_points("mg_slab_resid", stream, ResidAt{k, below, here, above, v.data, v.sy, v.sz, r},
               r.extent[0], r.extent[1], r.extent[2]);
  }
  void cuda(void* stream, tessera::TileView<const double, 3> below,
            tessera::TileView<const double, 3> here, tessera::TileView<const double, 3> above,
            View r) const {
    for_points("mg_slab_resid", stream, ResidAt{k, below, here, above, r.data, r.sy, r.sz, r},
               r.extent[0], r.extent[1], r.extent[2]);
  }
#endif
  void run(const Planes& u, const double* v0, std::int64_t vsy, std::int64_t vsz,
           const View& r) const {
    const std::int64_t nx = r.extent[0];
    std::vector<double> scratch(2 * static_cast<std::size_t>(nx + 2));
    double *u1 = scratch.data(), *u2 = u1 + nx + 2;
    for (std::int64_t z = 0; z < r.extent[2]; ++z)
      for (std::int64_t y = 0; y < r.extent[1]; ++y) {
        u.cross_sums(y, z, u1, u2);
        coarse::resid_row(k, v0 + y * vsy + z * vsz, u.row(y, z), u1, u2, &r(0, y, z), nx);
      }
  }
};

// u = u + C r on one slab.
struct Psinv {
  apps::Psinv k;
  void cpu(tessera::TileView<const double, 3> below, tessera::TileView<const double, 3> here,
           tessera::TileView<const double, 3> above, View u) const {
    const Planes r{below, here, above};
    const std::int64_t nx = u.extent[0];
    std::vector<double> scratch(3 * static_cast<std::size_t>(nx + 2));
    double *r1 = scratch.data(), *r2 = r1 + nx + 2, *rc = r2 + nx + 2;
    for (std::int64_t z = 0; z < u.extent[2]; ++z)
      for (std::int64_t y = 0; y < u.extent[1]; ++y) {
        r.cross_sums(y, z, r1, r2);
        const double* row = r.row(y, z);  // the centre row, x wrapped: rc[x + 1] = r(x)
        std::memcpy(rc + 1, row, static_cast<std::size_t>(nx) * sizeof(double));
        rc[0] = row[nx - 1];
        rc[nx + 1] = row[0];
        coarse::psinv_row(k, rc + 1, r1, r2, &u(0, y, z), nx);
      }
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<const double, 3> below,
            tessera::TileView<const double, 3> here, tessera::TileView<const double, 3> above,
            View u) const {
    for_points("mg_slab_psinv", stream, PsinvAt{k, below, here, above, u}, u.extent[0], u.extent[1],
               u.extent[2]);
  }
#endif
};

}  // namespace slab

}  // namespace apps
