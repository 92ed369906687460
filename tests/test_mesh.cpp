// Mesh loops against plain serial loops, bitwise, for every access mode, across schedulers,
// worker counts and tilings (METIS and blocks); every validation error; the increment order
// (a mutation that reverses it must be caught); Airfoil against its serial reference.
#include <gmock/gmock.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>

#include <tessera/mesh.hpp>

#include "apps/airfoil/solver.hpp"
#include "core/mesh/mesh_impl.hpp"
#include "tests/reference/airfoil_reference.hpp"
#include "tests/test_support.hpp"

namespace {

using tessera::Access;
using tessera::arg;
using testing::HasSubstr;

// At namespace scope: nvcc cannot instantiate kernels on function-local types.
struct Scale {  // direct Read, Write, ReadWrite and a global read
  TESSERA_HD void operator()(const double* in, double* out, double* acc,
                             const double* factor) const {
    for (int k = 0; k < 2; ++k) {
      out[k] = in[k] * *factor;
      acc[k] += in[k];
    }
  }
};
struct Centroid {  // indirect reads through a map of arity 4
  TESSERA_HD void operator()(const double* a, const double* b, const double* c, const double* d,
                             double* out) const {
    for (int k = 0; k < 2; ++k) out[k] = 0.25 * (a[k] + b[k] + c[k] + d[k]);
  }
};
struct Flux {  // indirect increments at both ends of an edge
  TESSERA_HD void operator()(const double* w, const double* x1, const double* x2, double* r1,
                             double* r2) const {
    const double f = *w * (x1[0] - x2[1]) + 1e-3 * x1[1];
    r1[0] += f;
    r2[0] -= f;
    r1[1] += 0.5 * f;
    r2[1] -= f * f;
  }
};
struct Swap {  // indirect write and read-write through an injective map
  TESSERA_HD void operator()(double* first, double* second, const std::int32_t* n) const {
    const double s = second[0];
    second[0] = first[0] + s + *n;
    first[0] = 2.0 * s;
  }
};
struct Norms {  // global reductions
  TESSERA_HD void operator()(const double* v, double* sum, double* lo, double* hi,
                             std::int32_t* count) const {
    for (int k = 0; k < 2; ++k) {
      *sum += v[k] * v[k];
      if (v[k] < *lo) *lo = v[k];
      if (v[k] > *hi) *hi = v[k];
    }
    *count += v[0] > 0 ? 1 : 0;
  }
};
template <int N>
struct Moments {  // a global of N values reduced (N doubles: 4 fit a task's local, 6 do not)
  TESSERA_HD void operator()(const double* v, const double* w, double* m) const {
    for (int k = 0; k < N; ++k) m[k] += v[k % 2] * w[k % 4] * (k + 1);
  }
};
struct Nothing {
  TESSERA_HD void operator()(const double*) const {}
};
struct Nothing2 {
  TESSERA_HD void operator()(const double*, const double*) const {}
};

struct Cut {
  tessera::Partitioner method;
  int tiles;
};

struct Case {
  test::Config config;
  Cut cut;
};

void PrintTo(const Case& c, std::ostream* os) {
  test::PrintTo(c.config, os);
  *os << ", " << (c.cut.method == tessera::Partitioner::Metis ? "METIS " : "blocks ")
      << c.cut.tiles;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const test::Config& c : test::configs())
    for (Cut cut : {Cut{tessera::Partitioner::Block, 1}, Cut{tessera::Partitioner::Block, 3},
                    Cut{tessera::Partitioner::Metis, 5}})
      out.push_back({c, cut});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.config.scheduler) + "_" + std::to_string(info.param.config.cpus) +
         "cpu_" + (info.param.cut.method == tessera::Partitioner::Metis ? "metis" : "block") +
         std::to_string(info.param.cut.tiles);
}

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

template <class T>
void expect_bits(const std::vector<T>& got, const std::vector<T>& want) {
  test::expect_bitwise_equal(got, want);
}

