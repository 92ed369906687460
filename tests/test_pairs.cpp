// All-pairs interactions (tessera::Pairs) give the serial loop's bits (chunks of 64 sources,
// reference/pairs.hpp) for every tiling, scheduler and worker count; apps/nbody matches its serial
// reference bitwise.
#include <gmock/gmock.h>

#include <array>
#include <cmath>

#include <tessera/pairs.hpp>

#include "tests/reference/nbody.hpp"
#include "tests/reference/pairs.hpp"
#include "tests/tile_cases.hpp"

namespace {

using tessera::Index;

// A sum whose bits depend on the order of its terms (values of very different magnitudes), and
// a second accumulator that records the order itself.
struct Weighted {
  TESSERA_HD void operator()(Index<2> i, Index<2> j, tessera::In<double> wi, tessera::In<double> vj,
                             tessera::Acc<2>& a) const {
    a[0] += wi() * vj();
    a[1] = a[1] * 0.5 + static_cast<double>(j[0] + 100 * j[1]) - static_cast<double>(i[0]);
  }
};

// Serial: for each target point (x fastest), the sources in their order (every source tile in
// tile order, every point of it x fastest) in chunks of 64, as tessera::Pairs sums them
// (reference::pair_sums).
std::vector<double> weighted_reference(const tessera::Grid<2>& tg, const tessera::Grid<2>& sg,
                                       const std::vector<double>& w, const std::vector<double>& v,
                                       const std::vector<double>& a0, const std::vector<double>& a1,
                                       int k) {
  const std::int64_t nx = tg.extent()[0], ny = tg.extent()[1], sx = sg.extent()[0],
                     sy = sg.extent()[1];
  const std::int64_t tx = sg.tile()[0], ty = sg.tile()[1];
  std::vector<std::array<std::int64_t, 2>> order;  // (jx, jy) by position
  for (std::int64_t by = 0; by < sy; by += ty)
    for (std::int64_t bx = 0; bx < sx; bx += tx)
      for (std::int64_t jy = by; jy < std::min(sy, by + ty); ++jy)
        for (std::int64_t jx = bx; jx < std::min(sx, bx + tx); ++jx) order.push_back({jx, jy});
  std::vector<double> out(static_cast<std::size_t>(nx * ny));
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::size_t i = static_cast<std::size_t>(x + nx * y);
      std::array<double, 2> sums{a0[i], a1[i]};
      reference::pair_sums(sums, static_cast<std::int64_t>(order.size()),
                           [&](std::int64_t j, std::array<double, 2>& c) {
                             const auto [jx, jy] = order[static_cast<std::size_t>(j)];
                             c[0] += w[i] * v[static_cast<std::size_t>(jx + sx * jy)];
                             c[1] = c[1] * 0.5 + static_cast<double>(jx + 100 * jy) -
                                    static_cast<double>(x);
                           });
      out[i] = sums[static_cast<std::size_t>(k)];
    }
  return out;
}

class PairsOnTiles : public testing::TestWithParam<test::Config> {};

TEST_P(PairsOnTiles, SumsFollowTheSourceOrderForEveryTiling) {
  tessera::Runtime rt(test::options(GetParam()));
  struct Case {
    tessera::Grid<2> targets, sources;
  };
  for (const Case& c :
       {Case{tessera::Grid<2>({7, 5}, {3, 2}), tessera::Grid<2>({6, 4}, {4, 3})},
        Case{tessera::Grid<2>({7, 5}, {7, 5}), tessera::Grid<2>({6, 4}, {6, 1})},
        Case{tessera::Grid<2>({30, 1}, {7, 1}), tessera::Grid<2>({30, 1}, {30, 1})},
        // Chunks of 64 cut by source tile boundaries (one tile inside one chunk, a tile over
        // several), on one row and on rows of 150 tiled along y only.
        Case{tessera::Grid<2>({9, 1}, {4, 1}), tessera::Grid<2>({300, 1}, {37, 1})},
        Case{tessera::Grid<2>({5, 2}, {5, 1}), tessera::Grid<2>({150, 3}, {150, 1})},
        Case{tessera::Grid<2>({6, 1}, {6, 1}), tessera::Grid<2>({200, 1}, {13, 1})}}) {
    SCOPED_TRACE(c.targets.describe() + " <- " + c.sources.describe());
    tessera::Field<double, 2> w(c.targets, 0, {}, "w"), a0(c.targets, 0, {}, "a0"),
        a1(c.targets, 1, {}, "a1");
    tessera::Field<double, 2> v(c.sources, 0, {}, "v");
    w.fill([](Index<2> p) { return std::pow(10.0, 8.0 * test::noise<2>(p)); });
    v.fill([](Index<2> p) { return test::noise<2>({{p[1], p[0]}}) - 0.5; });
    a0.fill([](Index<2> p) { return 1e-3 * test::noise<2>(p); });  // added to, not replaced
    const std::vector<double> w0 = w.gather(), v0 = v.gather(), s0 = a0.gather(), s1 = a1.gather();
    tessera::Pairs<2> weighted("weighted");
    weighted.apply(Weighted{}, tessera::targets(w), tessera::sources(v),
                   tessera::accumulate(a0, a1));
    test::expect_bitwise_equal(a0.gather(),
                               weighted_reference(c.targets, c.sources, w0, v0, s0, s1, 0));
    test::expect_bitwise_equal(a1.gather(),
                               weighted_reference(c.targets, c.sources, w0, v0, s0, s1, 1));
  }
}

