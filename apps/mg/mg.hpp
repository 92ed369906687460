// NAS MG (NPB 3.x): a V-cycle multigrid solving the periodic 3-D Poisson problem A u = v on a
// hierarchy of grids, n^3 down to 2^3 points, from NPB's random charges (zran3). resid and psinv
// are 27-point Box stencils with one coefficient per class (centre, faces, edges, corners),
// rprj3 a tessera::Restriction, interp a tessera::Prolongation, comm3 the periodic ghost
// exchange Tessera does before each, norm2u3 a task per top tile (PlaneNorms). Every formula keeps
// NPB's grouping of the sums (its u1/u2 partial sums), so the results follow NPB's reference.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tessera/levels.hpp>
#include <tessera/tessera.hpp>

#include "apps/mg/npb_random.hpp"

namespace apps {

// The grid points of NPB's charges: +1 at the ten largest of the random numbers laid over the
// grid (x fastest, number g + 1 of the sequence at global index g), -1 at the ten smallest,
// chosen as NPB's zran3 does (strict comparisons while scanning z, y, x).
struct Charges {
  std::vector<std::int64_t> plus, minus;  // global indices x + n (y + n z)
};
inline Charges zran3(std::int64_t n) {
  constexpr int mm = 10;
  double big[mm], small[mm];
  std::int64_t big_at[mm], small_at[mm];
  for (int i = 0; i < mm; ++i) {
    big[i] = 0.0;
    small[i] = 1.0;
    big_at[i] = small_at[i] = 0;
  }
  std::uint64_t x = NpbRandom::mul(314159265, NpbRandom::kA);  // the first number
  for (std::int64_t g = 0; g < n * n * n; ++g, x = NpbRandom::mul(x, NpbRandom::kA)) {
    const double v = NpbRandom::value(x);
    if (v > big[0]) {  // big[0] is the smallest of the ten largest: bubble the new one up
      big[0] = v;
      big_at[0] = g;
      for (int i = 0; i < mm - 1 && big[i] > big[i + 1]; ++i) {
        std::swap(big[i], big[i + 1]);
        std::swap(big_at[i], big_at[i + 1]);
      }
    }
    if (v < small[0]) {
      small[0] = v;
      small_at[0] = g;
      for (int i = 0; i < mm - 1 && small[i] < small[i + 1]; ++i) {
        std::swap(small[i], small[i + 1]);
        std::swap(small_at[i], small_at[i + 1]);
      }
    }
  }
  return {std::vector<std::int64_t>(big_at, big_at + mm),
          std::vector<std::int64_t>(small_at, small_at + mm)};
}

// r = v - A u, A's coefficients a[0] (centre), a[2] (edges), a[3] (corners); NPB takes a[1]
// (faces) = 0 and leaves its term out. `v` is the right-hand side (at the top level) or the
// old residual (below).
struct Resid {
  double a0, a2, a3;
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u, tessera::In<double> v,
                             tessera::Out<double> r) const {
    auto u1 = [&](int dx) { return u(dx, -1, 0) + u(dx, 1, 0) + u(dx, 0, -1) + u(dx, 0, 1); };
    auto u2 = [&](int dx) { return u(dx, -1, -1) + u(dx, 1, -1) + u(dx, -1, 1) + u(dx, 1, 1); };
    r = v() - a0 * u() - a2 * (u2(0) + u1(-1) + u1(1)) - a3 * (u2(-1) + u2(1));
  }
};

