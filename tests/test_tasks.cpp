// User tasks on tiles (tessera::Task): bodies see the right tiles in the right order, modes order
// the tasks, a transpose between two tilings gives the reference's bits, stencils exchange the
// ghost layers of a field a task wrote, and bad input is refused before anything is submitted.
#include <gmock/gmock.h>

#include <chrono>

#include <tessera/task.hpp>

#include "tests/tile_cases.hpp"

namespace {

using tessera::Index;
using tessera::TileView;

struct Affine {  // out = a * in + b, at every interior point of one tile
  double a, b;
  void cpu(TileView<const double, 3> in, TileView<double, 3> out) const {
    for (std::int64_t z = 0; z < in.extent[2]; ++z)
      for (std::int64_t y = 0; y < in.extent[1]; ++y)
        for (std::int64_t x = 0; x < in.extent[0]; ++x) out(x, y, z) = a * in(x, y, z) + b;
  }
};

struct Step {  // v = 3 v + k in place: the result depends on the order of the updates
  double k;
  void cpu(TileView<double, 2> v) const {
    for (std::int64_t y = 0; y < v.extent[1]; ++y)
      for (std::int64_t x = 0; x < v.extent[0]; ++x) v(x, y) = 3.0 * v(x, y) + k;
  }
};

struct Neighbours {  // the 5-point sum, to see the ghost layers a task left stale
  TESSERA_HD void operator()(Index<2>, tessera::In<double> u, tessera::Out<double> s) const {
    s = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) + u();
  }
};
struct AddOne {
  void cpu(TileView<double, 2> u) const {
    for (std::int64_t y = 0; y < u.extent[1]; ++y)
      for (std::int64_t x = 0; x < u.extent[0]; ++x) u(x, y) += 1.0;
  }
};
struct Mark {  // writes the tile number and the views' origins, to check which tiles a body got
  double tile;
  void cpu(TileView<const double, 2> a, TileView<const double, 2> b,
           TileView<double, 2> out) const {
    for (std::int64_t y = 0; y < out.extent[1]; ++y)
      for (std::int64_t x = 0; x < out.extent[0]; ++x)
        out(x, y) = tile * 1e6 + a(0, 0) * 1e3 + b(0, 0);
  }
};

class TaskOnTiles : public testing::TestWithParam<test::Config> {};

TEST_P(TaskOnTiles, AffineMapOfEveryTileMatchesReference) {
  tessera::Runtime rt(test::options(GetParam()));
  for (const auto& grid :
       {tessera::Grid<3>({9, 8, 7}, {9, 8, 7}), tessera::Grid<3>({9, 8, 7}, {4, 3, 2})}) {
    SCOPED_TRACE(grid.describe());
    tessera::Field<double, 3> u(grid, 1, {}, "u"), v(grid, 0, {}, "v");
    u.fill([](Index<3> p) { return test::noise<3>(p); });
    tessera::Task affine("affine");
    for (int t = 0; t < grid.tiles(); ++t)
      affine.submit(Affine{1.5, -0.25}, tessera::read_tile(u, t), tessera::write_tile(v, t));
    std::vector<double> want = u.gather();
    for (double& w : want) w = 1.5 * w + -0.25;
    test::expect_bitwise_equal(v.gather(), want);
  }
}

TEST_P(TaskOnTiles, UpdatesOfOneTileRunInSubmissionOrder) {
  tessera::Runtime rt(test::options(GetParam()));
  tessera::Grid<2> grid({12, 10}, {5, 4});
  tessera::Field<double, 2> v(grid, 0, {}, "v");
  tessera::Task step("step");
  for (int k = 0; k < 12; ++k)
    for (int t = 0; t < grid.tiles(); ++t)
      step.submit(Step{static_cast<double>(k)}, tessera::update_tile(v, t));
  double want = 0;
  for (int k = 0; k < 12; ++k) want = 3.0 * want + k;
  for (double got : v.gather()) ASSERT_EQ(got, want);
}

TEST_P(TaskOnTiles, TransposeBetweenTwoTilingsMatchesReference) {
  tessera::Runtime rt(test::options(GetParam()));
  test::expect_transpose_matches_reference(8, 6, 10, 3, 2);
}

