// Mesh partitioning as pure code (no runtime): every element owned once, halos hold exactly
// what the maps reach outside a tile, exports rebuild the halos, local maps point at the same
// elements, increment plans reproduce the serial order (and fail when it is reversed), and
// colourings separate elements that share a target.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <map>
#include <set>

#include "apps/airfoil/mesh.hpp"
#include "partition/mesh_partition.hpp"
#include "tessera/detail/mesh_codes.hpp"

namespace {

using tessera::partition::MeshMap;
using tessera::partition::MeshMethod;
namespace codes = tessera::detail::mesh_codes;

// The airfoil mesh's sets and maps: 0 nodes, 1 edges, 2 bedges, 3 cells (primary: 3).
struct Fixture {
  apps::airfoil::Mesh m = apps::airfoil::generate_mesh(6, 8);
  std::vector<std::int64_t> sizes{m.nnode, m.nedge, m.nbedge, m.ncell};
  std::vector<MeshMap> maps{{1, 0, 2, m.edge.data()},
                            {1, 3, 2, m.ecell.data()},
                            {2, 0, 2, m.bedge.data()},
                            {2, 3, 1, m.becell.data()},
                            {3, 0, 4, m.cell.data()}};
};

struct Cut {
  MeshMethod method;
  int tiles;
};

class MeshPartition : public testing::TestWithParam<Cut> {};

TEST_P(MeshPartition, EveryElementHasOneOwnerAndHalosHoldExactlyWhatMapsReach) {
  Fixture f;
  const auto p =
      tessera::partition::partition_mesh(f.sizes, f.maps, 3, GetParam().tiles, GetParam().method);
  ASSERT_EQ(p.tiles, GetParam().tiles);
  for (std::size_t s = 0; s < f.sizes.size(); ++s) {
    const auto& st = p.sets[s];
    ASSERT_TRUE(st.partitioned) << "set " << s;
    std::vector<int> seen(static_cast<std::size_t>(f.sizes[s]), 0);
    for (int t = 0; t < p.tiles; ++t) {
      const auto& own = st.owned[static_cast<std::size_t>(t)];
      EXPECT_TRUE(std::is_sorted(own.begin(), own.end()));
      for (std::size_t l = 0; l < own.size(); ++l) {
        ++seen[static_cast<std::size_t>(own[l])];
        EXPECT_EQ(st.tile[static_cast<std::size_t>(own[l])], t);
        EXPECT_EQ(st.local[static_cast<std::size_t>(own[l])], static_cast<std::int32_t>(l));
      }
      // The halo, rebuilt from the exports of its sources in order.
      std::vector<std::int32_t> rebuilt;
      for (std::int32_t u : st.sources[static_cast<std::size_t>(t)]) {
        const auto& cons = st.consumers[static_cast<std::size_t>(u)];
        const auto k =
            static_cast<std::size_t>(std::find(cons.begin(), cons.end(), t) - cons.begin());
        ASSERT_LT(k, cons.size());
        for (std::int32_t l : st.exports[static_cast<std::size_t>(u)][k])
          rebuilt.push_back(st.owned[static_cast<std::size_t>(u)][static_cast<std::size_t>(l)]);
      }
      EXPECT_EQ(rebuilt, st.halo[static_cast<std::size_t>(t)]) << "set " << s << " tile " << t;
    }
    for (int n : seen) ASSERT_EQ(n, 1);
  }
  // Halo = exactly the targets outside the tile; local maps name the same elements.
  for (std::size_t mi = 0; mi < f.maps.size(); ++mi) {
    const MeshMap& m = f.maps[mi];
    const auto& from = p.sets[static_cast<std::size_t>(m.from)];
    const auto& to = p.sets[static_cast<std::size_t>(m.to)];
    for (int t = 0; t < p.tiles; ++t) {
      const auto& own = from.owned[static_cast<std::size_t>(t)];
      const auto& local = p.map_local[mi][static_cast<std::size_t>(t)];
      const auto nown = static_cast<std::int32_t>(to.owned[static_cast<std::size_t>(t)].size());
      for (std::size_t l = 0; l < own.size(); ++l)
        for (int i = 0; i < m.arity; ++i) {
          const std::int32_t want = m.indices[static_cast<std::int64_t>(own[l]) * m.arity + i];
          const std::int32_t loc =
              local[l * static_cast<std::size_t>(m.arity) + static_cast<std::size_t>(i)];
          const std::int32_t got =
              loc < nown
                  ? to.owned[static_cast<std::size_t>(t)][static_cast<std::size_t>(loc)]
                  : to.halo[static_cast<std::size_t>(t)][static_cast<std::size_t>(loc - nown)];
          ASSERT_EQ(got, want);
        }
    }
  }
  for (std::size_t s = 0; s < f.sizes.size(); ++s)
    for (int t = 0; t < p.tiles; ++t)
      for (std::int32_t c : p.sets[s].halo[static_cast<std::size_t>(t)]) {
        bool reached = false;
        for (const MeshMap& m : f.maps) {
          if (static_cast<std::size_t>(m.to) != s) continue;
          for (std::int32_t e :
               p.sets[static_cast<std::size_t>(m.from)].owned[static_cast<std::size_t>(t)])
            for (int i = 0; i < m.arity; ++i)
              reached |= m.indices[static_cast<std::int64_t>(e) * m.arity + i] == c;
        }
        ASSERT_TRUE(reached) << "halo element " << c << " of set " << s << " tile " << t
                             << " is not needed";
      }
}

// The serial loop: each edge adds +v to its first cell and -v to its second, in edge order.
std::vector<double> serial_increments(const Fixture& f, const std::vector<double>& v,
                                      std::vector<double> target) {
  for (std::int32_t e = 0; e < f.m.nedge; ++e) {
    target[static_cast<std::size_t>(f.m.ecell[static_cast<std::size_t>(2 * e)])] +=
        v[static_cast<std::size_t>(e)];
    target[static_cast<std::size_t>(f.m.ecell[static_cast<std::size_t>(2 * e + 1)])] -=
        v[static_cast<std::size_t>(e)];
  }
  return target;
}

using Slots = std::vector<std::vector<std::vector<double>>>;  // [tile][k][slot]

// The inc-combine tasks: each owner adds its shared targets' slots in the plan's order.
void combine_slots(const tessera::partition::MeshPartition& p,
                   const tessera::partition::IncrementPlan& plan, const Slots& slots,
                   std::vector<double>& target) {
  const auto& cells = p.sets[3];
  for (int u = 0; u < p.tiles; ++u) {
    const codes::TargetPlan c(plan.combine[static_cast<std::size_t>(u)].data());
    for (std::int32_t j = 0; j < c.m; ++j) {
      double& x = target[static_cast<std::size_t>(
          cells.owned[static_cast<std::size_t>(u)][static_cast<std::size_t>(c.targets[j])])];
      for (std::int32_t q = c.starts[j]; q < c.starts[j + 1]; ++q) {
        const auto j_source = static_cast<std::size_t>(codes::slot_buffer(c.entries[q]));
        const std::int32_t src = plan.sources[static_cast<std::size_t>(u)][j_source];
        const std::int32_t k = plan.source_buffer[static_cast<std::size_t>(u)][j_source];
        x += slots[static_cast<std::size_t>(src)][static_cast<std::size_t>(k)]
                  [static_cast<std::size_t>(codes::slot_offset(c.entries[q]))];
      }
    }
  }
}

// The increments through a plan, as the tasks execute them. On CPU workers (!device) each tile
// visits its edges in order, updating its own cells in place; the CUDA schedule (device) runs
// every edge at once (emulated here in reverse order) into local slots, then adds each cell's
// local slots in order. Then the owners combine the shared cells' slots.
std::vector<double> planned_increments(const tessera::partition::MeshPartition& p,
                                       const tessera::partition::IncrementPlan& plan,
                                       const std::vector<double>& v, std::vector<double> target,
                                       bool device = false) {
  const auto& edges = p.sets[1];
  const auto& cells = p.sets[3];
  Slots slots(static_cast<std::size_t>(p.tiles));
  for (int t = 0; t < p.tiles; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    for (std::int64_t n : plan.slot_counts[ts])
      slots[ts].emplace_back(static_cast<std::size_t>(n), -0.0);
    std::vector<double> local(static_cast<std::size_t>(plan.local_slots[ts]), -0.0);
    const auto& own = edges.owned[ts];
    const auto& code_of = device ? plan.device_codes[ts] : plan.codes[ts];
    for (std::size_t step = 0; step < own.size(); ++step) {
      const std::size_t l = device ? own.size() - 1 - step : step;
      for (int i = 0; i < 2; ++i) {
        const std::int32_t code = code_of[2 * l + static_cast<std::size_t>(i)];
        double* to = code < 0 ? &slots[ts][static_cast<std::size_t>(codes::slot_buffer(code))]
                                      [static_cast<std::size_t>(codes::slot_offset(code))]
                     : device ? &local[static_cast<std::size_t>(code)]
                              : &target[static_cast<std::size_t>(
                                    cells.owned[ts][static_cast<std::size_t>(code)])];
        if (i == 0)
          *to += v[static_cast<std::size_t>(own[l])];
        else
          *to -= v[static_cast<std::size_t>(own[l])];
      }
    }
    if (!device) continue;
    const codes::TargetPlan g(plan.local_gather[ts].data());
    for (std::int32_t j = g.m; j-- > 0;) {
      double& x =
          target[static_cast<std::size_t>(cells.owned[ts][static_cast<std::size_t>(g.targets[j])])];
      for (std::int32_t q = g.starts[j]; q < g.starts[j + 1]; ++q)
        x += local[static_cast<std::size_t>(g.entries[q])];
    }
  }
  combine_slots(p, plan, slots, target);
  return target;
}

TEST_P(MeshPartition, IncrementPlanAddsInSerialOrderAndReversingTheOrderChangesBits) {
  Fixture f;
  const auto p =
      tessera::partition::partition_mesh(f.sizes, f.maps, 3, GetParam().tiles, GetParam().method);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(f.m.nedge)),
      start(static_cast<std::size_t>(f.m.ncell));
  for (double& x : v) x = dist(rng) * 1e3;
  for (double& x : start) x = dist(rng);
  const auto want = serial_increments(f, v, start);
  const auto got =
      planned_increments(p, tessera::partition::plan_increments(p, f.maps[1], 3u), v, start);
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(double)));
  const auto device =
      planned_increments(p, tessera::partition::plan_increments(p, f.maps[1], 3u), v, start, true);
  EXPECT_EQ(0, std::memcmp(device.data(), want.data(), want.size() * sizeof(double)))
      << "the CUDA schedule";
  if (p.tiles > 1) {  // the mutation: the same slots added in reverse order give other bits
    const auto reversed = planned_increments(
        p, tessera::partition::plan_increments(p, f.maps[1], 3u, true), v, start);
    EXPECT_NE(0, std::memcmp(reversed.data(), want.data(), want.size() * sizeof(double)));
  }
}

