// User boundary functions (Boundary::Kind::Function) against the serial reference: the cases
// shared by the shared-memory and distributed tests, and their functors (also compiled for the
// GPU by tests/cuda/compile_check.cu).
#pragma once

#include <tessera/boundary_function.hpp>

#include "tests/stencil_cases.hpp"

namespace test {

// A profile on part of the face (by global index), a cell-centred wall value elsewhere
// (2 w - mirrored puts w on the face itself).
struct Inflow3 {
  double speed;
  TESSERA_HD double operator()(Index<3> ghost, double mirrored) const {
    if (ghost[1] < 5)
      return speed + 0.125 * static_cast<double>(ghost[2]) + 0.0625 * static_cast<double>(ghost[0]);
    return 2.0 * speed - mirrored;
  }
};

// Depends on every component of the index (corners and edges show wrong orientations).
struct Outflow3 {
  TESSERA_HD double operator()(Index<3> ghost, double mirrored) const {
    return 0.5 * mirrored + 0.25 * static_cast<double>(ghost[0]) -
           0.125 * static_cast<double>(ghost[1]) + 0.03125 * static_cast<double>(ghost[2]);
  }
};

struct Ramp2 {
  float scale;
  TESSERA_HD float operator()(Index<2> ghost, float mirrored) const {
    return scale * static_cast<float>(ghost[0] + 2 * ghost[1]) - 0.5f * mirrored;
  }
};

// Every boundary-function case, each run for a few steps and compared bitwise.
inline void expect_function_boundaries_match_reference() {
  using Fns3 = reference::FaceFunctions<double, 3>;
  {
    SCOPED_TRACE("3-D star r1: functions on x faces, Neumann and Dirichlet elsewhere");
    Boundaries<3> bc = Boundaries<3>::all(Boundary::neumann());
    bc.set(0, 0, tessera::boundary_function("inflow", Inflow3{1.5}));
    bc.set(0, 1, tessera::boundary_function("outflow", Outflow3{}));
    bc.set(2, 1, Boundary::dirichlet(-0.5));
    Fns3 fns;
    fns[0][0] = Inflow3{1.5};
    fns[0][1] = Outflow3{};
    expect_matches_reference<double, 3, 1, false>(tessera::Grid<3>({12, 10, 9}, {4, 5, 3}), bc, 3,
                                                  1, Mix<double, 3, 1, false>{}, fns);
  }
  {
    SCOPED_TRACE("3-D box r2: functions meet Dirichlet, Neumann and a periodic axis at corners");
    Boundaries<3> bc;
    bc.set(0, 0, tessera::boundary_function("inflow", Inflow3{0.75}));
    bc.set(0, 1, Boundary::neumann());
    bc.set(1, 0, Boundary::dirichlet(2.0));
    bc.set(1, 1, tessera::boundary_function("outflow", Outflow3{}));
    bc.set(2, 0, Boundary::periodic()).set(2, 1, Boundary::periodic());
    Fns3 fns;
    fns[0][0] = Inflow3{0.75};
    fns[1][1] = Outflow3{};
    expect_matches_reference<double, 3, 2, true>(
        tessera::Grid<3>({11, 10, 8}, {4, 4, 3}, {false, false, true}), bc, 3, 2,
        Mix<double, 3, 2, true>{}, fns);
  }
  {
    SCOPED_TRACE("2-D float box r1: one function on every face, uneven tiles");
    const auto bc = Boundaries<2>::all(tessera::boundary_function("ramp", Ramp2{0.25f}));
    reference::FaceFunctions<float, 2> fns;
    for (auto& face : fns) face = {Ramp2{0.25f}, Ramp2{0.25f}};
    expect_matches_reference<float, 2, 1, true>(tessera::Grid<2>({14, 11}, {4, 3}), bc, 3, 1,
                                                Mix<float, 2, 1, true>{}, fns);
  }
  {
    SCOPED_TRACE("2-D float star r2: a function beside NeumannVertex, thin last tiles");
    Boundaries<2> bc = Boundaries<2>::all(Boundary::neumann_vertex());
    bc.set(1, 1, tessera::boundary_function("ramp", Ramp2{0.25f}));
    reference::FaceFunctions<float, 2> fns;
    fns[1][1] = Ramp2{0.25f};
    expect_matches_reference<float, 2, 2, false>(tessera::Grid<2>({9, 7}, {3, 4}), bc, 2, 2,
                                                 Mix<float, 2, 2, false>{}, fns);
  }
}

}  // namespace test