// The smoother, u = u + C r, C's coefficients c[0..2] (NPB takes c[3] = 0). `from_zero`: u was
// just set to zero (the coarsest level).
struct Psinv {
  double c0, c1, c2;
  bool from_zero;
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> r, tessera::In<double> u,
                             tessera::Out<double> next) const {
    auto r1 = [&](int dx) { return r(dx, -1, 0) + r(dx, 1, 0) + r(dx, 0, -1) + r(dx, 0, 1); };
    auto r2 = [&](int dx) { return r(dx, -1, -1) + r(dx, 1, -1) + r(dx, -1, 1) + r(dx, 1, 1); };
    const double old = from_zero ? 0.0 : u();
    next = old + c0 * r() + c1 * (r(-1, 0, 0) + r(1, 0, 0) + r1(0)) + c2 * (r2(0) + r1(-1) + r1(1));
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

// NPB's norm2u3 (the sum of squares and the largest magnitude of the top residual) with bits
// that do not depend on the tiling: per z plane the exact sum of the squares (tessera::ExactSum,
// fed by four SumFronts along x, so that the additions overlap) and the largest |r|, written
// into `planes` (kPlaneWords x 1 x n: the accumulator's bytes, then the max), one task per top
// tile (z slab); MgNorms merges the planes' accumulators and rounds once. So --tile-z, and the
// default tiling, can differ between one rank and several without changing rnm2.
constexpr int kPlaneWords = sizeof(tessera::ExactSum) / sizeof(double) + 1;

template <class R, class P>
void plane_norms(const R& r, const P& planes, std::int64_t z0, std::int64_t z1) {
  constexpr int kLanes = 4;
  const std::int64_t nx = r.extent[0];
  for (std::int64_t z = z0; z < z1; ++z) {
    tessera::ExactSum sum{};
    tessera::SumFront front[kLanes];
    double max[kLanes] = {};
    for (std::int64_t y = 0; y < r.extent[1]; ++y) {
      const double* p = &r(0, y, z);
      std::int64_t x = 0;
      for (; x + kLanes <= nx; x += kLanes)
        for (int j = 0; j < kLanes; ++j) {
          front[j].add(p[x + j] * p[x + j], sum);
          max[j] = std::max(max[j], std::fabs(p[x + j]));
        }
      for (int j = 0; x < nx; ++x, ++j) {
        front[j].add(p[x] * p[x], sum);
        max[j] = std::max(max[j], std::fabs(p[x]));
      }
    }
    for (int j = 0; j < kLanes; ++j) {
      front[j].flush(sum);
      max[0] = std::max(max[0], max[j]);
    }
    std::memcpy(&planes(0, 0, z), &sum, sizeof sum);
    planes(kPlaneWords - 1, 0, z) = max[0];
  }
}

struct PlaneNorms {
  void cpu(tessera::TileView<const double, 3> r, tessera::TileView<double, 3> planes) const {
    plane_norms(r, planes, 0, r.extent[2]);
  }
};

// The planes' sums merged (exact) and rounded once, and their largest maximum: {sum of squares,
// max |r|}. get() waits (collective under mpirun: every rank calls it).
class MgNorms {
 public:
  explicit MgNorms(tessera::Field<double, 3> planes) : planes_(std::move(planes)) {}
  const std::array<double, 2>& get() {
    if (!done_) {
      const std::vector<double> v = planes_.gather();
      tessera::ExactSum sum{};
      values_ = {0.0, 0.0};
      for (std::size_t z = 0; z * kPlaneWords < v.size(); ++z) {
        tessera::ExactSum plane;
        std::memcpy(&plane, &v[z * kPlaneWords], sizeof plane);
        sum.merge(plane);
        values_[1] = std::max(values_[1], v[z * kPlaneWords + kPlaneWords - 1]);
      }
      values_[0] = sum.round();
      done_ = true;
    }
    return values_;
  }
  double get(int k) { return get()[static_cast<std::size_t>(k)]; }

 private:
  tessera::Field<double, 3> planes_;
  std::array<double, 2> values_{};
  bool done_ = false;
};

struct Set {
  double value;
  TESSERA_HD void operator()(tessera::Index<3>, tessera::Out<double> u) const { u = value; }
};

// The coarse end of a V-cycle in one task: levels 1..K, each held in one tile (the whole level),
// go through NPB's restriction, smoothing and prolongation on the host, so that a V-cycle's
// small levels cost one task instead of a chain of dependent ones (ghost pack and copy, then the
// operator, per level and operator). Below some size a level's work is smaller than the latency
// of those tasks. The loops are NPB's: per row the partial sums along x (u1, u2 of resid, r1, r2
// of psinv, x1, y1 of rprj3, z1, z2, z3 of interp) computed once and read at x - 1, x, x + 1,
// each grouped exactly as the point functors above group them, so the bits are those of the
// tiled path; resid and psinv update r and u in place (each reads the field it writes only at
// the point it writes), as NPB does.
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

struct CoarseCycle {
  Resid resid;
  Psinv smooth;             // from_zero is set per level
  int levels;               // K
  bool top;                 // level K is the top level (v is its right-hand side)
  bool then_resid = false;  // `top`: then r = v - A u at the top, as Mg::resid_top (Mg::iteration)
  int cycles = 1;           // V-cycles (each with the top residual when then_resid) in a row
  // `top` only, both with the norms' planes as the last view (Mg::timed_iterations):
  bool start = false;  // first r = v - A u and its norms (NPB's timed region starts so)
  bool norms = false;  // last the norms of the top residual (Mg::norms)

  // views: v (the top's right-hand side, read when `top`), then u(1..K), r(1..K), and the
  // planes when `start` or `norms`. Under a scheduler that forms teams of workers (--sched
  // peager), every member runs this with its share of each operator's planes, as NPB's OpenMP
  // loops share them, and the team syncs between operators (the wraps sync themselves); the
  // points and their arithmetic are the same, so are the bits.
  template <class... V>
  void cpu(const tessera::Team& team, tessera::TileView<const double, 3> v, V... views) const {
    const View all[] = {views...};
    const View &u = all[levels - 1], &r = all[2 * levels - 1];
    auto top_norms = [&] {
      team.sync();  // r is whole
      plane_norms(r, all[2 * levels], team.begin(r.extent[2]), team.end(r.extent[2]));
    };
    if (start) {
      std::vector<double> scratch(2 * static_cast<std::size_t>(u.extent[0] + 2));
      coarse::wrap_ghosts(u, team);
      coarse::resid(resid, u, v.data, v.sy, v.sz, r, scratch.data(),
                    scratch.data() + scratch.size() / 2, team);
      top_norms();
    }
    for (int c = 0; c < cycles; ++c) {
      if (c > 0 || start)
        team.sync();  // the last residual is written before the next cycle wraps it
      cycle(team, v, views...);
    }
    if (norms) top_norms();
  }
  template <class... V>
  void cycle(const tessera::Team& team, tessera::TileView<const double, 3> v, V... views) const {
    const View all[] = {views...};
    auto u = [&](int k) -> const View& { return all[k - 1]; };
    auto r = [&](int k) -> const View& { return all[levels + k - 1]; };
    // Scratch rows, each member its own: four of the widest level's row and its ghosts (rprj3
    // reads 2 n + 1 of the level below K, n + 2 at level K).
    std::vector<double> scratch(4 * static_cast<std::size_t>(u(levels).extent[0] + 2));
    double *s0 = scratch.data(), *s1 = s0 + scratch.size() / 2;
    for (int k = levels; k >= 2; --k) {
      coarse::wrap_ghosts(r(k), team);
      coarse::rprj3(r(k), r(k - 1), s0, s1, team);
      team.sync();
    }
    for (int k = 1; k <= levels; ++k) {
      if (k >= 2) {
        const bool at_top = top && k == levels;
        coarse::wrap_ghosts(u(k - 1), team);
        coarse::interp(at_top, u(k - 1), u(k), s0, team);
        team.sync();
        coarse::wrap_ghosts(u(k), team);
        if (at_top)  // r = v - A u (Mg::resid_top)
          coarse::resid(resid, u(k), v.data, v.sy, v.sz, r(k), s0, s1, team);
        else  // r = r - A u
          coarse::resid(resid, u(k), r(k).data, r(k).sy, r(k).sz, r(k), s0, s1, team);
        team.sync();
      }
      coarse::wrap_ghosts(r(k), team);
      Psinv s = smooth;
      s.from_zero = k == 1;
      coarse::psinv(s, r(k), u(k), s0, s1, team);
      team.sync();
    }
    if (top && then_resid) {
      coarse::wrap_ghosts(u(levels), team);
      coarse::resid(resid, u(levels), v.data, v.sy, v.sz, r(levels), s0, s1, team);
    }
  }
};

// r = v - A u over a one-tile top level, its ghosts wrapped first (Mg::resid_top).
struct TopResid {
  Resid resid;
  void cpu(tessera::TileView<const double, 3> v, View u, View r) const {
    std::vector<double> scratch(2 * static_cast<std::size_t>(u.extent[0] + 2));
    coarse::wrap_ghosts(u);
    coarse::resid(resid, u, v.data, v.sy, v.sz, r, scratch.data(),
                  scratch.data() + scratch.size() / 2);
  }
};

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
};

}  // namespace slab

