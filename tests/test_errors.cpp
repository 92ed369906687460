// Bad input throws tessera::Error naming the value and the rule, before any task is submitted.
#include <gmock/gmock.h>

#include <cstdio>
#include <limits>

#include "tests/test_support.hpp"

namespace {

using tessera::Boundaries;
using tessera::Boundary;
using testing::AllOf;
using testing::HasSubstr;

// Runs `f`, expects tessera::Error, and returns its message.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const tessera::Error& e) { return e.what(); }
  ADD_FAILURE() << "no tessera::Error thrown";
  return {};
}

struct Copy2 {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = u(1, 0) + u(-1, 0);
  }
};
struct Other2 {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = u();
  }
};

class BadInput : public testing::Test {
 protected:
  tessera::Runtime rt{test::options({"eager", 2})};
};

TEST_F(BadInput, NonPositiveExtentsAndTiles) {
  EXPECT_THAT(error_of([] {
                tessera::Grid<3>({0, 4, 4}, {2, 2, 2});
              }),
              AllOf(HasSubstr("grid extent 0"), HasSubstr("axis x"), HasSubstr("positive")));
  EXPECT_THAT(error_of([] {
                tessera::Grid<2>({4, -3}, {2, 2});
              }),
              AllOf(HasSubstr("grid extent -3"), HasSubstr("axis y")));
  EXPECT_THAT(error_of([] {
                tessera::Grid<3>({4, 4, 4}, {2, 2, -1});
              }),
              AllOf(HasSubstr("tile extent -1"), HasSubstr("axis z")));
}

TEST_F(BadInput, TileThinnerThanRadius) {
  const tessera::Grid<2> grid({10, 12}, {4, 4});  // last tile along x is 2 thick
  tessera::Field<double, 2> u(grid, 3), v(grid, 3);
  u.fill([](tessera::Index<2> p) { return double(p[0]); });
  tessera::Stencil<2> wide("wide", tessera::Shape::Star, 3);
  EXPECT_THAT(error_of([&] { wide.apply(Copy2{}, tessera::in(u), tessera::out(v)); }),
              AllOf(HasSubstr("radius 3"), HasSubstr("only 2 point(s) thick along x"),
                    HasSubstr("extent 10 cut in tiles of 4")));
  // Nothing was submitted: the output is untouched and a valid stencil still runs.
  EXPECT_EQ(v.at({5, 5}), 0.0);
  tessera::Stencil<2>("narrow", tessera::Shape::Star, 1)
      .apply(Copy2{}, tessera::in(u), tessera::out(v));
  rt.wait();
  EXPECT_EQ(v.at({5, 5}), 10.0);
}

TEST_F(BadInput, HaloNarrowerThanRadius) {
  const tessera::Grid<2> grid({12, 12}, {6, 6});
  tessera::Field<double, 2> u(grid, 1, {}, "thin"), v(grid, 1);
  tessera::Stencil<2> s("radius2", tessera::Shape::Box, 2);
  EXPECT_THAT(
      error_of([&] { s.apply(Copy2{}, tessera::in(u), tessera::out(v)); }),
      AllOf(HasSubstr("radius 2"), HasSubstr("'thin' has halo width 1"), HasSubstr(">= 2")));
  EXPECT_THAT(error_of([&] { tessera::Field<double, 2>(grid, -1); }), HasSubstr("halo width -1"));
}

TEST_F(BadInput, FieldsOnDifferentGrids) {
  tessera::Field<double, 2> u(tessera::Grid<2>({12, 12}, {6, 6}), 1, {}, "a");
  tessera::Field<double, 2> v(tessera::Grid<2>({12, 12}, {4, 6}), 1, {}, "b");
  tessera::Stencil<2> s("copy", tessera::Shape::Star, 1);
  EXPECT_THAT(error_of([&] { s.apply(Copy2{}, tessera::in(u), tessera::out(v)); }),
              AllOf(HasSubstr("'b' is on a different grid"), HasSubstr("one Grid")));
  EXPECT_THAT(error_of([&] { tessera::swap(u, v); }), HasSubstr("different grids"));
}