// A small airfoil mesh as a general unstructured mesh: nodes, edges, cells and their maps,
// plus "pairs" of cells (2k, 2k+1): a map that reaches each cell at most once.
struct SmallMesh {
  apps::airfoil::Mesh m = apps::airfoil::generate_mesh(6, 8);
  tessera::Set nodes{m.nnode, "nodes"}, edges{m.nedge, "edges"}, cells{m.ncell, "cells"},
      pairs{m.ncell / 2, "pairs"};
  tessera::Map pedge{edges, nodes, 2, m.edge, "pedge"}, pecell{edges, cells, 2, m.ecell, "pecell"},
      pcell{cells, nodes, 4, m.cell, "pcell"};
  std::vector<std::int32_t> pair_cells = [&] {
    std::vector<std::int32_t> v;
    for (std::int32_t k = 0; k < m.ncell / 2; ++k) v.insert(v.end(), {2 * k, 2 * k + 1});
    return v;
  }();
  tessera::Map ppair{pairs, cells, 2, pair_cells, "ppair"};
};

class MeshLoops : public testing::TestWithParam<Case> {
 protected:
  tessera::Runtime rt{test::options(GetParam().config)};
  SmallMesh s;
  void partition() {
    tessera::partition_mesh(s.cells, GetParam().cut.tiles, GetParam().cut.method);
  }
};

TEST_P(MeshLoops, DirectReadWriteReadWriteAndGlobalRead) {
  const auto in = random_values(2 * static_cast<std::size_t>(s.m.ncell), 1);
  const auto acc0 = random_values(in.size(), 2);
  tessera::Dat<double> din(s.cells, 2, in, "in"), dout(s.cells, 2, "out"),
      dacc(s.cells, 2, acc0, "acc");
  tessera::Global<double> factor("factor", 1.5);
  partition();
  tessera::par_loop(Scale{}, "scale", s.cells, arg(din, 2, Access::Read),
                    arg(dout, 2, Access::Write), arg(dacc, 2, Access::ReadWrite),
                    arg(factor, 1, Access::Read));
  std::vector<double> out(in.size()), acc = acc0;
  for (std::int32_t c = 0; c < s.m.ncell; ++c)
    Scale{}(&in[2 * c], &out[2 * c], &acc[2 * c], &factor.values()[0]);
  expect_bits(dout.gather(), out);
  expect_bits(dacc.gather(), acc);
  expect_bits(din.gather(), in);
}

TEST_P(MeshLoops, IndirectReadsThroughHalos) {
  tessera::Dat<double> x(s.nodes, 2, s.m.x, "x"), centre(s.cells, 2, "centre");
  partition();
  tessera::par_loop(Centroid{}, "centroid", s.cells, arg(x, s.pcell, 0, 2, Access::Read),
                    arg(x, s.pcell, 1, 2, Access::Read), arg(x, s.pcell, 2, 2, Access::Read),
                    arg(x, s.pcell, 3, 2, Access::Read), arg(centre, 2, Access::Write));
  std::vector<double> want(2 * static_cast<std::size_t>(s.m.ncell));
  for (std::int32_t c = 0; c < s.m.ncell; ++c) {
    const auto* n = &s.m.cell[4 * static_cast<std::size_t>(c)];
    Centroid{}(&s.m.x[2 * n[0]], &s.m.x[2 * n[1]], &s.m.x[2 * n[2]], &s.m.x[2 * n[3]],
               &want[2 * c]);
  }
  expect_bits(centre.gather(), want);
}

// The serial loop of Flux over the edges, increments straight into the cells, in edge order.
std::vector<double> serial_flux(const SmallMesh& s, const std::vector<double>& w,
                                const std::vector<double>& x, std::vector<double> r, int times) {
  for (int rep = 0; rep < times; ++rep)
    for (std::int32_t e = 0; e < s.m.nedge; ++e) {
      const auto* n = &s.m.edge[2 * static_cast<std::size_t>(e)];
      const auto* c = &s.m.ecell[2 * static_cast<std::size_t>(e)];
      Flux{}(&w[e], &x[2 * n[0]], &x[2 * n[1]], &r[2 * c[0]], &r[2 * c[1]]);
    }
  return r;
}