// A problem: its size, iterations, the official rnm2 of its class (0: class U, none).
struct MgClass {
  std::string name;  // "S", "W", "A", "B", "W-npb3.0", "U"
  std::int64_t n;
  int iterations;
  double verify_value;
};
inline MgClass mg_class(const std::string& name, std::int64_t n_u = 32, int it_u = 4) {
  if (name == "S") return {"S", 32, 4, 0.5307707005734e-04};
  if (name == "W") return {"W", 128, 4, 0.6467329375339e-05};               // NPB 3.3 and later
  if (name == "W-npb3.0") return {"W-npb3.0", 64, 40, 0.250391406439e-17};  // NPB 2.x and 3.0
  if (name == "A") return {"A", 256, 4, 0.2433365309069e-05};
  if (name == "B") return {"B", 256, 20, 0.1800564401355e-05};
  if (name == "U") return {"U", n_u, it_u, 0.0};
  throw tessera::Error(
      "--class " + name +
      " is not an MG class; give S, W (NPB 3.3+: 128^3, 4 "
      "iterations), W-npb3.0 (64^3, 40 iterations), A, B, or U with --size and --iterations");
}

// The hierarchy: levels 1 (2^3 points) to lt (n^3), u and r on each, v at the top, and a
// scratch field t on the levels whose stencils double-buffer (tiled across ranks, or with
// `coarse_task` false).
//
// Tiles: the top level in z slabs `tile_z` thick; each coarser level halves them (at least
// `min_tile` thick), then thickens them until a tile holds `min_points` points or the whole
// level, keeping at least `min_tiles` tiles (one per rank): below that size a tile's work is
// smaller than the cost of its tasks (ghost pack, boundary, interior, per stencil), and the
// coarse levels of a V-cycle are nearly all task overhead. The levels that end up in one tile
// each (from level 1 up) then run as one CoarseCycle task per V-cycle (`coarse_task`); the
// tiled levels held on one rank run resid and psinv as slab tasks (namespace slab).
class Mg {
 public:
  static constexpr std::int64_t kMinTilePoints = 32768;

