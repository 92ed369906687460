// The emulated CUDA device (test_cuda_emulated only): the kinds test_cuda leaves out run their
// CUDA bodies through the emulated launcher against tests/reference and the CPU bodies, bitwise
// (loops with Sum, Min and Max reducers, exact sums over random tilings, boundary functions,
// temporal blocks, all-pairs), tiles over a grid limit launched in pieces, launches over
// CUDA's limits refused with a message naming the kernel, grid, block and tile, and barriers.
#include <gmock/gmock.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include <tessera/pairs.hpp>

#include "tessera/detail/cuda_launch.hpp"
#include "tests/boundary_cases.hpp"
#include "tests/cuda/cuda_options.hpp"
#include "tests/reduce_cases.hpp"

namespace {

using tessera::Index;
using tessera::detail::emulation::launches;
using testing::HasSubstr;

// Launches of `kernel` that `run` made.
template <class Run>
long launches_by(const char* kernel, const Run& run) {
  const long before = launches(kernel);
  run();
  return launches(kernel) - before;
}

// ---- Loops and their reductions --------------------------------------------------------------

struct Stats {
  TESSERA_HD void operator()(Index<3>, tessera::In<double> u, tessera::Reducer<tessera::Sum> sum,
                             tessera::Reducer<tessera::Min> lo, tessera::Reducer<tessera::Max> hi,
                             tessera::Reducer<tessera::Sum> squares) const {
    sum(u());
    lo(u());
    hi(u());
    squares(u() * u());
  }
};
struct Scale {
  TESSERA_HD void operator()(Index<3> p, tessera::In<double> u, tessera::Out<double> out) const {
    out = u() * 0.75 + static_cast<double>(p[0] - 2 * p[1] + 3 * p[2]);
  }
};

struct LoopResults {
  std::vector<double> scaled, smoothed;
  std::array<double, 4> stats;
};

// A stencil reads `out` (its first exchange), a loop rewrites it (and packs its faces: a
// loop+halo task), the stencil reads it again, and a loop reduces the result.
LoopResults run_loops(const tessera::Options& o) {
  tessera::Runtime rt(o);
  const tessera::Grid<3> grid({23, 17, 11}, {6, 5, 4});
  const tessera::Boundaries<3> bc = test::distinct_dirichlet3();
  tessera::Field<double, 3> u(grid, 0, {}, "u"), out(grid, 1, bc, "out"), v(grid, 1, bc, "v");
  u.fill(test::Wild{});
  out.fill(test::initial<double, 3>);
  tessera::Stencil<3> smooth("smooth", tessera::Shape::Star, 1);
  smooth.apply(test::Mix<double, 3, 1, false>{}, tessera::in(out), tessera::out(v));
  tessera::Loop<3>("scale").apply(Scale{}, tessera::in(u), tessera::out(out));
  smooth.apply(test::Mix<double, 3, 1, false>{}, tessera::in(out), tessera::out(v));
  auto stats = tessera::Loop<3>("stats").apply(
      Stats{}, tessera::in(out),
      tessera::reductions(tessera::Sum{}, tessera::Min{}, tessera::Max{}, tessera::Sum{}));
  const auto got = stats.get();
  return {out.gather(), v.gather(), {got[0], got[1], got[2], got[3]}};
}

TEST(EmulatedDevice, LoopReductionsGiveTheCpuBits) {
  const LoopResults cpu = run_loops(test::cpu_workers_only());
  LoopResults gpu;
  EXPECT_GT(launches_by("fold_extrema_kernel", [&] { gpu = run_loops(test::cuda_only("dmda")); }),
            0);
  const auto kinds = test::kinds_on_cuda();
  for (const char* kind : {"loop", "loop+halo", "interior+halo"})
    EXPECT_GT(kinds.count(kind), 0u) << kind;
  test::expect_bitwise_equal(gpu.scaled, cpu.scaled);
  test::expect_bitwise_equal(gpu.smoothed, cpu.smoothed);
  // The reference: the loop's values, summed exactly and folded serially.
  std::vector<double> squares(cpu.scaled.size());
  std::transform(cpu.scaled.begin(), cpu.scaled.end(), squares.begin(),
                 [](double v) { return v * v; });
  const std::array<double, 4> want = {
      reference::exact_sum(cpu.scaled), *std::min_element(cpu.scaled.begin(), cpu.scaled.end()),
      *std::max_element(cpu.scaled.begin(), cpu.scaled.end()), reference::exact_sum(squares)};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(test::bits_of(gpu.stats[k]), test::bits_of(cpu.stats[k])) << "reduction " << k;
    EXPECT_EQ(test::bits_of(gpu.stats[k]), test::bits_of(want[k])) << "reduction " << k;
  }
}

