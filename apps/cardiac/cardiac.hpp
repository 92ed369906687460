// The Aliev-Panfilov cardiac model of the Panda paper (after the classic finite-difference
// code): e_t = delta lap(e) - k e (e - a)(e - 1) - e r,
//          r_t = -(eps + mu1 r / (mu2 + e)) (r + k e (e - b - 1)),
// explicit Euler, vertex-centred mirror (Neumann) boundaries. One stencil per step computes
// both: the diffusion of e and, at the same point, the reaction and the ODE of r; r is updated
// in place at the point only. Steps run in temporal blocks (several per exchange, one task per
// tile), which refresh e's mirror ghosts after each step.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include <tessera/tessera.hpp>

namespace apps {

struct AlievPanfilov {
  double a = 0.1, b = 0.1, k = 8.0, eps = 0.01, mu1 = 0.07, mu2 = 0.3;
  double delta = 5e-5;  // diffusion coefficient
};

// The time step and the diffusion number of the classic code: 0.95 of the smaller of the
// diffusion and reaction stability limits, on the unit square (cube) with n points per side.
struct CardiacStep {
  double dt, alpha;  // alpha = delta dt / h^2
};
inline CardiacStep cardiac_step(const AlievPanfilov& m, std::int64_t n, int dims) {
  const double h = 1.0 / static_cast<double>(n - 1);
  const double rp = m.k * (m.b + 1) * (m.b + 1) / 4.0;
  const double dte = h * h / (m.delta * 2 * dims + m.delta * h * h * (rp + m.k));
  const double dtr = 1.0 / (m.eps + (m.mu1 / m.mu2) * rp);
  const double dt = 0.95 * std::min(dte, dtr);
  return {dt, m.delta * dt / (h * h)};
}

// Diffusion at a point, e + alpha lap(e): 5 points in 2-D, 7 in 3-D.
template <int D>
TESSERA_HD double diffused(tessera::In<double> e, double alpha) {
  if constexpr (D == 2)
    return e() + alpha * (e(1, 0) + e(-1, 0) - 4.0 * e() + e(0, 1) + e(0, -1));
  else
    return e() + alpha * (e(1, 0, 0) + e(-1, 0, 0) - 6.0 * e() + e(0, 1, 0) + e(0, -1, 0) +
                          e(0, 0, 1) + e(0, 0, -1));
}

// Reaction and recovery at a point; R sees the E just updated (as the classic code's second
// loop does).
TESSERA_HD void react(const AlievPanfilov& m, double dt, double& E, double& R) {
  E = E - dt * (m.k * E * (E - m.a) * (E - 1.0) + E * R);
  R = R + dt * (m.eps + m.mu1 * R / (E + m.mu2)) * (-R - m.k * E * (E - m.b - 1.0));
}

// One step at a point: the diffusion, then the reaction and recovery of the diffused value. The
// classic code runs them as two loops over the grid (diffusion into e_next, then reaction and
// recovery in place); one functor gives the same values in one pass over memory and one task
// per tile and step, with r updated in place at the point, as the classic code keeps it: three
// fields in memory, not four.
template <int D>
struct CardiacPoint {
  AlievPanfilov m;
  double alpha, dt;
  TESSERA_HD void operator()(tessera::Index<D>, tessera::In<double> e, tessera::Out<double> e_next,
                             tessera::InOut<double> r) const {
    double E = diffused<D>(e, alpha), R = r;
    react(m, dt, E, R);
    e_next = E;
    r = R;
  }
};

// Reaction and recovery as a loop updating e and r in place (the classic code's second loop;
// the vectorisation report checks a loop of two InOut doubles with it).
template <int D>
struct CardiacReaction {
  AlievPanfilov m;
  double dt;
  TESSERA_HD void operator()(tessera::Index<D>, tessera::InOut<double> e,
                             tessera::InOut<double> r) const {
    double E = e, R = r;
    react(m, dt, E, R);
    e = E;
    r = R;
  }
};

// Extrema of e in one pass.
template <int D>
struct Extrema {
  TESSERA_HD void operator()(tessera::Index<D>, tessera::In<double> e,
                             tessera::Reducer<tessera::Min> lo,
                             tessera::Reducer<tessera::Max> hi) const {
    lo(e());
    hi(e());
  }
};

// The classic spiral-wave start: e = 1 on the right half (x >= n/2), r = 1 on the top half
// (y >= n/2), zero elsewhere.
template <int D>
double cardiac_e0(tessera::Index<D> p, std::int64_t nx) {
  return p[0] >= nx / 2 ? 1.0 : 0.0;
}
template <int D>
double cardiac_r0(tessera::Index<D> p, std::int64_t ny) {
  return p[1] >= ny / 2 ? 1.0 : 0.0;
}

// One model on one grid: the fields, the stencil, the step.
template <int D>
struct Cardiac {
  AlievPanfilov model;
  CardiacStep step;
  // One name per dimension: a name is one functor (and one performance model).
  tessera::Stencil<D> stepper{D == 2 ? "cardiac2d" : "cardiac3d", tessera::Shape::Star, 1};
  int depth;  // steps per halo exchange (temporal blocking); the fields' ghost layers
  // r has ghost layers too: a block updates it on the ghost points it computes (its faces are
  // never read: r is read at the point only).
  tessera::Field<double, D> e, next, r;

