// Every task kind run on a CUDA worker only (no CPU worker exists, so StarPU cannot fall back)
// gives the CPU result and the serial reference: halo-pack, boundary, constant-ghosts,
// interior and interior+halo (a mixing stencil and the three application stencils), and the
// sum, min, max and sum-of reductions. A trace of each CUDA run proves which kinds ran and where.
//
// Comparison: bitwise when device code was compiled without FMA contraction (tests get
// nvcc --fmad=false and g++ -ffp-contract=off, TESSERA_TEST_NO_FMA); otherwise a relative
// tolerance of 1e-12 (double) or 1e-5 (float), integers always exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <type_traits>

#include "apps/heat3d/heat3d.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"
#include "apps/life/life.hpp"
#include "tests/cuda/cuda_available.hpp"
#include "tests/cuda/cuda_options.hpp"
#include "tests/reference/reference.hpp"
#include "tests/stencil_cases.hpp"
#include "tests/test_support.hpp"

namespace {

using tessera::Boundaries;
using tessera::Boundary;
using tessera::Index;
using test::distinct_dirichlet3;
using test::domain;
using test::initial;
using test::Mix;
using test::values_of;

struct Energy {
  TESSERA_HD double operator()(double v) const { return v * v + 0.5; }
};

// Equal bitwise without FMA contraction, else within the stated tolerance.
template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  SCOPED_TRACE(what);
#if TESSERA_TEST_NO_FMA
  test::expect_bitwise_equal(got, want);
#else
  if constexpr (!std::is_floating_point_v<T>) {
    test::expect_bitwise_equal(got, want);
  } else {
    const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      if (std::abs(double(got[i]) - double(want[i])) > tol * (1 + std::abs(double(want[i])))) {
        ADD_FAILURE() << "first difference at flat index " << i << ": " << got[i] << " vs "
                      << want[i];
        return;
      }
  }
#endif
}

void expect_same_value(double got, double want, const char* what) {
#if TESSERA_TEST_NO_FMA
  EXPECT_EQ(got, want) << what;
#else
  EXPECT_NEAR(got, want, 1e-12 * (1 + std::abs(want))) << what;
#endif
}

tessera::Options cpu_only() { return test::cpu_workers_only(); }

using test::cuda_only;
using test::kinds_on_cuda;

class OnCudaWorker : public testing::TestWithParam<const char*> {};

// Runs `steps` of F on a single-input field under `options` and gathers the result.
template <class T, int D, class F>
std::vector<T> run_steps(const tessera::Options& options, const tessera::Grid<D>& grid,
                         const Boundaries<D>& bc, const tessera::Stencil<D>& shape_of, F f,
                         T (*init)(Index<D>), int steps) {
  tessera::Runtime rt(options);
  tessera::Field<T, D> u(grid, shape_of.radius(), bc, "u"),
      next(grid, shape_of.radius(), bc, "next");
  u.fill(init);
  tessera::Stencil<D> stencil = shape_of;
  for (int s = 0; s < steps; ++s) {
    stencil.apply(f, tessera::in(u), tessera::out(next));
    tessera::swap(u, next);
  }
  return u.gather();
}

// The kinds that ran on the CUDA worker, with exchange tasks of their own and with the
// exchanges inside the interior tasks (the default).
struct CudaKinds {
  std::map<std::string, int> separate, fused;
};

// CUDA-only result == CPU-only result == reference, for one stencil configuration, with the
// exchanges in tasks of their own and inside the interior tasks.
template <class T, int D, class F>
CudaKinds expect_cuda_matches(const char* scheduler, const tessera::Grid<D>& grid,
                              const Boundaries<D>& bc, const tessera::Stencil<D>& stencil, F f,
                              T (*init)(Index<D>), int steps = 3) {
  const std::vector<T> cpu = run_steps<T>(cpu_only(), grid, bc, stencil, f, init, steps);
  reference::RefField<T, D> ref{values_of<T>(grid, init), bc};
  for (int s = 0; s < steps; ++s) {
    std::vector<T> out(ref.values.size());
    reference::apply(domain(grid), stencil.radius(), f, std::make_tuple(&ref),
                     std::make_tuple(&out));
    ref.values = out;
  }
  CudaKinds kinds;
  for (bool fused : {false, true}) {
    SCOPED_TRACE(fused ? "exchanges inside the interior tasks" : "exchange tasks of their own");
    tessera::Options o = cuda_only(scheduler);
    o.fused_exchange = fused;
    const std::vector<T> gpu = run_steps<T>(o, grid, bc, stencil, f, init, steps);
    (fused ? kinds.fused : kinds.separate) = kinds_on_cuda();
    expect_same(gpu, cpu, "CUDA worker vs CPU worker");
    expect_same(gpu, ref.values, "CUDA worker vs serial reference");
  }
  EXPECT_GT(kinds.separate.count("interior"), 0u);
  EXPECT_GT(kinds.fused.count("interior+halo"), 0u);
  return kinds;
}

