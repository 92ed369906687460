// Grid hierarchies (tessera::coarser, Restriction, Prolongation) against plain loops for tilings
// that do not line up across levels; NAS MG class S bitwise equal to its serial reference and
// verified against NPB's official rnm2 for every scheduler and worker count, with the coarse
// levels tiled or run as one task; a perturbed charge fails verification.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>

#include <tessera/levels.hpp>

#include "tests/reference/fsum.hpp"
#include "tests/tile_cases.hpp"

namespace {

using tessera::Index;

// Distinct weights per offset, so a wrong neighbour or a wrong anchor shows.
struct Weigh27 {
  TESSERA_HD void operator()(Index<3>, tessera::In<double> f, tessera::Out<double> c) const {
    double s = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          s += (1 + dx + 3 * (dy + 1) + 9 * (dz + 1)) * f(dx, dy, dz);
    c = s;
  }
};
// fine += (parity code) * coarse(anchor) + coarse(anchor - 1 along each even axis)
struct Spread {
  TESSERA_HD void operator()(Index<3> p, tessera::In<double> c, tessera::InOut<double> f) const {
    const int ex = p[0] % 2 == 0, ey = p[1] % 2 == 0, ez = p[2] % 2 == 0;
    f = f() + (1 + ex + 2 * ey + 4 * ez) * c() + c(-ex, -ey, -ez);
  }
};

std::int64_t wrap(std::int64_t i, std::int64_t n) { return ((i % n) + n) % n; }

class Levels : public testing::TestWithParam<test::Config> {};

TEST_P(Levels, RestrictionAndProlongationMatchPlainLoopsAcrossTilings) {
  tessera::Runtime rt(test::options(GetParam()));
  const std::int64_t nx = 12, ny = 8, nz = 10;
  for (const auto& tiles : {std::array<std::int64_t, 6>{12, 8, 10, 6, 4, 5},
                            std::array<std::int64_t, 6>{5, 3, 4, 4, 4, 2},
                            std::array<std::int64_t, 6>{4, 8, 3, 6, 1, 5}}) {
    tessera::Grid<3> fine({nx, ny, nz}, {tiles[0], tiles[1], tiles[2]}, {true, true, true});
    tessera::Grid<3> coarse({nx / 2, ny / 2, nz / 2}, {tiles[3], tiles[4], tiles[5]},
                            {true, true, true});
    SCOPED_TRACE(fine.describe() + " / " + coarse.describe());
    tessera::Field<double, 3> f(fine, 1, {}, "f"), c(coarse, 1, {}, "c"), g(fine, 0, {}, "g");
    f.fill([](Index<3> p) { return test::noise<3>(p); });
    g.fill([](Index<3> p) { return 0.25 * test::noise<3>(p); });
    tessera::Restriction<3>("weigh").apply(Weigh27{}, f, c);
    tessera::Prolongation<3>("spread").apply(Spread{}, c, g);
    const std::vector<double> fv = f.gather();
    std::vector<double> want_c(static_cast<std::size_t>(nx * ny * nz / 8));
    auto F = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
      return fv[static_cast<std::size_t>(wrap(x, nx) + nx * (wrap(y, ny) + ny * wrap(z, nz)))];
    };
    for (std::int64_t z = 0; z < nz / 2; ++z)
      for (std::int64_t y = 0; y < ny / 2; ++y)
        for (std::int64_t x = 0; x < nx / 2; ++x) {
          double s = 0;
          for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx)
                s += (1 + dx + 3 * (dy + 1) + 9 * (dz + 1)) *
                     F(2 * x + 1 + dx, 2 * y + 1 + dy, 2 * z + 1 + dz);
          want_c[static_cast<std::size_t>(x + nx / 2 * (y + ny / 2 * z))] = s;
        }
    test::expect_bitwise_equal(c.gather(), want_c);
    auto C = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
      return want_c[static_cast<std::size_t>(
          wrap(x, nx / 2) + nx / 2 * (wrap(y, ny / 2) + ny / 2 * wrap(z, nz / 2)))];
    };
    std::vector<double> want_g(fv.size());
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          const int ex = x % 2 == 0, ey = y % 2 == 0, ez = z % 2 == 0;
          const std::size_t i = static_cast<std::size_t>(x + nx * (y + ny * z));
          want_g[i] = 0.25 * test::noise<3>({{x, y, z}}) +
                      (1 + ex + 2 * ey + 4 * ez) * C(x / 2, y / 2, z / 2) +
                      C(x / 2 - ex, y / 2 - ey, z / 2 - ez);
        }
    test::expect_bitwise_equal(g.gather(), want_g);
  }
}

