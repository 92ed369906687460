// Pointwise loops match the serial reference bitwise for every tiling, scheduler and worker
// count: several inputs and outputs of different types, in-place updates, sub-boxes, centre-only
// inputs that are never exchanged, and reductions (fused, of several fields, non-blocking, as a
// loop's by-product).
#include <gmock/gmock.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "tests/stencil_cases.hpp"

namespace {

using reference::Domain;
using tessera::Boundaries;
using tessera::Boundary;
using tessera::In;
using tessera::Index;
using tessera::InOut;
using tessera::Out;
using tessera::Reducer;
using ROp = tessera::detail::ReduceOp;

template <int D>
std::array<std::int64_t, 3> ext3(const tessera::Grid<D>& g, bool tile) {
  std::array<std::int64_t, 3> e{1, 1, 1};
  for (int a = 0; a < D; ++a) e[a] = tile ? g.tile()[a] : g.extent()[a];
  return e;
}

// Two inputs of different types, two outputs of different types, the global index.
struct Mixed {
  TESSERA_HD void operator()(Index<3> p, In<double> a, In<float> b, Out<double> sum,
                             Out<std::int32_t> sign) const {
    const double v = a() * 0.75 - static_cast<double>(b()) + 1e-3 * static_cast<double>(p[2]);
    sum = v;
    sign = v > 0 ? 1 : -1;
  }
};

// In place: an ODE step of two coupled fields (the Aliev-Panfilov shape), reading a third.
struct Relax {
  double dt;
  TESSERA_HD void operator()(Index<2>, In<double> source, InOut<double> e, InOut<double> r) const {
    const double ev = e;
    e = ev - dt * (ev * (ev - 0.1) * (ev - 1.0) + ev * r) + dt * source();
    r = r + dt * (0.01 + 0.07 * r / (e + 0.3)) * (-r - 8.0 * e * (e - 1.1));
  }
};

// Sets the points it visits: for sub-box loops (points outside must keep their values).
struct Mark {
  double v;
  TESSERA_HD void operator()(Index<2> p, InOut<double> u) const {
    u = u + v + static_cast<double>(p[0] + 10 * p[1]);
  }
};

class LoopMatchesReference : public testing::TestWithParam<test::Config> {};

TEST_P(LoopMatchesReference, SeveralTypedInputsAndOutputs) {
  tessera::Runtime rt(test::options(GetParam()));
  for (const auto& grid :
       {tessera::Grid<3>({11, 9, 7}, {4, 4, 3}), tessera::Grid<3>({11, 9, 7}, {11, 9, 7})}) {
    SCOPED_TRACE(grid.describe());
    // Halo 0 inputs: a loop needs no ghost layers.
    tessera::Field<double, 3> a(grid, 0, {}, "a"), sum(grid, 1, {}, "sum");
    tessera::Field<float, 3> b(grid, 0, {}, "b");
    tessera::Field<std::int32_t, 3> sign(grid, 2, {}, "sign");
    a.fill(test::initial<double, 3>);
    b.fill([](Index<3> p) { return static_cast<float>(test::noise<3>(p) * 0.5); });
    tessera::Loop<3>("mixed").apply(Mixed{}, tessera::in(a, b), tessera::out(sum, sign));

    const auto av = a.gather();
    const auto bv = b.gather();
    std::vector<double> want_sum(av.size());
    std::vector<std::int32_t> want_sign(av.size());
    reference::loop<3, 0>(test::domain(grid), ext3(grid, true), {0, 0, 0}, ext3(grid, false), {},
                          [&](Index<3> p, std::size_t g, reference::Partial*) {
                            Mixed{}(p, In<double>{&av[g], 0, 0}, In<float>{&bv[g], 0, 0},
                                    Out<double>{&want_sum[g]}, Out<std::int32_t>{&want_sign[g]});
                          });
    test::expect_bitwise_equal(sum.gather(), want_sum);
    test::expect_bitwise_equal(sign.gather(), want_sign);
  }
}

TEST_P(LoopMatchesReference, InPlaceUpdateOverSeveralSteps) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({17, 13}, {5, 4});
  tessera::Field<double, 2> src(grid, 0, {}, "src"), e(grid, 1, {}, "e"), r(grid, 0, {}, "r");
  src.fill([](Index<2> p) { return 0.1 * test::noise<2>(p); });
  e.fill(test::initial<double, 2>);
  r.fill([](Index<2> p) { return test::noise<2>({p[1], p[0]}); });
  auto sv = src.gather(), ev = e.gather(), rv = r.gather();
  tessera::Loop<2> relax("relax");
  for (int s = 0; s < 4; ++s) relax.apply(Relax{0.05}, tessera::in(src), tessera::inout(e, r));
  for (int s = 0; s < 4; ++s)
    reference::loop<2, 0>(
        test::domain(grid), ext3(grid, true), {0, 0, 0}, ext3(grid, false), {},
        [&](Index<2> p, std::size_t g, reference::Partial*) {
          Relax{0.05}(p, In<double>{&sv[g], 0, 0}, InOut<double>{&ev[g]}, InOut<double>{&rv[g]});
        });
  test::expect_bitwise_equal(e.gather(), ev);
  test::expect_bitwise_equal(r.gather(), rv);
}