void flux_loop(SmallMesh& s, tessera::Dat<double>& w, tessera::Dat<double>& x,
               tessera::Dat<double>& r) {
  tessera::par_loop(Flux{}, "flux", s.edges, arg(w, 1, Access::Read),
                    arg(x, s.pedge, 0, 2, Access::Read), arg(x, s.pedge, 1, 2, Access::Read),
                    arg(r, s.pecell, 0, 2, Access::Inc), arg(r, s.pecell, 1, 2, Access::Inc));
}

TEST_P(MeshLoops, IndirectIncrementsEqualTheSerialLoop) {
  const auto w = random_values(static_cast<std::size_t>(s.m.nedge), 3);
  const auto r0 = random_values(2 * static_cast<std::size_t>(s.m.ncell), 4);
  tessera::Dat<double> dw(s.edges, 1, w, "w"), x(s.nodes, 2, s.m.x, "x"), r(s.cells, 2, r0, "r");
  partition();
  for (int rep = 0; rep < 3; ++rep) flux_loop(s, dw, x, r);
  expect_bits(r.gather(), serial_flux(s, w, s.m.x, r0, 3));
}

TEST_P(MeshLoops, IndirectWriteAndReadWriteThroughAMapReachingEachElementOnce) {
  const auto v0 = random_values(static_cast<std::size_t>(s.m.ncell), 5);
  std::vector<std::int32_t> n(static_cast<std::size_t>(s.m.ncell / 2));
  for (std::size_t k = 0; k < n.size(); ++k) n[k] = static_cast<std::int32_t>(k % 7);
  tessera::Dat<double> v(s.cells, 1, v0, "v");
  tessera::Dat<std::int32_t> dn(s.pairs, 1, n, "n");
  partition();
  tessera::par_loop(Swap{}, "swap", s.pairs, arg(v, s.ppair, 0, 1, Access::Write),
                    arg(v, s.ppair, 1, 1, Access::ReadWrite), arg(dn, 1, Access::Read));
  std::vector<double> want = v0;
  for (std::int32_t k = 0; k < s.m.ncell / 2; ++k) Swap{}(&want[2 * k], &want[2 * k + 1], &n[k]);
  expect_bits(v.gather(), want);
}

// The serial loop of Norms over the cells, `reps` times: each element reduces into its own
// value (from the identity); per loop the sum is the exact sum of the running value and the
// elements' (reference::fsum), min, max and the integer count fold in element order.
struct NormsResult {
  double sum, lo, hi;
  std::int32_t count;
};
NormsResult serial_norms(const std::vector<double>& v, std::int32_t ncell, int reps,
                         NormsResult r) {
  for (int rep = 0; rep < reps; ++rep) {
    std::vector<double> sums{r.sum};
    for (std::int32_t c = 0; c < ncell; ++c) {
      double e_sum = -0.0, e_lo = std::numeric_limits<double>::infinity(), e_hi = -e_lo;
      std::int32_t e_count = 0;
      Norms{}(&v[2 * static_cast<std::size_t>(c)], &e_sum, &e_lo, &e_hi, &e_count);
      sums.push_back(e_sum);
      r.lo = e_lo < r.lo ? e_lo : r.lo;
      r.hi = e_hi > r.hi ? e_hi : r.hi;
      r.count += e_count;
    }
    r.sum = reference::fsum(sums);
  }
  return r;
}

TEST_P(MeshLoops, GlobalSumMinMaxFoldInElementOrder) {
  const auto v = random_values(2 * static_cast<std::size_t>(s.m.ncell), 6);
  tessera::Dat<double> dv(s.cells, 2, v, "v");
  tessera::Global<double> sum("sum", 0.25), lo("lo", 0.0), hi("hi", 0.0);
  tessera::Global<std::int32_t> count("count", 3);
  partition();
  for (int rep = 0; rep < 2; ++rep)  // two pending reductions into each global, folded in turn
    tessera::par_loop(Norms{}, "norms", s.cells, arg(dv, 2, Access::Read), arg(sum, 1, Access::Inc),
                      arg(lo, 1, Access::Min), arg(hi, 1, Access::Max), arg(count, 1, Access::Inc));
  const NormsResult want = serial_norms(v, s.m.ncell, 2, {0.25, 0.0, 0.0, 3});
  expect_bits(std::vector<double>{sum.value(), lo.value(), hi.value()},
              {want.sum, want.lo, want.hi});
  EXPECT_EQ(count.value(), want.count);
  sum.set(1.0);  // a set value replaces what the loops reduced
  EXPECT_EQ(sum.value(), 1.0);
}