TEST_P(TaskOnTiles, StencilAfterATaskSeesTheTasksValuesInItsGhostLayers) {
  tessera::Runtime rt(test::options(GetParam()));
  tessera::Grid<2> grid({11, 9}, {4, 3}, {true, true});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), s(grid, 1, {}, "s");
  u.fill([](Index<2> p) { return test::noise<2>(p); });
  tessera::Stencil<2> sum("neighbours", tessera::Shape::Star, 1);
  sum.apply(Neighbours{}, tessera::in(u), tessera::out(s));  // exchanges u once
  tessera::Task add("add-one");
  for (int t = 0; t < grid.tiles(); ++t) add.submit(AddOne{}, tessera::update_tile(u, t));
  sum.apply(Neighbours{}, tessera::in(u), tessera::out(s));  // must exchange u again
  const std::vector<double> a = u.gather();
  std::vector<double> want(a.size());
  auto at = [&](std::int64_t x, std::int64_t y) { return a[((x + 11) % 11) + 11 * ((y + 9) % 9)]; };
  for (std::int64_t y = 0; y < 9; ++y)
    for (std::int64_t x = 0; x < 11; ++x)
      want[x + 11 * y] = at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) + at(x, y);
  test::expect_bitwise_equal(s.gather(), want);
}

TEST_P(TaskOnTiles, ViewsComeInTheOrderGivenWithReadTilesOfAnyField) {
  tessera::Runtime rt(test::options(GetParam()));
  tessera::Grid<2> grid({6, 6}, {3, 3});
  tessera::Field<double, 2> a(grid, 0, {}, "a"), b(grid, 2, {}, "b"), out(grid, 1, {}, "out");
  a.fill([](Index<2> p) { return static_cast<double>(p[0] / 3 + 2 * (p[1] / 3)); });  // its tile
  b.fill([](Index<2> p) { return 10.0 + static_cast<double>(p[0] / 3 + 2 * (p[1] / 3)); });
  tessera::Task mark("mark");
  // Tile t reads a's tile 3 - t and b's tile t; a tile read twice is one buffer.
  for (int t = 0; t < 4; ++t)
    mark.submit(Mark{static_cast<double>(t)}, tessera::read_tile(a, 3 - t),
                tessera::read_tile(b, t), tessera::write_tile(out, t));
  mark.submit(Mark{9.0}, tessera::read_tile(b, 1), tessera::read_tile(b, 1),
              tessera::write_tile(out, 1));
  const std::vector<double> got = out.gather();
  for (std::int64_t y = 0; y < 6; ++y)
    for (std::int64_t x = 0; x < 6; ++x) {
      const int t = static_cast<int>(x / 3 + 2 * (y / 3));
      const double want = t == 1 ? 9e6 + 11e3 + 11 : t * 1e6 + (3 - t) * 1e3 + 10 + t;
      ASSERT_EQ(got[static_cast<std::size_t>(x + 6 * y)], want) << "tile " << t;
    }
}

INSTANTIATE_TEST_SUITE_P(Config, TaskOnTiles, testing::ValuesIn(test::configs()),
                         test::config_name);

// A task that may run on a team of workers: each member scales its share of the planes, syncs,
// then every member sums the whole scaled tile, which it can only get right once every other
// member's share is written (and all members must agree); the largest team is recorded. Member
// 1 starts late, so that member 0, which writes the result, would sum its old planes if it went
// on without waiting.
struct ScaleThenSum {
  double factor;
  void cpu(const tessera::Team& team, TileView<const double, 3> in, TileView<double, 3> twice,
           TileView<double, 3> result) const {
    if (team.rank == 1) {
      const auto start = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2)) {}
    }
    const std::int64_t nz = in.extent[2];
    for (std::int64_t z = team.begin(nz); z < team.end(nz); ++z)
      for (std::int64_t y = 0; y < in.extent[1]; ++y)
        for (std::int64_t x = 0; x < in.extent[0]; ++x) twice(x, y, z) = factor * in(x, y, z);
    team.sync();
    double sum = 0;
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < in.extent[1]; ++y)
        for (std::int64_t x = 0; x < in.extent[0]; ++x) sum += twice(x, y, z);
    team.sync();  // every member has read `twice` before any writes the result
    if (team.rank == 0) {
      result(0, 0, 0) = sum;
      result(1, 0, 0) = team.size;
      result(2, 0, 0) = 1;
    }
    team.sync();
    if (result(0, 0, 0) != sum) result(2, 0, 0) = 0;  // a member saw another sum
  }
};

