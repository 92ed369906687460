// Airfoil (OP2's nonlinear 2-D inviscid airfoil code): the five loop kernels, each written once
// as a TESSERA_HD functor that sees one element's data through pointers, and the flow constants.
// Shared by the application, its serial reference (tests/reference) and the OpenMP twin (bench).
#pragma once

#include <cmath>

#include <tessera/macros.hpp>

namespace apps::airfoil {

/// The flow constants of OP2's Airfoil (gam, gm1, cfl, eps, mach, alpha and the free stream
/// qinf), set as OP2 sets them (its single-precision literals included).
struct Constants {
  double gam, gm1, cfl, eps, mach, alpha, qinf[4];
};

inline Constants constants() {
  Constants c{};
  c.gam = 1.4f;
  c.gm1 = c.gam - 1.0f;
  c.cfl = 0.9f;
  c.eps = 0.05f;
  c.mach = 0.4f;
  c.alpha = 3.0 * std::atan(1.0) / 45.0;
  const double p = 1.0, r = 1.0;
  const double u = std::sqrt(c.gam * p / r) * c.mach;
  const double e = p / (r * c.gm1) + 0.5 * u * u;
  c.qinf[0] = r;
  c.qinf[1] = r * u;
  c.qinf[2] = 0.0;
  c.qinf[3] = r * e;
  return c;
}

/// Pressure of a state q (density, two momenta, energy).
TESSERA_HD double pressure(const Constants& c, const double* q) {
  const double ri = 1.0 / q[0];
  return c.gm1 * (q[3] - 0.5 * ri * (q[1] * q[1] + q[2] * q[2]));
}

/// save_soln (cells): qold = q.
struct SaveSoln {
  TESSERA_HD void operator()(const double* q, double* qold) const {
    for (int k = 0; k < 4; ++k) qold[k] = q[k];
  }
};

/// adt_calc (cells, nodes through pcell): the cell's local time step from its four sides.
struct AdtCalc {
  Constants c;
  TESSERA_HD void operator()(const double* x1, const double* x2, const double* x3, const double* x4,
                             const double* q, double* adt) const {
    const double ri = 1.0 / q[0];
    const double u = ri * q[1], v = ri * q[2];
    const double sound = std::sqrt(c.gam * c.gm1 * (ri * q[3] - 0.5 * (u * u + v * v)));
    const double* corner[5] = {x1, x2, x3, x4, x1};
    double sum = 0.0;
    for (int s = 0; s < 4; ++s) {
      const double dx = corner[s + 1][0] - corner[s][0];
      const double dy = corner[s + 1][1] - corner[s][1];
      sum += std::fabs(u * dy - v * dx) + sound * std::sqrt(dx * dx + dy * dy);
    }
    *adt = sum / c.cfl;
  }
};

/// The four components of the flux across a face (dx, dy) between states qa and qb with
/// pressures pa and pb and dissipation mu.
TESSERA_HD void face_flux(const double* qa, double pa, const double* qb, double pb, double dx,
                          double dy, double mu, double* f) {
  const double va = (qa[1] * dy - qa[2] * dx) / qa[0];
  const double vb = (qb[1] * dy - qb[2] * dx) / qb[0];
  f[0] = 0.5 * (va * qa[0] + vb * qb[0]) + mu * (qa[0] - qb[0]);
  f[1] = 0.5 * (va * qa[1] + pa * dy + vb * qb[1] + pb * dy) + mu * (qa[1] - qb[1]);
  f[2] = 0.5 * (va * qa[2] - pa * dx + vb * qb[2] - pb * dx) + mu * (qa[2] - qb[2]);
  f[3] = 0.5 * (va * (qa[3] + pa) + vb * (qb[3] + pb)) + mu * (qa[3] - qb[3]);
}

/// res_calc (edges; nodes through pedge, cells through pecell): the flux across an interior
/// edge, added to one cell's residual and taken from the other's.
struct ResCalc {
  Constants c;
  TESSERA_HD void operator()(const double* x1, const double* x2, const double* q1, const double* q2,
                             const double* adt1, const double* adt2, double* res1,
                             double* res2) const {
    const double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
    const double mu = 0.5 * (*adt1 + *adt2) * c.eps;
    double f[4];
    face_flux(q1, pressure(c, q1), q2, pressure(c, q2), dx, dy, mu, f);
    for (int k = 0; k < 4; ++k) {
      res1[k] += f[k];
      res2[k] -= f[k];
    }
  }
};

/// bres_calc (boundary edges): a wall (bound 1) adds the pressure force only; the far field
/// (bound 2) the flux against the free stream.
struct BresCalc {
  Constants c;
  TESSERA_HD void operator()(const double* x1, const double* x2, const double* q1,
                             const double* adt1, double* res1, const int* bound) const {
    const double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
    const double p1 = pressure(c, q1);
    if (*bound == 1) {
      res1[1] += p1 * dy;
      res1[2] += -p1 * dx;
      return;
    }
    double f[4];
    face_flux(q1, p1, c.qinf, pressure(c, c.qinf), dx, dy, *adt1 * c.eps, f);
    for (int k = 0; k < 4; ++k) res1[k] += f[k];
  }
};

/// update (cells): q = qold - res / adt, res cleared; the squared changes summed into rms and
/// their largest kept in maxerr.
struct Update {
  TESSERA_HD void operator()(const double* qold, double* q, double* res, const double* adt,
                             double* rms, double* maxerr) const {
    const double adti = 1.0 / *adt;
    for (int k = 0; k < 4; ++k) {
      const double del = adti * res[k];
      q[k] = qold[k] - del;
      res[k] = 0.0;
      const double sq = del * del;
      *rms += sq;
      if (sq > *maxerr) *maxerr = sq;
    }
  }
};

}  // namespace apps::airfoil
