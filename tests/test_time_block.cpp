// Temporal blocking (Stencil::advance): several steps per exchange give the serial reference's
// bits for every depth, shape, element type, boundary kind, tiling, scheduler and worker count;
// what it cannot do is refused before any task is submitted.
#include <gmock/gmock.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "apps/heat3d/heat3d.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"
#include "apps/life/life.hpp"
#include "tests/stencil_cases.hpp"

namespace {

using test::Boundaries;
using test::Boundary;
using test::Index;

// Mix's fold plus a term of the global index, so a ghost point computed with a wrong
// (unwrapped) index differs.
template <class T, int R, bool Box>
struct MixAt {
  TESSERA_HD void operator()(Index<2> p, tessera::In<T> u, tessera::Out<T> out) const {
    double acc = 0;
    for (int dy = -R; dy <= R; ++dy)
      for (int dx = -R; dx <= R; ++dx) {
        if (!Box && dx != 0 && dy != 0) continue;
        acc = acc * 0.75 + static_cast<double>(u(dx, dy));
      }
    out = static_cast<T>(acc / 4 + static_cast<double>((p[0] * 7 + p[1]) % 5));
  }
};

// `steps` steps through advance() with `depth` against the reference's step-by-step run.
template <class T, int D, int R, bool Box, class F>
void expect_advance_matches_reference(const tessera::Grid<D>& grid, const Boundaries<D>& bc,
                                      int steps, int depth, F f, const char* name = "mix") {
  tessera::Field<T, D> u(grid, depth * R, bc, "u"), next(grid, depth * R, bc, "next");
  u.fill(test::initial<T, D>);
  tessera::Stencil<D> stencil(name, Box ? tessera::Shape::Box : tessera::Shape::Star, R);
  stencil.advance(f, u, next, steps, depth);
  reference::RefField<T, D> ref{test::initial_values<T>(grid), bc};
  for (int s = 0; s < steps; ++s) {
    std::vector<T> out(ref.values.size());
    reference::apply(test::domain(grid), R, f, std::make_tuple(&ref), std::make_tuple(&out));
    ref.values = out;
  }
  test::expect_bitwise_equal(u.gather(), ref.values);
}

// A step reading u and a second field that the steps do not change, at an offset too (so its
// ghost layers matter), with the index in the arithmetic.
template <class T>
struct WithSource {
  TESSERA_HD void operator()(Index<2> p, tessera::In<T> u, tessera::In<T> s,
                             tessera::Out<T> out) const {
    out = static_cast<T>((u(-1, 0) + u(1, 0) + u(0, -1) * 0.5 + u(0, 1) * 0.75) / 3 +
                         s(1, 0) * 0.125 - s(0, -1) * 0.0625 +
                         static_cast<double>((p[0] + 3 * p[1]) % 4));
  }
};

// advance() with an extra input against apply() step by step in the reference; the fields
// have different halo widths (each task frame's offsets and strides are the field's own).
template <class T, class F>
void expect_source_advance_matches_reference(const tessera::Grid<2>& grid, const Boundaries<2>& bc,
                                             const Boundaries<2>& source_bc, int steps, int depth,
                                             F f, const char* name = "source") {
  tessera::Field<T, 2> u(grid, depth, bc, "u"), next(grid, depth + 1, bc, "next");
  tessera::Field<T, 2> s(grid, depth + 2, source_bc, "s");
  auto source = [](Index<2> p) {
    return static_cast<T>(0.5 + static_cast<double>((p[0] * 5 + p[1] * 3) % 7));
  };
  u.fill(test::initial<T, 2>);
  s.fill(source);
  tessera::Stencil<2> stencil(name, tessera::Shape::Star, 1);
  stencil.advance(f, u, next, steps, depth, tessera::in(s));
  reference::RefField<T, 2> ref{test::initial_values<T>(grid), bc};
  reference::RefField<T, 2> rs{test::values_of<T>(grid, source), source_bc};
  for (int k = 0; k < steps; ++k) {
    std::vector<T> out(ref.values.size());
    reference::apply(test::domain(grid), 1, f, std::make_tuple(&ref, &rs), std::make_tuple(&out));
    ref.values = out;
  }
  test::expect_bitwise_equal(u.gather(), ref.values);
}

class TimeBlock : public testing::TestWithParam<test::Config> {
 protected:
  void SetUp() override { rt = std::make_unique<tessera::Runtime>(test::options(GetParam())); }
  void TearDown() override { rt.reset(); }
  std::unique_ptr<tessera::Runtime> rt;
};

// 3-D star on doubles with a different Dirichlet value on each face, uneven tiles (the last
// ones thinner), 7 steps: blocks of every depth, the last one shorter.
TEST_P(TimeBlock, StarDirichlet3dMatchesReferenceAtEveryDepth) {
  const tessera::Grid<3> grid({20, 18, 16}, {7, 6, 6});
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    expect_advance_matches_reference<double, 3, 1, false>(grid, test::distinct_dirichlet3(), 7,
                                                          depth, test::Mix<double, 3, 1, false>{});
  }
}

// heat3d's own functor and boundaries, as the app runs it.
TEST_P(TimeBlock, Heat3dMatchesStepByStep) {
  const tessera::Grid<3> grid({16, 12, 10}, {8, 6, 5});
  expect_advance_matches_reference<double, 3, 1, false>(grid, apps::heat3d_boundaries(), 6, 3,
                                                        apps::Heat3d{0.1});
}