  // The default top tiling. On one rank up to kOneTaskSize^3 points, one tile: the whole
  // V-cycle and the residual after it are one task per iteration, serial, at about NPB's
  // one-thread speed, which beats the chain of dependent per-tile tasks (a ghost pack, a copy
  // and the operator per level and operator, each link paying the runtime's latency) on 2
  // workers. Else four z slabs: two per worker here, one per rank up to 4 ranks (fewer,
  // thicker slabs copy fewer ghost points and chain fewer tasks). The results, rnm2
  // included (PlaneNorms), are the same bits for any top tiling, so the default may depend
  // on the ranks.
  static constexpr std::int64_t kOneTaskSize = 64;
  static std::int64_t default_tile_z(std::int64_t n, int ranks = 1) {
    return ranks == 1 && n <= kOneTaskSize ? n : std::max<std::int64_t>(2, n / 4);
  }

  // `coarse_task`: the levels held in one tile each run as one task per V-cycle (CoarseCycle).
  Mg(std::int64_t n, std::int64_t tile_z, std::int64_t min_tile = 1,
     std::int64_t min_points = kMinTilePoints, int min_tiles = 1, bool coarse_task = true) {
    if (n < 4 || (n & (n - 1)) != 0)
      throw tessera::Error("MG size " + std::to_string(n) +
                           ": give a power of two >= 4 (the "
                           "hierarchy halves it down to 2 points per axis)");
    lt = 0;
    for (std::int64_t m = n; m > 1; m /= 2) ++lt;
    std::vector<tessera::Grid<3>> grids{
        tessera::Grid<3>({n, n, n}, {n, n, tile_z}, {true, true, true})};
    for (int k = lt - 1; k >= 1; --k) {
      const tessera::Grid<3> halved = tessera::coarser(grids.front(), min_tile);
      const tessera::Index<3> e = halved.extent();
      std::int64_t tz = halved.tile()[2];
      while (tz < e[2] && e[0] * e[1] * tz < min_points &&
             (e[2] + 2 * tz - 1) / (2 * tz) >= min_tiles)
        tz *= 2;
      grids.insert(grids.begin(),
                   tessera::Grid<3>(e, {e[0], e[1], std::min(tz, e[2])}, {true, true, true}));
    }
    for (int k = 1; k <= lt; ++k) {
      const tessera::Grid<3>& g = grids[static_cast<std::size_t>(k - 1)];
      const std::string level = std::to_string(k);
      u.emplace_back(g, 1, tessera::Boundaries<3>{}, "u" + level);
      r.emplace_back(g, 1, tessera::Boundaries<3>{}, "r" + level);
    }
    v = std::make_unique<tessera::Field<double, 3>>(grids.back(), 0, tessera::Boundaries<3>{}, "v");
    planes = std::make_unique<tessera::Field<double, 3>>(
        tessera::Grid<3>({kPlaneWords, 1, n}, {kPlaneWords, 1, tile_z}), 0,
        tessera::Boundaries<3>{}, "norm-planes");
    while (coarse_task && one_task_levels < std::min(lt, kMaxOneTaskLevels) &&
           grid(one_task_levels + 1).tiles() == 1)
      ++one_task_levels;
    // A second field per level only where the stencils double-buffer (the one task and the
    // slab tasks update in place).
    for (int k = 1; k <= lt; ++k)
      t.push_back(k > one_task_levels && !slabs(k)
                      ? std::make_unique<tessera::Field<double, 3>>(
                            grid(k), 1, tessera::Boundaries<3>{}, "t" + std::to_string(k))
                      : nullptr);
  }