INSTANTIATE_TEST_SUITE_P(Cuts, MeshPartition,
                         testing::Values(Cut{MeshMethod::Block, 1}, Cut{MeshMethod::Block, 3},
                                         Cut{MeshMethod::Metis, 4}, Cut{MeshMethod::Metis, 7}),
                         [](const testing::TestParamInfo<Cut>& info) {
                           return std::string(info.param.method == MeshMethod::Metis ? "metis"
                                                                                     : "block") +
                                  std::to_string(info.param.tiles);
                         });

TEST(MeshPartitionMetis, TilesAreBalancedAndCutFewerEdgesThanBlocks) {
  Fixture f;
  f.m = apps::airfoil::generate_mesh(20, 30);
  f.sizes = {f.m.nnode, f.m.nedge, f.m.nbedge, f.m.ncell};
  f.maps = {{1, 0, 2, f.m.edge.data()},
            {1, 3, 2, f.m.ecell.data()},
            {2, 0, 2, f.m.bedge.data()},
            {2, 3, 1, f.m.becell.data()},
            {3, 0, 4, f.m.cell.data()}};
  const auto metis = tessera::partition::partition_mesh(f.sizes, f.maps, 3, 8, MeshMethod::Metis);
  const auto block = tessera::partition::partition_mesh(f.sizes, f.maps, 3, 8, MeshMethod::Block);
  for (const auto& own : metis.sets[3].owned)
    EXPECT_NEAR(static_cast<double>(own.size()), f.m.ncell / 8.0, 0.05 * f.m.ncell / 8.0);
  auto cut = [&](const tessera::partition::MeshPartition& p) {
    int n = 0;
    for (std::int32_t e = 0; e < f.m.nedge; ++e)
      n += p.sets[3].tile[static_cast<std::size_t>(f.m.ecell[static_cast<std::size_t>(2 * e)])] !=
           p.sets[3].tile[static_cast<std::size_t>(f.m.ecell[static_cast<std::size_t>(2 * e + 1)])];
    return n;
  };
  EXPECT_LT(cut(metis), cut(block));
  // Deterministic: the same input gives the same tiles (every rank computes them).
  EXPECT_EQ(
      tessera::partition::partition_mesh(f.sizes, f.maps, 3, 8, MeshMethod::Metis).sets[3].tile,
      metis.sets[3].tile);
}