// Wide rows: the CPU wavefront then computes one row (40000 points) or a few (9000: 3 rows) per
// turn and step, so steps overlap inside a tile; narrower tiles run each step whole per turn.
TEST_P(TimeBlock, WavefrontTurnsOfOneOrSeveralRows) {
  for (std::int64_t width : {40000, 9000}) {
    SCOPED_TRACE("rows of " + std::to_string(width));
    const tessera::Grid<2> grid({width, 24}, {width, 8});
    Boundaries<2> faces;
    for (int a = 0; a < 2; ++a)
      for (int side = 0; side < 2; ++side)
        faces.set(a, side, Boundary::dirichlet(1.0 + a + 0.5 * side));
    expect_advance_matches_reference<double, 2, 1, false>(grid, faces, 6, 4,
                                                          test::Mix<double, 2, 1, false>{});
  }
}
TEST_P(TimeBlock, WavefrontTurnsOfSeveralRowsWrap) {
  for (std::int64_t width : {40000, 9000}) {
    SCOPED_TRACE("rows of " + std::to_string(width));
    const tessera::Grid<2> torus({width, 24}, {width, 12}, {true, true});
    expect_advance_matches_reference<double, 2, 2, true>(
        torus, Boundaries<2>::all(Boundary::periodic()), 5, 3, MixAt<double, 2, true>{});
  }
}

// Periodic on both axes, box of radius 2, with the index in the arithmetic: windows wrap
// around the faces with the wrapped index (one tile along x: it wraps onto itself).
TEST_P(TimeBlock, PeriodicBoxWrapsWithTheWrappedIndex) {
  const auto periodic = Boundaries<2>::all(Boundary::periodic());
  for (const auto& tile :
       {std::array<std::int64_t, 2>{8, 7}, std::array<std::int64_t, 2>{24, 10}}) {
    const tessera::Grid<2> grid({24, 20}, {tile[0], tile[1]}, {true, true});
    for (int depth : {1, 2, 3}) {
      SCOPED_TRACE("tile " + std::to_string(tile[0]) + "x" + std::to_string(tile[1]) + ", depth " +
                   std::to_string(depth));
      expect_advance_matches_reference<double, 2, 2, true>(grid, periodic, 5, depth,
                                                           MixAt<double, 2, true>{});
    }
  }
}

// Blocks deeper than kMaxAutoDepth (as auto_depth picks on thick tiles of few points): 16 steps
// per exchange, 37 steps (a shorter, odd last block), Dirichlet and periodic rows.
TEST_P(TimeBlock, DeepBlocksMatchReference) {
  const tessera::Grid<2> rows({16, 96}, {16, 32});
  const tessera::Grid<2> ring({16, 96}, {16, 32}, {false, true});
  expect_advance_matches_reference<double, 2, 1, false>(
      rows, test::Boundaries<2>::all(Boundary::dirichlet(0.5)), 37, tessera::kDeepestAutoDepth,
      MixAt<double, 1, false>{});
  Boundaries<2> faces;
  faces.set(0, 0, Boundary::dirichlet(1.0)).set(0, 1, Boundary::dirichlet(-1.0));
  faces.set(1, 0, Boundary::periodic()).set(1, 1, Boundary::periodic());
  expect_advance_matches_reference<float, 2, 1, true>(ring, faces, 37, tessera::kDeepestAutoDepth,
                                                      MixAt<float, 1, true>{});
}

// Life's uint8 cells on a periodic torus, one axis periodic and the other Dirichlet.
TEST_P(TimeBlock, LifeAndMixedFacesMatchReference) {
  const tessera::Grid<2> torus({30, 26}, {10, 9}, {true, true});
  expect_advance_matches_reference<std::uint8_t, 2, 1, true>(
      torus, Boundaries<2>::all(Boundary::periodic()), 9, 4, apps::Life{});
  const tessera::Grid<2> band({30, 26}, {10, 9}, {true, false});
  Boundaries<2> mixed;
  mixed.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
  mixed.set(1, 0, Boundary::dirichlet(3.0)).set(1, 1, Boundary::dirichlet(0.5));
  expect_advance_matches_reference<float, 2, 1, false>(band, mixed, 5, 2, MixAt<float, 1, false>{});
}

// An extra read-only input (jacobi2d's source term): Dirichlet faces, then periodic u and
// source, then a periodic u with a source that is periodic too on the x faces and Dirichlet
// on y (u is Dirichlet there), at every depth, uneven tiles.
TEST_P(TimeBlock, ExtraInputsMatchReference) {
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.5));
  const auto periodic = Boundaries<2>::all(Boundary::periodic());
  Boundaries<2> band, band_source;
  band.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
  band.set(1, 0, Boundary::dirichlet(2.0)).set(1, 1, Boundary::dirichlet(-1.0));
  band_source.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
  band_source.set(1, 0, Boundary::dirichlet(4.0)).set(1, 1, Boundary::neumann());
  const tessera::Grid<2> box({23, 19}, {8, 7});
  const tessera::Grid<2> torus({23, 19}, {8, 7}, {true, true});
  const tessera::Grid<2> strip({23, 19}, {8, 7}, {true, false});
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    expect_source_advance_matches_reference<double>(box, zero, zero, 7, depth,
                                                    WithSource<double>{});
    expect_source_advance_matches_reference<double>(torus, periodic, periodic, 6, depth,
                                                    WithSource<double>{});
    expect_source_advance_matches_reference<float>(strip, band, band_source, 5, depth,
                                                   WithSource<float>{});
  }
  // jacobi2d's own functor, as the app runs it with --steps-per-exchange.
  expect_source_advance_matches_reference<float>(box, zero, zero, 9, 3, apps::Jacobi2d{0.01f},
                                                 "jacobi2d");
}