  const tessera::Grid<3>& grid(int k) const { return u[static_cast<std::size_t>(k - 1)].grid(); }
  tessera::Field<double, 3>& U(int k) { return u[static_cast<std::size_t>(k - 1)]; }
  tessera::Field<double, 3>& R(int k) { return r[static_cast<std::size_t>(k - 1)]; }
  tessera::Field<double, 3>& V() { return *v; }

  // v = NPB's charges, u = 0 at the top.
  void initialise() {
    const std::int64_t n = grid(lt).extent()[0];
    const Charges c = zran3(n);
    v->fill([&](tessera::Index<3> p) {
      const std::int64_t g = p[0] + n * (p[1] + n * p[2]);
      for (std::int64_t at : c.minus)
        if (at == g) return -1.0;
      for (std::int64_t at : c.plus)
        if (at == g) return 1.0;
      return 0.0;
    });
    set.apply(Set{0.0}, tessera::out(U(lt)));
  }

  // r = v - A u at the top level: one task (TopResid) when the top is one tile, as the V-cycle.
  void resid_top() {
    if (one_task_levels == lt)
      coarse.submit(TopResid{Resid{a0, a2, a3}}, tessera::read_tile(*v, 0),
                    tessera::update_tile(U(lt), 0), tessera::write_tile(R(lt), 0));
    else if (slabs(lt))
      for (int t = 0; t < grid(lt).tiles(); ++t)
        resid_slab.submit(slab::Resid{Resid{a0, a2, a3}}, below(U(lt), t),
                          tessera::read_tile(U(lt), t), above(U(lt), t), tessera::read_tile(*v, t),
                          tessera::write_tile(R(lt), t));
    else
      resid.apply(Resid{a0, a2, a3}, tessera::in(U(lt), tessera::centre(*v)), tessera::out(R(lt)));
  }