TEST_P(OnCudaWorker, HaloPackAndConstantGhostsWithDirichletFaces) {
  tessera::Stencil<3> star("cuda-mix-star", tessera::Shape::Star, 1);
  const CudaKinds kinds = expect_cuda_matches<double, 3>(
      GetParam(), tessera::Grid<3>({12, 10, 9}, {4, 5, 3}), distinct_dirichlet3(), star,
      Mix<double, 3, 1, false>{}, &initial<double, 3>);
  EXPECT_GT(kinds.separate.count("halo-pack"), 0u);
  EXPECT_GT(kinds.separate.count("constant-ghosts"), 0u);
  EXPECT_GT(kinds.fused.count("halo-pack"), 0u);  // the first exchanges'
  EXPECT_GT(kinds.fused.count("constant-ghosts"), 0u);
}

TEST_P(OnCudaWorker, BoundaryTasksWithNeumannAndPeriodicFacesBoxRadiusTwo) {
  Boundaries<3> bc;
  bc.set(0, 0, Boundary::periodic()).set(0, 1, Boundary::periodic());
  bc.set(1, 0, Boundary::neumann()).set(1, 1, Boundary::neumann());
  bc.set(2, 0, Boundary::dirichlet(0.25)).set(2, 1, Boundary::neumann());
  tessera::Stencil<3> box("cuda-mix-box2", tessera::Shape::Box, 2);
  const CudaKinds kinds = expect_cuda_matches<double, 3>(
      GetParam(), tessera::Grid<3>({11, 10, 9}, {4, 5, 3}, {true, false, false}), bc, box,
      Mix<double, 3, 2, true>{}, &initial<double, 3>);
  EXPECT_GT(kinds.separate.count("boundary"), 0u);
  EXPECT_GT(kinds.separate.count("halo-pack"), 0u);
}

TEST_P(OnCudaWorker, SmallElementTypesIn2D) {
  Boundaries<2> bc = Boundaries<2>::all(Boundary::dirichlet(5));
  bc.set(0, 1, Boundary::neumann());
  tessera::Stencil<2> box("cuda-mix-u8", tessera::Shape::Box, 1);
  expect_cuda_matches<std::uint8_t, 2>(GetParam(), tessera::Grid<2>({14, 11}, {4, 4}), bc, box,
                                       Mix<std::uint8_t, 2, 1, true>{}, &initial<std::uint8_t, 2>);
  tessera::Stencil<2> star("cuda-mix-f32", tessera::Shape::Star, 2);
  expect_cuda_matches<float, 2>(GetParam(), tessera::Grid<2>({17, 14}, {5, 4}, {true, true}), {},
                                star, Mix<float, 2, 2, false>{}, &initial<float, 2>);
}

TEST_P(OnCudaWorker, ApplicationStencils) {
  {
    SCOPED_TRACE("heat3d");
    tessera::Stencil<3> heat("cuda-heat3d", tessera::Shape::Star, 1);
    expect_cuda_matches<double, 3>(GetParam(), tessera::Grid<3>({16, 12, 10}, {16, 12, 3}),
                                   apps::heat3d_boundaries(), heat, apps::Heat3d{0.1},
                                   &initial<double, 3>, 4);
  }
  {
    SCOPED_TRACE("life");
    tessera::Stencil<2> life("cuda-life", tessera::Shape::Box, 1);
    expect_cuda_matches<std::uint8_t, 2>(GetParam(),
                                         tessera::Grid<2>({30, 22}, {10, 8}, {true, true}), {},
                                         life, apps::Life{}, &apps::life_seed, 6);
  }
}