TEST_P(LoopMatchesReference, SubBoxesLeaveOtherPointsAlone) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({14, 11}, {4, 3});
  tessera::Field<double, 2> u(grid, 1, {}, "u");
  u.fill(test::initial<double, 2>);
  auto want = u.gather();
  const auto whole = tessera::Box<2>::whole(grid);
  const std::vector<std::pair<const char*, tessera::Box<2>>> boxes = {
      {"x-high-face", tessera::Box<2>::face(grid, 0, 1)},
      {"y-low-face-2", tessera::Box<2>::face(grid, 1, 0, 2)},
      {"interior-minus-3", whole.inset(3)},
      {"one-point", tessera::Box<2>{{5, 7}, {6, 8}}}};
  double v = 1;
  for (const auto& [name, box] : boxes) {
    tessera::Loop<2>(name, box).apply(Mark{v}, tessera::inout(u));
    reference::loop<2, 0>(test::domain(grid), ext3(grid, true), {box.lo[0], box.lo[1], 0},
                          {box.hi[0], box.hi[1], 1}, {},
                          [&](Index<2> p, std::size_t g, reference::Partial*) {
                            Mark{v}(p, InOut<double>{&want[g]});
                          });
    v += 1;
  }
  test::expect_bitwise_equal(u.gather(), want);
}

// A stencil reading a centre-only input with halo 0: right values, and no halo task for it.
struct Advect {
  TESSERA_HD void operator()(Index<2>, In<double> u, In<float> w, Out<double> next) const {
    next = u() + static_cast<double>(w()) * (u(1, 0) - u(-1, 0)) + 0.25 * (u(0, 1) - u(0, -1));
  }
};

TEST_P(LoopMatchesReference, CentreOnlyStencilInputsAreNeverExchanged) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({15, 12}, {5, 4});
  const auto bc = Boundaries<2>::all(Boundary::neumann());
  tessera::Field<double, 2> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
  tessera::Field<float, 2> w(grid, 0, {}, "w");
  u.fill(test::initial<double, 2>);
  w.fill([](Index<2> p) { return static_cast<float>(test::noise<2>(p) - 0.5); });
  tessera::Stencil<2> advect("advect", tessera::Shape::Star, 1);
  rt.wait();
  const std::size_t before = rt.tasks_submitted();
  advect.apply(Advect{}, tessera::in(u, tessera::centre(w)), tessera::out(next));
  rt.wait();
  const std::size_t with_centre = rt.tasks_submitted() - before;
  // u's halo-pack tasks and the interior tasks (which fill u's ghost layers themselves; with
  // exchange tasks of their own, one boundary task per tile more): w, written by fill and
  // created with halo 0, is never exchanged.
  EXPECT_EQ(with_centre, static_cast<std::size_t>(grid.tiles()) * 2);

  reference::RefField<double, 2> ru{test::initial_values<double>(grid), bc};
  reference::RefField<float, 2> rw{w.gather(), Boundaries<2>::all(Boundary::dirichlet(0))};
  std::vector<double> want(ru.values.size());
  reference::apply(test::domain(grid), 1, Advect{}, std::make_tuple(&ru, &rw),
                   std::make_tuple(&want));
  test::expect_bitwise_equal(next.gather(), want);
}

