// NAS MG's operators (NPB 3.x): resid, psinv, rprj3 and interp as point functors written once
// for the CPU and the GPU (the stencils, Restriction and Prolongation apply them, and the CUDA
// bodies of the tasks below call them per point), and their row loops for the tasks that run a
// whole level (coarse::) or a z slab between its neighbours (slab::) on CPU workers. Every
// formula keeps NPB's grouping of the sums (its u1/u2 partial sums), so the row loops give the
// bits of the functors, and the results follow NPB's reference.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "apps/mg/gpu.hpp"

namespace apps {

// r = v - A u, A's coefficients a[0] (centre), a[2] (edges), a[3] (corners); NPB takes a[1]
// (faces) = 0 and leaves its term out. `v` is the right-hand side (at the top level) or the
// old residual (below).
struct Resid {
  double a0, a2, a3;
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u, tessera::In<double> v,
                             tessera::Out<double> r) const {
    r = of(u, v());
  }
  // v - A u at the point `u` is centred on; U reads u(dx, dy, dz) as In does (In, or the slab
  // tasks' SlabIn, whose neighbours wrap).
  template <class U>
  TESSERA_HD double of(const U& u, double v) const {
    auto u1 = [&](int dx) { return u(dx, -1, 0) + u(dx, 1, 0) + u(dx, 0, -1) + u(dx, 0, 1); };
    auto u2 = [&](int dx) { return u(dx, -1, -1) + u(dx, 1, -1) + u(dx, -1, 1) + u(dx, 1, 1); };
    return v - a0 * u() - a2 * (u2(0) + u1(-1) + u1(1)) - a3 * (u2(-1) + u2(1));
  }
};

// The smoother, u = u + C r, C's coefficients c[0..2] (NPB takes c[3] = 0). `from_zero`: u was
// just set to zero (the coarsest level).
struct Psinv {
  double c0, c1, c2;
  bool from_zero;
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> r, tessera::In<double> u,
                             tessera::Out<double> next) const {
    next = of(r, from_zero ? 0.0 : u());
  }
  // old + C r at the point `r` is centred on (R as Resid::of's U).
  template <class R>
  TESSERA_HD double of(const R& r, double old) const {
    auto r1 = [&](int dx) { return r(dx, -1, 0) + r(dx, 1, 0) + r(dx, 0, -1) + r(dx, 0, 1); };
    auto r2 = [&](int dx) { return r(dx, -1, -1) + r(dx, 1, -1) + r(dx, -1, 1) + r(dx, 1, 1); };
    return old + c0 * r() + c1 * (r(-1, 0, 0) + r(1, 0, 0) + r1(0)) + c2 * (r2(0) + r1(-1) + r1(1));
  }
};

// rprj3: the trilinear projection of the fine residual around fine point 2c + 1.
struct Rprj3 {
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> r,
                             tessera::Out<double> s) const {
    auto x1 = [&](int dx) { return r(dx, -1, 0) + r(dx, 1, 0) + r(dx, 0, -1) + r(dx, 0, 1); };
    auto y1 = [&](int dx) { return r(dx, -1, -1) + r(dx, -1, 1) + r(dx, 1, -1) + r(dx, 1, 1); };
    s = 0.5 * r() + 0.25 * (r(-1, 0, 0) + r(1, 0, 0) + x1(0)) + 0.125 * (x1(-1) + x1(1) + y1(0)) +
        0.0625 * (y1(-1) + y1(1));
  }
};

// interp: the trilinear interpolation of the coarse correction z at fine point p, added to u
// (`add`) or into a u just set to zero. Along an axis an odd p coincides with the anchor p / 2,
// an even p lies between offsets -1 and 0.
struct Interp {
  bool add;
  TESSERA_HD void operator()(tessera::Index<3> p, tessera::In<double> z,
                             tessera::InOut<double> u) const {
    const bool ex = p[0] % 2 == 0, ey = p[1] % 2 == 0, ez = p[2] % 2 == 0;
    const int ox = ex ? -1 : 0;
    const int zo = ez ? -1 : 0;  // the z plane of NPB's z1 (its i3)
    auto z1 = [&](int dx) { return z(dx, 0, zo) + z(dx, -1, zo); };
    auto z2 = [&](int dx) { return z(dx, 0, 0) + z(dx, 0, -1); };
    auto z3 = [&](int dx) { return z(dx, 0, 0) + z(dx, -1, 0) + z1(dx); };
    double q;
    if (!ey && !ez)
      q = ex ? 0.5 * (z(0, 0, 0) + z(ox, 0, 0)) : z(0, 0, 0);
    else if (ey && !ez)
      q = ex ? 0.25 * (z1(ox) + z1(0)) : 0.5 * z1(0);
    else if (!ey && ez)
      q = ex ? 0.25 * (z2(ox) + z2(0)) : 0.5 * z2(0);
    else
      q = ex ? 0.125 * (z3(ox) + z3(0)) : 0.25 * z3(0);
    u = (add ? u() : 0.0) + q;
  }
};

