// Temporal blocking (Stencil::advance): several steps per exchange give the serial reference's
// bits for every depth, shape, element type, boundary kind, tiling, scheduler and worker count;
// what it cannot do is refused before any task is submitted.
#include <gmock/gmock.h>

#include "apps/heat3d/heat3d.hpp"
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
                                      int steps, int depth, F f) {
  tessera::Field<T, D> u(grid, depth * R, bc, "u"), next(grid, depth * R, bc, "next");
  u.fill(test::initial<T, D>);
  tessera::Stencil<D> stencil("mix", Box ? tessera::Shape::Box : tessera::Shape::Star, R);
  stencil.advance(f, u, next, steps, depth);
  reference::RefField<T, D> ref{test::initial_values<T>(grid), bc};
  for (int s = 0; s < steps; ++s) {
    std::vector<T> out(ref.values.size());
    reference::apply(test::domain(grid), R, f, std::make_tuple(&ref), std::make_tuple(&out));
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

// Periodic on both axes, box of radius 2, with the index in the arithmetic: windows wrap
// around the faces with the wrapped index (one tile along x: it wraps onto itself).
TEST_P(TimeBlock, PeriodicBoxWrapsWithTheWrappedIndex) {
  const auto periodic = Boundaries<2>::all(Boundary::periodic());
  for (const auto& tile : {std::array<std::int64_t, 2>{8, 7}, std::array<std::int64_t, 2>{24, 10}}) {
    const tessera::Grid<2> grid({24, 20}, {tile[0], tile[1]}, {true, true});
    for (int depth : {1, 2, 3}) {
      SCOPED_TRACE("tile " + std::to_string(tile[0]) + "x" + std::to_string(tile[1]) + ", depth " +
                   std::to_string(depth));
      expect_advance_matches_reference<double, 2, 2, true>(grid, periodic, 5, depth,
                                                          MixAt<double, 2, true>{});
    }
  }
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
  expect_advance_matches_reference<float, 2, 1, false>(band, mixed, 5, 2,
                                                       MixAt<float, 1, false>{});
}

INSTANTIATE_TEST_SUITE_P(Configs, TimeBlock, testing::ValuesIn(test::configs()), test::config_name);

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
    } catch (const tessera::Error& e) {
      return e.what();
    }
    return "";
  }
  std::unique_ptr<tessera::Runtime> rt;
};

TEST_F(TimeBlockErrors, EachRuleNamesTheValueAndTheFix) {
  using testing::HasSubstr;
  const tessera::Grid<2> grid({16, 16}, {8, 8});
  const Boundaries<2> zero = Boundaries<2>::all(Boundary::dirichlet(0.0));
  EXPECT_THAT(refusal(grid, 2, zero, 4, 0), HasSubstr("temporal-blocking depth is 0; give a depth of at least 1"));
  EXPECT_THAT(refusal(grid, 2, zero, -1, 2), HasSubstr("steps is -1; give 0 or more steps"));
  EXPECT_THAT(refusal(grid, 2, zero, 4, 3),
              HasSubstr("needs ghost layers of depth x radius = 3 on both fields, but field 'u' has "
                        "halo width 2; create both fields with a halo of at least 3, or lower the "
                        "depth to 2"));
  EXPECT_THAT(refusal(tessera::Grid<2>({16, 16}, {8, 5}), 4, zero, 4, 4),
              HasSubstr("a tile is only 1 point(s) thick along y (extent 16 cut in tiles of 5); "
                        "choose tiles (the last one included) at least 4 thick, or lower the depth to 1"));
  Boundaries<2> neumann = zero;
  neumann.set(1, 1, Boundary::neumann());
  EXPECT_THAT(refusal(grid, 2, neumann, 4, 2),
              HasSubstr("field 'u' has a Neumann face at y-high"));
  EXPECT_EQ(refusal(grid, 2, zero, 0, 2), "");  // zero steps: nothing to do
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