TEST_P(Levels, MgClassSMatchesReferenceAndVerifies) {
  tessera::Runtime rt(test::options(GetParam()));
  // Coarse levels in one tile (the default: each tile at least 32768 points) run as one task
  // per V-cycle (levels 1-4; all 5 when the top is one tile too), or tiled as the top; or
  // coarse tiles halved with the top's (down to 1 point thick), so that every level is tiled.
  for (std::int64_t tile_z : {32, 4}) {
    SCOPED_TRACE("top tiles " + std::to_string(tile_z) + " thick");
    test::expect_mg_class_s_verified(tile_z, apps::Mg::kMinTilePoints, 1, true,
                                     tile_z == 32 ? 5 : 4);
    SCOPED_TRACE("coarse levels tiled");
    test::expect_mg_class_s_verified(tile_z, apps::Mg::kMinTilePoints, 1, false, 0);
  }
  SCOPED_TRACE("top tiles 4 thick, coarse levels halved");
  test::expect_mg_class_s_verified(4, 1, 1, true, 0);
}

// Mg::iteration (a V-cycle, then the top residual) bitwise the serial reference; with the whole
// grid in one tile (Mg::default_tile_z of class S on one rank) it is one task per iteration,
// and Mg::iterations runs several in one task (all of them, or `per_task`). rnm2 and rnmu are
// the same bits for every top tiling (PlaneNorms: exact sums), so that the default tiling may
// differ between one rank and several; the sum of squares is the exact sum of the reference
// residual's squares rounded once (reference::fsum). NPB's timed region (Mg::timed_iterations: the
// top residual and its norms, the iterations, the norms) puts, with a one-tile top, the first
// residual and both norms inside the first and last V-cycle tasks: the same bits again.
TEST_P(Levels, MgIterationMatchesReferenceInOneTaskPerIteration) {
  tessera::Runtime rt(test::options(GetParam()));
  const apps::MgClass s = apps::mg_class("S");
  reference::MgReference ref(s.n);
  ref.run(s.iterations);
  EXPECT_EQ(apps::Mg::default_tile_z(s.n), s.n);
  EXPECT_EQ(apps::Mg::default_tile_z(s.n, 2), s.n / 4);
  std::vector<double> norms;
  // {top tile thickness, iterations per task (0: Mg::iteration, one call each; -1: all in one
  // call to Mg::iterations), tasks expected for the one-tile top (0: not counted), whether as
  // Mg::timed_iterations (per task 0: all; the tasks counted include the residual's and norms')}
  struct Case {
    std::int64_t tile_z;
    int per_task;
    int tasks;
    bool timed;
  };
  for (const Case c :
       {Case{s.n, 0, s.iterations, false}, Case{s.n, -1, 1, false}, Case{s.n, 3, 2, false},
        Case{8, 0, 0, false}, Case{4, -1, 0, false}, Case{s.n, 0, 1, true}, Case{s.n, 3, 2, true},
        Case{s.n, 1, 4, true}, Case{8, 0, 0, true}}) {
    SCOPED_TRACE("top tiles " + std::to_string(c.tile_z) + " thick, " + std::to_string(c.per_task) +
                 " per task" + (c.timed ? ", timed region" : ""));
    apps::Mg mg(s.n, c.tile_z);
    mg.initialise();
    if (!c.timed) mg.resid_top();
    const std::size_t tasks0 = rt.tasks_submitted();
    std::array<double, 2> n{};
    if (c.timed)
      n = mg.timed_iterations(s.iterations, c.per_task).get();
    else if (c.per_task == 0)
      for (int it = 0; it < s.iterations; ++it) mg.iteration();
    else
      mg.iterations(s.iterations, std::max(c.per_task, 0));
    if (c.tasks > 0) EXPECT_EQ(rt.tasks_submitted() - tasks0, static_cast<std::size_t>(c.tasks));
    test::expect_bitwise_equal(mg.R(mg.lt).gather(),
                               ref.r[static_cast<std::size_t>(mg.lt - 1)].interior());
    test::expect_bitwise_equal(mg.U(mg.lt).gather(),
                               ref.u[static_cast<std::size_t>(mg.lt - 1)].interior());
    if (!c.timed) n = mg.norms().get();
    std::vector<double> squares = ref.r[static_cast<std::size_t>(mg.lt - 1)].interior();
    for (double& v : squares) v = v * v;
    EXPECT_EQ(n[0], reference::fsum(squares));
    EXPECT_LE(std::fabs(mg.rnm2(n[0]) - s.verify_value) / s.verify_value, 1e-8);
    norms.insert(norms.end(), n.begin(), n.end());
  }
  for (std::size_t k = 2; k < norms.size(); k += 2)
    test::expect_bitwise_equal(
        std::vector<double>(norms.begin() + static_cast<std::ptrdiff_t>(k),
                            norms.begin() + static_cast<std::ptrdiff_t>(k + 2)),
        std::vector<double>(norms.begin(), norms.begin() + 2));
}