  // `steps_per_exchange`: steps per halo exchange, each block in one task per tile
  // (tessera::kAutoDepth: the deepest the tiles allow); the result is the same for any.
  explicit Cardiac(const tessera::Grid<D>& grid, int steps_per_exchange = tessera::kAutoDepth)
      : step(cardiac_step(model, grid.extent()[0], D)),
        depth(steps_per_exchange == tessera::kAutoDepth ? stepper.auto_depth(grid)
                                                        : steps_per_exchange),
        e(grid, depth, tessera::Boundaries<D>::all(tessera::Boundary::neumann_vertex()), "e"),
        next(grid, depth, tessera::Boundaries<D>::all(tessera::Boundary::neumann_vertex()),
             "e_next"),
        r(grid, depth, tessera::Boundaries<D>::all(tessera::Boundary::dirichlet(0.0)), "r") {
    init();
  }

  // The spiral-wave start (again, e.g. after a calibration sweep).
  void init() {
    const std::int64_t nx = e.grid().extent()[0], ny = e.grid().extent()[1];
    e.fill([nx](tessera::Index<D> p) { return cardiac_e0<D>(p, nx); });
    r.fill([ny](tessera::Index<D> p) { return cardiac_r0<D>(p, ny); });
  }

  // `steps` steps, `depth` per exchange; the result ends in e.
  void advance(long steps = 1) {
    stepper.advance(CardiacPoint<D>{model, step.alpha, step.dt}, e, next, steps, depth,
                    tessera::inout(r));
  }

  // Throws when e has left the model's domain after `steps` steps: not finite (its sum), or
  // down to -mu2 (its minimum), where r's update divides by e + mu2. The classic time step is
  // the reaction's limit on coarse grids (about 1.6; the diffusion's is shorter from about 100
  // points per side in 2-D and 80 in 3-D), and explicit Euler diverges there (measured: 2-D
  // diverged at dt = 0.48 and ran at 0.40; 3-D diverged at 0.53 and ran at 0.51, 300 steps).
  void require_in_domain(double e_sum, double e_min, long steps) const {
    if (std::isfinite(e_sum) && e_min > -model.mu2) return;
    char text[400];
    std::snprintf(
        text, sizeof(text),
        "%s: e left the model's domain after %ld steps (min %.3g, sum %.3g): the explicit "
        "scheme diverged. The "
        "classic time step, dt = %.3g on %lld points per side, is too long for the "
        "reaction on a grid this coarse; use a finer grid (at least 128 points per side "
        "in 2-D, 80 in 3-D ran stably), which shortens dt",
        D == 2 ? "cardiac2d" : "cardiac3d", steps, e_min, e_sum, step.dt,
        static_cast<long long>(e.grid().extent()[0]));
    throw tessera::Error(text);
  }

  std::array<double, 2> extrema() const {
    return tessera::Loop<D>(D == 2 ? "cardiac2d-extrema" : "cardiac3d-extrema")
        .apply(Extrema<D>{}, tessera::in(e), tessera::reductions(tessera::Min{}, tessera::Max{}))
        .get();
  }
};

}  // namespace apps