struct Set {
  double value;
  TESSERA_HD void operator()(tessera::Index<3>, tessera::Out<double> u) const { u = value; }
};

// The operators over a whole level held in one tile (the one-task levels, CoarseCycle in
// levels.hpp) on CPU workers. The loops are NPB's: per row the partial sums along x (u1, u2 of
// resid, r1, r2 of psinv, x1, y1 of rprj3, z1, z2, z3 of interp) computed once and read at
// x - 1, x, x + 1, each grouped exactly as the point functors above group them, so the bits are
// those of the tiled path and of the CUDA bodies (coarse_gpu::, which call the functors).
using View = tessera::TileView<double, 3>;

namespace coarse {

// The ghost layer (1 point) of a one-tile periodic level: x, then y (with the x ghosts), then z
// (with both), so edges and corners wrap as the exchange makes them.
// A team (tessera::Team) shares the planes, then the rows of the z ghost planes, and returns
// once all of it is done.
inline void wrap_ghosts(const View& v, const tessera::Team& team = tessera::Team{}) {
  const std::int64_t nx = v.extent[0], ny = v.extent[1], nz = v.extent[2];
  const std::size_t row = static_cast<std::size_t>(nx + 2) * sizeof(double);
  for (std::int64_t z = team.begin(nz); z < team.end(nz); ++z) {
    for (std::int64_t y = 0; y < ny; ++y) {
      double* p = &v(0, y, z);
      p[-1] = p[nx - 1];
      p[nx] = p[0];
    }
    std::memcpy(&v(-1, -1, z), &v(-1, ny - 1, z), row);
    std::memcpy(&v(-1, ny, z), &v(-1, 0, z), row);
  }
  team.sync();
  for (std::int64_t y = team.begin(ny + 2) - 1; y < team.end(ny + 2) - 1; ++y) {
    std::memcpy(&v(-1, y, -1), &v(-1, y, nz - 1), row);
    std::memcpy(&v(-1, y, nz), &v(-1, y, 0), row);
  }
  team.sync();
}

// The four neighbours of a row across y and z: faces (y - 1, y + 1, z - 1, z + 1) and corners
// ((y - 1, z - 1), (y + 1, z - 1), (y - 1, z + 1), (y + 1, z + 1)), summed in that order at
// every x of [-1, nx], into f[x + 1] and c[x + 1]: NPB's u1/u2 (resid), r1/r2 (psinv).
inline void cross_sums(const double* p, std::int64_t sy, std::int64_t sz, std::int64_t nx,
                       double* __restrict f, double* __restrict c) {
  for (std::int64_t x = -1; x <= nx; ++x) {
    f[x + 1] = p[x - sy] + p[x + sy] + p[x - sz] + p[x + sz];
    c[x + 1] = p[x - sy - sz] + p[x + sy - sz] + p[x - sy + sz] + p[x + sy + sz];
  }
}

// One row of Resid: r = v - A u at x in [0, nx), from u's row and its cross sums u1, u2
// (cross_sums' layout: index x + 1). Shared by the one-task levels and the slab tasks.
inline void resid_row(const Resid& k, const double* pv, const double* pu, const double* u1,
                      const double* u2, double* pr, std::int64_t nx) {
  for (std::int64_t x = 0; x < nx; ++x)
    pr[x] =
        pv[x] - k.a0 * pu[x] - k.a2 * (u2[x + 1] + u1[x] + u1[x + 2]) - k.a3 * (u2[x] + u2[x + 2]);
}

// One row of Psinv, u = u + C r in place at x in [0, nx): `pr` is r's row with its x
// neighbours readable at pr[-1] and pr[nx], r1, r2 its cross sums.
inline void psinv_row(const Psinv& k, const double* pr, const double* r1, const double* r2,
                      double* pu, std::int64_t nx) {
  for (std::int64_t x = 0; x < nx; ++x) {
    const double old = k.from_zero ? 0.0 : pu[x];
    pu[x] = old + k.c0 * pr[x] + k.c1 * (pr[x - 1] + pr[x + 1] + r1[x + 1]) +
            k.c2 * (r2[x + 1] + r1[x] + r1[x + 2]);
  }
}

// The operators below go over a whole level, or a team member's share of its planes.

// r = v - A u (Resid) over a whole level; `v` may be `r` (NPB's resid(u, r, r)).
inline void resid(const Resid& k, const View& u, const double* v0, std::int64_t vsy,
                  std::int64_t vsz, const View& r, double* u1, double* u2,
                  const tessera::Team& team = tessera::Team{}) {
  const std::int64_t nx = r.extent[0];
  for (std::int64_t z = team.begin(r.extent[2]); z < team.end(r.extent[2]); ++z)
    for (std::int64_t y = 0; y < r.extent[1]; ++y) {
      const double* pu = &u(0, y, z);
      cross_sums(pu, u.sy, u.sz, nx, u1, u2);
      resid_row(k, v0 + y * vsy + z * vsz, pu, u1, u2, &r(0, y, z), nx);
    }
}

// u = u + C r (Psinv) over a whole level, in place; `from_zero`: u is taken as zero.
inline void psinv(const Psinv& k, const View& r, const View& u, double* r1, double* r2,
                  const tessera::Team& team = tessera::Team{}) {
  const std::int64_t nx = u.extent[0];
  for (std::int64_t z = team.begin(u.extent[2]); z < team.end(u.extent[2]); ++z)
    for (std::int64_t y = 0; y < u.extent[1]; ++y) {
      const double* pr = &r(0, y, z);
      cross_sums(pr, r.sy, r.sz, nx, r1, r2);
      psinv_row(k, pr, r1, r2, &u(0, y, z), nx);
    }
}

// Restriction (Rprj3) of fine level f into coarse level c: coarse x reads fine 2x, 2x + 1, 2x + 2.
inline void rprj3(const View& f, const View& c, double* x1, double* y1,
                  const tessera::Team& team = tessera::Team{}) {
  const std::int64_t nx = c.extent[0];
  for (std::int64_t z = team.begin(c.extent[2]); z < team.end(c.extent[2]); ++z)
    for (std::int64_t y = 0; y < c.extent[1]; ++y) {
      const double* pf = &f(0, 2 * y + 1, 2 * z + 1);
      // Rprj3's x1 (y - 1, y + 1, z - 1, z + 1) and y1 ((y - 1, z - 1), (y - 1, z + 1),
      // (y + 1, z - 1), (y + 1, z + 1)) at fine x = 0 .. 2 nx.
      for (std::int64_t x = 0; x <= 2 * nx; ++x) {
        x1[x] = pf[x - f.sy] + pf[x + f.sy] + pf[x - f.sz] + pf[x + f.sz];
        y1[x] =
            pf[x - f.sy - f.sz] + pf[x - f.sy + f.sz] + pf[x + f.sy - f.sz] + pf[x + f.sy + f.sz];
      }
      double* pc = &c(0, y, z);
      for (std::int64_t x = 0; x < nx; ++x) {
        const std::int64_t i = 2 * x + 1;
        pc[x] = 0.5 * pf[i] + 0.25 * (pf[i - 1] + pf[i + 1] + x1[i]) +
                0.125 * (x1[i - 1] + x1[i + 1] + y1[i]) + 0.0625 * (y1[i - 1] + y1[i + 1]);
      }
    }
}

// Prolongation (Interp) of coarse level c into fine level f, added to f (`add`) or into a zero
// f. Per fine row, Interp's sum for its y and z parities at every coarse x of [-1, nx) (z1: y
// even; z2: z even; z3: both), then the odd fine x (on the anchor) and the even ones (between
// the anchor and the one before).
inline void interp(bool add, const View& c, const View& f, double* a,
                   const tessera::Team& team = tessera::Team{}) {
  const std::int64_t nx = c.extent[0];
  for (std::int64_t z = team.begin(f.extent[2]); z < team.end(f.extent[2]); ++z)
    for (std::int64_t y = 0; y < f.extent[1]; ++y) {
      const bool ey = y % 2 == 0, ez = z % 2 == 0;
      const double* p = &c(0, y / 2, z / 2);
      const double *py = p - c.sy, *pz = p - c.sz, *pyz = p - c.sy - c.sz;
      double on, between;  // the weights of a fine x on the anchor and between two
      if (!ey && !ez) {
        for (std::int64_t x = -1; x < nx; ++x) a[x + 1] = p[x];
        on = 1.0;
        between = 0.5;
      } else if (ey && !ez) {
        for (std::int64_t x = -1; x < nx; ++x) a[x + 1] = p[x] + py[x];
        on = 0.5;
        between = 0.25;
      } else if (!ey && ez) {
        for (std::int64_t x = -1; x < nx; ++x) a[x + 1] = p[x] + pz[x];
        on = 0.5;
        between = 0.25;
      } else {
        for (std::int64_t x = -1; x < nx; ++x) a[x + 1] = p[x] + py[x] + (pz[x] + pyz[x]);
        on = 0.25;
        between = 0.125;
      }
      double* pf = &f(0, y, z);
      if (!ey && !ez) {  // Interp: z(0, 0, 0) itself, not 1.0 * it (the same value)
        for (std::int64_t x = 0; x < nx; ++x) {
          pf[2 * x] = (add ? pf[2 * x] : 0.0) + between * (a[x] + a[x + 1]);
          pf[2 * x + 1] = (add ? pf[2 * x + 1] : 0.0) + a[x + 1];
        }
      } else {
        for (std::int64_t x = 0; x < nx; ++x) {
          pf[2 * x] = (add ? pf[2 * x] : 0.0) + between * (a[x] + a[x + 1]);
          pf[2 * x + 1] = (add ? pf[2 * x + 1] : 0.0) + on * a[x + 1];
        }
      }
    }
}

}  // namespace coarse