// Globals of up to 32 bytes reach the kernel as task locals; larger ones run element by
// element with their contributions in memory. Both give the exact sum of the start value and
// the serial loop's contributions.
template <int N>
void expect_moments(const SmallMesh& s, const std::vector<double>& v,
                    const tessera::Dat<double>& dv) {
  const std::vector<double> w{0.5, -1.25, 2.0, 0.75}, m0(N, 0.125);
  tessera::Global<double> gw("w", w), gm("m", m0);
  tessera::par_loop(Moments<N>{}, "moments" + std::to_string(N), s.cells, arg(dv, 2, Access::Read),
                    arg(gw, 4, Access::Read), arg(gm, N, Access::Inc));
  std::vector<std::vector<double>> terms(N, {0.125});  // per value: the start, every element's
  for (std::int32_t c = 0; c < s.m.ncell; ++c) {
    std::vector<double> e(N, -0.0);
    Moments<N>{}(&v[2 * static_cast<std::size_t>(c)], w.data(), e.data());
    for (int k = 0; k < N; ++k)
      terms[static_cast<std::size_t>(k)].push_back(e[static_cast<std::size_t>(k)]);
  }
  std::vector<double> want;
  for (const auto& t : terms) want.push_back(reference::fsum(t));  // exact, rounded once
  expect_bits(gm.values(), want);
}

TEST_P(MeshLoops, SmallAndLargeGlobalsEqualTheSerialLoop) {
  const auto v = random_values(2 * static_cast<std::size_t>(s.m.ncell), 7);
  tessera::Dat<double> dv(s.cells, 2, v, "v");
  partition();
  expect_moments<4>(s, v, dv);
  expect_moments<6>(s, v, dv);
}

TEST_P(MeshLoops, AirfoilEqualsItsSerialReferenceBitwise) {
  const apps::airfoil::Mesh m = apps::airfoil::generate_mesh(5, 8);
  apps::airfoil::Solver solver(m, GetParam().cut.tiles, GetParam().cut.method);
  reference::Airfoil ref(m);
  for (int iter = 1; iter <= 6; ++iter) {
    solver.iterate();
    ref.iterate();
    expect_bits(std::vector<double>{solver.rms(), solver.maxerr()}, {ref.rms(), ref.maxerr()});
  }
  expect_bits(solver.q(), ref.q());
}

INSTANTIATE_TEST_SUITE_P(Configs, MeshLoops, testing::ValuesIn(cases()), case_name);

// The mutation check: adding shared targets' increments in another order changes the bits,
// and the comparison with the serial loop sees it.
TEST(MeshIncrementOrder, ReversedCombinationOrderIsCaught) {
  tessera::Runtime rt(test::options({"eager", 2}));
  SmallMesh s;
  const auto w = random_values(static_cast<std::size_t>(s.m.nedge), 3);
  const auto r0 = random_values(2 * static_cast<std::size_t>(s.m.ncell), 4);
  tessera::Dat<double> dw(s.edges, 1, w, "w"), x(s.nodes, 2, s.m.x, "x"), r(s.cells, 2, r0, "r");
  tessera::partition_mesh(s.cells, 5, tessera::Partitioner::Metis);
  tessera::detail::reverse_increment_order_for_testing(true);
  for (int rep = 0; rep < 3; ++rep) flux_loop(s, dw, x, r);
  tessera::detail::reverse_increment_order_for_testing(false);
  const auto got = r.gather();
  const auto want = serial_flux(s, w, s.m.x, r0, 3);
  EXPECT_NE(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(double)))
      << "reversing the combination order left every bit unchanged: the test could not fail";
}