TEST(EmulatedDevice, ExactSumsForRandomTilings) {
  tessera::Runtime rt(test::cuda_bodies_only("eager"));
  EXPECT_GT(launches_by("row_kernel", [] { test::expect_exact_sums_for_random_tilings(6); }), 0);
}

// ---- Boundary functions, temporal blocks, pairs ----------------------------------------------

TEST(EmulatedDevice, BoundaryFunctions) {
  tessera::Runtime rt(test::cuda_bodies_only("eager"));
  EXPECT_GT(launches_by("ghost_function_kernel",
                        [] { test::expect_function_boundaries_match_reference(); }),
            0);
}

// Both task graphs: blocks that do their own exchanges (time-block+halo) and plain time-block
// tasks beside halo-pack and boundary tasks (--separate-exchange-tasks).
class EmulatedTemporalBlocks : public testing::TestWithParam<bool> {};

TEST_P(EmulatedTemporalBlocks, MatchReference) {
  tessera::Options o = test::cuda_only("dmda");
  o.fused_exchange = GetParam();
  std::optional<tessera::Runtime> rt(std::in_place, o);
  const tessera::Grid<3> grid({12, 10, 9}, {6, 5, 9});
  tessera::Boundaries<3> bc = test::distinct_dirichlet3();
  bc.set(1, 0, tessera::Boundary::neumann()).set(1, 1, tessera::Boundary::neumann());
  const int steps = 5, depth = 3;
  using F = test::Mix<double, 3, 1, false>;
  const long points = launches_by("point_kernel", [&] {
    tessera::Field<double, 3> u(grid, depth, bc, "u"), next(grid, depth, bc, "next");
    u.fill(test::initial<double, 3>);
    tessera::Stencil<3>("blocks", tessera::Shape::Star, 1).advance(F{}, u, next, steps, depth);
    reference::RefField<double, 3> ref{test::initial_values<double>(grid), bc};
    for (int s = 0; s < steps; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(test::domain(grid), 1, F{}, std::make_tuple(&ref), std::make_tuple(&out));
      ref.values = out;
    }
    test::expect_bitwise_equal(u.gather(), ref.values);
  });
  EXPECT_GT(points, 0);
  rt.reset();  // writes the trace
  EXPECT_GT(test::kinds_on_cuda().count(GetParam() ? "time-block+halo" : "time-block"), 0u);
}

INSTANTIATE_TEST_SUITE_P(EmulatedDevice, EmulatedTemporalBlocks, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "ExchangesInTheBlockTasks" : "SeparateExchangeTasks";
                         });

struct Weighted {
  TESSERA_HD void operator()(Index<2> i, Index<2> j, tessera::In<double> wi, tessera::In<double> vj,
                             tessera::Acc<2>& a) const {
    a[0] += wi() * vj();
    a[1] = a[1] * 0.5 + static_cast<double>(j[0] + 100 * j[1]) - static_cast<double>(i[0]);
  }
};

template <class F = Weighted>
std::vector<double> run_pairs(const tessera::Options& o, const tessera::Grid<2>& targets,
                              const tessera::Grid<2>& sources, F f = {}) {
  tessera::Runtime rt(o);
  tessera::Field<double, 2> w(targets, 0, {}, "w"), a0(targets, 0, {}, "a0"),
      a1(targets, 1, {}, "a1");
  tessera::Field<double, 2> v(sources, 0, {}, "v");
  w.fill([](Index<2> p) { return std::pow(10.0, 8.0 * test::noise<2>(p)); });
  v.fill([](Index<2> p) { return test::noise<2>({{p[1], p[0]}}) - 0.5; });
  a0.fill([](Index<2> p) { return 1e-3 * test::noise<2>(p); });
  tessera::Pairs<2>("weighted")
      .apply(f, tessera::targets(w), tessera::sources(v), tessera::accumulate(a0, a1));
  std::vector<double> both = a0.gather(), second = a1.gather();
  both.insert(both.end(), second.begin(), second.end());
  return both;
}

TEST(EmulatedDevice, PairsGiveTheCpuBits) {
  const tessera::Grid<2> targets({7, 5}, {3, 2}), sources({6, 4}, {4, 3});
  const std::vector<double> cpu = run_pairs(test::cpu_workers_only(), targets, sources);
  std::vector<double> gpu;
  EXPECT_GT(
      launches_by("pair_kernel",
                  [&] { gpu = run_pairs(test::cuda_bodies_only("eager"), targets, sources); }),
      0);
  test::expect_bitwise_equal(gpu, cpu);
}