#if TESSERA_CUDA_BODIES
// The whole-level operators as CUDA bodies run them: a thread per point calling the point
// functor (the same grouping as coarse::'s rows, so the same bits), each a launch on the task's
// stream, which orders them as the CPU's loops are ordered (for_points, apps/mg/gpu.hpp).
namespace coarse_gpu {

using tessera::In;

// coarse::wrap_ghosts' result at once: every ghost point takes the interior point its
// coordinates wrap to (over the box [-1, n] per axis, so edges and corners too).
struct Wrap {
  View v;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    const auto wrap = [](std::int64_t i, std::int64_t n) {
      return i < 0 ? n - 1 : (i == n ? 0 : i);
    };
    x -= 1, y -= 1, z -= 1;
    const std::int64_t wx = wrap(x, v.extent[0]), wy = wrap(y, v.extent[1]),
                       wz = wrap(z, v.extent[2]);
    if (wx != x || wy != y || wz != z) v(x, y, z) = v(wx, wy, wz);
  }
};
inline void wrap_ghosts(void* stream, const View& v) {
  for_points("mg_wrap", stream, Wrap{v}, v.extent[0] + 2, v.extent[1] + 2, v.extent[2] + 2);
}

struct ResidAt {  // r = v - A u; v may be r (read at the point before it is written)
  Resid k;
  View u;
  const double* v;
  std::int64_t vsy, vsz;
  View r;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    r(x, y, z) = k.of(In<double>(&u(x, y, z), u.sy, u.sz), v[x + y * vsy + z * vsz]);
  }
};
inline void resid(void* stream, const Resid& k, const View& u, const double* v, std::int64_t vsy,
                  std::int64_t vsz, const View& r) {
  for_points("mg_resid", stream, ResidAt{k, u, v, vsy, vsz, r}, r.extent[0], r.extent[1],
             r.extent[2]);
}