// Mirror faces (Neumann, cell- and vertex-centred), which blocks refresh after each step: star
// and box stencils of radius 1 and 2 with the index in the arithmetic, tiles cutting both axes
// (corners beyond two faces: mirrors of mirrors), mixed with Dirichlet and periodic faces, 3-D
// too, every depth with a shorter last block.
TEST_P(TimeBlock, MirrorFacesMatchReference) {
  Boundaries<2> mixed = Boundaries<2>::all(Boundary::neumann());
  mixed.set(0, 1, Boundary::neumann_vertex()).set(1, 0, Boundary::dirichlet(2.5));
  Boundaries<2> band;
  band.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
  band.set(1, 0, Boundary::neumann_vertex()).set(1, 1, Boundary::neumann());
  const tessera::Grid<2> box({23, 19}, {8, 7});
  const tessera::Grid<2> strip({23, 19}, {8, 7}, {true, false});
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    expect_advance_matches_reference<double, 2, 1, false>(
        box, Boundaries<2>::all(Boundary::neumann()), 7, depth, MixAt<double, 1, false>{}, "star");
    expect_advance_matches_reference<double, 2, 1, true>(
        box, Boundaries<2>::all(Boundary::neumann_vertex()), 6, depth, MixAt<double, 1, true>{},
        "box");
    expect_advance_matches_reference<float, 2, 1, true>(box, mixed, 5, depth,
                                                        MixAt<float, 1, true>{}, "box-float");
    expect_advance_matches_reference<double, 2, 1, false>(strip, band, 6, depth,
                                                          MixAt<double, 1, false>{}, "star");
  }
  // One tile across the periodic x axis: its window keeps to the tile and the wrapped ghost
  // columns are copied after each step (each_wrapped_x_box), before the mirror rows that span
  // them; a box stencil reads the corners, MixAt the wrapped index.
  const tessera::Grid<2> whole_rows({23, 19}, {23, 7}, {true, false});
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE("whole periodic rows, depth " + std::to_string(depth));
    expect_advance_matches_reference<double, 2, 1, true>(whole_rows, band, 7, depth,
                                                         MixAt<double, 1, true>{}, "box");
    expect_advance_matches_reference<float, 2, 1, false>(whole_rows, band, 6, depth,
                                                         MixAt<float, 1, false>{}, "star");
  }
  for (int depth : {1, 2, 3}) {
    SCOPED_TRACE("radius 2, depth " + std::to_string(depth));
    expect_advance_matches_reference<double, 2, 2, true>(
        tessera::Grid<2>({30, 26}, {10, 9}), mixed, 5, depth, MixAt<double, 2, true>{}, "box2");
  }
  const tessera::Grid<3> cube({14, 12, 15}, {7, 6, 5});
  Boundaries<3> faces3 = Boundaries<3>::all(Boundary::neumann_vertex());
  faces3.set(2, 0, Boundary::neumann()).set(1, 1, Boundary::dirichlet(1.5));
  expect_advance_matches_reference<double, 3, 1, true>(cube, faces3, 5, 3,
                                                       test::Mix<double, 3, 1, true>{}, "box3");
  expect_advance_matches_reference<double, 3, 1, false>(
      cube, Boundaries<3>::all(Boundary::neumann()), 7, 4, test::Mix<double, 3, 1, false>{},
      "star3");
}

// Fields updated in place beside the stencil (advance's tessera::inout): acc keeps a decaying
// sum of u and a term of the global index, read and written at the point, and next reads it,
// so a wrong acc on any ghost point a block recomputes (stale, not updated at every step, or
// updated with an unwrapped index) reaches u's interior a step later. The reference: the
// oracle's step reading acc at the point, then acc in a plain loop over the values u had.
struct SmoothPlusState {
  TESSERA_HD void operator()(Index<2>, tessera::In<double> u, tessera::In<double> acc,
                             tessera::Out<double> next) const {
    next = 0.5 * u() + 0.125 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1)) + 0.25 * acc();
  }
};
double state_term(Index<2> p) { return 0.01 * static_cast<double>((p[0] * 3 + p[1] * 5) % 7); }
struct SmoothAndAccumulate {
  TESSERA_HD void operator()(Index<2> p, tessera::In<double> u, tessera::Out<double> next,
                             tessera::InOut<double> acc, tessera::InOut<double> count) const {
    next = 0.5 * u() + 0.125 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1)) + 0.25 * acc;
    acc = 0.5 * acc + u() + 0.01 * static_cast<double>((p[0] * 3 + p[1] * 5) % 7);
    count = count + 1.0;
  }
};

void expect_state_advance_matches_reference(const tessera::Grid<2>& grid, const Boundaries<2>& bc,
                                            int steps, int depth) {
  tessera::Field<double, 2> u(grid, depth, bc, "u"), next(grid, depth, bc, "next");
  tessera::Field<double, 2> acc(grid, depth + 1, bc, "acc"), count(grid, depth, bc, "count");
  auto acc0 = [](Index<2> p) { return 0.01 * static_cast<double>(p[0] - 2 * p[1]); };
  u.fill(test::initial<double, 2>);
  acc.fill(acc0);
  count.fill([](Index<2>) { return 0.0; });
  tessera::Stencil<2> stencil("smooth-acc", tessera::Shape::Star, 1);
  stencil.advance(SmoothAndAccumulate{}, u, next, steps, depth, tessera::in(),
                  tessera::inout(acc, count));
  reference::RefField<double, 2> ru{test::initial_values<double>(grid), bc};
  reference::RefField<double, 2> racc{test::values_of<double>(grid, acc0), bc};
  const std::int64_t nx = grid.extent()[0];
  for (int k = 0; k < steps; ++k) {
    std::vector<double> out(ru.values.size());
    reference::apply(test::domain(grid), 1, SmoothPlusState{}, std::make_tuple(&ru, &racc),
                     std::make_tuple(&out));
    for (std::size_t i = 0; i < out.size(); ++i) {
      Index<2> p;
      p[0] = static_cast<std::int64_t>(i) % nx;
      p[1] = static_cast<std::int64_t>(i) / nx;
      racc.values[i] = 0.5 * racc.values[i] + ru.values[i] + state_term(p);
    }
    ru.values = out;
  }
  test::expect_bitwise_equal(u.gather(), ru.values);
  test::expect_bitwise_equal(acc.gather(), racc.values);
  test::expect_bitwise_equal(count.gather(), std::vector<double>(ru.values.size(), steps));
}