// And under peager, which runs the one-task V-cycle on a team of both workers (Team): each
// operator's planes shared between them, the same bits.
INSTANTIATE_TEST_SUITE_P(Config, Levels, testing::ValuesIn([] {
                           std::vector<test::Config> c = test::configs();
                           c.push_back({"peager", 2});
                           return c;
                         }()),
                         test::config_name);

TEST(MgVerification, OnePerturbedChargeFailsVerification) {
  tessera::Options o;
  o.quiet = true;
  tessera::Runtime rt(o);
  const apps::MgClass s = apps::mg_class("S");
  apps::Mg mg(s.n, 8);
  mg.initialise();
  const std::vector<double> v = mg.V().gather();
  const auto at = std::find(v.begin(), v.end(), 1.0) - v.begin();  // one +1 charge becomes 0.5
  mg.V().fill([&](Index<3> p) {
    const std::int64_t g = p[0] + 32 * (p[1] + 32 * p[2]);
    return g == at ? 0.5 : v[static_cast<std::size_t>(g)];
  });
  mg.resid_top();
  for (int it = 0; it < s.iterations; ++it) {
    mg.mg3p();
    mg.resid_top();
  }
  const double rnm2 = mg.rnm2(mg.norms().get(0));
  EXPECT_GT(std::fabs(rnm2 - s.verify_value) / s.verify_value, 1e-8) << "rnm2 " << rnm2;
}

TEST(LevelErrors, MismatchedLevelsAreRefused) {
  tessera::Options o;
  o.quiet = true;
  tessera::Runtime rt(o);
  using testing::HasSubstr;
  auto message = [](auto f) { return test::error_of(f); };
  EXPECT_THAT(message([] {
                tessera::coarser(tessera::Grid<3>({6, 5, 4}, {6, 5, 4}));
              }),
              HasSubstr("5 points along y; a coarser level halves every extent"));
  tessera::Grid<3> fine({8, 8, 8}, {8, 8, 4}, {true, true, true});
  tessera::Field<double, 3> f(fine, 1, {}, "f"), f0(fine, 0, {}, "f0");
  tessera::Field<double, 3> c(tessera::coarser(fine), 1, {}, "c");
  tessera::Field<double, 3> wrong(tessera::Grid<3>({4, 4, 2}, {4, 4, 2}, {true, true, true}), 1, {},
                                  "wrong");
  tessera::Field<double, 3> open(tessera::Grid<3>({4, 4, 4}, {4, 4, 4}), 1, {}, "open");
  tessera::Restriction<3> restrict("weigh");
  EXPECT_THAT(
      message([&] { restrict.apply(Weigh27{}, f, wrong); }),
      HasSubstr(
          "restriction 'weigh': fine field 'f' has 8 points along z and coarse field 'wrong' 2"));
  EXPECT_THAT(message([&] { restrict.apply(Weigh27{}, f, open); }),
              HasSubstr("differ in periodicity along x"));
  EXPECT_THAT(message([&] { restrict.apply(Weigh27{}, f0, c); }),
              HasSubstr("which has halo width 0"));
  EXPECT_EQ(tessera::coarser(fine).tile()[2], 2);
  EXPECT_EQ(tessera::coarser(fine, 4).tile()[2], 4);
}

}  // namespace
