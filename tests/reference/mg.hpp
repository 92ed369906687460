// The MG oracle: NPB's serial algorithm on plain arrays with one periodic ghost layer per side
// (comm3 copies the faces across), written out loop by loop, with NPB's grouping of sums.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "apps/mg/mg.hpp"

namespace reference {

struct MgArray {  // (n + 2)^3 values, index 0 and n + 1 the ghosts, x fastest
  std::int64_t n;
  std::vector<double> a;
  explicit MgArray(std::int64_t size)
      : n(size), a(static_cast<std::size_t>((size + 2) * (size + 2) * (size + 2)), 0.0) {}
  double& operator()(std::int64_t i, std::int64_t j, std::int64_t k) {
    return a[static_cast<std::size_t>(i + (n + 2) * (j + (n + 2) * k))];
  }
  void comm3() {
    for (std::int64_t k = 1; k <= n; ++k)
      for (std::int64_t j = 1; j <= n; ++j) {
        (*this)(0, j, k) = (*this)(n, j, k);
        (*this)(n + 1, j, k) = (*this)(1, j, k);
      }
    for (std::int64_t k = 1; k <= n; ++k)
      for (std::int64_t i = 0; i <= n + 1; ++i) {
        (*this)(i, 0, k) = (*this)(i, n, k);
        (*this)(i, n + 1, k) = (*this)(i, 1, k);
      }
    for (std::int64_t j = 0; j <= n + 1; ++j)
      for (std::int64_t i = 0; i <= n + 1; ++i) {
        (*this)(i, j, 0) = (*this)(i, j, n);
        (*this)(i, j, n + 1) = (*this)(i, j, 1);
      }
  }
  std::vector<double> interior() {
    std::vector<double> out;
    for (std::int64_t k = 1; k <= n; ++k)
      for (std::int64_t j = 1; j <= n; ++j)
        for (std::int64_t i = 1; i <= n; ++i) out.push_back((*this)(i, j, k));
    return out;
  }
};

struct MgReference {
  int lt;
  std::vector<MgArray> u, r;  // [k - 1]
  MgArray v;
  double a0 = -8.0 / 3.0, a2 = 1.0 / 6.0, a3 = 1.0 / 12.0, c0 = -3.0 / 8.0, c1 = 1.0 / 32.0,
         c2 = -1.0 / 64.0;

  explicit MgReference(std::int64_t n) : v(n) {
    lt = 0;
    for (std::int64_t m = n; m > 1; m /= 2) ++lt;
    for (int k = 1; k <= lt; ++k) {
      u.emplace_back(n >> (lt - k));
      r.emplace_back(n >> (lt - k));
    }
    const apps::Charges c = apps::zran3(n);
    for (std::int64_t g : c.minus) v(1 + g % n, 1 + (g / n) % n, 1 + g / (n * n)) = -1.0;
    for (std::int64_t g : c.plus) v(1 + g % n, 1 + (g / n) % n, 1 + g / (n * n)) = 1.0;
    v.comm3();
  }

  // r = v - A u (v and r may be the same array: each point reads v at itself only).
  void resid(MgArray& uu, MgArray& vv, MgArray& rr) {
    const std::int64_t n = uu.n;
    MgArray out(n);
    for (std::int64_t k = 1; k <= n; ++k)
      for (std::int64_t j = 1; j <= n; ++j)
        for (std::int64_t i = 1; i <= n; ++i) {
          auto u1 = [&](std::int64_t x) {
            return uu(x, j - 1, k) + uu(x, j + 1, k) + uu(x, j, k - 1) + uu(x, j, k + 1);
          };
          auto u2 = [&](std::int64_t x) {
            return uu(x, j - 1, k - 1) + uu(x, j + 1, k - 1) + uu(x, j - 1, k + 1) +
                   uu(x, j + 1, k + 1);
          };
          out(i, j, k) = vv(i, j, k) - a0 * uu(i, j, k) - a2 * (u2(i) + u1(i - 1) + u1(i + 1)) -
                         a3 * (u2(i - 1) + u2(i + 1));
        }
    out.comm3();
    rr = out;
  }

  void psinv(MgArray& rr, MgArray& uu) {
    const std::int64_t n = uu.n;
    MgArray out = uu;
    for (std::int64_t k = 1; k <= n; ++k)
      for (std::int64_t j = 1; j <= n; ++j)
        for (std::int64_t i = 1; i <= n; ++i) {
          auto r1 = [&](std::int64_t x) {
            return rr(x, j - 1, k) + rr(x, j + 1, k) + rr(x, j, k - 1) + rr(x, j, k + 1);
          };
          auto r2 = [&](std::int64_t x) {
            return rr(x, j - 1, k - 1) + rr(x, j + 1, k - 1) + rr(x, j - 1, k + 1) +
                   rr(x, j + 1, k + 1);
          };
          out(i, j, k) = uu(i, j, k) + c0 * rr(i, j, k) +
                         c1 * (rr(i - 1, j, k) + rr(i + 1, j, k) + r1(i)) +
                         c2 * (r2(i) + r1(i - 1) + r1(i + 1));
        }
    out.comm3();
    uu = out;
  }

