// All-pairs gravitational N-body (the XMP-ACC paper's benchmark): Plummer-sphere initial
// conditions from a fixed seed, Plummer softening, kick-drift-kick leapfrog, N-body units
// (G = 1, total mass 1). Bodies are the points of a one-row grid, one field per coordinate;
// forces and potentials are tessera::Pairs interactions, the leapfrog updates pointwise loops.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <tessera/tessera.hpp>
#include <tessera/pairs.hpp>

namespace apps {

struct Bodies {  // plain arrays, body i at index i
  std::vector<double> x, y, z, vx, vy, vz, m;
};

// splitmix64: a fixed, portable sequence of doubles in [0, 1) (53 bits), the same on every
// machine and library (std:: distributions are not).
struct SplitMix {
  std::uint64_t s;
  double next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
  }
};

// A Plummer sphere of n equal masses (Aarseth, Henon & Wielen 1974), scaled to N-body units
// (scale length 3 pi / 16, so E = -1/4), radii beyond 10 scale lengths redrawn, centre of mass
// at rest at the origin.
inline Bodies plummer(std::int64_t n, std::uint64_t seed) {
  constexpr double pi = 3.14159265358979323846;
  const double a = 3.0 * pi / 16.0, vscale = 1.0 / std::sqrt(a);
  Bodies b;
  SplitMix rng{seed};
  auto direction = [&](double r, double& x, double& y, double& z) {
    z = (1.0 - 2.0 * rng.next()) * r;
    const double phi = 2.0 * pi * rng.next(), rho = std::sqrt(r * r - z * z);
    x = rho * std::cos(phi);
    y = rho * std::sin(phi);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    double r;
    do {
      const double u = rng.next();
      r = u > 0 ? 1.0 / std::sqrt(std::pow(u, -2.0 / 3.0) - 1.0) : 1e9;
    } while (r > 10.0);
    double x, y, z;
    direction(r, x, y, z);
    double q, g;  // speed / escape speed, from g(q) = q^2 (1 - q^2)^3.5 by rejection
    do {
      q = rng.next();
      g = 0.1 * rng.next();
    } while (g > q * q * std::pow(1.0 - q * q, 3.5));
    const double v = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25);
    double vx, vy, vz;
    direction(v, vx, vy, vz);
    b.x.push_back(a * x);
    b.y.push_back(a * y);
    b.z.push_back(a * z);
    b.vx.push_back(vscale * vx);
    b.vy.push_back(vscale * vy);
    b.vz.push_back(vscale * vz);
    b.m.push_back(1.0 / static_cast<double>(n));
  }
  for (auto* c : {&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz}) {
    double mean = 0;
    for (double v : *c) mean += v;
    mean /= static_cast<double>(n);
    for (double& v : *c) v -= mean;
  }
  return b;
}

// The acceleration of target i by source j, Plummer-softened: m_j d / (|d|^2 + eps^2)^(3/2).
// j = i adds zeros (d = 0).
struct Gravity {
  double eps2;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::Index<2>, tessera::In<double> xi,
                             tessera::In<double> yi, tessera::In<double> zi, tessera::In<double> xj,
                             tessera::In<double> yj, tessera::In<double> zj, tessera::In<double> mj,
                             tessera::Acc<3>& a) const {
    const double dx = xj() - xi(), dy = yj() - yi(), dz = zj() - zi();
    const double r2 = dx * dx + dy * dy + dz * dz + eps2;
    const double inv = 1.0 / sqrt(r2);
    const double s = mj() * (inv * inv * inv);
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
  }
};

// The potential at target i of every other body: -m_j / sqrt(|d|^2 + eps^2).
struct Potential {
  double eps2;
  TESSERA_HD void operator()(tessera::Index<2> i, tessera::Index<2> j, tessera::In<double> xi,
                             tessera::In<double> yi, tessera::In<double> zi, tessera::In<double> xj,
                             tessera::In<double> yj, tessera::In<double> zj, tessera::In<double> mj,
                             tessera::Acc<1>& phi) const {
    if (i[0] == j[0]) return;
    const double dx = xj() - xi(), dy = yj() - yi(), dz = zj() - zi();
    phi[0] -= mj() / sqrt(dx * dx + dy * dy + dz * dz + eps2);
  }
};