// ---- the CUDA schedule, emulated on CPU workers ----------------------------------------
// A loop kind that declares a CUDA entry makes the library give its tasks the device buffers
// (local slots, device codes, local gathers). StarPU without CUDA runs the CPU entry, here the
// CUDA schedule done on the CPU: start values, every element in reverse order (on a GPU they run
// at once), then each target's local slots added in order. It must give the serial bits.
template <class F, class... T>
struct DeviceSchedule {
  using L = tessera::detail::MeshLoop<F, T...>;
  using W = tessera::detail::ArgWords;
  template <class U>
  static void start(typename L::Args& a, int i, void** buffers, void* const* base) {
    std::int64_t* d = a.frame.arg(i);
    tessera::detail::start_slots<U>(d, buffers, base, a.frame.elements());
    if (d[W::kPath] == static_cast<std::int64_t>(tessera::detail::ArgPath::IndirectWritten) &&
        d[W::kAccess] == static_cast<std::int64_t>(tessera::detail::ArgAccess::Inc)) {
      U* local = static_cast<U*>(base[d[W::kLocalSlots]]);
      const auto n = static_cast<std::int64_t>(
          tessera::detail::buffer_elements(buffers, static_cast<int>(d[W::kLocalSlots])));
      for (std::int64_t k = 0; k < n * d[W::kDim]; ++k)
        local[k] = tessera::detail::increment_start<U>();
    }
  }
  template <class U>
  static void gather(const std::int64_t* d, void* const* base, std::set<std::int64_t>& done) {
    if (d[W::kPath] != static_cast<std::int64_t>(tessera::detail::ArgPath::IndirectWritten) ||
        d[W::kAccess] != static_cast<std::int64_t>(tessera::detail::ArgAccess::Inc) ||
        !done.insert(d[W::kLocalGather]).second)
      return;
    const tessera::detail::mesh_codes::TargetPlan plan(
        static_cast<const std::int32_t*>(base[d[W::kLocalGather]]));
    ASSERT_EQ(plan.m, d[W::kLocalTargets]);
    U* own = static_cast<U*>(base[d[W::kOwned]]);
    const U* slots = static_cast<const U*>(base[d[W::kLocalSlots]]);
    for (std::int32_t j = plan.m; j-- > 0;)  // targets in any order; each one's slots in order
      for (std::int32_t q = plan.starts[j]; q < plan.starts[j + 1]; ++q)
        for (std::int64_t k = 0; k < d[W::kDim]; ++k)
          own[plan.targets[j] * d[W::kDim] + k] +=
              slots[std::int64_t(plan.entries[q]) * d[W::kDim] + k];
  }
  static void cpu(void** buffers, void* arg) {
    typename L::Args a = *static_cast<const typename L::Args*>(arg);
    std::vector<void*> base(static_cast<std::size_t>(a.frame.buffers()));
    for (std::size_t k = 0; k < base.size(); ++k)
      base[k] = tessera::detail::buffer_data(buffers, static_cast<int>(k));
    int i = 0;
    (start<T>(a, i++, buffers, base.data()), ...);
    for (std::int64_t e = a.frame.elements(); e-- > 0;)
      L::template element<true>(a, base.data(), e, typename L::Indices{});
    std::set<std::int64_t> done;
    i = 0;
    (gather<T>(a.frame.arg(i++), base.data(), done), ...);
  }
};

template <class F, class... T, bool... G>
void device_par_loop(const F& kernel, const std::string& name, const tessera::Set& set,
                     const tessera::Arg<T, G>&... args) {
  using L = tessera::detail::MeshLoop<F, T...>;
  const typename L::Args prototype{{}, kernel};
  const tessera::detail::TaskKind kind{
      "loop", tessera::detail::Access::Read, tessera::detail::Access::ReadWrite,
      &DeviceSchedule<F, T...>::cpu, &L::cpu /* marks a CUDA entry */};
  tessera::detail::run_loop(name, *set.storage(), {args.a...}, kind,
                            tessera::detail::LoopBlock::of(prototype));
}