TEST_F(BadInput, InconsistentPeriodicAndBoundarySettings) {
  const tessera::Grid<2> periodic_x({8, 8}, {4, 4}, {true, false});
  EXPECT_THAT(error_of([&] {
                tessera::Field<double, 2>(periodic_x, 1,
                                          Boundaries<2>::all(Boundary::dirichlet(1)));
              }),
              AllOf(HasSubstr("face x-low"), HasSubstr("grid is periodic along x")));
  const tessera::Grid<2> closed({8, 8}, {4, 4});
  Boundaries<2> bc;
  bc.set(1, 1, Boundary::periodic());
  EXPECT_THAT(error_of([&] { tessera::Field<double, 2>(closed, 1, bc); }),
              AllOf(HasSubstr("face y-high is Periodic"), HasSubstr("not periodic along y")));
}

TEST_F(BadInput, UnsupportedElementTypeAndUnrepresentableConstant) {
  const tessera::Grid<2> grid({8, 8}, {4, 4});
  EXPECT_THAT(error_of([&] { tessera::Field<std::int64_t, 2>(grid, 1, {}, "wide"); }),
              AllOf(HasSubstr("8 bytes is not supported"), HasSubstr("'wide'"),
                    HasSubstr("double, float, std::int32_t or std::uint8_t")));
  EXPECT_THAT(error_of([&] {
                tessera::Field<std::uint8_t, 2>(grid, 1,
                                                Boundaries<2>::all(Boundary::dirichlet(300)));
              }),
              AllOf(HasSubstr("Dirichlet value 300"), HasSubstr("uint8")));
}

TEST_F(BadInput, AliasedFieldsAndBadStencils) {
  const tessera::Grid<2> grid({8, 8}, {4, 4});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), v(grid, 1, {}, "v");
  tessera::Stencil<2> s("alias", tessera::Shape::Star, 1);
  EXPECT_THAT(error_of([&] { s.apply(Copy2{}, tessera::in(u), tessera::out(u)); }),
              HasSubstr("'u' is both an input and an output"));
  EXPECT_THAT(error_of([] { tessera::Stencil<2>("zero", tessera::Shape::Star, 0); }),
              HasSubstr("radius 0"));
  EXPECT_THAT(error_of([] { tessera::Stencil<2>("bad name", tessera::Shape::Star, 1); }),
              HasSubstr("'bad name'"));
  // One name, one point functor.
  s.apply(Copy2{}, tessera::in(u), tessera::out(v));
  EXPECT_THAT(error_of([&] { s.apply(Other2{}, tessera::in(u), tessera::out(v)); }),
              HasSubstr("name 'alias' is already used by another functor"));
}

TEST(NoRuntime, FieldsNeedALiveRuntime) {
  EXPECT_THAT(error_of([] {
                tessera::Field<double, 2>(tessera::Grid<2>({4, 4}, {2, 2}), 1);
              }),
              HasSubstr("needs a live tessera::Runtime"));
  tessera::Runtime rt(test::options({"eager", 1}));
  EXPECT_THAT(error_of([] {
                tessera::Runtime second(test::options({"eager", 1}));
              }),
              HasSubstr("already alive"));
}

// A rank grid must multiply to the rank count (1 here) and fit the tiles of each axis.
TEST(Errors, RankGridMustMatchRanksAndTiles) {
  tessera::Options o = test::options({"eager", 1});
  o.rank_grid = {2, 1};
  tessera::Runtime rt(o);
  const tessera::Grid<2> grid({8, 8}, {4, 4});
  EXPECT_THAT(error_of([&] { tessera::Field<float, 2> u(grid, 1, {}, "u"); }),
              AllOf(HasSubstr("--rank-grid 2 x 1 makes 2 ranks but the run has 1"),
                    HasSubstr("equal the number of ranks")));
}

}  // namespace