  // Coarse point (ci, cj, ck) (1-based) from fine centre (2ci, 2cj, 2ck) (1-based).
  void rprj3(MgArray& fine, MgArray& coarse) {
    for (std::int64_t k = 1; k <= coarse.n; ++k)
      for (std::int64_t j = 1; j <= coarse.n; ++j)
        for (std::int64_t i = 1; i <= coarse.n; ++i) {
          const std::int64_t x = 2 * i, y = 2 * j, z = 2 * k;
          auto x1 = [&](std::int64_t a) {
            return fine(a, y - 1, z) + fine(a, y + 1, z) + fine(a, y, z - 1) + fine(a, y, z + 1);
          };
          auto y1 = [&](std::int64_t a) {
            return fine(a, y - 1, z - 1) + fine(a, y - 1, z + 1) + fine(a, y + 1, z - 1) +
                   fine(a, y + 1, z + 1);
          };
          coarse(i, j, k) =
              0.5 * fine(x, y, z) + 0.25 * (fine(x - 1, y, z) + fine(x + 1, y, z) + x1(x)) +
              0.125 * (x1(x - 1) + x1(x + 1) + y1(x)) + 0.0625 * (y1(x - 1) + y1(x + 1));
        }
    coarse.comm3();
  }

  // NPB's interp (fine sizes above 1): fine u(2i..2i+1) from coarse z(i..i+1), 0-based i with
  // ghosts; fine ghosts come out periodic as in NPB.
  void interp(MgArray& z, MgArray& uu) {
    const std::int64_t mm = z.n + 2;
    for (std::int64_t i3 = 0; i3 < mm - 1; ++i3)
      for (std::int64_t i2 = 0; i2 < mm - 1; ++i2)
        for (std::int64_t i1 = 0; i1 < mm - 1; ++i1) {
          auto z1 = [&](std::int64_t a) { return z(a, i2 + 1, i3) + z(a, i2, i3); };
          auto z2 = [&](std::int64_t a) { return z(a, i2, i3 + 1) + z(a, i2, i3); };
          auto z3 = [&](std::int64_t a) { return z(a, i2 + 1, i3 + 1) + z(a, i2, i3 + 1) + z1(a); };
          const std::int64_t x = 2 * i1, y = 2 * i2, w = 2 * i3;
          uu(x, y, w) = uu(x, y, w) + z(i1, i2, i3);
          uu(x + 1, y, w) = uu(x + 1, y, w) + 0.5 * (z(i1 + 1, i2, i3) + z(i1, i2, i3));
          uu(x, y + 1, w) = uu(x, y + 1, w) + 0.5 * z1(i1);
          uu(x + 1, y + 1, w) = uu(x + 1, y + 1, w) + 0.25 * (z1(i1) + z1(i1 + 1));
          uu(x, y, w + 1) = uu(x, y, w + 1) + 0.5 * z2(i1);
          uu(x + 1, y, w + 1) = uu(x + 1, y, w + 1) + 0.25 * (z2(i1) + z2(i1 + 1));
          uu(x, y + 1, w + 1) = uu(x, y + 1, w + 1) + 0.25 * z3(i1);
          uu(x + 1, y + 1, w + 1) = uu(x + 1, y + 1, w + 1) + 0.125 * (z3(i1) + z3(i1 + 1));
        }
  }

  void mg3p() {
    for (int k = lt; k >= 2; --k) rprj3(r[k - 1], r[k - 2]);
    u[0] = MgArray(u[0].n);
    psinv(r[0], u[0]);
    for (int k = 2; k <= lt - 1; ++k) {
      u[k - 1] = MgArray(u[k - 1].n);
      interp(u[k - 2], u[k - 1]);
      resid(u[k - 1], r[k - 1], r[k - 1]);
      psinv(r[k - 1], u[k - 1]);
    }
    interp(u[lt - 2], u[lt - 1]);
    resid(u[lt - 1], v, r[lt - 1]);
    psinv(r[lt - 1], u[lt - 1]);
  }

  // NPB's main loop from u = 0: resid, then `iterations` x (mg3P, resid).
  void run(int iterations) {
    resid(u[lt - 1], v, r[lt - 1]);
    for (int it = 0; it < iterations; ++it) {
      mg3p();
      resid(u[lt - 1], v, r[lt - 1]);
    }
  }
};

}  // namespace reference
