// Field output for ParaView (tessera::Output): the files read back (index, pieces, raw data)
// hold exactly Field::gather's values of the step they were written at, while later steps
// run; a piece that cannot be written is an error with its path; bad arguments are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/io/vtk_reader.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

struct Average {
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = (u(1, 0, 0) + u(-1, 0, 0) + u(0, 1, 0) + u(0, -1, 0) + u(0, 0, 1) + u(0, 0, -1)) / 6.0;
  }
};

std::string fresh_dir(const std::string& name) {
  const std::string dir = testing::TempDir() + "tessera_output_" + name;
  fs::remove_all(dir);
  return dir;
}

class OutputTest : public testing::TestWithParam<test::Config> {};

// Snapshots at steps 0, 2 and 5 of a 3-D field on uneven tiles (last tiles thinner), written
// while the following steps are already submitted: each equals the gather at its step.
TEST_P(OutputTest, PiecesReadBackEqualTheGatherOfTheirStep) {
  tessera::Runtime rt(test::options(GetParam()));
  const tessera::Grid<3> grid({10, 7, 6}, {4, 3, 4});
  auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(1.0));
  tessera::Field<double, 3> u(grid, 1, bc, "u"), v(grid, 1, bc, "v");
  u.fill([](tessera::Index<3> i) { return test::noise(i); });
  tessera::Stencil<3> s("average3", tessera::Shape::Star, 1);
  const std::string dir = fresh_dir(GetParam().scheduler + std::to_string(GetParam().cpus));
  tessera::Output out(dir);
  std::map<int, std::vector<double>> expected;
  for (int step = 0; step <= 5; ++step) {
    if (step == 0 || step == 2 || step == 5) {
      out.write(u, step);
      expected[step] = u.gather();  // u as the pieces' tasks see it
    }
    s.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
  out.finish();
  // The Field object `u` is swapped each step; the name travels with the storage.
  int found = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file.size() < 5 || file.substr(file.size() - 5) != ".pvti") continue;
    const int step = std::stoi(file.substr(2, 8));
    ASSERT_EQ(expected.count(step), 1u) << file;
    const vtk::Index index = vtk::read_pvti(dir + "/" + file);
    EXPECT_EQ(index.type, "Float64");
    EXPECT_EQ(index.whole, (vtk::Extent{0, 10, 0, 7, 0, 6}));
    EXPECT_EQ(index.pieces.size(), 3u * 3u * 2u);
    test::expect_bitwise_equal(vtk::assemble<double>(dir, file), expected[step]);
    ++found;
  }
  EXPECT_EQ(found, 3);
  // Nothing but the pieces and indexes: no temporary file left.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 3 * (1 + 18));
}

INSTANTIATE_TEST_SUITE_P(Configs, OutputTest,
                         testing::Values(test::Config{"eager", 1}, test::Config{"dmda", 2},
                                         test::Config{"random", 2}),
                         test::config_name);

TEST(Output, TwoDimensionalAndByteFields) {
  tessera::Runtime rt(test::options({"eager", 2}));
  const tessera::Grid<2> grid({9, 5}, {4, 5}, {true, true});
  tessera::Field<float, 2> f(grid, 1, {}, "f");
  tessera::Field<std::uint8_t, 2> c(grid, 1, {}, "cells");
  f.fill([](tessera::Index<2> i) {
    return static_cast<float>(i[0]) / 3.0f + static_cast<float>(i[1]);
  });
  c.fill([](tessera::Index<2> i) { return static_cast<std::uint8_t>((i[0] * 7 + i[1]) % 2); });
  const std::string dir = fresh_dir("2d");
  tessera::Output out(dir);
  out.write(f, 12);
  out.write(c, 12);
  out.finish();
  const vtk::Index index = vtk::read_pvti(dir + "/f_00000012.pvti");
  EXPECT_EQ(index.type, "Float32");
  EXPECT_EQ(index.whole, (vtk::Extent{0, 9, 0, 5, 0, 0}));  // flat z
  test::expect_bitwise_equal(vtk::assemble<float>(dir, "f_00000012.pvti"), f.gather());
  EXPECT_EQ(vtk::read_pvti(dir + "/cells_00000012.pvti").type, "UInt8");
  test::expect_bitwise_equal(vtk::assemble<std::uint8_t>(dir, "cells_00000012.pvti"), c.gather());
}

TEST(Output, APieceThatCannotBeWrittenIsAnErrorAndNoIndexNamesIt) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const tessera::Grid<2> grid({8, 8}, {4, 8});
  tessera::Field<double, 2> u(grid, 1, {}, "u");
  u.fill([](tessera::Index<2> i) { return static_cast<double>(i[0]); });
  const std::string dir = fresh_dir("blocked");
  tessera::Output out(dir);
  // A directory where piece 1 should go: its rename fails.
  fs::create_directories(dir + "/u_00000003_1.vti/inside");
  out.write(u, 3);
  try {
    out.finish();
    FAIL() << "no error";
  } catch (const tessera::Error& e) { EXPECT_THAT(e.what(), HasSubstr("u_00000003_1.vti")); }
  EXPECT_FALSE(fs::exists(dir + "/u_00000003.pvti"));
}

TEST(Output, BadArgumentsAreRefused) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const std::string file = testing::TempDir() + "tessera_output_a_file";
  { std::ofstream(file) << "x"; }
  EXPECT_THROW(tessera::Output{file + "/sub"}, tessera::Error);
  const tessera::Grid<2> grid({8, 8}, {4, 8});
  tessera::Field<double, 2> bad(grid, 1, {}, "a/b");
  tessera::Output out(fresh_dir("bad"));
  try {
    out.write(bad, 0);
    FAIL() << "no error";
  } catch (const tessera::Error& e) { EXPECT_THAT(e.what(), HasSubstr("'a/b'")); }
  tessera::Field<double, 2> ok(grid, 1, {}, "ok");
  EXPECT_THROW(out.write(ok, -1), tessera::Error);
}

}  // namespace