// The CUDA pair kernel sums several chunks of 64 sources of each target at once (its lanes) and
// adds them in chunk order: source tiles of many chunks, chunks that start mid-row or in the
// previous tile (carried), a short last chunk, more chunks than lanes (18 on one tile), more
// targets than a block's 32, 1, 2, 3 and 16 source tiles: the CPU's bits, which are one tile's (j,
// counted across the chunks, weighs every source: none fades as in Weighted).
struct Indexed {
  TESSERA_HD void operator()(Index<2> i, Index<2> j, tessera::In<double> wi, tessera::In<double> vj,
                             tessera::Acc<2>& a) const {
    a[0] += wi() * vj();
    a[1] += static_cast<double>(j[0] + 1000 * j[1]) * (1.0 + 1e-3 * static_cast<double>(i[0]));
  }
};

TEST(EmulatedDevice, PairsInChunksGiveTheCpuBitsForAnyTiles) {
  const tessera::Grid<2> targets({40, 3}, {40, 3});
  const std::vector<double> one = run_pairs(test::cpu_workers_only(), targets,
                                            tessera::Grid<2>({1100, 1}, {1100, 1}), Indexed{});
  for (std::int64_t tile : {1100, 550, 367, 69}) {  // 1, 2, 3 and 16 tiles
    SCOPED_TRACE("source tiles of " + std::to_string(tile));
    const tessera::Grid<2> sources({1100, 1}, {tile, 1});
    const std::vector<double> cpu =
        run_pairs(test::cpu_workers_only(), targets, sources, Indexed{});
    std::vector<double> gpu;
    EXPECT_GT(
        launches_by(
            "pair_kernel",
            [&] { gpu = run_pairs(test::cuda_bodies_only("eager"), targets, sources, Indexed{}); }),
        0);
    test::expect_bitwise_equal(cpu, one);
    test::expect_bitwise_equal(gpu, cpu);
  }
  // Rows of 70 in tiles of 50 x 4: chunks that start mid-row, a tile boundary mid-chunk.
  const tessera::Grid<2> rows({70, 5}, {50, 4});
  const std::vector<double> cpu = run_pairs(test::cpu_workers_only(), targets, rows, Indexed{});
  std::vector<double> gpu;
  EXPECT_GT(
      launches_by(
          "pair_kernel",
          [&] { gpu = run_pairs(test::cuda_bodies_only("eager"), targets, rows, Indexed{}); }),
      0);
  test::expect_bitwise_equal(gpu, cpu);
}

// ---- Launch limits ----------------------------------------------------------------------------

// A tile whose rows exceed the grid's y limit (65535 blocks of 4 rows) and one whose planes
// exceed its z limit: launched in pieces, the reference's bits.
TEST(EmulatedDevice, TilesOverAGridLimitAreLaunchedInPieces) {
  tessera::Runtime rt(test::cuda_bodies_only("eager"));
  const long long_y = launches_by("point_kernel", [] {
    test::expect_matches_reference<double, 2, 1, false>(tessera::Grid<2>({3, 262200}, {3, 262200}),
                                                        {}, 1);
  });
  EXPECT_EQ(long_y, 2) << "one step of one tile over the y limit: two pieces";
  const long long_z = launches_by("point_kernel", [] {
    test::expect_matches_reference<double, 3, 1, false>(
        tessera::Grid<3>({2, 2, 65600}, {2, 2, 65600}), test::distinct_dirichlet3(), 1);
  });
  EXPECT_EQ(long_z, 2) << "one step of one tile over the z limit: two pieces";
}

int ran = 0;
__global__ void probe_kernel(int* counter) { ++*counter; }

std::string refusal(dim3 grid, dim3 block) {
  try {
    tessera::detail::LaunchTile tile;
    tile.extent[0] = 4;
    tile.extent[1] = 65536;
    tile.extent[2] = 1;
    tessera::detail::launch("probe_kernel", &probe_kernel, grid, block, nullptr, tile, &ran);
  } catch (const tessera::Error& e) { return e.what(); }
  return "launched";
}