// Tiles cutting both axes (corner ghost points recomputed), Dirichlet and periodic faces, every
// depth with a shorter last block; then a later stencil reads acc with its neighbours: the
// blocks left its faces current for the exchange.
TEST_P(TimeBlock, InPlaceFieldsMatchReference) {
  const tessera::Grid<2> box({23, 19}, {8, 7});
  const tessera::Grid<2> torus({23, 19}, {8, 7}, {true, true});
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    expect_state_advance_matches_reference(box, Boundaries<2>::all(Boundary::dirichlet(0.5)), 7,
                                           depth);
    expect_state_advance_matches_reference(torus, Boundaries<2>::all(Boundary::periodic()), 6,
                                           depth);
  }
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  tessera::Field<double, 2> u(box, 3, zero, "u"), next(box, 3, zero, "next"),
      acc(box, 3, zero, "acc"), count(box, 3, zero, "count"), smooth(box, 3, zero, "smooth"),
      smooth_ref(box, 1, zero, "smooth-ref");
  u.fill(test::initial<double, 2>);
  acc.fill([](Index<2>) { return 1.0; });
  tessera::Stencil<2> stencil("smooth-acc", tessera::Shape::Star, 1),
      mix("mix", tessera::Shape::Star, 1);
  mix.apply(test::Mix<double, 2, 1, false>{}, tessera::in(acc),
            tessera::out(smooth));  // exchanges acc
  stencil.advance(SmoothAndAccumulate{}, u, next, 5, 3,
                  tessera::inout(acc, count));  // no extra input
  mix.apply(test::Mix<double, 2, 1, false>{}, tessera::in(acc), tessera::out(smooth));
  reference::RefField<double, 2> racc{acc.gather(), zero};
  std::vector<double> want(racc.values.size());
  reference::apply(test::domain(box), 1, test::Mix<double, 2, 1, false>{}, std::make_tuple(&racc),
                   std::make_tuple(&want));
  test::expect_bitwise_equal(smooth.gather(), want);
}

INSTANTIATE_TEST_SUITE_P(Configs, TimeBlock, testing::ValuesIn(test::configs()), test::config_name);

// The tasks of a blocked run per kind, recorded by a runtime of its own (task steps count from
// 0): `run` creates the fields and submits. With fused exchanges, every halo-pack task must
// serve the first exchange (step 0): after it, the block tasks pack the faces the next block
// reads, whether a block's result ends in u (an even number of steps) or in next (odd).
template <class Run>
std::map<std::string, int> block_tasks_per_kind(bool fused_exchange, Run run) {
  tessera::Options o = test::options({"dmda", 2});
  o.trace = testing::TempDir() + "tessera_block_tasks.json";
  o.fused_exchange = fused_exchange;
  tessera::Runtime rt(o);
  run();
  rt.wait();
  std::map<std::string, int> kinds;
  for (const tessera::trace::TaskEvent& e : rt.recorded().tasks) {
    ++kinds[e.kind];
    if (fused_exchange && e.kind == "halo-pack")
      EXPECT_EQ(e.step, 0) << "a separate halo-pack task of field '" << e.field << "', tile "
                           << e.tile << ", after the first exchange";
  }
  return kinds;
}

using Kinds = std::map<std::string, int>;