TEST(MeshCudaSchedule, EmulatedOnTheCpuItGivesTheSerialBits) {
  for (Cut cut : {Cut{tessera::Partitioner::Block, 1}, Cut{tessera::Partitioner::Metis, 5}}) {
    tessera::Runtime rt(test::options({"eager", 2}));
    SmallMesh s;
    const auto w = random_values(static_cast<std::size_t>(s.m.nedge), 3);
    const auto r0 = random_values(2 * static_cast<std::size_t>(s.m.ncell), 4);
    const auto v0 = random_values(static_cast<std::size_t>(s.m.ncell), 5);
    std::vector<std::int32_t> n(static_cast<std::size_t>(s.m.ncell / 2), 2);
    tessera::Dat<double> dw(s.edges, 1, w, "w"), x(s.nodes, 2, s.m.x, "x"), r(s.cells, 2, r0, "r"),
        v(s.cells, 1, v0, "v");
    tessera::Dat<std::int32_t> dn(s.pairs, 1, n, "n");
    tessera::Global<double> sum("sum", 0.0), hi("hi", 0.0), lo("lo", 0.0);
    tessera::Global<std::int32_t> count("count", 0);
    tessera::partition_mesh(s.cells, cut.tiles, cut.method);
    for (int rep = 0; rep < 2; ++rep)
      device_par_loop(Flux{}, "flux_device", s.edges, arg(dw, 1, Access::Read),
                      arg(x, s.pedge, 0, 2, Access::Read), arg(x, s.pedge, 1, 2, Access::Read),
                      arg(r, s.pecell, 0, 2, Access::Inc), arg(r, s.pecell, 1, 2, Access::Inc));
    device_par_loop(Swap{}, "swap_device", s.pairs, arg(v, s.ppair, 0, 1, Access::Write),
                    arg(v, s.ppair, 1, 1, Access::ReadWrite), arg(dn, 1, Access::Read));
    device_par_loop(Norms{}, "norms_device", s.cells, arg(r, 2, Access::Read),
                    arg(sum, 1, Access::Inc), arg(lo, 1, Access::Min), arg(hi, 1, Access::Max),
                    arg(count, 1, Access::Inc));
    const auto want_r = serial_flux(s, w, s.m.x, r0, 2);
    expect_bits(r.gather(), want_r);
    std::vector<double> want_v = v0;
    for (std::int32_t k = 0; k < s.m.ncell / 2; ++k)
      Swap{}(&want_v[2 * k], &want_v[2 * k + 1], &n[k]);
    expect_bits(v.gather(), want_v);
    const NormsResult want = serial_norms(want_r, s.m.ncell, 1, {0.0, 0.0, 0.0, 0});
    expect_bits(std::vector<double>{sum.value(), lo.value(), hi.value()},
                {want.sum, want.lo, want.hi});
    EXPECT_EQ(count.value(), want.count);
  }
}

// ---- validation: every error before any task, with the fix named ------------------------

class MeshErrors : public testing::Test {
 protected:
  tessera::Runtime rt{test::options({"eager", 1})};
  SmallMesh s;
  tessera::Dat<double> q{s.cells, 4, "q"}, x{s.nodes, 2, s.m.x, "x"}, r{s.cells, 2, "r"},
      v{s.cells, 1, "v"};
  tessera::Global<double> g{"g", 0.0};
  void partition() { tessera::partition_mesh(s.cells, 3, tessera::Partitioner::Block); }
  template <class F>
  void expect_error(F f, const std::string& text) {
    const std::size_t before = rt.tasks_submitted();
    try {
      f();
      ADD_FAILURE() << "no error; expected one containing: " << text;
    } catch (const tessera::Error& e) { EXPECT_THAT(e.what(), HasSubstr(text)); }
    EXPECT_EQ(rt.tasks_submitted(), before) << "a task was submitted before the error";
  }
};

TEST_F(MeshErrors, MapIndicesOutOfRangeOrMiscounted) {
  expect_error(
      [&] {
        tessera::Map bad(
            s.edges, s.nodes, 2,
            std::vector<std::int32_t>(2 * static_cast<std::size_t>(s.m.nedge), s.m.nnode), "bad");
      },
      "is " + std::to_string(s.m.nnode) + " but set 'nodes' has " + std::to_string(s.m.nnode) +
          " elements; indices must lie in [0, " + std::to_string(s.m.nnode) + ")");
  expect_error(
      [&] {
        tessera::Map bad(s.edges, s.nodes, 2, {0, 1}, "short");
      },
      "needs " + std::to_string(2 * s.m.nedge));
  expect_error(
      [&] {
        tessera::Map bad(s.edges, s.nodes, 2,
                         std::vector<std::int32_t>(2 * static_cast<std::size_t>(s.m.nedge), -1),
                         "neg");
      },
      "indices must lie in [0,");
}