// A PointData without a field's bytes, or smaller than its field, is refused when the grid is
// made, with CPU workers only too (where no planner reads it).
TEST(Errors, PointDataWithoutItsFieldIsRefused) {
  tessera::Runtime rt(test::options({"eager", 1}));
  EXPECT_THAT(error_of([] {
                tessera::Grid<2>({8, 8}, {4, 4}, {}, tessera::PointData{8, 0});
              }),
              AllOf(HasSubstr("PointData of 8 bytes a point, of which the stencil's field 0"),
                    HasSubstr("tessera::PointData::of<T...>()")));
  EXPECT_THAT(error_of([] {
                tessera::Grid<2>::cut({8, 8}, {{{4}, {}}}, {}, -1, -1, tessera::PointData{4, 8});
              }),
              HasSubstr("a point holds at least its field"));
  EXPECT_EQ(tessera::Grid<2>({8, 8}, {4, 4}, {}, tessera::PointData::of<float>()).tiles(), 4);
}

// Sizes that do not fit the library's counters are refused, never wrapped into another grid.
TEST(Errors, SizesThatOverflowAreRefused) {
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  EXPECT_THAT(error_of([&] {
                tessera::Grid<3>({huge, 8, 8}, {huge, 8, 8});
              }),
              AllOf(HasSubstr("9223372036854775807 x 8 x 8"), HasSubstr("64-bit count")));
  // 3e9^3 in tiles of 1: the tile count overflows int (it was reported as "0 tiles").
  EXPECT_THAT(
      error_of([] {
        tessera::Grid<3>({3000000000, 3000000000, 3000000000}, {1, 1, 1});
      }),
      AllOf(HasSubstr("more than the 2147483647 a grid may have"), HasSubstr("larger tiles")));
  // A tile count near 2^63 along one axis (tile near extent: (extent + tile - 1) overflowed).
  EXPECT_THAT(error_of([&] {
                tessera::Grid<2>({huge, 2}, {256, 2});
              }),
              HasSubstr("36028797018963968 x 1 tiles"));
  const tessera::Grid<2> ok({huge / 4, 1}, {huge / 4, 1});
  EXPECT_EQ(ok.points(), huge / 4);
  EXPECT_EQ(ok.tiles(), 1);
}

// A field that cannot fit is refused before any handle is registered, naming a tile size
// that fits; a tile beyond what one StarPU vector holds too.
TEST(Errors, FieldsThatCannotFitAreRefusedWithATileThatFits) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const std::string tiny = error_of([] {
    tessera::Field<double, 3> u(tessera::Grid<3>({256, 256, 256}, {1, 1, 1}), 1, {}, "u");
  });
  EXPECT_THAT(tiny, AllOf(HasSubstr("field 'u' on 256 x 256 x 256 points in tiles of 1 x 1 x 1"),
                          HasSubstr("16777216 tiles at about 48 KiB each"),
                          HasSubstr("use larger tiles, e.g. ")));
  EXPECT_THAT(
      error_of([] {
        tessera::Field<float, 2> u(tessera::Grid<2>({70000, 70000}, {70000, 70000}), 1, {}, "big");
      }),
      AllOf(HasSubstr("field 'big': a tile of 70000 x 70000"), HasSubstr("2^32 - 1"),
            HasSubstr("smaller tiles")));
  // The suggestion is a real tile size, with fewer tiles (creating it would take seconds).
  const std::string suggested = tiny.substr(tiny.find("e.g. ") + 5);
  long x = 0, y = 0, z = 0, tiles = 0;
  ASSERT_EQ(std::sscanf(suggested.c_str(), "%ld x %ld x %ld (%ld tiles)", &x, &y, &z, &tiles), 4);
  EXPECT_GE(x * y * z, 8);
  EXPECT_EQ(tiles, (256 / x) * (256 / y) * (256 / z));
}