// heat3d, life and jacobi2d as their apps run them with --steps-per-exchange: in steady state
// one task per tile and block, nothing else; --separate-exchange-tasks keeps one halo-pack and
// one boundary task per tile and block, and gives the same bits.
TEST(BlockTasks, OneTaskPerTileAndBlockAfterTheFirstExchange) {
  const tessera::Grid<3> slabs({24, 20, 18}, {24, 20, 6});  // 3 tiles
  std::vector<double> result[2];
  auto heat3d = [&](int depth, long steps, std::vector<double>* out) {
    return [=, &slabs] {
      tessera::Field<double, 3> u(slabs, depth, apps::heat3d_boundaries(), "u"),
          next(slabs, depth, apps::heat3d_boundaries(), "next");
      u.fill(test::initial<double, 3>);
      tessera::Stencil<3>("heat3d", tessera::Shape::Star, 1)
          .advance(apps::Heat3d{0.1}, u, next, steps, depth);
      if (out != nullptr) *out = u.gather();
    };
  };
  // Depth 3, 10 steps: blocks of 3, 3, 3 and 1 step, each ending in next.
  EXPECT_EQ(block_tasks_per_kind(true, heat3d(3, 10, &result[0])),
            (Kinds{{"time-block+halo", 4 * 3}, {"halo-pack", 3}, {"constant-ghosts", 2 * 3}}));
  EXPECT_EQ(block_tasks_per_kind(false, heat3d(3, 10, &result[1])),
            (Kinds{{"time-block", 4 * 3},
                   {"halo-pack", 4 * 3},
                   {"boundary", 4 * 3},
                   {"constant-ghosts", 2 * 3}}));
  test::expect_bitwise_equal(result[0], result[1]);
  // Depth 2: every block ends in u (its spare face buffers).
  EXPECT_EQ(block_tasks_per_kind(true, heat3d(2, 10, nullptr)),
            (Kinds{{"time-block+halo", 5 * 3}, {"halo-pack", 3}, {"constant-ghosts", 2 * 3}}));

  // life on a torus, 3 x 2 tiles, 3 blocks of 3 steps: no constant ghosts.
  EXPECT_EQ(block_tasks_per_kind(true,
                                 [] {
                                   const tessera::Grid<2> torus({30, 26}, {10, 13}, {true, true});
                                   const auto periodic = Boundaries<2>::all(Boundary::periodic());
                                   tessera::Field<std::uint8_t, 2> u(torus, 3, periodic, "u"),
                                       next(torus, 3, periodic, "next");
                                   u.fill(apps::life_seed);
                                   tessera::Stencil<2>("life", tessera::Shape::Box, 1)
                                       .advance(apps::Life{}, u, next, 9, 3);
                                 }),
            (Kinds{{"time-block+halo", 3 * 6}, {"halo-pack", 6}}));

  // jacobi2d with its source term, 4 tiles, blocks of 3, 3 and 1 step: the source is exchanged
  // once (a halo-pack and a boundary task per tile) and never written.
  EXPECT_EQ(
      block_tasks_per_kind(true,
                           [] {
                             const tessera::Grid<2> grid({48, 40}, {48, 10});
                             const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
                             tessera::Field<float, 2> u(grid, 3, zero, "u"),
                                 next(grid, 3, zero, "next"), f(grid, 3, zero, "f");
                             u.fill([](Index<2>) { return 0.0f; });
                             f.fill([](Index<2> p) { return apps::jacobi2d_source(p, 48, 40); });
                             tessera::Stencil<2>("jacobi2d", tessera::Shape::Star, 1)
                                 .advance(apps::Jacobi2d{0.01f}, u, next, 7, 3, tessera::in(f));
                           }),
      (Kinds{{"time-block+halo", 3 * 4},
             {"halo-pack", 2 * 4},
             {"boundary", 4},
             {"constant-ghosts", 3 * 4}}));
}

class TimeBlockErrors : public testing::Test {
 protected:
  void SetUp() override { rt = std::make_unique<tessera::Runtime>(test::options({"eager", 1})); }
  void TearDown() override { rt.reset(); }
  // The message advance() refuses with, "" if it accepts.
  template <int D>
  std::string refusal(const tessera::Grid<D>& grid, int halo, const Boundaries<D>& bc, long steps,
                      int depth) {
    tessera::Field<double, D> u(grid, halo, bc, "u"), next(grid, halo, bc, "next");
    tessera::Stencil<D> stencil("mix", tessera::Shape::Star, 1);
    try {
      stencil.advance(test::Mix<double, D, 1, false>{}, u, next, steps, depth);
    } catch (const tessera::Error& e) { return e.what(); }
    return "";
  }
  std::unique_ptr<tessera::Runtime> rt;
};

TEST_F(TimeBlockErrors, EachRuleNamesTheValueAndTheFix) {
  using testing::HasSubstr;
  const tessera::Grid<2> grid({16, 16}, {8, 8});
  const Boundaries<2> zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  EXPECT_THAT(refusal(grid, 2, zero, 4, -1),
              HasSubstr("temporal-blocking depth is -1; give a depth of at least 1"));
  EXPECT_THAT(refusal(grid, 2, zero, -1, 2), HasSubstr("steps is -1; give 0 or more steps"));
  EXPECT_THAT(
      refusal(grid, 2, zero, 4, 3),
      HasSubstr("needs ghost layers of depth x radius = 3 on every field, but field 'u' has "
                "halo width 2; create the fields with a halo of at least 3, or lower the "
                "depth to 2"));
  EXPECT_THAT(
      refusal(tessera::Grid<2>({16, 16}, {8, 5}), 4, zero, 4, 4),
      HasSubstr("a tile is only 1 point(s) thick along y (extent 16 cut in tiles of 5); "
                "choose tiles (the last one included) at least 4 thick, or lower the depth to 1"));
  Boundaries<2> neumann = zero;
  neumann.set(1, 1, Boundary::neumann());
  EXPECT_EQ(refusal(grid, 2, neumann, 4, 2), "");  // mirror faces: refreshed after each step
  EXPECT_EQ(refusal(grid, 2, zero, 0, 2), "");     // zero steps: nothing to do
  // A mirror face on u but not on next: the block could not keep next's ghosts current.
  tessera::Field<double, 2> u(grid, 2, neumann, "u"), next(grid, 2, zero, "next");
  tessera::Stencil<2> stencil("mix", tessera::Shape::Star, 1);
  EXPECT_THAT(
      [&]() -> std::string {
        try {
          stencil.advance(test::Mix<double, 2, 1, false>{}, u, next, 4, 2);
        } catch (const tessera::Error& e) { return e.what(); }
        return "";
      }(),
      HasSubstr("field 'u' and field 'next' have different kinds of face at y-high; a block "
                "mirrors a Neumann face only where u and next both have it"));
  EXPECT_EQ(stencil.auto_depth(u, next), 1);
}