TEST_F(MeshErrors, DatOnTheWrongSetOrThroughTheWrongMap) {
  partition();
  expect_error([&] { tessera::par_loop(Nothing{}, "n", s.edges, arg(x, 2, Access::Read)); },
               "dat 'x' lives on set 'nodes' but the loop runs over set 'edges'; reach it through "
               "a map from 'edges' to 'nodes'");
  expect_error(
      [&] { tessera::par_loop(Nothing{}, "n", s.edges, arg(x, s.pcell, 0, 2, Access::Read)); },
      "map 'pcell' goes from set 'cells' but the loop runs over set 'edges'; use a map from "
      "'edges'");
  expect_error(
      [&] { tessera::par_loop(Nothing{}, "n", s.edges, arg(q, s.pedge, 0, 4, Access::Read)); },
      "map 'pedge' reaches set 'nodes' but dat 'q' lives on set 'cells'; use a map to 'cells'");
  expect_error(
      [&] { tessera::par_loop(Nothing{}, "n", s.edges, arg(q, s.pecell, 2, 4, Access::Read)); },
      "index 2 of map 'pecell' is out of range: it has arity 2; use an index in [0, 2)");
}

TEST_F(MeshErrors, DimensionMismatch) {
  partition();
  expect_error([&] { tessera::par_loop(Nothing{}, "n", s.cells, arg(q, 2, Access::Read)); },
               "argument 1 of loop 'n' expects dim 2 but dat 'q' has 4 values per element; pass 4");
  expect_error([&] { tessera::par_loop(Nothing{}, "n", s.cells, arg(g, 3, Access::Read)); },
               "expects dim 3 but global 'g' holds 1 values; pass 1");
  expect_error([&] { tessera::Dat<double> bad(s.cells, 2, std::vector<double>(5), "bad"); },
               "dat 'bad' has 5 values but set 'cells' needs " + std::to_string(2 * s.m.ncell));
}

TEST_F(MeshErrors, WriteThroughAMapWithConflictingTargets) {
  partition();
  expect_error(
      [&] {
        tessera::par_loop(Nothing2{}, "w", s.edges, arg(r, s.pecell, 0, 2, Access::Write),
                          arg(r, s.pecell, 1, 2, Access::Write));
      },
      "conflicting writes; use Access::Inc to add the contributions");
  expect_error(
      [&] {
        tessera::par_loop(Nothing{}, "w", s.edges, arg(r, s.pecell, 0, 2, Access::ReadWrite));
      },
      "both reach target");
}

TEST_F(MeshErrors, GlobalsWithTheWrongAccessAndDatsWithGlobalOnes) {
  partition();
  expect_error(
      [&] { tessera::par_loop(Nothing{}, "n", s.cells, arg(g, 1, Access::Write)); },
      "a global is read (Access::Read) or reduced (Access::Inc, Access::Min, Access::Max)");
  expect_error([&] { tessera::par_loop(Nothing{}, "n", s.cells, arg(g, 1, Access::ReadWrite)); },
               "a global is read");
  expect_error([&] { tessera::par_loop(Nothing{}, "n", s.cells, arg(v, 1, Access::Max)); },
               "uses dat 'v' with Access::Max, which is for globals");
  expect_error(
      [&] {
        tessera::par_loop(Nothing2{}, "n", s.cells, arg(g, 1, Access::Inc),
                          arg(g, 1, Access::Read));
      },
      "both use global 'g'");
}

TEST_F(MeshErrors, ADatWrittenAndReadInOneLoop) {
  partition();
  expect_error(
      [&] {
        tessera::par_loop(Nothing2{}, "n", s.edges, arg(r, s.pecell, 0, 2, Access::Inc),
                          arg(r, s.pecell, 1, 2, Access::Read));
      },
      "a loop that writes a dat may not also read it through another argument");
  expect_error(
      [&] {
        tessera::par_loop(Nothing2{}, "n", s.edges, arg(r, s.pecell, 0, 2, Access::Inc),
                          arg(r, s.pecell, 0, 2, Access::Inc));
      },
      "both write dat 'r' through map 'pecell' at index 0; pass each (map, index) once");
  expect_error(
      [&] {
        tessera::par_loop(Nothing2{}, "n", s.edges, arg(r, s.pecell, 0, 2, Access::Inc),
                          arg(r, s.pecell, 1, 2, Access::Write));
      },
      "both write dat 'r' (Access::Inc, Access::Write); a loop writes a dat either directly or "
      "through one map");
}

