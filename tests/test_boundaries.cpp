// User boundary functions: ghost values from a TESSERA_HD functor of the ghost point's global
// index and the mirrored interior value match the serial reference bitwise for every tiling,
// scheduler and worker count; mistakes give a tessera::Error naming the face and the fix.
#include <gmock/gmock.h>

#include "tests/boundary_cases.hpp"

namespace {

using tessera::Boundaries;
using tessera::Boundary;
using testing::HasSubstr;

class FunctionBoundaries : public testing::TestWithParam<test::Config> {};

TEST_P(FunctionBoundaries, MatchReference) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_function_boundaries_match_reference();
}

INSTANTIATE_TEST_SUITE_P(Config, FunctionBoundaries, testing::ValuesIn(test::configs()),
                         test::config_name);

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tessera::Error& e) { return e.what(); }
  return "no error";
}

struct Other3 {
  TESSERA_HD double operator()(tessera::Index<3>, double mirrored) const { return mirrored + 1; }
};

TEST(FunctionBoundaryErrors, WrongFieldNameAndMissingFunction) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const tessera::Grid<2> g2({8, 8}, {4, 4});
  const tessera::Grid<3> g3({8, 8, 8}, {4, 4, 4});
  const auto inflow = tessera::boundary_function("inflow", test::Inflow3{1.0});
  EXPECT_THAT(
      error_of([&] { tessera::Field<double, 2> u(g2, 1, Boundaries<2>::all(inflow), "u"); }),
      HasSubstr("boundary function 'inflow' on face x-low takes Index<3> and double but the "
                "field is 2-D of double"));
  EXPECT_THAT(error_of([&] { tessera::Field<float, 3> u(g3, 1, Boundaries<3>::all(inflow), "u"); }),
              HasSubstr("takes Index<3> and double but the field is 3-D of float"));
  EXPECT_THAT(error_of([] { tessera::boundary_function("in flow", test::Outflow3{}); }),
              HasSubstr("boundary function name 'in flow' may contain only letters"));
  Boundary empty;
  empty.kind = Boundary::Kind::Function;
  EXPECT_THAT(error_of([&] { tessera::Field<double, 3> u(g3, 1, Boundaries<3>::all(empty), "u"); }),
              HasSubstr("face x-low is of kind Function but has no function"));
  const tessera::Grid<3> periodic({8, 8, 8}, {4, 4, 4}, {true, false, false});
  EXPECT_THAT(
      error_of([&] { tessera::Field<double, 3> u(periodic, 1, Boundaries<3>::all(inflow), "u"); }),
      HasSubstr("face x-low is not Periodic but the grid is periodic along x"));
}

TEST(FunctionBoundaryErrors, OneNameOneFunctor) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const tessera::Grid<3> g({8, 8, 8}, {4, 4, 4});
  tessera::Field<double, 3> a(
      g, 1, Boundaries<3>::all(tessera::boundary_function("wall", test::Outflow3{})), "a");
  tessera::Field<double, 3> b(
      g, 1, Boundaries<3>::all(tessera::boundary_function("wall", Other3{})), "b");
  tessera::Field<double, 3> out(g, 1, {}, "out");
  a.fill([](tessera::Index<3>) { return 1.0; });
  b.fill([](tessera::Index<3>) { return 1.0; });
  tessera::Stencil<3> s("wall-mix", tessera::Shape::Star, 1);
  s.apply(test::Mix<double, 3, 1, false>{}, tessera::in(a), tessera::out(out));
  EXPECT_THAT(
      error_of(
          [&] { s.apply(test::Mix<double, 3, 1, false>{}, tessera::in(b), tessera::out(out)); }),
      HasSubstr(
          "name 'wall' is already used by another functor (boundary-function tasks on double)"));
}

}  // namespace