TEST(MeshColouring, NoTwoElementsOfOneColourShareATarget) {
  const apps::airfoil::Mesh m = apps::airfoil::generate_mesh(6, 8);
  const auto colour = tessera::partition::colour_elements(m.nedge, {{2, m.ecell.data(), m.ncell}});
  std::map<std::pair<int, int>, int> used;  // (colour, cell) -> edges
  for (std::int32_t e = 0; e < m.nedge; ++e)
    for (int i = 0; i < 2; ++i) {
      const std::pair<int, int> key(colour[static_cast<std::size_t>(e)],
                                    m.ecell[static_cast<std::size_t>(2 * e + i)]);
      ASSERT_EQ(++used[key], 1);
    }
  EXPECT_LE(*std::max_element(colour.begin(), colour.end()), 7);  // a quad mesh needs few colours
}

TEST(MeshConflicts, AMapReachingATargetTwiceIsNamed) {
  const std::vector<std::int32_t> injective{0, 1, 2, 3}, shared{0, 1, 1, 2};
  EXPECT_EQ(tessera::partition::first_conflict({0, 1, 2, injective.data()}, 2, 3u), "");
  EXPECT_EQ(tessera::partition::first_conflict({0, 1, 2, shared.data()}, 2, 3u),
            "element 0 (index 1) and element 1 (index 0) both reach target 1");
  EXPECT_EQ(tessera::partition::first_conflict({0, 1, 2, shared.data()}, 2, 1u),
            "");  // index 0 only
}

}  // namespace