TEST_P(PairsOnTiles, NBodyMatchesSerialReferenceBitwise) {
  tessera::Runtime rt(test::options(GetParam()));
  const std::int64_t n = 96;
  const apps::Bodies start = apps::plummer(n, 7);
  apps::NBodyParams p;
  const int steps = 4;
  const reference::NBodyState want = reference::nbody(start, steps, p.dt, p.eps);
  // 0: the planner's tiles for all-pairs work (one per worker: uneven where 96 does not divide).
  for (std::int64_t tile : {96, 48, 32, 40, 7, 6, 0}) {
    SCOPED_TRACE("tiles of " + std::to_string(tile) + " bodies");
    apps::NBody sim(n, tile, start, p);
    const auto e0 = sim.energies().get();
    const auto r0 = reference::nbody_energies(start, p.eps);
    EXPECT_EQ(e0[0], r0[0]);
    EXPECT_EQ(e0[1], r0[1]);
    for (int s = 0; s < steps; ++s) sim.step();
    test::expect_bitwise_equal(sim.x.gather(), want.b.x);
    test::expect_bitwise_equal(sim.y.gather(), want.b.y);
    test::expect_bitwise_equal(sim.z.gather(), want.b.z);
    test::expect_bitwise_equal(sim.vx.gather(), want.b.vx);
    test::expect_bitwise_equal(sim.vy.gather(), want.b.vy);
    test::expect_bitwise_equal(sim.vz.gather(), want.b.vz);
    test::expect_bitwise_equal(sim.az.gather(), want.az);
    const auto e1 = sim.energies().get();
    const auto r1 = reference::nbody_energies(want.b, p.eps);
    EXPECT_EQ(e1[0], r1[0]);
    EXPECT_EQ(e1[1], r1[1]);
    // A Plummer sphere in N-body units: E near -1/4, conserved to a small drift.
    EXPECT_NEAR(e0[0] + e0[1], -0.25, 0.05);
    EXPECT_LT(std::fabs((e1[0] + e1[1]) / (e0[0] + e0[1]) - 1.0), 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Config, PairsOnTiles, testing::ValuesIn(test::configs()),
                         test::config_name);

// The carry fields of chunks cut by source tiles belong to a Pairs and its Runtime: one Pairs
// applied in two Runtimes in turn, and to grids of other tiles, keeps the reference's bits.
TEST(PairsCarry, OnePairsServesRuntimesAndTilingsInTurn) {
  tessera::Pairs<2> weighted("weighted");
  for (std::int64_t tile : {30, 30, 45}) {
    SCOPED_TRACE("source tiles of " + std::to_string(tile));
    tessera::Options o;
    o.quiet = true;
    tessera::Runtime rt(o);
    const tessera::Grid<2> targets({5, 1}, {5, 1}), sources({100, 1}, {tile, 1});
    tessera::Field<double, 2> w(targets, 0, {}, "w"), a0(targets, 0, {}, "a0"),
        a1(targets, 0, {}, "a1");
    tessera::Field<double, 2> v(sources, 0, {}, "v");
    w.fill([](Index<2> p) { return std::pow(10.0, 8.0 * test::noise<2>(p)); });
    v.fill([](Index<2> p) { return test::noise<2>({{p[1], p[0]}}) - 0.5; });
    const std::vector<double> w0 = w.gather(), v0 = v.gather(), s0 = a0.gather(), s1 = a1.gather();
    weighted.apply(Weighted{}, tessera::targets(w), tessera::sources(v),
                   tessera::accumulate(a0, a1));
    test::expect_bitwise_equal(a1.gather(),
                               weighted_reference(targets, sources, w0, v0, s0, s1, 1));
  }
}

TEST(PairsErrors, FieldsAreCheckedBeforeSubmission) {
  tessera::Options o;
  o.quiet = true;
  tessera::Runtime rt(o);
  tessera::Grid<2> g({8, 1}, {4, 1}), other({8, 1}, {2, 1});
  tessera::Field<double, 2> w(g, 0, {}, "w"), v(g, 0, {}, "v"), a(g, 0, {}, "a"),
      b(other, 0, {}, "b");
  tessera::Pairs<2> pairs("weighted");
  auto message = [](auto submit) { return test::error_of(submit); };
  using testing::HasSubstr;
  EXPECT_THAT(
      message([&] {
        pairs.apply(Weighted{}, tessera::targets(w), tessera::sources(v),
                    tessera::accumulate(v, a));
      }),
      HasSubstr(
          "pairs 'weighted': field 'v' is both read (targets or sources) and accumulated into"));
  EXPECT_THAT(message([&] {
                pairs.apply(Weighted{}, tessera::targets(w), tessera::sources(v),
                            tessera::accumulate(a, b));
              }),
              HasSubstr("pairs 'weighted': accumulator field 'b' is on a different grid"));
  EXPECT_THAT(message([&] {
                pairs.apply(Weighted{}, tessera::targets(w), tessera::sources(v),
                            tessera::accumulate(a, a));
              }),
              HasSubstr("accumulator 'a' is given twice"));
  EXPECT_THAT(message([] { tessera::Pairs<2> bad("a b"); }), HasSubstr("may contain only letters"));
  for (double x : a.gather()) EXPECT_EQ(x, 0.0);
}

}  // namespace