TEST_F(TimeBlockErrors, ExtraInputsFollowTheRules) {
  using testing::HasSubstr;
  auto refusal = [](const tessera::Grid<2>& grid, const Boundaries<2>& bc, const Boundaries<2>& sbc,
                    int source_halo, int depth) -> std::string {
    tessera::Field<double, 2> u(grid, 4, bc, "u"), next(grid, 4, bc, "next");
    tessera::Field<double, 2> s(grid, source_halo, sbc, "s");
    tessera::Stencil<2> stencil("source", tessera::Shape::Star, 1);
    try {
      stencil.advance(WithSource<double>{}, u, next, 4, depth, tessera::in(s));
    } catch (const tessera::Error& e) { return e.what(); }
    return "";
  };
  const tessera::Grid<2> grid({16, 16}, {8, 8});
  const tessera::Grid<2> torus({16, 16}, {8, 8}, {true, true});
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  const auto periodic = Boundaries<2>::all(Boundary::periodic());
  EXPECT_THAT(refusal(grid, zero, zero, 2, 3),
              HasSubstr("on every field, but field 's' has halo width 2; create the fields with a "
                        "halo of at least 3, or lower the depth to 2"));
  EXPECT_THAT(refusal(grid, zero, zero, 0, 1), HasSubstr("'s'"));  // step by step: apply()'s rules
  EXPECT_EQ(refusal(torus, periodic, periodic, 4, 4), "");
  EXPECT_EQ(refusal(grid, zero, Boundaries<2>::all(Boundary::neumann()), 4, 4),
            "");  // any faces where u is not periodic
}

TEST_F(TimeBlockErrors, InPlaceFieldsFollowTheRules) {
  using testing::HasSubstr;
  const tessera::Grid<2> grid({64, 64}, {64, 32});
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  tessera::Field<double, 2> u(grid, 4, zero, "u"), next(grid, 4, zero, "next"),
      acc(grid, 2, zero, "acc"), count(grid, 4, Boundaries<2>::all(Boundary::neumann()), "count");
  tessera::Stencil<2> stencil("smooth-acc", tessera::Shape::Star, 1);
  auto refusal = [&](int depth, tessera::Field<double, 2>& a) -> std::string {
    try {
      stencil.advance(SmoothAndAccumulate{}, u, next, 4, depth, tessera::in(),
                      tessera::inout(a, count));
    } catch (const tessera::Error& e) { return e.what(); }
    return "";
  };
  EXPECT_THAT(refusal(3, acc),
              HasSubstr("on every field, but field 'acc' has halo width 2; create "
                        "the fields with a halo of at least 3, or lower the depth to 2"));
  EXPECT_EQ(refusal(2, acc), "");  // any faces on a field updated in place (count: Neumann)
  EXPECT_EQ(stencil.auto_depth(u, next, tessera::in(), tessera::inout(acc, count)),
            2);  // acc's halo
  EXPECT_EQ(stencil.auto_depth(u, next, tessera::inout(acc, count)), 2);
  EXPECT_THAT(refusal(2, next), HasSubstr("field 'next' is given twice as an output"));
}

// kAutoDepth: the deepest block up to kMaxAutoDepth that the halos, tiles and faces allow.
TEST_F(TimeBlockErrors, AutoDepthIsTheDeepestTheFieldsAllow) {
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  auto depth = [](const tessera::Grid<2>& grid, const Boundaries<2>& bc, int halo, int radius,
                  int source_halo) {
    tessera::Field<double, 2> u(grid, halo, bc, "u"), next(grid, halo, bc, "next");
    tessera::Field<double, 2> s(grid, source_halo, bc, "s");
    tessera::Stencil<2> stencil("auto", tessera::Shape::Star, radius);
    EXPECT_EQ(stencil.auto_depth(u, next), stencil.auto_depth(u, next, tessera::in(u)));
    const int depth = stencil.auto_depth(u, next, tessera::in(s));
    // Before the fields exist (halos as deep as needed): never shallower than with given halos.
    if (halo >= 8 && source_halo >= 8) EXPECT_EQ(stencil.auto_depth(grid), depth);
    EXPECT_GE(stencil.auto_depth(grid), depth);
    return depth;
  };
  const tessera::Grid<2> grid({256, 256}, {256, 64});
  EXPECT_EQ(depth(grid, zero, 8, 1, 8), tessera::kMaxAutoDepth);
  EXPECT_EQ(depth(grid, zero, 2, 1, 8), 2);  // u's halo
  EXPECT_EQ(depth(grid, zero, 8, 1, 3), 3);  // the extra input's halo
  EXPECT_EQ(depth(grid, zero, 8, 2, 8), 4);  // 8 / radius 2
  EXPECT_EQ(depth(grid, zero, 4, 3, 4), 1);  // 4 / 3
  EXPECT_EQ(depth(tessera::Grid<2>({256, 256}, {256, 255}), zero, 8, 1, 8),
            1);  // the last tile: 1 thick
  // Tiles of 60 and a last one of 16 along y: depth 4 would recompute 3/16 more points, 3 2/16.
  EXPECT_EQ(depth(tessera::Grid<2>({256, 256}, {256, 60}), zero, 8, 1, 8), 3);
  // Tiles of 8 x 8: depth 2 already recomputes 1/8 + 1/8 more.
  EXPECT_EQ(depth(tessera::Grid<2>({16, 16}, {8, 8}), zero, 8, 1, 8), 1);
  EXPECT_EQ(depth(tessera::Grid<2>({256, 256}, {256, 64}, {true, true}),
                  Boundaries<2>::all(Boundary::periodic()), 8, 1, 8),
            tessera::kMaxAutoDepth);  // 3/256 + 3/64 more
  Boundaries<2> neumann = zero;
  neumann.set(0, 1, Boundary::neumann());
  EXPECT_EQ(depth(grid, neumann, 8, 1, 8), tessera::kMaxAutoDepth);  // mirror faces block too
  // And advance() with it gives the step-by-step bits (depth 3 here: the halo).
  const tessera::Grid<2> small({40, 200}, {40, 50});
  tessera::Field<double, 2> u(small, 3, zero, "u"), next(small, 3, zero, "next"),
      a(small, 1, zero, "a"), b(small, 1, zero, "b");
  u.fill(test::initial<double, 2>);
  a.fill(test::initial<double, 2>);
  tessera::Stencil<2> stencil("mix", tessera::Shape::Star, 1);
  ASSERT_EQ(stencil.auto_depth(u, next), 3);
  stencil.advance(test::Mix<double, 2, 1, false>{}, u, next, 7, tessera::kAutoDepth);
  stencil.advance(test::Mix<double, 2, 1, false>{}, a, b, 7, 1);
  test::expect_bitwise_equal(u.gather(), a.gather());
}