  // One V-cycle (NPB's mg3P).
  void mg3p() {
    const int tiled = std::max(2, one_task_levels + 1);  // the finest level of the one task, + 1
    for (int k = lt; k >= tiled; --k) rprj3.apply(Rprj3{}, R(k), R(k - 1));
    if (one_task_levels > 0)
      coarse_cycle();
    else
      smooth(1, true);
    for (int k = tiled; k <= lt - 1; ++k) {
      interp.apply(Interp{false}, U(k - 1), U(k));
      if (slabs(k)) {  // r = r - A u in place
        for (int t = 0; t < grid(k).tiles(); ++t)
          resid_slab.submit(slab::Resid{Resid{a0, a2, a3}}, below(U(k), t),
                            tessera::read_tile(U(k), t), above(U(k), t),
                            tessera::update_tile(R(k), t));
      } else {
        resid.apply(Resid{a0, a2, a3}, tessera::in(U(k), tessera::centre(R(k))),
                    tessera::out(T(k)));
        tessera::swap(R(k), T(k));
      }
      smooth(k, false);
    }
    if (one_task_levels == lt) return;  // the whole V-cycle was one task
    interp.apply(Interp{true}, U(lt - 1), U(lt));
    resid_top();
    smooth(lt, false);
  }

  // One iteration of NPB's timed loop: a V-cycle, then the top residual. When the whole
  // V-cycle is one task, so is the residual (one task per iteration instead of four: the
  // stencil's ghost pack and copy, then the operator, each a link of the chain).
  void iteration() { iterations(1); }
  // `n` iterations. When the whole V-cycle is one task, up to `per_task` of them run in one
  // task (default: all): each further task would be one more link of a chain of dependent
  // tasks, whose start costs a team of workers tens of microseconds (docs/performance.md).
  void iterations(int n, int per_task = 0) {
    if (one_task_levels == lt) {
      const int block = per_task > 0 ? per_task : std::max(n, 1);
      for (int done = 0; done < n; done += block) coarse_cycle(true, std::min(block, n - done));
      return;
    }
    for (int it = 0; it < n; ++it) {
      mg3p();
      resid_top();
    }
  }

  // NPB's timed region: r = v - A u at the top and its norms (NPB's old2 and oldu, computed
  // and not used), `n` iterations, and the norms of the last residual; get() waits. When the
  // whole V-cycle is one task, the residual and the norms are in its first and last task: as
  // tasks of their own, each was a link of the chain, and the residual ran on one worker.
  MgNorms timed_iterations(int n, int per_task = 0) {
    if (one_task_levels != lt || n < 1) {
      resid_top();
      (void)norms();
      iterations(n, per_task);
      return norms();
    }
    const int block = per_task > 0 ? per_task : n;
    for (int done = 0; done < n; done += block)
      coarse_cycle(true, std::min(block, n - done), done == 0, done + block >= n);
    return MgNorms(*planes);
  }

  // {rnm2, rnmu} of the top residual (NPB's norm2u3); get() waits.
  MgNorms norms() {
    for (int t = 0; t < grid(lt).tiles(); ++t)
      norm.submit(PlaneNorms{}, tessera::read_tile(R(lt), t), tessera::write_tile(*planes, t));
    return MgNorms(*planes);
  }
  double rnm2(double sum_of_squares) const {
    const double n = static_cast<double>(grid(lt).extent()[0]);
    return std::sqrt(sum_of_squares / (n * n * n));
  }

  int lt;
  int one_task_levels = 0;  // levels 1..K in one task per V-cycle (0: none)
  static constexpr int kMaxOneTaskLevels = 8;
  double a0 = -8.0 / 3.0, a2 = 1.0 / 6.0, a3 = 1.0 / 12.0;    // a1 = 0
  double c0 = -3.0 / 8.0, c1 = 1.0 / 32.0, c2 = -1.0 / 64.0;  // S(a), classes S, W, A (c3 = 0)

  // The S(b) smoother of classes B and larger.
  void use_smoother_b() {
    c0 = -3.0 / 17.0;
    c1 = 1.0 / 33.0;
    c2 = -1.0 / 61.0;
  }