// Sum, min, max and a count in one pass.
struct Stats {
  TESSERA_HD void operator()(Index<3>, In<double> u, Reducer<tessera::Sum> sum,
                             Reducer<tessera::Min> lo, Reducer<tessera::Max> hi,
                             Reducer<tessera::Sum> count) const {
    sum(u());
    lo(u());
    hi(u());
    if (u() > 0.5) count(1.0);
  }
};

// A reduction of a function of two fields: max |a - b|.
struct MaxDiff {
  TESSERA_HD void operator()(Index<2>, In<double> a, In<double> b, Reducer<tessera::Max> d) const {
    d(std::fabs(a() - b()));
  }
};

TEST_P(LoopMatchesReference, FusedReductionsMatchTheTiledFold) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<3> grid({13, 11, 9}, {5, 4, 4});
  tessera::Field<double, 3> u(grid, 1, {}, "u");
  u.fill(test::initial<double, 3>);
  auto stats = tessera::Loop<3>("stats").apply(
      Stats{}, tessera::in(u),
      tessera::reductions(tessera::Sum{}, tessera::Min{}, tessera::Max{}, tessera::Sum{}));
  const auto uv = u.gather();
  const auto want = reference::loop<3, 4>(
      test::domain(grid), ext3(grid, true), {0, 0, 0}, ext3(grid, false),
      {ROp::Sum, ROp::Min, ROp::Max, ROp::Sum},
      [&](Index<3> p, std::size_t g, reference::Partial* s) {
        Stats{}(p, In<double>{&uv[g], 0, 0}, Reducer<tessera::Sum>{s}, Reducer<tessera::Min>{s + 1},
                Reducer<tessera::Max>{s + 2}, Reducer<tessera::Sum>{s + 3});
      });
  const auto got = stats.get();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(got[k], want[k]) << "reduction " << k;
  // The same bits as the single reductions, which fold in the same order.
  EXPECT_EQ(got[0], tessera::sum(u));
  EXPECT_EQ(got[1], tessera::min(u));
  EXPECT_EQ(got[2], tessera::max(u));
  EXPECT_GT(got[3], 0.0);
}

TEST_P(LoopMatchesReference, NonBlockingReductionsOfSeveralFields) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({19, 14}, {6, 5});
  tessera::Field<double, 2> a(grid, 0, {}, "a"), b(grid, 0, {}, "b");
  a.fill(test::initial<double, 2>);
  b.fill([](Index<2> p) { return test::noise<2>({p[0] + 3, p[1]}); });
  const auto av = a.gather(), bv = b.gather();
  tessera::Loop<2> diff("maxdiff");
  // Submitted before either is collected; in between, a loop changes a (ordered after both).
  auto first = diff.apply(MaxDiff{}, tessera::in(a, b), tessera::reductions(tessera::Max{}));
  tessera::Loop<2>("bump").apply(Mark{0.5}, tessera::inout(a));
  auto second = diff.apply(MaxDiff{}, tessera::in(a, b), tessera::reductions(tessera::Max{}));
  auto bumped = av;
  auto ref = [&](const std::vector<double>& x) {
    return reference::loop<2, 1>(
        test::domain(grid), ext3(grid, true), {0, 0, 0}, ext3(grid, false), {ROp::Max},
        [&](Index<2> p, std::size_t g, reference::Partial* s) {
          MaxDiff{}(p, In<double>{&x[g], 0, 0}, In<double>{&bv[g], 0, 0}, Reducer<tessera::Max>{s});
        })[0];
  };
  reference::loop<2, 0>(test::domain(grid), ext3(grid, true), {0, 0, 0}, ext3(grid, false), {},
                        [&](Index<2> p, std::size_t g, reference::Partial*) {
                          Mark{0.5}(p, InOut<double>{&bumped[g]});
                        });
  EXPECT_EQ(second.get(0), ref(bumped));
  EXPECT_EQ(first.get(0), ref(av));
  EXPECT_EQ(first.get(0), first.get()[0]);  // collected once, then the same
}