// The depth chooser with costs (the known answers worked by hand): a step of a tile costs
// its points times (1 + the recomputed share, (depth - 1) radius / thickness per cut axis) plus
// 1/depth of a block's own cost.
TEST(BlockDepth, DeeperWhereTheBlockCostDominatesWithinTheRedundantWorkLimit) {
  using tessera::detail::BlockCosts;
  using tessera::detail::deepest_block_for_tiles;
  const auto spec = [](tessera::Grid<2> g) { return tessera::detail::grid_spec(g); };
  // 1000 x 320 in rows of 80 (4 tiles, 80,000 points): at 1 ns a point and 100 us a block, a
  // step costs 80 + (d - 1) + 100 / d us: shortest at d = 10 (99 us; 108 at d = 4).
  const auto rows = spec(tessera::Grid<2>({1000, 320}, {1000, 80}));
  EXPECT_EQ(deepest_block_for_tiles(1, rows, 16, BlockCosts{1e-9, 100e-6}), 10);
  // Without costs, or with `most` at kMaxAutoDepth: the deepest of 1 to 4, as before.
  EXPECT_EQ(deepest_block_for_tiles(1, rows, 16), tessera::kMaxAutoDepth);
  EXPECT_EQ(deepest_block_for_tiles(1, rows, tessera::kMaxAutoDepth, BlockCosts{1e-9, 100e-6}),
            tessera::kMaxAutoDepth);
  // `most` (the halos) caps it: 80 + 5 + 16.7 at 6, against 108 at 4.
  EXPECT_EQ(deepest_block_for_tiles(1, rows, 6, BlockCosts{1e-9, 100e-6}), 6);
  // Points dominate (a block costs 10 us): 83 + 2.5 at 4, 84 + 2 at 5: within kDeeperGain.
  EXPECT_EQ(deepest_block_for_tiles(1, rows, 16, BlockCosts{1e-9, 10e-6}), 4);
  // The redundant-work limit: rows of 32 allow (d - 1) / 32 <= 1/8, d <= 5, however costly a
  // block (32 + (d - 1) 1 + 1000 / d: 5 beats 4 by 10 %).
  const auto thin = spec(tessera::Grid<2>({1000, 320}, {1000, 32}));
  EXPECT_EQ(deepest_block_for_tiles(1, thin, 16, BlockCosts{1e-9, 1000e-6}), 5);
  // A tile across a whole periodic x axis recomputes nothing along x (its wrapped columns are
  // copied after each step): the limit (d - 1) / 80 <= 1/8 gives 11, as without the wrap,
  // where counting x too ((d - 1) (1/80 + 1/1000)) gave 10; with x cut in two it counts.
  const auto wrapped = spec(tessera::Grid<2>({1000, 320}, {1000, 80}, {true, true}));
  EXPECT_EQ(deepest_block_for_tiles(1, wrapped, 16, BlockCosts{1e-9, 1000e-6}), 11);
  const auto halves = spec(tessera::Grid<2>({1000, 320}, {500, 80}, {true, true}));
  EXPECT_EQ(deepest_block_for_tiles(1, halves, 16, BlockCosts{1e-9, 1000e-6}), 9);
  // Radius 2 on the rows of 80: (d - 1) 2 / 80 <= 1/8 gives d <= 6, and d x 2 <= 80; a step
  // costs 80 + 2 (d - 1) + 200 / d: 6 (123.3) against 4 (136); with 100 us a block, 6 (106.7)
  // against 4 (111), 3.9 % shorter; with 60 us, 5 (100) is within kDeeperGain of 4 (101).
  EXPECT_EQ(deepest_block_for_tiles(2, rows, 16, BlockCosts{1e-9, 200e-6}), 6);
  EXPECT_EQ(deepest_block_for_tiles(2, rows, 16, BlockCosts{1e-9, 100e-6}), 6);
  EXPECT_EQ(deepest_block_for_tiles(2, rows, 16, BlockCosts{1e-9, 60e-6}), 4);
  // Both axes cut, 8 x 8 tiles of 100 x 100 (10,000 points, 10 us at 1 ns): (d - 1) 2 / 100 <=
  // 1/8 gives d <= 7; a step costs 10 (1 + (d - 1) / 50) + 200 / d us: 7 (39.8) against 4 (60.6).
  const auto squares = spec(tessera::Grid<2>({800, 800}, {100, 100}));
  EXPECT_EQ(deepest_block_for_tiles(1, squares, 16, BlockCosts{1e-9, 200e-6}), 7);
  // Stencil::auto_depth with the assumed costs (2.5 ns a point, 15 us a block): rows of 16
  // points, 128 thick (2,048 points: 5.1 us a step) go to kDeepestAutoDepth (5.7 + 0.9 us a step
  // against 5.2 + 3.75 at 4); rows of 1024 stay at 4 (328 us of points a step).
  const tessera::Stencil<2> stencil("depth", tessera::Shape::Star, 1);
  EXPECT_EQ(stencil.auto_depth(tessera::Grid<2>({16, 512}, {16, 128})), tessera::kDeepestAutoDepth);
  EXPECT_EQ(stencil.auto_depth(tessera::Grid<2>({1024, 1024}, {1024, 128})),
            tessera::kMaxAutoDepth);
}