// Jacobi has two inputs (u and the source f), so it gets its own driver.
TEST_P(OnCudaWorker, Jacobi2dWithTwoInputs) {
  const tessera::Grid<2> grid({20, 18}, {20, 5});
  const auto bc = Boundaries<2>::all(Boundary::dirichlet(0.0f));
  const apps::Jacobi2d jac{1.0f / (21.0f * 21.0f)};
  auto source = +[](Index<2> p) { return apps::jacobi2d_source(p, 20, 18); };
  auto zero = +[](Index<2>) { return 0.0f; };
  auto run = [&](const tessera::Options& o) {
    tessera::Runtime rt(o);
    tessera::Field<float, 2> u(grid, 1, bc, "u"), f(grid, 1, bc, "f"), next(grid, 1, bc, "next");
    u.fill(zero);
    f.fill(source);
    tessera::Stencil<2> s("cuda-jacobi2d", tessera::Shape::Star, 1);
    for (int step = 0; step < 4; ++step) {
      s.apply(jac, tessera::in(u, f), tessera::out(next));
      tessera::swap(u, next);
    }
    return u.gather();
  };
  const std::vector<float> cpu = run(cpu_only());
  const std::vector<float> gpu = run(cuda_only(GetParam()));
  EXPECT_GT(kinds_on_cuda().count("interior+halo"), 0u);
  reference::RefField<float, 2> u{values_of<float>(grid, zero), bc},
      f{values_of<float>(grid, source), bc};
  for (int step = 0; step < 4; ++step) {
    std::vector<float> out(u.values.size());
    reference::apply(domain(grid), 1, jac, std::make_tuple(&u, &f), std::make_tuple(&out));
    u.values = out;
  }
  expect_same(gpu, cpu, "CUDA worker vs CPU worker");
  expect_same(gpu, u.values, "CUDA worker vs serial reference");
}

TEST_P(OnCudaWorker, SumMinMaxAndSumOfReductions) {
  const tessera::Grid<3> grid({23, 17, 11}, {6, 5, 4});
  auto init = +[](Index<3> p) { return test::noise<3>(p) - 0.3; };
  struct Results {
    double sum, min, max, energy, byte_max;
  };
  auto run = [&](const tessera::Options& o) {
    tessera::Runtime rt(o);
    tessera::Field<double, 3> u(grid, 1, {}, "u");
    tessera::Field<std::uint8_t, 3> b(grid, 1, {}, "b");
    u.fill(init);
    b.fill([](Index<3> p) { return static_cast<std::uint8_t>(test::noise<3>(p) * 255); });
    return Results{tessera::sum(u), tessera::min(u), tessera::max(u), tessera::sum(u, Energy{}),
                   tessera::max(b)};
  };
  const Results cpu = run(cpu_only());
  const Results gpu = run(cuda_only(GetParam()));
  const auto kinds = kinds_on_cuda();  // every reduction ran as tasks on the CUDA worker
  for (const char* kind : {"sum", "sum-of", "min", "max"}) EXPECT_GT(kinds.count(kind), 0u) << kind;

  const std::vector<double> values = values_of<double>(grid, init);
  std::vector<double> energy(values.size());
  std::transform(values.begin(), values.end(), energy.begin(), Energy{});
  expect_same_value(gpu.sum, cpu.sum, "sum: CUDA vs CPU");
  expect_same_value(gpu.sum, reference::exact_sum(values), "sum: CUDA vs reference");
  EXPECT_EQ(gpu.min, cpu.min);
  EXPECT_EQ(gpu.min, *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(gpu.max, cpu.max);
  EXPECT_EQ(gpu.max, *std::max_element(values.begin(), values.end()));
  expect_same_value(gpu.energy, cpu.energy, "sum of Energy: CUDA vs CPU");
  expect_same_value(gpu.energy, reference::exact_sum(energy), "sum of Energy: CUDA vs reference");
  EXPECT_EQ(gpu.byte_max, cpu.byte_max);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, OnCudaWorker, testing::Values("eager", "dmda"));

}  // namespace

int main(int argc, char** argv) {
  tessera::parse_options(argc, argv);
  // CTest lists the cases (gtest_discover_tests, one cuda.task_kinds.* entry each) on the
  // build machine, which may have no GPU: listing needs none. Each case then skips on its own.
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::string(argv[i]) == "--gtest_list_tests";
  const std::string reason = listing ? "" : test::cuda_unavailable_reason();
  if (!reason.empty()) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    return 77;  // CTest SKIP_RETURN_CODE
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
