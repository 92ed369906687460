// Grids cut at positions of their own (tiles of different extents along an axis, e.g. a few
// thick GPU slabs and many thin CPU slabs) and grids whose tiles the library chooses: stencil
// steps and temporal blocks give the serial reference's bits. Shared by the shared-memory and
// the distributed tests.
#pragma once

#include <tessera/balance.hpp>

#include "apps/heat3d/heat3d.hpp"
#include "tests/stencil_cases.hpp"

namespace test {

// `steps` steps of heat3d through advance() with `depth` (kAutoDepth: the library's) against
// the reference step by step.
inline void expect_heat3d_advance_matches_reference(const tessera::Grid<3>& grid, int steps,
                                                    int depth) {
  const auto bc = apps::heat3d_boundaries();
  const int halo = depth == tessera::kAutoDepth ? tessera::kMaxAutoDepth : depth;
  tessera::Field<double, 3> u(grid, halo, bc, "u"), next(grid, halo, bc, "next");
  u.fill(initial<double, 3>);
  tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
  const apps::Heat3d f{0.1};
  heat.advance(f, u, next, steps, depth);
  reference::RefField<double, 3> ref{initial_values<double>(grid), bc};
  for (int s = 0; s < steps; ++s) {
    std::vector<double> out(ref.values.size());
    reference::apply(domain(grid), 1, f, std::make_tuple(&ref), std::make_tuple(&out));
    ref.values = out;
  }
  expect_bitwise_equal(u.gather(), ref.values);
}

// Every shape, boundary kind and blocking depth on uneven cut lists.
inline void expect_uneven_tilings_match_reference() {
  using G3 = tessera::Grid<3>;
  using G2 = tessera::Grid<2>;
  {
    SCOPED_TRACE("star r1, distinct Dirichlet faces, two thick z slabs then thin ones");
    expect_matches_reference<double, 3, 1, false>(
        G3::cut({12, 10, 20}, {{{}, {}, {7, 14, 16, 18, 19}}}), distinct_dirichlet3());
  }
  {
    SCOPED_TRACE("star r2, Neumann, uneven cuts along every axis");
    expect_matches_reference<double, 3, 2, false>(
        G3::cut({13, 11, 17}, {{{2, 9}, {5}, {3, 12, 14}}}),
        Boundaries<3>::all(Boundary::neumann()));
  }
  {
    SCOPED_TRACE("box r1, periodic on every axis, a 1-thick tile across the wrap");
    expect_matches_reference<double, 3, 1, true>(
        G3::cut({9, 8, 11}, {{{4}, {1, 5}, {6, 10}}}, {true, true, true}), Boundaries<3>{});
  }
  {
    SCOPED_TRACE("2-D box r1, periodic x, Neumann/Dirichlet y, uneven y slabs");
    Boundaries<2> bc;
    bc.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
    bc.set(1, 0, Boundary::neumann()).set(1, 1, Boundary::dirichlet(-1.5));
    expect_matches_reference<double, 2, 1, true>(
        G2::cut({10, 23}, {{{6}, {10, 18, 20, 21}}}, {true, false}), bc);
  }
  {
    SCOPED_TRACE("2-D box r2 in float, Neumann, uneven x and y");
    expect_matches_reference<float, 2, 2, true>(G2::cut({17, 14}, {{{9, 12}, {2, 4, 11}}}),
                                                Boundaries<2>::all(Boundary::neumann()));
  }
  {
    SCOPED_TRACE("heat3d, temporal blocks of 3 steps on slabs 3 to 14 thick");
    expect_heat3d_advance_matches_reference(G3::cut({12, 10, 32}, {{{}, {4}, {14, 26, 29}}}), 7, 3);
  }
  {
    SCOPED_TRACE("heat3d, automatic depth on thick and thin slabs");
    expect_heat3d_advance_matches_reference(G3::cut({16, 12, 40}, {{{}, {}, {16, 32, 36}}}), 5,
                                            tessera::kAutoDepth);
  }
}

// heat3d on a grid split into a thick part and thin slabs along z, the split moved twice
// mid-run (u and next retiled together at a step boundary, as a rebalance does), blocks of
// `depth` steps: the reference's bits, and each retile leaves every value as it was.
inline void expect_retiled_run_matches_reference(int depth) {
  auto split_at = [](std::int64_t split) {  // GPU part below z = split, in two slabs
    std::vector<std::int64_t> z{split / 2, split};
    for (std::int64_t c = split + 6; c < 40; c += 6) z.push_back(c);
    return tessera::Grid<3>::cut({12, 10, 40}, {{{}, {5}, z}}, {}, 2, split);
  };
  const auto bc = apps::heat3d_boundaries();
  const int halo = depth == tessera::kAutoDepth ? tessera::kMaxAutoDepth : depth;
  tessera::Field<double, 3> u(split_at(24), halo, bc, "u"), next(split_at(24), halo, bc, "next");
  u.fill(initial<double, 3>);
  tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
  const apps::Heat3d f{0.1};
  reference::RefField<double, 3> ref{initial_values<double>(u.grid()), bc};
  auto reference_steps = [&](int steps) {
    for (int s = 0; s < steps; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(domain(u.grid()), 1, f, std::make_tuple(&ref), std::make_tuple(&out));
      ref.values = out;
    }
  };
  int run = 0;
  for (const auto& [steps, split] : {std::pair{3, 16}, std::pair{4, 30}, std::pair{5, 30}}) {
    heat.advance(f, u, next, steps, depth);
    reference_steps(steps);
    run += steps;
    const std::vector<double> before = u.gather();
    u.retile(split_at(split));
    next.retile(split_at(split));
    EXPECT_EQ(u.grid(), split_at(split));
    for (int t = 0; t < u.storage().tiles(); ++t)  // 2: CUDA workers (CPU-only here: 1 runs)
      EXPECT_EQ(u.storage().device_class(t), u.storage().geometry(t).origin[2] < split
                                                 ? tessera::detail::DeviceClass::Cuda
                                                 : tessera::detail::DeviceClass::Cpu);
    SCOPED_TRACE("after " + std::to_string(run) +
                 " steps, split moved to z = " + std::to_string(split));
    expect_bitwise_equal(u.gather(), before);
    expect_bitwise_equal(before, ref.values);
  }
}

// tessera::Balance mid-run on the split grid above: given per-step times of the two parts move
// the split where the rates say (known answers), a difference within the threshold or a move
// that cannot pay for itself does not, and the measured path (no CUDA worker here: nothing
// measured on the GPU part) leaves the tiling alone; the run keeps the reference's bits.
inline void expect_balanced_run_matches_reference(int depth) {
  const auto bc = apps::heat3d_boundaries();
  const int halo = depth == tessera::kAutoDepth ? tessera::kMaxAutoDepth : depth;
  const auto grid = tessera::Grid<3>::cut({12, 10, 40}, {{{}, {5}, {12, 24, 30, 36}}}, {}, 2, 24);
  tessera::Field<double, 3> u(grid, halo, bc, "u"), next(grid, halo, bc, "next");
  u.fill(initial<double, 3>);
  tessera::Balance<3> balance(0.1, 2);
  balance.add(u).add(next);
  tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
  const apps::Heat3d f{0.1};
  reference::RefField<double, 3> ref{initial_values<double>(grid), bc};
  int run = 0;
  auto steps = [&](int n) {
    heat.advance(f, u, next, n, depth);
    for (int s = 0; s < n; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(domain(grid), 1, f, std::make_tuple(&ref), std::make_tuple(&out));
      ref.values = out;
    }
    run += n;
    EXPECT_FALSE(balance.at_step(run, 1000));  // measured: no CUDA worker, nothing moves
  };
  steps(3);
  // The GPU part (24 planes) 1 ms a step, the CPU part (16 planes in 3 slabs) 3 ms: 24 / 1
  // against 16 / 3 planes per ms balance at 40 x 24 / (24 + 5.33) = 32.7 planes on the GPU; in
  // whole planes per slab (0.5625 ms a plane), 34 (the CPU part 2 planes a slab, 1.125 ms; the
  // GPU 1.417) beats 33 (3 planes on a slab: 1.69 ms).
  EXPECT_TRUE(balance.rebalance(1e-3, 3e-3, 100));
  EXPECT_EQ(u.grid().split(), 34);
  EXPECT_EQ(next.grid(), u.grid());
  steps(4);
  EXPECT_GT(balance.measured()[1], 0);                  // the CPU part's steps, timed
  EXPECT_FALSE(balance.rebalance(1e-3, 1.05e-3, 100));  // within 10 %
  EXPECT_FALSE(balance.rebalance(3e-3, 1e-3, 0));       // no step left to gain anything
  EXPECT_EQ(u.grid().split(), 34);
  // Back: 34 planes in 3 ms against 6 (2 a slab) in 1 ms balance at 26.2; at 28, 12 planes in
  // slabs of 4 take 2 ms and the GPU 2.47, the shortest step near there.
  EXPECT_TRUE(balance.rebalance(3e-3, 1e-3, 100));
  EXPECT_EQ(u.grid().split(), 28);
  EXPECT_EQ(balance.moves().size(), 2u);
  steps(5);
  for (int t = 0; t < u.storage().tiles(); ++t)
    EXPECT_EQ(u.storage().device_class(t), u.storage().geometry(t).origin[2] < 28
                                               ? tessera::detail::DeviceClass::Cuda
                                               : tessera::detail::DeviceClass::Cpu);
  expect_bitwise_equal(u.gather(), ref.values);
}

}  // namespace test
