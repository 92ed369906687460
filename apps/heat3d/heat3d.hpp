// The 7-point Laplacian heat stencil of the Panda paper: explicit Euler for du/dt = lap(u),
// with u held constant on the whole physical boundary.
#pragma once

#include <string>

#include <tessera/tessera.hpp>

#include "apps/common/number_text.hpp"

namespace apps {

struct Heat3d {
  double alpha;  // dt / h^2; stable for alpha <= 1/6
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u,
                             tessera::Out<double> next) const {
    next = u() + alpha * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) +
                          u(0, 0, 1) - 6.0 * u());
  }
};

// The explicit Euler scheme of the 7-point Laplacian is stable for 0 <= alpha <= 1/6; beyond,
// the solution grows without bound (to +-1e95 in 50 steps at alpha 10) and nan stays nan.
inline void check_heat3d_alpha(double alpha) {
  if (!(alpha >= 0.0 && alpha <= 1.0 / 6.0))
    throw tessera::Error("--alpha " + exact_text(alpha) +
                         " is outside the explicit scheme's stability range 0 <= alpha <= 1/6 (" +
                         exact_text(1.0 / 6.0) + "); give a value in that range, e.g. --alpha 0.1");
}

// The boundary value: hot x-low face, cold elsewhere.
inline tessera::Boundaries<3> heat3d_boundaries() {
  auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(0.0));
  bc.set(0, 0, tessera::Boundary::dirichlet(1.0));
  return bc;
}

}  // namespace apps