TEST_F(MeshErrors, PartitioningAndLoopNames) {
  expect_error([&] { tessera::par_loop(Nothing{}, "n", s.cells, arg(v, 1, Access::Read)); },
               "which is not partitioned; call tessera::partition_mesh(set, tiles)");
  expect_error([&] { tessera::partition_mesh(s.cells, -1); },
               "the tile count must lie in [1, " + std::to_string(s.m.ncell) +
                   "] (at least one tile per rank, at most one per element of 'cells'), or 0 "
                   "for the library's choice");
  partition();
  expect_error([&] { tessera::partition_mesh(s.edges, 2); }, "is already partitioned");
  expect_error(
      [&] {
        tessera::Map late(s.cells, s.nodes, 1,
                          std::vector<std::int32_t>(static_cast<std::size_t>(s.m.ncell), 0),
                          "late");
      },
      "is declared after partition_mesh cut set");
  expect_error([&] { tessera::par_loop(Nothing{}, "bad name", s.cells, arg(v, 1, Access::Read)); },
               "may contain only letters, digits");
}

// ---- the mesh file ------------------------------------------------------------------------

TEST(AirfoilMesh, GeneratedMeshHasOp2sCountsAndRoundTripsThroughTheFileFormat) {
  const apps::airfoil::Mesh m = apps::airfoil::generate_mesh(400, 600);
  EXPECT_EQ(m.nnode, 721801);
  EXPECT_EQ(m.ncell, 720000);
  EXPECT_EQ(m.nedge, 1438600);
  EXPECT_EQ(m.nbedge, 2800);
  const apps::airfoil::Mesh small = apps::airfoil::generate_mesh(3, 4);
  const std::string path = testing::TempDir() + "tessera_new_grid.dat";
  apps::airfoil::write_mesh(small, path);
  const apps::airfoil::Mesh back = apps::airfoil::read_mesh(path);
  EXPECT_EQ(back.x, small.x);
  EXPECT_EQ(back.cell, small.cell);
  EXPECT_EQ(back.edge, small.edge);
  EXPECT_EQ(back.ecell, small.ecell);
  EXPECT_EQ(back.bedge, small.bedge);
  EXPECT_EQ(back.becell, small.becell);
  EXPECT_EQ(back.bound, small.bound);
  const auto read_error = [&](const char* text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text, f);
    std::fclose(f);
    try {
      apps::airfoil::read_mesh(path);
    } catch (const tessera::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  // Too short for its header's counts: refused before anything is allocated for them.
  EXPECT_THAT(read_error(" 4 1 1 1\n 0 0\n 1 0\n"),
              HasSubstr("its header promises 4 nodes, 1 cells, 1 edges and 1 boundary edges"));
  // Long enough, but not numbers where node 2 should be.
  EXPECT_THAT(read_error(" 4 1 1 1\n 0 0\n 1 0\n a b c d e f g h i j k l m n o p q r s t u v\n"),
              HasSubstr("node 2 lacks 2 coordinates"));
  EXPECT_THROW(apps::airfoil::read_mesh(path + ".missing"), tessera::Error);
}

// OP2's residual falls as the flow settles; so does this one's.
TEST(AirfoilRun, RmsFallsOverTheIterations) {
  tessera::Runtime rt(test::options({"dmda", 2}));
  apps::airfoil::Solver solver(apps::airfoil::generate_mesh(8, 12), 4, tessera::Partitioner::Metis);
  std::vector<double> rms;
  for (int iter = 1; iter <= 300; ++iter) {
    solver.iterate();
    if (iter % 100 == 0) rms.push_back(solver.rms());
  }
  EXPECT_GT(rms[0], rms[1]);
  EXPECT_GT(rms[1], rms[2]);
}

}  // namespace