 private:
  template <std::size_t... I>
  void submit_coarse_cycle(const CoarseCycle& body, std::index_sequence<I...>) {
    if (body.start || body.norms)
      coarse.submit(body, tessera::read_tile(*v, 0), tessera::update_tile(U(I + 1), 0)...,
                    tessera::update_tile(R(I + 1), 0)..., tessera::write_tile(*planes, 0));
    else
      coarse.submit(body, tessera::read_tile(*v, 0), tessera::update_tile(U(I + 1), 0)...,
                    tessera::update_tile(R(I + 1), 0)...);
  }
  // Restriction from level K down, smoothing and prolongation up to K (CoarseCycle, in place:
  // no swaps); `then_resid`: and the top residual, when K is the top; `cycles` times; `start`
  // and `norms`: as CoarseCycle's (K the top).
  void coarse_cycle(bool then_resid = false, int cycles = 1, bool start = false,
                    bool norms = false) {
    const int k = one_task_levels;
    const CoarseCycle body{
        Resid{a0, a2, a3}, Psinv{c0, c1, c2, false}, k, k == lt, then_resid, cycles, start, norms};
    switch (k) {
      case 1: submit_coarse_cycle(body, std::make_index_sequence<1>{}); break;
      case 2: submit_coarse_cycle(body, std::make_index_sequence<2>{}); break;
      case 3: submit_coarse_cycle(body, std::make_index_sequence<3>{}); break;
      case 4: submit_coarse_cycle(body, std::make_index_sequence<4>{}); break;
      case 5: submit_coarse_cycle(body, std::make_index_sequence<5>{}); break;
      case 6: submit_coarse_cycle(body, std::make_index_sequence<6>{}); break;
      case 7: submit_coarse_cycle(body, std::make_index_sequence<7>{}); break;
      default: submit_coarse_cycle(body, std::make_index_sequence<kMaxOneTaskLevels>{}); break;
    }
  }
  tessera::Field<double, 3>& T(int k) { return *t[static_cast<std::size_t>(k - 1)]; }
  void smooth(int k, bool from_zero) {
    if (slabs(k)) {  // u = u + C r in place
      for (int t = 0; t < grid(k).tiles(); ++t)
        psinv_slab.submit(slab::Psinv{Psinv{c0, c1, c2, from_zero}}, below(R(k), t),
                          tessera::read_tile(R(k), t), above(R(k), t),
                          tessera::update_tile(U(k), t));
      return;
    }
    psinv.apply(Psinv{c0, c1, c2, from_zero}, tessera::in(R(k), tessera::centre(U(k))),
                tessera::out(T(k)));
    tessera::swap(U(k), T(k));
  }
  // Level k runs resid and psinv as slab tasks (namespace slab): at least 3 z slabs (so that a
  // slab's neighbours are two other tiles), all on one rank (reading a neighbour moves no data).
  bool slabs(int k) const {
    const tessera::Grid<3>& g = grid(k);
    if (g.tiles() < 3 || g.tile()[0] != g.extent()[0] || g.tile()[1] != g.extent()[1]) return false;
    for (int t = 0; t < g.tiles(); ++t)
      if (tessera::tile_of(u[static_cast<std::size_t>(k - 1)], t).owner !=
          tessera::tile_of(u[static_cast<std::size_t>(k - 1)], 0).owner)
        return false;
    return true;
  }
  static tessera::TileUse<double, 3, tessera::Mode::Read> below(const tessera::Field<double, 3>& f,
                                                                int t) {
    return tessera::read_tile(f, (t + f.grid().tiles() - 1) % f.grid().tiles());
  }
  static tessera::TileUse<double, 3, tessera::Mode::Read> above(const tessera::Field<double, 3>& f,
                                                                int t) {
    return tessera::read_tile(f, (t + 1) % f.grid().tiles());
  }

  std::vector<tessera::Field<double, 3>> u, r;
  std::vector<std::unique_ptr<tessera::Field<double, 3>>>
      t;  // null where no stencil double-buffers
  std::unique_ptr<tessera::Field<double, 3>> v;
  tessera::Stencil<3> resid{"mg-resid", tessera::Shape::Box, 1},
      psinv{"mg-psinv", tessera::Shape::Box, 1};
  tessera::Restriction<3> rprj3{"mg-rprj3"};
  tessera::Prolongation<3> interp{"mg-interp"};
  std::unique_ptr<tessera::Field<double, 3>>
      planes;  // PlaneNorms' exact sum and max per top z plane
  tessera::Loop<3> set{"mg-set"};
  tessera::Task norm{"mg-norm"};
  tessera::Task coarse{"mg-coarse"}, resid_slab{"mg-resid-slab"}, psinv_slab{"mg-psinv-slab"};
};

}  // namespace apps