TEST(TeamTasks, MembersShareTheWorkAndSeeEachOthersWrites) {
  for (const char* scheduler : {"peager", "dmda", "eager"}) {
    SCOPED_TRACE(scheduler);
    tessera::Runtime rt(test::options({scheduler, 2}));
    const tessera::Grid<3> grid({16, 12, 9 * 4}, {16, 12, 9});  // 4 tiles of 9 planes
    tessera::Field<double, 3> u(grid, 0, {}, "u"), twice(grid, 0, {}, "twice"),
        result(grid, 0, {}, "result");
    u.fill([](Index<3> p) { return test::noise<3>(p); });
    tessera::Task task("scale-then-sum");
    for (double factor : {2.0, 3.0, 5.0})  // each round leaves other values behind
      for (int t = 0; t < grid.tiles(); ++t)
        task.submit(ScaleThenSum{factor}, tessera::read_tile(u, t), tessera::write_tile(twice, t),
                    tessera::write_tile(result, t));
    const std::vector<double> in = u.gather(), out = twice.gather(), got = result.gather();
    double largest_team = 0;
    for (int t = 0; t < grid.tiles(); ++t) {
      double want = 0;
      const std::size_t first = static_cast<std::size_t>(t) * 16 * 12 * 9;
      for (std::size_t i = first; i < first + 16 * 12 * 9; ++i) {
        ASSERT_EQ(out[i], 5.0 * in[i]);
        want += 5.0 * in[i];
      }
      EXPECT_EQ(got[first], want) << "tile " << t;
      EXPECT_EQ(got[first + 2], 1.0) << "tile " << t << ": the members disagreed";
      largest_team = std::max(largest_team, got[first + 1]);
    }
    // peager forms a team of the 2 CPU workers; the others run each task on one worker.
    EXPECT_EQ(largest_team, std::string(scheduler) == "peager" ? 2.0 : 1.0);
  }
}

TEST(TaskErrors, BadTilesAreRefusedWithTheFix) {
  tessera::Options o;
  o.quiet = true;
  tessera::Runtime rt(o);
  tessera::Grid<2> grid({6, 6}, {3, 3});
  tessera::Field<double, 2> u(grid, 0, {}, "u"), v(grid, 0, {}, "v");
  tessera::Task add("add-one");
  using testing::HasSubstr;
  auto message = [](auto submit) { return test::error_of(submit); };
  EXPECT_THAT(
      message([&] { add.submit(AddOne{}, tessera::update_tile(u, 4)); }),
      HasSubstr("task 'add-one': tile 4 of field 'u' does not exist (the field has tiles 0 to 3)"));
  EXPECT_THAT(message([&] { add.submit(AddOne{}, tessera::update_tile(u, -1)); }),
              HasSubstr("give a tile number below Grid::tiles()"));
  tessera::Task mark("mark");
  EXPECT_THAT(message([&] {
                mark.submit(Mark{0}, tessera::read_tile(u, 0), tessera::read_tile(v, 0),
                            tessera::write_tile(u, 0));
              }),
              HasSubstr("tile 0 of field 'u' is given twice (read_tile and write_tile); give each "
                        "tile once, as update_tile"));
  tessera::Task reader("reader");
  struct ReadOnly {
    void cpu(TileView<const double, 2>) const {}
  };
  EXPECT_THAT(message([&] { reader.submit(ReadOnly{}, tessera::read_tile(u, 0)); }),
              HasSubstr("task 'reader' writes no tile"));
  EXPECT_THAT(message([] { tessera::Task bad("no spaces"); }),
              HasSubstr("task name 'no spaces' may contain only letters"));
  EXPECT_THAT(message([&] { tessera::tile_of(u, 7); }),
              HasSubstr("tile 7 of field 'u' does not exist"));
  const auto info = tessera::tile_of(u, 3);
  EXPECT_EQ(info.origin[0], 3);
  EXPECT_EQ(info.origin[1], 3);
  EXPECT_EQ(info.extent[0], 3);
  EXPECT_EQ(info.owner, 0);
  rt.wait();
  for (double x : u.gather()) EXPECT_EQ(x, 0.0);  // nothing was submitted
}

}  // namespace