struct PsinvAt {  // u = u + C r, in place
  Psinv k;
  View r, u;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    u(x, y, z) = k.of(In<double>(&r(x, y, z), r.sy, r.sz), k.from_zero ? 0.0 : u(x, y, z));
  }
};
inline void psinv(void* stream, const Psinv& k, const View& r, const View& u) {
  for_points("mg_psinv", stream, PsinvAt{k, r, u}, u.extent[0], u.extent[1], u.extent[2]);
}

struct Rprj3At {  // coarse c from fine f around fine point 2c + 1
  View f, c;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    Rprj3{}(tessera::Index<3>{{x, y, z}},
            In<double>(&f(2 * x + 1, 2 * y + 1, 2 * z + 1), f.sy, f.sz),
            tessera::Out<double>{&c(x, y, z)});
  }
};
inline void rprj3(void* stream, const View& f, const View& c) {
  for_points("mg_rprj3", stream, Rprj3At{f, c}, c.extent[0], c.extent[1], c.extent[2]);
}

struct InterpAt {  // fine f from coarse c anchored at p / 2 (one-tile levels: local = global)
  Interp k;
  View c, f;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    k(tessera::Index<3>{{x, y, z}}, In<double>(&c(x / 2, y / 2, z / 2), c.sy, c.sz),
      tessera::InOut<double>{&f(x, y, z)});
  }
};
inline void interp(void* stream, bool add, const View& c, const View& f) {
  for_points("mg_interp", stream, InterpAt{Interp{add}, c, f}, f.extent[0], f.extent[1],
             f.extent[2]);
}

}  // namespace coarse_gpu
#endif

}  // namespace apps
