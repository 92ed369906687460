// User tasks, all-pairs interactions and the applications built on them, under mpirun with 1 to
// 4 ranks: a transpose whose tasks read tiles of other ranks, and nbody, give the serial
// reference's bits; a task writing tiles of two ranks is refused on every rank.
#include <gmock/gmock.h>

#include <cmath>
#include <memory>

#include <tessera/pairs.hpp>
#include <tessera/task.hpp>

#include "tests/reference/mg.hpp"
#include "tests/reference/nbody.hpp"
#include "tests/test_support.hpp"

namespace {

using tessera::Index;
using tessera::TileView;

tessera::Runtime* runtime = nullptr;  // one for the whole program: MPI starts once per process

// dst(z, y, x) = src(x, y, z) for the points of dst's tile that src's tile holds.
struct TransposeBlock {
  void cpu(TileView<const double, 3> src, TileView<double, 3> dst) const {
    for (std::int64_t z = 0; z < src.extent[2]; ++z)
      for (std::int64_t y = 0; y < src.extent[1]; ++y)
        for (std::int64_t x = 0; x < src.extent[0]; ++x) {
          const std::int64_t dx = src.origin[2] + z - dst.origin[0], dy = src.origin[1] + y - dst.origin[1],
                             dz = src.origin[0] + x - dst.origin[2];
          if (dx >= 0 && dx < dst.extent[0] && dy >= 0 && dy < dst.extent[1] && dz >= 0 && dz < dst.extent[2])
            dst(dx, dy, dz) = src(x, y, z);
        }
  }
};

TEST(DistributedTiles, TransposeReadsTilesOfOtherRanks) {
  const std::int64_t nx = 8, ny = 6, nz = 12;
  tessera::Grid<3> slabs({nx, ny, nz}, {nx, ny, 3}), pencils({nz, ny, nx}, {nz, ny, 2});
  tessera::Field<double, 3> u(slabs, 0, {}, "u"), v(pencils, 0, {}, "v");
  u.fill([](Index<3> p) { return test::noise<3>(p); });
  tessera::Task transpose("transpose");
  for (int d = 0; d < pencils.tiles(); ++d)
    for (int s = 0; s < slabs.tiles(); ++s)
      transpose.submit(TransposeBlock{}, tessera::read_tile(u, s), tessera::update_tile(v, d));
  const std::vector<double> a = u.gather(), b = v.gather();
  std::vector<double> want(b.size());
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) want[z + nz * (y + ny * x)] = a[x + nx * (y + ny * z)];
  test::expect_bitwise_equal(b, want);
}

struct Copy2 {
  void cpu(TileView<const double, 2>, TileView<double, 2>, TileView<double, 2>) const {}
};

TEST(DistributedTiles, TaskWritingTilesOfTwoRanksIsRefused) {
  tessera::Grid<2> grid({8, 8}, {2, 8});
  tessera::Field<double, 2> u(grid, 0, {}, "u");
  int other = -1;
  for (int t = 1; t < grid.tiles(); ++t)
    if (tessera::tile_of(u, t).owner != tessera::tile_of(u, 0).owner) other = t;
  if (other < 0) GTEST_SKIP() << "one rank: every tile has one owner";
  try {
    tessera::Task("copy2").submit(Copy2{}, tessera::read_tile(u, 1), tessera::write_tile(u, 0),
                                  tessera::write_tile(u, other));
    ADD_FAILURE() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("a task runs on the rank that owns what it writes"));
  }
}

TEST(DistributedTiles, NBodyMatchesSerialReference) {
  const std::int64_t n = 80;
  const apps::Bodies start = apps::plummer(n, 3);
  apps::NBodyParams p;
  const reference::NBodyState want = reference::nbody(start, 3, p.dt, p.eps);
  apps::NBody sim(n, 16, start, p);
  for (int s = 0; s < 3; ++s) sim.step();
  test::expect_bitwise_equal(sim.x.gather(), want.b.x);
  test::expect_bitwise_equal(sim.vz.gather(), want.b.vz);
  const auto e = sim.energies().get();
  const auto r = reference::nbody_energies(want.b, p.eps, 16);
  EXPECT_EQ(e[0], r[0]);
  EXPECT_EQ(e[1], r[1]);
}

TEST(DistributedTiles, MgClassSMatchesReferenceAndVerifies) {
  // Every level's field needs a tile per rank: the coarsest (2^3 points) has 2 z-tiles.
  if (runtime->ranks() > 2) GTEST_SKIP() << "the coarsest MG level has 2 tiles";
  const apps::MgClass s = apps::mg_class("S");
  reference::MgReference ref(s.n);
  ref.run(s.iterations);
  apps::Mg mg(s.n, 4);  // levels' tiles on different ranks: restriction and interp cross ranks
  mg.initialise();
  mg.resid_top();
  for (int it = 0; it < s.iterations; ++it) {
    mg.mg3p();
    mg.resid_top();
  }
  test::expect_bitwise_equal(mg.R(mg.lt).gather(), ref.r[static_cast<std::size_t>(mg.lt - 1)].interior());
  const double rnm2 = mg.rnm2(mg.norms().get(0));
  EXPECT_LE(std::fabs(rnm2 - s.verify_value) / s.verify_value, 1e-8) << "rnm2 " << rnm2;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::Options options = tessera::parse_options(argc, argv);
  options.quiet = true;
  testing::InitGoogleTest(&argc, argv);
  auto rt = std::make_unique<tessera::Runtime>(options);
  runtime = rt.get();
  // Only rank 0 reports; every rank runs every test (they are collective).
  if (rt->rank() != 0)
    delete testing::UnitTest::GetInstance()->listeners().Release(
        testing::UnitTest::GetInstance()->listeners().default_result_printer());
  const int failed = RUN_ALL_TESTS();
  rt.reset();
  return failed;
}
