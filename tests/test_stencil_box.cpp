// Stencil::apply restricted to a box: the points inside get the functor's values, the points
// outside keep theirs, bitwise as the serial reference, for several tilings, schedulers and
// worker counts; an accumulating output (tessera::inout with an empty tessera::out()) too.
// Built a second time for the emulated CUDA device, where the CUDA body does the masking.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tests/stencil_cases.hpp"
#if TESSERA_EMULATE_CUDA
#include <cstdlib>

#include "tessera/detail/cuda_launch.hpp"
#endif

namespace {

using tessera::Boundaries;
using tessera::Boundary;
using tessera::Index;
using test::domain;
using test::initial;
using test::initial_values;

struct Heat {
  double alpha;
  TESSERA_HD void operator()(Index<3>, tessera::In<double> u, tessera::Out<double> next) const {
    next = u() + alpha * (u(1, 0, 0) + u(-1, 0, 0) + u(0, 1, 0) + u(0, -1, 0) + u(0, 0, 1) +
                          u(0, 0, -1) - 6 * u());
  }
};

// out += a weighted star of radius 2 (an accumulating output, as the PRK stencil's).
struct AddStar2 {
  TESSERA_HD void operator()(Index<2>, tessera::In<double> u, tessera::InOut<double> acc) const {
    acc = acc() + star(u);
  }
  TESSERA_HD static double star(const tessera::In<double>& u) {
    return 0.125 * (u(1, 0) - u(-1, 0) + u(0, 1) - u(0, -1)) +
           0.0625 * (u(2, 0) - u(-2, 0) + u(0, 2) - u(0, -2));
  }
};
// The reference's form of the same: the increment alone.
struct Star2 {
  TESSERA_HD void operator()(Index<2>, tessera::In<double> u, tessera::Out<double> d) const {
    d = AddStar2::star(u);
  }
};

template <int D>
bool inside(const tessera::Box<D>& b, const reference::Domain<D>& dom, std::int64_t g) {
  std::int64_t p[3] = {g % dom.n[0], (g / dom.n[0]) % dom.n[1], g / (dom.n[0] * dom.n[1])};
  for (int a = 0; a < D; ++a)
    if (p[a] < b.lo[a] || p[a] >= b.hi[a]) return false;
  return true;
}

// The serial reference of one restricted step: every point of `out` inside the box gets f's
// value, computed on the whole grid; the others keep theirs.
template <int D, class F>
void reference_step(const tessera::Grid<D>& grid, const tessera::Box<D>& box, int radius,
                    const F& f, reference::RefField<double, D>& in, std::vector<double>& out) {
  std::vector<double> full(out.size());
  reference::apply(domain(grid), radius, f, std::make_tuple(&in), std::make_tuple(&full));
  for (std::size_t g = 0; g < out.size(); ++g)
    if (inside(box, domain(grid), static_cast<std::int64_t>(g))) out[g] = full[g];
}

class StencilOnABox : public testing::TestWithParam<test::Config> {};

TEST_P(StencilOnABox, PointsOutsideTheBoxKeepTheirValues) {
  tessera::Runtime rt(test::options(GetParam()));
  const auto bc = Boundaries<3>::all(Boundary::dirichlet(0.25));
  const std::vector<tessera::Index<3>> tilings = {{13, 11, 9}, {5, 4, 3}, {13, 11, 2}, {4, 11, 9}};
  for (const auto& tile : tilings) {
    const tessera::Grid<3> grid({13, 11, 9}, tile);
    // The interior, and a box that cuts tiles and touches the low faces.
    const std::vector<tessera::Box<3>> boxes = {tessera::Box<3>::whole(grid).inset(1),
                                                {{0, 3, 0}, {7, 11, 5}}};
    for (const auto& box : boxes) {
      tessera::Field<double, 3> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
      u.fill(initial<double, 3>);
      next.fill([](Index<3> p) { return 2.0 + 0.5 * static_cast<double>(p[0] - p[2]); });
      reference::RefField<double, 3> ru{initial_values<double>(grid), bc};
      reference::RefField<double, 3> rn{next.gather(), bc};
      tessera::Stencil<3> heat("heat-in-a-box", tessera::Shape::Star, 1);
      for (int step = 0; step < 3; ++step) {
        heat.apply(box, Heat{0.1}, tessera::in(u), tessera::out(next));
        tessera::swap(u, next);
        reference_step(grid, box, 1, Heat{0.1}, ru, rn.values);
        std::swap(ru.values, rn.values);
      }
      test::expect_bitwise_equal(u.gather(), ru.values);
      test::expect_bitwise_equal(next.gather(), rn.values);
    }
  }
}

TEST_P(StencilOnABox, AnAccumulatingOutputOnTheInterior) {
  tessera::Runtime rt(test::options(GetParam()));
  const auto bc = Boundaries<2>::all(Boundary::periodic());
  for (const auto& tile : std::vector<tessera::Index<2>>{{24, 20}, {8, 7}, {24, 5}}) {
    const tessera::Grid<2> grid({24, 20}, tile, {true, true});
    const auto interior = tessera::Box<2>::whole(grid).inset(2);
    tessera::Field<double, 2> u(grid, 2, bc, "u"), acc(grid, 0, bc, "acc");
    u.fill(initial<double, 2>);
    acc.fill([](Index<2> p) { return 0.01 * static_cast<double>(p[0] * p[1]); });
    reference::RefField<double, 2> ru{initial_values<double>(grid), bc};
    std::vector<double> want = acc.gather();
    tessera::Stencil<2> star("add-star2", tessera::Shape::Star, 2);
    for (int step = 0; step < 3; ++step) {
      star.apply(interior, AddStar2{}, tessera::in(u), tessera::out(), tessera::inout(acc));
      std::vector<double> d(want.size());
      reference::apply(domain(grid), 2, Star2{}, std::make_tuple(&ru), std::make_tuple(&d));
      for (std::size_t g = 0; g < want.size(); ++g)
        if (inside(interior, domain(grid), static_cast<std::int64_t>(g))) want[g] += d[g];
    }
    test::expect_bitwise_equal(acc.gather(), want);
  }
}

INSTANTIATE_TEST_SUITE_P(Config, StencilOnABox, testing::ValuesIn(test::configs()),
                         test::config_name);

// A box step's tasks are of a kind of their own ("box", "box+halo" with the exchange inside):
// their performance model is not the whole step's. In the emulated build, under
// TESSERA_EMULATED_CUDA, they run the CUDA body (its point_kernel launches).
TEST(StencilOnABoxTasks, AreOfTheirOwnKind) {
  tessera::Options o = test::options({"eager", 2});
  o.summary = true;
  tessera::Runtime rt(o);
  const tessera::Grid<2> grid({16, 12}, {8, 6});
  const auto bc = Boundaries<2>::all(Boundary::dirichlet(0));
  tessera::Field<double, 2> u(grid, 2, bc, "u"), next(grid, 2, bc, "next");
  u.fill(initial<double, 2>);
#if TESSERA_EMULATE_CUDA
  const long before = tessera::detail::emulation::launches("point_kernel");
#endif
  tessera::Stencil<2> s("box-kind", tessera::Shape::Star, 2);
  s.apply(tessera::Box<2>::whole(grid).inset(2), Star2{}, tessera::in(u), tessera::out(next));
  rt.wait();
  long box_tasks = 0;
  for (const auto& k : rt.recorded().totals)
    if (k.kind == "box" || k.kind == "box+halo") box_tasks += k.tasks;
  EXPECT_EQ(box_tasks, grid.tiles());
#if TESSERA_EMULATE_CUDA
  const char* mode = std::getenv("TESSERA_EMULATED_CUDA");
  if (mode != nullptr && std::string(mode) == "1")
    EXPECT_GE(tessera::detail::emulation::launches("point_kernel") - before, grid.tiles());
#endif
}

TEST(StencilOnABoxErrors, ABoxOutsideTheGridIsRefusedBeforeAnyTask) {
  tessera::Runtime rt(test::options({"eager", 2}));
  const tessera::Grid<2> grid({16, 12}, {8, 6});
  const auto bc = Boundaries<2>::all(Boundary::dirichlet(0));
  tessera::Field<double, 2> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
  u.fill(initial<double, 2>);
  next.fill([](Index<2>) { return -1.0; });
  const std::vector<double> before = next.gather();
  tessera::Stencil<2> s("box-outside", tessera::Shape::Star, 1);
  const tessera::Box<2> too_far{{2, 0}, {16, 13}};
  try {
    s.apply(too_far, Star2{}, tessera::in(u), tessera::out(next));
    FAIL() << "a box past the grid's extent was accepted";
  } catch (const tessera::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("stencil 'box-outside'"), std::string::npos) << m;
    EXPECT_NE(m.find("(2..16, 0..13)"), std::string::npos) << m;
    EXPECT_NE(m.find("extent (16, 12)"), std::string::npos) << m;
    EXPECT_NE(m.find("inset(radius)"), std::string::npos) << m;
  }
  EXPECT_THROW(
      s.apply(tessera::Box<2>{{5, 5}, {4, 8}}, Star2{}, tessera::in(u), tessera::out(next)),
      tessera::Error);
  test::expect_bitwise_equal(next.gather(), before);  // no task ran
}

}  // namespace