// The depth chooser's point cost comes from the calibrated models of the stencil's tile tasks
// (one-step or blocks), saved by an earlier Runtime (StarPU writes models at shutdown), for
// tiles of about the size the models timed; the assumed costs elsewhere and without a Runtime.
TEST(BlockDepth, PointCostFromTheCalibratedModels) {
  using tessera::detail::block_costs;
  const std::string dir = testing::TempDir() + "tessera_depth_models_" + std::to_string(getpid());
  const char* before = std::getenv("STARPU_PERF_MODEL_DIR");
  const std::string kept = before != nullptr ? before : "";
  tessera::Options o = test::options({"eager", 1});
  o.perfmodel_dir = dir;
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  const tessera::Grid<2> small({64, 1024}, {64, 64});  // 16 tiles of 4,096 points
  const auto spec = tessera::detail::grid_spec(small);
  const tessera::detail::BlockCosts assumed = block_costs("timed", spec);  // no Runtime
  {
    tessera::Runtime rt(o);
    EXPECT_EQ(block_costs("timed", spec).point_seconds, assumed.point_seconds);  // no model yet
    tessera::Field<double, 2> u(small, 1, zero, "u"), next(small, 1, zero, "next");
    u.fill(test::initial<double, 2>);
    tessera::Stencil<2>("timed", tessera::Shape::Star, 1)
        .advance(test::Mix<double, 2, 1, false>{}, u, next, 30, 1);  // one-step tasks
    tessera::Field<double, 2> a(small, 4, zero, "a"), b(small, 4, zero, "b");
    a.fill(test::initial<double, 2>);
    tessera::Stencil<2>("timed-blocks", tessera::Shape::Star, 1)
        .advance(test::Mix<double, 2, 1, false>{}, a, b, 30, 4);  // blocks of 4 (and of 2)
  }
  {
    tessera::Runtime rt(o);
    const tessera::detail::BlockCosts costs = block_costs("timed", spec);
    EXPECT_NE(costs.point_seconds, assumed.point_seconds);
    EXPECT_GT(costs.point_seconds, 1e-12);
    EXPECT_LT(costs.point_seconds, 1e-6);
    EXPECT_EQ(costs.block_seconds, assumed.block_seconds);
    // auto_depth decides with them.
    const tessera::Stencil<2> timed("timed", tessera::Shape::Star, 1);
    EXPECT_EQ(timed.auto_depth(small),
              tessera::detail::deepest_block_for_tiles(1, spec, tessera::kDeepestAutoDepth, costs));
    // Temporal blocks: their time over their points x steps, read from their own model, in the
    // same plausible range (not compared with the one-step tasks': on a loaded machine those
    // took 7.5 ns a point against the blocks' 0.9, and a test asserts no time).
    const double blocked = block_costs("timed-blocks", spec).point_seconds;
    EXPECT_NE(blocked, assumed.point_seconds);
    EXPECT_NE(blocked, costs.point_seconds);
    EXPECT_GT(blocked, 1e-12);
    EXPECT_LT(blocked, 1e-6);
    // Tiles 16 times larger, another stencil: no model entry near them.
    const auto large = tessera::detail::grid_spec(tessera::Grid<2>({64, 1024}, {64, 1024}));
    EXPECT_EQ(block_costs("timed", large).point_seconds, assumed.point_seconds);
    EXPECT_EQ(block_costs("never-run", spec).point_seconds, assumed.point_seconds);
  }
  if (before != nullptr)
    setenv("STARPU_PERF_MODEL_DIR", kept.c_str(), 1);
  else
    unsetenv("STARPU_PERF_MODEL_DIR");
  std::filesystem::remove_all(dir);
}

// The fields swap as the step-by-step loop would: after an odd number of steps the result is in
// the Field object passed as u.
TEST_F(TimeBlockErrors, ResultEndsInUForOddAndEvenStepCounts) {
  const tessera::Grid<2> grid({12, 12}, {6, 6});
  const auto zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  for (long steps : {1L, 2L, 5L}) {
    tessera::Field<double, 2> u(grid, 2, zero, "u"), next(grid, 2, zero, "next");
    tessera::Field<double, 2> a(grid, 1, zero, "a"), b(grid, 1, zero, "b");
    u.fill(test::initial<double, 2>);
    a.fill(test::initial<double, 2>);
    tessera::Stencil<2> stencil("mix", tessera::Shape::Star, 1);
    stencil.advance(test::Mix<double, 2, 1, false>{}, u, next, steps, 2);
    for (long s = 0; s < steps; ++s) {
      stencil.apply(test::Mix<double, 2, 1, false>{}, tessera::in(a), tessera::out(b));
      tessera::swap(a, b);
    }
    test::expect_bitwise_equal(u.gather(), a.gather());
  }
}

}  // namespace