// A loop's by-product: the extrema of e after an in-place step, over a sub-box, with a
// conditional count that may stay empty.
struct StepAndWatch {
  double dt;
  TESSERA_HD void operator()(Index<2>, InOut<double> e, Reducer<tessera::Min> lo,
                             Reducer<tessera::Max> hi, Reducer<tessera::Max> never) const {
    e = e - dt * e * e;
    lo(e);
    hi(e);
    if (e() > 1e9) never(e);
  }
};

TEST_P(LoopMatchesReference, ReductionsAsALoopByProductOverABox) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<2> grid({16, 15}, {5, 4});
  tessera::Field<double, 2> e(grid, 1, {}, "e");
  e.fill(test::initial<double, 2>);
  auto want = e.gather();
  const auto box = tessera::Box<2>::whole(grid).inset(2);
  auto got = tessera::Loop<2>("watch", box)
                 .apply(StepAndWatch{0.1}, tessera::inout(e),
                        tessera::reductions(tessera::Min{}, tessera::Max{}, tessera::Max{}));
  const auto ref = reference::loop<2, 3>(
      test::domain(grid), ext3(grid, true), {2, 2, 0}, {14, 13, 1}, {ROp::Min, ROp::Max, ROp::Max},
      [&](Index<2> p, std::size_t g, reference::Partial* s) {
        StepAndWatch{0.1}(p, InOut<double>{&want[g]}, Reducer<tessera::Min>{s},
                          Reducer<tessera::Max>{s + 1}, Reducer<tessera::Max>{s + 2});
      });
  const auto r = got.get();
  EXPECT_EQ(r[0], ref[0]);
  EXPECT_EQ(r[1], ref[1]);
  EXPECT_EQ(r[2], -std::numeric_limits<double>::infinity());
  test::expect_bitwise_equal(e.gather(), want);
}

INSTANTIATE_TEST_SUITE_P(Config, LoopMatchesReference, testing::ValuesIn(test::configs()),
                         test::config_name);

TEST(LoopErrors, RejectBadFieldsAndBoxesBeforeSubmitting) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const tessera::Grid<2> grid({8, 8}, {4, 4});
  tessera::Field<double, 2> u(grid, 0, {}, "u"), v(grid, 0, {}, "v");
  tessera::Field<double, 2> other(tessera::Grid<2>({8, 8}, {8, 4}), 0, {}, "other");
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const tessera::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_THAT(message([&] {
                tessera::Loop<2>("l").apply(Relax{0.1}, tessera::in(u), tessera::inout(u, v));
              }),
              testing::HasSubstr("field 'u' is both read (in) and written (out or inout); pass it "
                                 "once, as tessera::inout(u)"));
  EXPECT_THAT(message([&] {
                tessera::Loop<2>("l").apply(Relax{0.1}, tessera::in(u), tessera::inout(v, v));
              }),
              testing::HasSubstr("field 'v' is written twice"));
  EXPECT_THAT(message([&] {
                tessera::Loop<2>("l").apply(Relax{0.1}, tessera::in(other), tessera::inout(u, v));
              }),
              testing::HasSubstr("is on a different grid"));
  EXPECT_THAT(
      message([&] {
        tessera::Loop<2>("l", tessera::Box<2>{{0, 0}, {9, 8}}).apply(Mark{1}, tessera::inout(u));
      }),
      testing::HasSubstr("its box is [0, 9) along x but the grid has points [0, 8)"));
  EXPECT_THAT(
      message([&] {
        tessera::Loop<2>("l", tessera::Box<2>{{3, 0}, {3, 8}}).apply(Mark{1}, tessera::inout(u));
      }),
      testing::HasSubstr("give a non-empty box"));
  EXPECT_THAT(message([&] { tessera::Loop<2>("bad name"); }),
              testing::HasSubstr("loop name 'bad name' may contain only letters"));
  EXPECT_EQ(rt.tasks_submitted(), 0u);
}

}  // namespace