// Kick by half a step, drift by a step, and clear the accelerations for the next sum.
struct KickDrift {
  double half, dt;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::InOut<double> x, tessera::InOut<double> y,
                             tessera::InOut<double> z, tessera::InOut<double> vx,
                             tessera::InOut<double> vy, tessera::InOut<double> vz,
                             tessera::InOut<double> ax, tessera::InOut<double> ay,
                             tessera::InOut<double> az) const {
    const double u = vx + half * ax, v = vy + half * ay, w = vz + half * az;
    vx = u;
    vy = v;
    vz = w;
    x = x + dt * u;
    y = y + dt * v;
    z = z + dt * w;
    ax = 0.0;
    ay = 0.0;
    az = 0.0;
  }
};

struct Kick {
  double half;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> ax, tessera::In<double> ay,
                             tessera::In<double> az, tessera::InOut<double> vx,
                             tessera::InOut<double> vy, tessera::InOut<double> vz) const {
    vx = vx + half * ax();
    vy = vy + half * ay();
    vz = vz + half * az();
  }
};

struct Zero {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::Out<double> f) const { f = 0.0; }
};

// Kinetic energy 0.5 m v^2 and potential energy 0.5 m phi (each pair counted from both ends).
struct Energies {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> m, tessera::In<double> vx,
                             tessera::In<double> vy, tessera::In<double> vz,
                             tessera::In<double> phi, tessera::Reducer<tessera::Sum> kinetic,
                             tessera::Reducer<tessera::Sum> potential) const {
    kinetic(0.5 * m() * (vx() * vx() + vy() * vy() + vz() * vz()));
    potential(0.5 * m() * phi());
  }
};

struct NBodyParams {
  double dt = 0.005;
  double eps = 0.05;  // softening length
};

// The bodies on tiles of `tile` bodies (0: the tiles the planner chooses for all-pairs work),
// and the leapfrog.
class NBody {
 public:
  NBody(std::int64_t n, std::int64_t tile, const Bodies& start, NBodyParams p)
      : grid(tile > 0 ? tessera::Grid<2>({n, 1}, {tile, 1})
                      : tessera::Grid<2>({n, 1}, tessera::PointWork::AllPairs)),
        x(grid, 0, {}, "x"),
        y(grid, 0, {}, "y"),
        z(grid, 0, {}, "z"),
        vx(grid, 0, {}, "vx"),
        vy(grid, 0, {}, "vy"),
        vz(grid, 0, {}, "vz"),
        m(grid, 0, {}, "m"),
        ax(grid, 0, {}, "ax"),
        ay(grid, 0, {}, "ay"),
        az(grid, 0, {}, "az"),
        phi(grid, 0, {}, "phi"),
        params(p) {
    init(start);
  }

  // The bodies at `start` (again, e.g. after a calibration sweep), with their accelerations.
  void init(const Bodies& start) {
    auto put = [](tessera::Field<double, 2>& f, const std::vector<double>& v) {
      f.fill([&](tessera::Index<2> i) { return v[static_cast<std::size_t>(i[0])]; });
    };
    put(x, start.x);
    put(y, start.y);
    put(z, start.z);
    put(vx, start.vx);
    put(vy, start.vy);
    put(vz, start.vz);
    put(m, start.m);
    forces();  // the accelerations the first kick uses (ax, ay, az start at zero)
  }

  // One kick-drift-kick step.
  void step() {
    const double half = 0.5 * params.dt;
    kick_drift.apply(KickDrift{half, params.dt}, tessera::inout(x, y, z, vx, vy, vz, ax, ay, az));
    forces();
    kick.apply(Kick{half}, tessera::in(ax, ay, az), tessera::inout(vx, vy, vz));
  }

  // {kinetic, potential}: submits the potential and the sums; get() waits.
  tessera::Reduction<2> energies() {
    zero.apply(Zero{}, tessera::out(phi));
    potential.apply(Potential{params.eps * params.eps}, tessera::targets(x, y, z),
                    tessera::sources(x, y, z, m), tessera::accumulate(phi));
    return sums.apply(Energies{}, tessera::in(m, vx, vy, vz, phi),
                      tessera::reductions(tessera::Sum{}, tessera::Sum{}));
  }

  tessera::Grid<2> grid;
  tessera::Field<double, 2> x, y, z, vx, vy, vz, m, ax, ay, az, phi;

 private:
  void forces() {
    gravity.apply(Gravity{params.eps * params.eps}, tessera::targets(x, y, z),
                  tessera::sources(x, y, z, m), tessera::accumulate(ax, ay, az));
  }
  NBodyParams params;
  tessera::Pairs<2> gravity{"gravity"}, potential{"potential"};
  tessera::Loop<2> kick_drift{"kick-drift"}, kick{"kick"}, zero{"zero-phi"}, sums{"energies"};
};

}  // namespace apps