TEST(EmulatedDevice, LaunchesOverCudaLimitsAreRefusedWithTheKernelGridBlockAndTile) {
  EXPECT_THAT(refusal(dim3(1, 65536, 1), dim3(32)),
              HasSubstr("tessera: CUDA launch of probe_kernel with grid (1, 65536, 1) and block "
                        "(32, 1, 1) for the tile at (0, 0, 0) of extent (4, 65536, 1) failed: "
                        "invalid configuration argument (cudaErrorInvalidConfiguration)"));
  EXPECT_THAT(refusal(dim3(1, 1, 65536), dim3(32)), HasSubstr("grid (1, 1, 65536)"));
  EXPECT_THAT(refusal(dim3(1), dim3(1025)), HasSubstr("block (1025, 1, 1)"));
  EXPECT_THAT(refusal(dim3(1), dim3(64, 16, 2)), HasSubstr("block (64, 16, 2)"));  // 2048 threads
  EXPECT_THAT(refusal(dim3(1), dim3(1, 1, 65)), HasSubstr("block (1, 1, 65)"));
  EXPECT_THAT(refusal(dim3(0), dim3(32)), HasSubstr("grid (0, 1, 1)"));
  EXPECT_EQ(ran, 0) << "a refused launch ran threads";
  EXPECT_EQ(refusal(dim3(3, 2, 1), dim3(2, 1, 64)), "launched");  // within the limits
  EXPECT_EQ(ran, 3 * 2 * 2 * 64);
}

// ---- Barriers and shared memory --------------------------------------------------------------

// Reverses each block's 256 values through shared memory: every thread writes one, the block
// waits, every thread reads another's.
__global__ void reverse_kernel(const int* in, int* out) {
  __shared__ int value[256];
  const int t = static_cast<int>(threadIdx.x);
  value[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  out[blockIdx.x * 256 + t] = value[255 - t];
}
// Half the threads wait at a barrier the others never reach: not allowed by CUDA.
__global__ void divergent_kernel(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}

TEST(EmulatedDevice, BarriersAndSharedMemoryPerBlock) {
  std::vector<int> in(3 * 256), out(in.size(), -1);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i);
  tessera::detail::launch("reverse_kernel", &reverse_kernel, dim3(3), dim3(256), nullptr,
                          tessera::detail::LaunchTile{}, in.data(), out.data());
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 256; ++t) ASSERT_EQ(out[b * 256 + t], b * 256 + 255 - t);
  std::vector<int> flags(32, 0);
  try {
    tessera::detail::launch("divergent_kernel", &divergent_kernel, dim3(1), dim3(32), nullptr,
                            tessera::detail::LaunchTile{}, flags.data());
    ADD_FAILURE() << "a barrier reached by half a block was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel divergent_kernel reached __syncthreads in block (0, 0, "
                                    "0) in some threads only"));
  }
}

// ---- Strict emulation ------------------------------------------------------------------------

// A user task with a CPU body only, and one with a CUDA body too (a launch through the
// emulated launcher).
struct CpuOnlyFill {
  void cpu(tessera::TileView<double, 3> t) const { t(0, 0, 0) = 1.0; }
};
__global__ void fill_kernel(double* p) { *p = 2.0; }
struct AnywhereFill {
  void cpu(tessera::TileView<double, 3> t) const { t(0, 0, 0) = 1.0; }
  void cuda(void* stream, tessera::TileView<double, 3> t) const {
    tessera::detail::launch("fill_kernel", &fill_kernel, dim3(1), dim3(1),
                            static_cast<cudaStream_t>(stream), tessera::detail::LaunchTile{},
                            t.data);
  }
};

// TESSERA_EMULATED_CUDA=strict stands for a run with GPU workers only: a task without a CUDA
// body is refused, naming it, before it is submitted; a task with one runs its CUDA body.
TEST(EmulatedDevice, StrictEmulationRefusesATaskWithoutACudaBodyAndNamesIt) {
  tessera::Options o = test::cuda_bodies_only("eager");
  setenv("TESSERA_EMULATED_CUDA", "strict", 1);
  {
    tessera::Runtime rt(o);
    tessera::Field<double, 3> u(tessera::Grid<3>({4, 4, 4}, {4, 4, 4}), 0, {}, "u");
    try {
      tessera::Task("cpu-only-fill").submit(CpuOnlyFill{}, tessera::write_tile(u, 0));
      ADD_FAILURE() << "strict emulation accepted a task without a CUDA body";
    } catch (const tessera::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("TESSERA_EMULATED_CUDA=strict: 'cpu-only-fill' (its "
                                      "task-write tasks on double) has no CUDA body"));
    }
    const long before = launches("fill_kernel");
    tessera::Task("anywhere-fill").submit(AnywhereFill{}, tessera::write_tile(u, 0));
    EXPECT_EQ(u.gather()[0], 2.0);  // the CUDA body's value
    EXPECT_EQ(launches("fill_kernel") - before, 1);
  }
  unsetenv("TESSERA_EMULATED_CUDA");
}

}  // namespace
