// The emulated device's split mode (TESSERA_EMULATED_CUDA=split, docs/gpu.md): of 2 CPU
// workers the first stands in for a CUDA worker, so the CPU/GPU placement runs without a GPU: a
// hand-set split of automatic tiles, a split given with explicit tiles (Grid::cut), and tiles a
// user gave placed by the planner (partition::place_lattice). For each, every task of every
// tile (stencil steps in both exchange modes, a loop, the sum's tile tasks, user tasks) must
// have run on a worker of the class the grid's placement gives its tile
// (FieldStorage::device_class; a kind without a CUDA body on a CPU worker), the CUDA class's
// tasks their CUDA bodies (the emulated launcher's launches, a user task's marker), and the
// results must be the serial reference's bits.
#include <gmock/gmock.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <tessera/task.hpp>

#include "apps/nbody/nbody.hpp"
#include "core/grid/slab_pipeline.hpp"
#include "tessera/detail/cuda_launch.hpp"
#include "tests/cuda/cuda_options.hpp"
#include "tests/autotile_cases.hpp"
#include "tests/stencil_cases.hpp"

namespace {

using tessera::Index;
using tessera::detail::emulation::launches;

// 2 CPU workers, the first a stand-in for a CUDA worker; every task recorded; the models in a
// directory of this process's own (a fresh one per run: `run` names it), so that no
// calibration decides the planner's choices.
tessera::Options split_options(const std::string& run) {
  setenv("TESSERA_EMULATED_CUDA", "split", 1);
  unsetenv("STARPU_PERF_MODEL_DIR");  // a previous run's --perfmodel-dir (Runtime sets it)
  tessera::Options o;
  o.scheduler = "dmda";
  o.cpu_workers = 2;
  o.quiet = true;
  const std::string dir = testing::TempDir() + "tessera_split." + std::to_string(getpid());
  o.trace = dir + "." + run + ".json";
  o.perfmodel_dir = dir + "." + run + ".models";
  return o;
}

// Point functors of the loops and stencils that use a streamed advance's dropped scratch.
struct SetZ {
  TESSERA_HD void operator()(Index<3> p, tessera::Out<double> o) const {
    o = static_cast<double>(p[2]);
  }
};
struct Count {
  TESSERA_HD void operator()(Index<3>, tessera::InOut<double> o) const { o = o() + 1.0; }
};
struct Copy {
  TESSERA_HD void operator()(Index<3>, tessera::In<double> i, tessera::Out<double> o) const {
    o = i();
  }
};
struct AddU {
  TESSERA_HD void operator()(Index<3>, tessera::In<double> u, tessera::InOut<double> n) const {
    n = n() + u();
  }
};
struct Scale {
  TESSERA_HD void operator()(Index<3> p, tessera::In<double> u, tessera::Out<double> out) const {
    out = u() * 0.75 + static_cast<double>(p[0] - 2 * p[1] + 3 * p[2]);
  }
};

// A user task with both bodies, each leaving its own mark at the tile's first point: 2 from the
// CUDA body (a launch through the emulated launcher), 1 from the CPU body.
__global__ void mark_kernel(double* p) { *p = 2.0; }
struct Mark {
  void cpu(tessera::TileView<double, 3> t) const { t(0, 0, 0) = 1.0; }
  void cuda(void* stream, tessera::TileView<double, 3> t) const {
    tessera::detail::launch("mark_kernel", &mark_kernel, dim3(1), dim3(1),
                            static_cast<cudaStream_t>(stream), tessera::detail::LaunchTile{},
                            t.data);
  }
};
// And one with a CPU body only: on CPU workers whatever its tile's class.
struct CpuOnlyMark {
  void cpu(tessera::TileView<double, 3> t) const { t(1, 0, 0) = 1.0; }
};

// Whether a task has a CUDA body: Tessera's kinds with one, and the user task "mark".
bool has_cuda_body(const tessera::trace::TaskEvent& e) {
  return e.stencil == "mark" || test::has_cuda_body(e.kind);
}

// The run: `steps` steps of a star stencil, a loop, `steps` more, the sum, the user tasks on
// every tile; then the checks against the reference and of every task's worker.
void run_and_check(tessera::Runtime& rt, const tessera::Grid<3>& grid, bool fused_exchange,
                   int steps = 3) {
  SCOPED_TRACE(
      std::string(fused_exchange ? "exchanges in the tile tasks" : "separate exchange tasks"));
  ASSERT_GE(grid.split_axis(), 0) << "the grid has no CPU/GPU placement";
  const tessera::Boundaries<3> bc = test::distinct_dirichlet3();
  using F = test::Mix<double, 3, 1, false>;
  tessera::Field<double, 3> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
  tessera::Field<double, 3> mark(grid, 0, {}, "mark");
  u.fill(test::initial<double, 3>);
  mark.fill([](Index<3>) { return 0.0; });
  const long points = launches("point_kernel"), marks = launches("mark_kernel");
  tessera::Stencil<3> mix("mix", tessera::Shape::Star, 1);
  for (int s = 0; s < steps; ++s) {
    mix.apply(F{}, tessera::in(u), tessera::out(next));
    tessera::swap(u, next);
  }
  tessera::Loop<3>("scale").apply(Scale{}, tessera::in(u), tessera::out(next));
  tessera::swap(u, next);
  for (int s = 0; s < steps; ++s) {
    mix.apply(F{}, tessera::in(u), tessera::out(next));
    tessera::swap(u, next);
  }
  const double sum = tessera::sum(u);
  for (int t = 0; t < grid.tiles(); ++t) {
    tessera::Task("mark").submit(Mark{}, tessera::update_tile(mark, t));
    tessera::Task("cpu-only-mark").submit(CpuOnlyMark{}, tessera::update_tile(mark, t));
  }
  rt.wait();

  // The reference's bits.
  reference::RefField<double, 3> ref{test::initial_values<double>(grid), bc};
  const auto ref_steps = [&] {
    for (int s = 0; s < steps; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(test::domain(grid), 1, F{}, std::make_tuple(&ref), std::make_tuple(&out));
      ref.values = out;
    }
  };
  ref_steps();
  const auto e = grid.extent();
  for (std::int64_t z = 0, i = 0; z < e[2]; ++z)
    for (std::int64_t y = 0; y < e[1]; ++y)
      for (std::int64_t x = 0; x < e[0]; ++x, ++i)
        ref.values[static_cast<std::size_t>(i)] =
            ref.values[static_cast<std::size_t>(i)] * 0.75 + static_cast<double>(x - 2 * y + 3 * z);
  ref_steps();
  test::expect_bitwise_equal(u.gather(), ref.values);
  EXPECT_EQ(sum, reference::exact_sum(ref.values));

  // Every task of a tile on a worker of its tile's class, and the CUDA class's tasks running
  // their CUDA bodies.
  const tessera::detail::FieldStorage& placement = u.storage();
  const tessera::trace::RankTrace r = rt.recorded();
  std::map<int, std::string> arch;
  int stand_ins = 0;
  for (const auto& w : r.workers) {
    arch[w.id] = w.arch;
    stand_ins += w.arch == "cuda" && w.name.find("emulated CUDA") != std::string::npos;
  }
  EXPECT_EQ(stand_ins, 1);
  std::map<std::string, int> on[2];  // per class (0 CPU, 1 CUDA), tasks per kind
  int cuda_tiles = 0;
  for (int t = 0; t < grid.tiles(); ++t) {
    const int c = static_cast<int>(placement.device_class(t));
    EXPECT_TRUE(c == 1 || c == 2) << "tile " << t << " has no class: " << c;
    cuda_tiles += c == 2;
    // The user task's mark says which body ran.
    const tessera::detail::TileGeometry g = placement.geometry(t);
    const Index<3> origin{g.origin[0], g.origin[1], g.origin[2]};
    EXPECT_EQ(mark.at(origin), c == 2 ? 2.0 : 1.0) << "tile " << t;
  }
  for (const tessera::trace::TaskEvent& ev : r.tasks) {
    if (ev.tile < 0) continue;
    const bool cuda =
        placement.device_class(ev.tile) == tessera::detail::DeviceClass::Cuda && has_cuda_body(ev);
    const std::string want = cuda ? "cuda" : "cpu";
    EXPECT_EQ(arch[ev.worker], want) << tessera::trace::task_name(ev) << " ran on worker "
                                     << ev.worker << " of class " << arch[ev.worker];
    ++on[arch[ev.worker] == "cuda"][ev.kind];
  }
  for (int k = 0; k < 2; ++k) {
    std::string said;
    for (const auto& [kind, n] : on[k]) said += " " + kind + "=" + std::to_string(n);
    testing::Test::RecordProperty(k ? "tasks_on_cuda_class" : "tasks_on_cpu_class", said);
  }
  if (cuda_tiles > 0) {
    EXPECT_GT(launches("point_kernel"), points);
    EXPECT_EQ(launches("mark_kernel") - marks, cuda_tiles);
    EXPECT_GT(on[1][fused_exchange ? "interior+halo" : "interior"], 0);
    EXPECT_GT(on[1]["sum"], 0);
  }
  if (cuda_tiles < grid.tiles()) EXPECT_GT(on[0][fused_exchange ? "interior+halo" : "interior"], 0);
  if (!fused_exchange && grid.tiles() > 1) EXPECT_GT(on[0]["halo-pack"] + on[1]["halo-pack"], 0);
  EXPECT_GT(on[0]["task"], 0);  // the CPU-only user task
}

class EmulatedSplit : public testing::TestWithParam<bool> {
 protected:
  void TearDown() override { unsetenv("TESSERA_EMULATED_CUDA"); }
};

// The split mode's machine: 1 CPU + 1 CUDA worker to the Runtime and the planner.
TEST(EmulatedSplitMode, CountsItsStandInsAsCudaWorkers) {
  tessera::Options o = split_options("count");
  o.trace.clear();
  {
    tessera::Runtime rt(o);
    EXPECT_EQ(rt.cpu_workers(), 1);
    EXPECT_EQ(rt.cuda_workers(), 1);
  }
  setenv("TESSERA_EMULATED_CUDA", "split:2", 1);
  try {
    tessera::Runtime rt(o);
    ADD_FAILURE() << "split:2 on 2 CPU workers left no CPU worker";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("give --ncpu 3 or more"));
  }
  unsetenv("TESSERA_EMULATED_CUDA");
}

// Faces between GPUs are copied ahead (tasks::Placement::fetch_early, issue 48): on 2 stand-in
// GPUs holding the whole grid (a slab each), every block that fills its ghosts lists the other
// GPU's faces (TaskEvent::early_copies); on 1 stand-in, whose faces stay in its memory, no task
// lists any, nor does any task but a block anywhere.
TEST(EmulatedSplitMode, FacesFromAnotherGpuAreCopiedAhead) {
  for (int gpus : {1, 2}) {
    SCOPED_TRACE(std::to_string(gpus) + " stand-in GPU(s)");
    tessera::Options o = split_options("ahead" + std::to_string(gpus));
    setenv("TESSERA_EMULATED_CUDA", ("split:" + std::to_string(gpus)).c_str(), 1);
    o.cpu_workers = gpus + 1;
    o.gpu_fraction = 1;
    o.fused_exchange = true;
    tessera::Runtime rt(o);
    const tessera::Grid<3> grid({12, 12, 32});
    const tessera::Boundaries<3> bc = test::distinct_dirichlet3();
    tessera::Field<double, 3> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
    u.fill(test::initial<double, 3>);
    tessera::Stencil<3> mix("mix", tessera::Shape::Star, 1);
    for (int s = 0; s < 3; ++s) {
      mix.apply(test::Mix<double, 3, 1, false>{}, tessera::in(u), tessera::out(next));
      tessera::swap(u, next);
    }
    rt.wait();
    int blocks = 0, listing = 0;
    for (const tessera::trace::TaskEvent& ev : rt.recorded().tasks) {
      if (ev.kind.find("+halo") == std::string::npos) {
        EXPECT_EQ(ev.early_copies, 0) << tessera::trace::task_name(ev);
        continue;
      }
      ++blocks;
      listing += ev.early_copies > 0;
    }
    if (gpus == 1) {
      EXPECT_EQ(listing, 0);
    } else {
      EXPECT_EQ(grid.tiles(), 2) << grid.chosen();
      EXPECT_GT(blocks, 0);
      EXPECT_EQ(listing, blocks);
    }
  }
  unsetenv("TESSERA_EMULATED_CUDA");
}

// And an all-pairs task's sources from another GPU: N-body's 64 bodies in one tile per stand-in
// (the planner's tiles at a hand-set share of 1); each target tile's task against the other
// GPU's tile lists that tile's four source fields (x, y, z, m), its task against its own none.
TEST(EmulatedSplitMode, AllPairsSourcesFromAnotherGpuAreCopiedAhead) {
  tessera::Options o = split_options("pairs-ahead");
  setenv("TESSERA_EMULATED_CUDA", "split:2", 1);
  o.cpu_workers = 3;
  o.gpu_fraction = 1;
  {
    tessera::Runtime rt(o);
    apps::NBody sim(64, 0, apps::plummer(64, 7), apps::NBodyParams{});
    sim.step();
    rt.wait();
    EXPECT_EQ(sim.grid.tiles(), 2) << sim.grid.chosen();
    int pairs = 0, listing = 0;
    for (const tessera::trace::TaskEvent& ev : rt.recorded().tasks) {
      if (ev.kind != "pairs") continue;
      ++pairs;
      if (ev.early_copies == 0) continue;
      ++listing;
      EXPECT_EQ(ev.early_copies, 4) << tessera::trace::task_name(ev);
    }
    EXPECT_GT(pairs, 0);
    EXPECT_EQ(2 * listing, pairs);
  }
  unsetenv("TESSERA_EMULATED_CUDA");
}

// A run on a grid of `extent` in tiles of `tile` (0: the library's) under a hand-set GPU share
// (< 0: none): the grid's split is along z at `split`, it has `tiles` tiles (-1: any), then
// run_and_check.
void expect_split_and_run(const char* models, double share, bool fused, tessera::Index<3> extent,
                          tessera::Index<3> tile, std::int64_t split, int tiles = -1) {
  tessera::Options o = split_options(models);
  o.gpu_fraction = share;
  o.fused_exchange = fused;
  tessera::Runtime rt(o);
  const tessera::Grid<3> grid(extent, tile);
  EXPECT_EQ(grid.split_axis(), 2) << grid.chosen();
  EXPECT_EQ(grid.split(), split) << grid.chosen();
  if (tiles >= 0) EXPECT_EQ(grid.tiles(), tiles) << grid.chosen();
  run_and_check(rt, grid, fused);
}

// (1) A hand-set split (--gpu-fraction 0.5) of tiles the library chooses.
TEST_P(EmulatedSplit, HandSetSplitOfAutomaticTiles) {
  expect_split_and_run("hand-set", 0.5, GetParam(), {14, 12, 32}, {0, 0, 0}, 16);
}

// (2) Explicit tiles with a split given by the user: z cut at 6, 12 and 18, y at 9, the tiles
// below z = 12 on the CUDA workers.
TEST_P(EmulatedSplit, ExplicitTilesWithAGivenSplit) {
  tessera::Options o = split_options("given");
  o.fused_exchange = GetParam();
  tessera::Runtime rt(o);
  run_and_check(rt, tessera::Grid<3>::cut({14, 18, 24}, {{{}, {9}, {6, 12, 18}}}, {}, 2, 12),
                GetParam());
}

// Tiles a user gave, no split given: the planner places them (partition::place_lattice);
// without calibrated models of both classes, every tile on the CUDA workers (the extent),
// where its 8 tiles merge into one for the one CUDA worker (Planner::merge_gpu_part).
TEST_P(EmulatedSplit, UserTilesPlacedByThePlanner) {
  expect_split_and_run("placed", -1, GetParam(), {14, 18, 24}, {14, 9, 6}, 24, 1);
}

// The same with --keep-gpu-tiles (Options::merge_gpu_tiles false): the 8 tiles stay, each
// pinned to the CUDA class.
TEST_P(EmulatedSplit, UserTilesKeptWhenAsked) {
  tessera::Options o = split_options("kept");
  o.fused_exchange = GetParam();
  o.merge_gpu_tiles = false;
  tessera::Runtime rt(o);
  const tessera::Grid<3> grid({14, 18, 24}, {14, 9, 6});
  EXPECT_EQ(grid.split(), 24) << grid.chosen();
  EXPECT_EQ(grid.tiles(), 8);
  run_and_check(rt, grid, GetParam());
}

// Tiles a user gave with a hand-set share (--gpu-fraction 0.6): the planner splits at the tile
// start of z nearest 0.6 of its 24 planes (12: 14.4 is nearer 12 than 18); the GPU part's 4
// tiles merge into one z slab (2 tiles: y stays cut at 9), the CPU part keeps its 4.
TEST_P(EmulatedSplit, UserTilesWithAHandSetShare) {
  expect_split_and_run("hand-set-given", 0.6, GetParam(), {14, 18, 24}, {14, 9, 6}, 12, 6);
}

// Tiles the library chooses, no split given: the chooser places the split (partition::
// choose_tiles) with the speeds it assumes without calibrated models of both classes (a GPU 20
// times a core): on a grid this small the CPU part would not pay for the split's fixed cost,
// so every tile on the CUDA workers. (Where the chooser splits for real depends on the
// models a run calibrated, so on the load of the machine: not a test.)
TEST_P(EmulatedSplit, AutomaticTilesPlacedByTheChooser) {
  expect_split_and_run("chosen", -1, GetParam(), {14, 12, 32}, {0, 0, 0}, 32);
}

// The slabs a 16 x 32 x 192 grid of u and next (16 bytes a point; next is scratch, so a slab
// leaving keeps only u, 8) is streamed in through a stand-in of 1 MiB at depth d, derived from
// the case by hand (the rule of docs/gpu.md, "Grids larger than a GPU"; not the planner's code):
// the slabs may use 0.85 of the 1 MiB (891289.6 bytes, "8.91e+05"). A plane as a slab holds it
// carries d ghost points on each side across: (16 + 2d) x (32 + 2d) points (24 x 40 = 960 at
// depth 4, 1.875 times its 512 points). Unfused, the slab computed (16 bytes a point) and the one
// leaving (8) are there, with two sets of four faces of d planes of 512 points (8 bytes each); with
// fused exchanges a visit reads the next slab's face from its tile and the visits are prefetched,
// so three slabs' u (read, arriving, leaving: 3 x 8 bytes) beside the one computed, and one set of
// faces. The thickest slab is what fits, less its 2d ghost planes; the slabs, 192 planes over it.
namespace {
std::int64_t derived_streamed_slabs(int d, bool fused) {
  const double room = 0.85 * 1048576 - (fused ? 1 : 2) * 4.0 * d * 512 * 8;
  const double plane = (16.0 + 2 * d) * (32.0 + 2 * d) * (16 + (fused ? 3 : 1) * 8);
  const auto thickest = static_cast<std::int64_t>(room / plane) - 2 * d;
  return (192 + thickest - 1) / thickest;
}
}  // namespace

// A grid larger than its GPU (the stand-in's memory made 1 MiB by STARPU_LIMIT_CUDA_MEM, which
// the planner reads for stand-ins): the planner streams it in slabs (Grid::stream_depth), each
// visit's scratch field dropped and its constant ghosts refilled (slabs::after_visit),
// and the result is still the reference's bits, with blocks of the streamed depth and a last,
// odd one.
TEST_P(EmulatedSplit, AGridLargerThanTheGpuStreamsBitwise) {
  setenv("STARPU_LIMIT_CUDA_MEM", "1", 1);
  tessera::Options o = split_options("streamed");
  o.fused_exchange = GetParam();
  tessera::Runtime rt(o);
  // 1.57 MB at 16 bytes a point (16 x 32 x 192 x 16 = 1572864), more than the 8.91e+05 bytes
  // the stand-in may hold: streamed, 4 steps a visit (the bus alone prices the depth: the
  // stand-in's speed is not calibrated). At depth 4 (derived_streamed_slabs): unfused,
  // (891289.6 - 2 x 65536) / (960 x 24) = 32.99, so 32 - 8 = 24 planes a slab and 8 slabs;
  // fused, (891289.6 - 65536) / (960 x 40) = 21.50, so 21 - 8 = 13 planes and 15 slabs (of 12
  // or 13 planes).
  const bool fused = GetParam();
  const tessera::Grid<3> grid({16, 32, 192}, {0, 0, 0}, {},
                              tessera::PointData::of<double, double>());  // u and next
  unsetenv("STARPU_LIMIT_CUDA_MEM");
  EXPECT_EQ(grid.split(), 192) << grid.chosen();
  EXPECT_EQ(grid.stream_depth(), 4) << grid.chosen();
  EXPECT_EQ(derived_streamed_slabs(4, fused), fused ? 15 : 8);
  EXPECT_EQ(grid.tiles(), derived_streamed_slabs(4, fused)) << grid.chosen();
  EXPECT_THAT(grid.chosen(),
              testing::HasSubstr(std::string("streamed: 1.57e+06 bytes a GPU's share against "
                                             "8.91e+05 it may hold; ") +
                                 (fused ? "15 slabs, 4 steps" : "8 slabs, 4 steps")));
  EXPECT_EQ(tessera::Stencil<3>("heat3d", tessera::Shape::Star, 1).auto_depth(grid),
            grid.stream_depth());
  test::expect_heat3d_advance_matches_reference(grid, 19, 4);  // blocks of 4 and a last 3
}

// heat3d's u (its initial values) and next on a 16 x 32 x 192 grid that a stand-in of 1 MiB
// streams (two doubles a point), exchanges fused or not.
struct StreamedHeat {
  StreamedHeat(const std::string& run, bool fused)
      : rt(options(run, fused)),
        grid({16, 32, 192}, {0, 0, 0}, {}, tessera::PointData::of<double, double>()),
        depth(grid.stream_depth()),
        u(grid, depth, bc, "u"),
        next(grid, depth, bc, "next") {
    unsetenv("STARPU_LIMIT_CUDA_MEM");
    u.fill(test::initial<double, 3>);
  }
  static tessera::Options options(const std::string& run, bool fused) {
    setenv("STARPU_LIMIT_CUDA_MEM", "1", 1);  // the planner reads it when the Runtime starts
    tessera::Options o = split_options(run);
    o.fused_exchange = fused;
    return o;
  }
  // The serial reference's values after `steps` steps.
  std::vector<double> reference(int steps) const {
    reference::RefField<double, 3> ref{test::initial_values<double>(grid), bc};
    for (int s = 0; s < steps; ++s) {
      std::vector<double> out(ref.values.size());
      reference::apply(test::domain(grid), 1, f, std::make_tuple(&ref), std::make_tuple(&out));
      ref.values = out;
    }
    return ref.values;
  }
  tessera::Runtime rt;
  const tessera::Grid<3> grid;
  const int depth;
  const decltype(apps::heat3d_boundaries()) bc = apps::heat3d_boundaries();
  tessera::Field<double, 3> u, next;
  const tessera::Stencil<3> heat{"heat3d", tessera::Shape::Star, 1};
  const apps::Heat3d f{0.1};
};

// With STARPU_USE_NUMA (the emulated.numa.* runs, tests/CMakeLists.txt: a memory node of its own
// for the stand-in) a streamed grid's tiles cross to the stand-in and back; on one memory node
// nothing crosses. Fails where that variable arrives without the topology it needs (ctest
// passes only the first variable of a list in ENVIRONMENT).
TEST(EmulatedSplitMemory, StreamedSlabsCrossOnlyToAStandInOfItsOwnMemory) {
  StreamedHeat h("streamed-crossing", true);
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  h.heat.advance(h.f, h.u, h.next, h.depth, h.depth);
  h.rt.wait();
  std::uint64_t bytes = 0;
  for (const tessera::trace::Transfer& t : h.rt.recorded().transfers)
    if (!t.mpi) bytes += t.bytes;
  if (std::getenv("STARPU_USE_NUMA") != nullptr)
    EXPECT_GT(bytes, 0U);
  else
    EXPECT_EQ(bytes, 0U);
}

// A streamed grid's first pass on one GPU packs no face of u (each is packed ahead into the GPU's
// rings or read from the next slab by the visit that needs it) and, where the tiles' ghost planes
// stay on the GPU (StarPU 1.4), writes no constant ghosts of u in tasks of their own (the visits'
// fills write them): such tasks took every slab over the bus and back before the first visit,
// and the faces they packed were evicted into pinned host memory (heat3d 1024^3 on a 4 GiB GPU,
// simulated: 6.7 of 6.9 s of a 16-step run). The bits are the reference's.
TEST(EmulatedSplitMemory, AStreamedFirstPassPacksAndFillsNothingAhead) {
  StreamedHeat h("streamed-first-pass", true);
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  ASSERT_GT(h.grid.tiles(), 2) << h.grid.chosen();
  h.heat.advance(h.f, h.u, h.next, 2 * h.depth, h.depth);
  h.rt.wait();
  test::expect_bitwise_equal(h.u.gather(), h.reference(2 * h.depth));
  int packs = 0, constants = 0, visits = 0;
  for (const tessera::trace::TaskEvent& ev : h.rt.recorded().tasks) {
    packs += ev.kind == "halo-pack";
    constants += ev.kind == "constant-ghosts" && ev.field == "u";
    visits += ev.kind == "time-block+halo";
  }
  EXPECT_EQ(visits, 2 * h.grid.tiles());
  EXPECT_EQ(packs, 0);
  if (tessera::detail::slabs::ghost_planes_left(h.u.storage())) EXPECT_EQ(constants, 0);
}

// A streamed grid's blocks turn (TileTaskCall::turns): the second block visits the tiles in
// reverse, so that the GPU's last slab of a pass is its first of the next and the slabs at an edge
// between two GPUs are visited at opposite ends of each pass (a pass's time before their
// neighbour needs their faces); the third turns again. Each visit then reads the face of the slab
// visited before it from the ring and that of the slab after it from its tile, in both orders,
// and the bits are the reference's.
TEST(EmulatedSplitMemory, StreamedBlocksTurnAndMatchTheReference) {
  StreamedHeat h("streamed-turns", true);
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  const int n = h.grid.tiles();
  ASSERT_GT(n, 2) << h.grid.chosen();
  h.heat.advance(h.f, h.u, h.next, 3 * h.depth, h.depth);
  h.rt.wait();
  test::expect_bitwise_equal(h.u.gather(), h.reference(3 * h.depth));
  std::vector<tessera::trace::TaskEvent> visits;
  for (const tessera::trace::TaskEvent& ev : h.rt.recorded().tasks)
    if (ev.kind == "time-block+halo") visits.push_back(ev);
  std::sort(visits.begin(), visits.end(),
            [](const auto& a, const auto& b) { return a.seq < b.seq; });
  ASSERT_EQ(static_cast<int>(visits.size()), 3 * n);
  for (int k = 0; k < 3 * n; ++k) {
    const int block = k / n, i = k % n;
    EXPECT_EQ(visits[static_cast<std::size_t>(k)].tile, block == 1 ? n - 1 - i : i)
        << "visit " << i << " of block " << block;
  }
}

// Streamed blocks of twice the depth, a plain step, and the swap that makes its output u.
void blocks_then_a_step(StreamedHeat& h) {
  h.heat.advance(h.f, h.u, h.next, 2 * h.depth, h.depth);
  h.heat.apply(h.f, tessera::in(h.u), tessera::out(h.next));
  h.u.swap(h.next);
}

// A plain step after blocks on a streamed grid: the blocks left the tiles' ghost planes on the
// GPU (slabs::leave_ghost_planes, StarPU 1.4), so the step's fills write the constant
// ghosts too (or, its exchanges in tasks of their own, exchange() brings whole tiles back and
// writes them again), and the step's output, the blocks' scratch dropped after their visits, is
// StarPU's again before the step writes it (before, StarPU aborted: "not initialized"); the
// bits are the reference's. Run with the stand-in's own memory too (emulated.numa.*).
TEST_P(EmulatedSplit, AStepAfterStreamedBlocksMatchesTheReference) {
  StreamedHeat h("streamed-step", GetParam());
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  blocks_then_a_step(h);
  test::expect_bitwise_equal(h.u.gather(), h.reference(2 * h.depth + 1));
}

// Then blocks again, nothing waited for between: the first blocks' u is their next, dropped after
// its visits, and the first blocks' copies home of u (queued once their visits ran, behind those
// drops) found no values: StarPU aborted ("not initialized"). The bits are the reference's.
TEST_P(EmulatedSplit, BlocksAgainAfterAStepMatchTheReference) {
  StreamedHeat h("streamed-again", GetParam());
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  blocks_then_a_step(h);
  h.heat.advance(h.f, h.u, h.next, 2 * h.depth, h.depth);
  test::expect_bitwise_equal(h.u.gather(), h.reference(4 * h.depth + 1));
}

// `use` of a streamed advance's dropped scratch, next, is refused: `what` reads a field that
// holds no values, and the fix is said.
template <class Use>
void expect_refused(const Use& use, const char* what) {
  try {
    use();
    ADD_FAILURE() << what << " was not refused";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr(std::string(what) + " of field 'next', which "
                                                                 "holds no values on the GPUs"));
    EXPECT_THAT(e.what(), testing::HasSubstr("read u, advance()'s result"));
  }
}

// next, written again after a streamed advance, holds each point's z everywhere.
void expect_next_holds_z(const StreamedHeat& h) {
  const std::vector<double> values = h.next.gather();
  for (std::size_t k = 0; k < values.size(); ++k)
    ASSERT_EQ(values[k], static_cast<double>(k / (16 * 32))) << "point " << k;
}

// After streamed blocks of an even count, next (their scratch, dropped after each visit) holds no
// values on the GPU: reading it is refused with the rule and the fix, on the host and as a task's
// input, before any task; writing it on the host (fill) makes it whole again.
TEST(EmulatedSplitMemory, ReadingTheDroppedScratchIsRefusedAndAFillRestoresIt) {
  StreamedHeat h("streamed-scratch", true);
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  h.heat.advance(h.f, h.u, h.next, 2 * h.depth, h.depth);
  expect_refused([&] { (void)h.next.gather(); }, "gather");
  expect_refused([&] { h.heat.apply(h.f, tessera::in(h.next), tessera::out(h.u)); },
                 "an input of apply");
  h.next.fill([](const tessera::Index<3>& i) { return static_cast<double>(i[2]); });
  expect_next_holds_z(h);
}

// Slabs of unequal thickness (193 planes in 10: 20 and 19) share one buffer size, the thickest's,
// so that StarPU reuses a leaving slab's device buffer for the next visit instead of freeing it
// and allocating another (cudaFree makes the whole device wait); the bits are the reference's.
TEST(EmulatedSplitMemory, UnequalStreamedSlabsShareOneBufferSize) {
  setenv("STARPU_LIMIT_CUDA_MEM", "1", 1);
  tessera::Runtime rt(split_options("streamed-unequal"));
  // Three doubles a point: the field below and the reference's u and next.
  const tessera::Grid<3> grid({16, 32, 193}, {0, 0, 0}, {},
                              tessera::PointData::of<double, double, double>());
  unsetenv("STARPU_LIMIT_CUDA_MEM");
  ASSERT_GT(grid.stream_depth(), 0) << grid.chosen();
  {
    const auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(0.0));
    tessera::Field<double, 3> u(grid, grid.stream_depth(), bc, "u");
    const auto& f = u.storage();
    std::set<std::int64_t> thickness;
    for (int t = 0; t < f.tiles(); ++t) {
      thickness.insert(f.geometry(t).extent[2]);
      EXPECT_EQ(f.tile_bytes(t), f.tile_bytes(0)) << "tile " << t << " of " << f.tiles();
    }
    EXPECT_EQ(thickness.size(), 2U) << grid.chosen();  // the case: slabs of two thicknesses
  }
  test::expect_heat3d_advance_matches_reference(grid, 9, grid.stream_depth());
}

// The other uses of the dropped scratch: a loop over every point writing it makes it whole again
// (every point written); read in place (a stencil's or a loop's in-out) or written by a loop over a
// box (the other points stay) it is refused, before any task.
TEST(EmulatedSplitMemory, ALoopWritingTheDroppedScratchRestoresItAndInPlaceUsesAreRefused) {
  StreamedHeat h("streamed-scratch-loops", true);
  ASSERT_GT(h.depth, 0) << h.grid.chosen();
  h.heat.advance(h.f, h.u, h.next, 2 * h.depth, h.depth);
  expect_refused(
      [&] { h.heat.apply(AddU{}, tessera::in(h.u), tessera::out(), tessera::inout(h.next)); },
      "an in-out of apply");
  expect_refused([&] { tessera::Loop<3>("count").apply(Count{}, tessera::inout(h.next)); },
                 "an in-out of a loop");
  expect_refused(
      [&] { tessera::Loop<3>("copy").apply(Copy{}, tessera::in(h.next), tessera::out(h.u)); },
      "an input of a loop");
  expect_refused(
      [&] {
        tessera::Loop<3>("corner", tessera::Box<3>{{0, 0, 0}, {4, 4, 4}})
            .apply(SetZ{}, tessera::out(h.next));
      },
      "an output of a loop over a box");
  tessera::Loop<3>("set").apply(SetZ{}, tessera::out(h.next));
  expect_next_holds_z(h);
}

// A runtime in split emulation whose stand-in has `mib` MiB of memory (STARPU_LIMIT_CUDA_MEM,
// which the planner reads when the Runtime starts), and a grid made on it.
struct LimitedGpu {
  LimitedGpu(const char* mib, const std::string& run, const tessera::Index<3>& extent,
             const tessera::Index<3>& tile, bool merge = true)
      : rt(options(mib, run, merge)), grid(extent, tile) {}
  static tessera::Options options(const char* mib, const std::string& run, bool merge) {
    setenv("STARPU_LIMIT_CUDA_MEM", mib, 1);
    tessera::Options o = split_options(run);
    o.merge_gpu_tiles = merge;
    return o;
  }
  ~LimitedGpu() { unsetenv("STARPU_LIMIT_CUDA_MEM"); }
  tessera::Runtime rt;
  const tessera::Grid<3> grid;
};

// A stencil with an extra input, and one with a state field, on the streamed grid below.
struct HeatAndSource {
  TESSERA_HD void operator()(Index<3>, tessera::In<double> u, tessera::In<double> s,
                             tessera::Out<double> out) const {
    out = u() + 0.1 * (u(0, 0, 1) + u(0, 0, -1) - 2.0 * u()) + s();
  }
};
struct HeatAndState {
  TESSERA_HD void operator()(Index<3>, tessera::In<double> u, tessera::Out<double> out,
                             tessera::InOut<double> acc) const {
    out = u() + 0.1 * (u(0, 0, 1) + u(0, 0, -1) - 2.0 * u());
    acc = acc() + u();
  }
};

// The dropped scratch read by another advance, as its extra input or as its state (an in-out),
// is refused too, before any task (StarPU aborted: "not initialized").
TEST(EmulatedSplitMemory, TheDroppedScratchAsAnAdvancesInputOrStateIsRefused) {
  const LimitedGpu run("1", "streamed-scratch-extras", {16, 32, 192}, {0, 0, 0});
  const tessera::Grid<3>& grid = run.grid;  // three doubles a point: u, next, w
  const int depth = grid.stream_depth();
  ASSERT_GT(depth, 0) << grid.chosen();
  const auto bc = apps::heat3d_boundaries();
  tessera::Field<double, 3> u(grid, depth, bc, "u"), next(grid, depth, bc, "next");
  tessera::Field<double, 3> w(grid, depth, bc, "w");
  u.fill(test::initial<double, 3>);
  w.fill([](const tessera::Index<3>&) { return 1.0; });
  tessera::Stencil<3>("heat3d", tessera::Shape::Star, 1)
      .advance(apps::Heat3d{0.1}, u, next, 2 * depth, depth);
  const tessera::Stencil<3> source("heat3d-source", tessera::Shape::Star, 1);
  expect_refused([&] { source.advance(HeatAndSource{}, w, u, depth, depth, tessera::in(next)); },
                 "an input of advance");
  const tessera::Stencil<3> state("heat3d-state", tessera::Shape::Star, 1);
  expect_refused(
      [&] {
        state.advance(HeatAndState{}, w, u, depth, depth, tessera::in(), tessera::inout(next));
      },
      "an in-out of advance");
}

// The slabs of a streamed grid were sized for 24 bytes a point (three doubles): a fourth double
// field on it is refused when it is made, before any task, naming the fields and the fix.
TEST(EmulatedSplitMemory, FieldsBeyondTheStreamedPlanAreRefused) {
  const LimitedGpu run("1", "refused", {16, 32, 192}, {0, 0, 0});
  const tessera::Grid<3>& grid = run.grid;
  ASSERT_GT(grid.stream_depth(), 0) << grid.chosen();
  const auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(0.0));
  tessera::Field<double, 3> a(grid, 4, bc, "a"), b(grid, 4, bc, "b"), c(grid, 4, bc, "c");
  try {
    tessera::Field<double, 3> d(grid, 4, bc, "d");
    ADD_FAILURE() << "a fourth double field on the streamed grid was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("field 'd' makes the fields of its grid ('a', 'b', "
                                             "'c', 'd') hold 32 bytes a point, more than the 24"));
    EXPECT_THAT(e.what(), testing::HasSubstr("--ncpu"));
  }
}

// What a point holds (tessera::PointData) sizes a streamed grid's slabs and bounds the fields
// made on it: the same grid in floats streams in fewer, thicker slabs than in doubles; a third
// double field on a grid declared for two is refused, naming the declaration; a declaration
// without a field's bytes is refused when the grid is made.
TEST(EmulatedSplitMemory, WhatAPointHoldsSizesTheSlabs) {
  const LimitedGpu run("1", "point-data", {16, 32, 192}, {0, 0, 0});
  const tessera::Index<3> extent{16, 32, 192}, automatic{0, 0, 0};
  const tessera::Grid<3> floats(extent, automatic, {},
                                tessera::PointData::of<float, float, float>());
  ASSERT_GT(run.grid.stream_depth(), 0) << run.grid.chosen();
  ASSERT_GT(floats.stream_depth(), 0) << floats.chosen();
  EXPECT_LT(floats.tiles(), run.grid.tiles()) << floats.chosen() << "\n" << run.grid.chosen();
  // Tiles given as an extent, merged on the GPU and streamed, alike.
  const tessera::Index<3> given{16, 32, 8};
  const tessera::Grid<3> given_doubles(extent, given);
  const tessera::Grid<3> given_floats(extent, given, {},
                                      tessera::PointData::of<float, float, float>());
  ASSERT_GT(given_doubles.stream_depth(), 0) << given_doubles.chosen();
  EXPECT_LT(given_floats.tiles(), given_doubles.tiles()) << given_floats.chosen() << "\n"
                                                         << given_doubles.chosen();
  const tessera::Grid<3> two(extent, automatic, {}, tessera::PointData::of<double, double>());
  const auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(0.0));
  tessera::Field<double, 3> u(two, 4, bc, "u"), next(two, 4, bc, "next");
  try {
    tessera::Field<double, 3> f(two, 4, bc, "f");
    ADD_FAILURE() << "a third double field on a grid declared for two was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("hold 24 bytes a point, more than the 16"));
    EXPECT_THAT(e.what(), testing::HasSubstr("tessera::PointData::of<...>()"));
  }
  try {
    const tessera::Grid<3> none(extent, automatic, {}, tessera::PointData{8, 0});
    ADD_FAILURE() << "a PointData without a field's bytes was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("PointData of 8 bytes a point, of which the "
                                             "stencil's field 0"));
  }
}

// Tiles a user keeps as given (--keep-gpu-tiles) on a GPU too small for a step's two tiles: the
// second field is refused when it is made, before any task (StarPU would wait for memory
// forever: a simulated run of that kind ended in SimGrid's deadlock).
TEST(EmulatedSplitMemory, AGpuTileThatNeverFitsIsRefused) {
  // One tile, kept on the GPU as given.
  const LimitedGpu run("1", "too-large", {32, 32, 96}, {32, 32, 96}, false);
  const tessera::Grid<3>& grid = run.grid;
  ASSERT_EQ(grid.split(), 96) << grid.chosen();
  const auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(0.0));
  tessera::Field<double, 3> u(grid, 1, bc, "u");  // 906 KB with its ghost layers: fits alone
  try {
    tessera::Field<double, 3> next(grid, 1, bc, "next");
    ADD_FAILURE() << "two tiles of 906 KB were accepted on a GPU of 1 MiB";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("field 'next' and the largest other field of its "
                                             "grid (of 'u', 'next') need, in the largest tile "
                                             "the grid places on the CUDA workers, 1.81e+06 "
                                             "bytes on a GPU, more than the 1.05e+06"));
  }
}

// Tiles a user gave as an extent on a grid larger than its GPU (issue 70): 3 tiles of 16 x 32 x
// 64, each 0.79 MB with its ghost layers for one field, a step's two never fit the stand-in's
// 1 MiB; the planner cuts the GPU part into the slabs that stream through it (more than 3),
// where it had kept them as given and refused the second field, and the result is the
// reference's bits.
TEST(EmulatedSplitMemory, GivenTilesLargerThanTheGpuStreamBitwise) {
  const LimitedGpu run("1", "given-streamed", {16, 32, 192}, {16, 32, 64});
  const tessera::Grid<3>& grid = run.grid;
  EXPECT_EQ(grid.split(), 192) << grid.chosen();
  EXPECT_GT(grid.stream_depth(), 0) << grid.chosen();
  EXPECT_GT(grid.tiles(), 3) << grid.chosen();
  EXPECT_THAT(grid.chosen(), testing::HasSubstr("the 3 tiles on the CUDA workers cut into "));
  test::expect_heat3d_advance_matches_reference(grid, 19, grid.stream_depth());
}

// A grid whose z planes are too large for the stand-in's 1 MiB (64 x 128 points, 0.65 MB a
// plane as a visit holds it) but whose y planes are small (64 x 8) streams in slabs along y
// (issue 70), where it ran on the CPU part alone; its slabs carry their ghost planes (only z
// planes lie whole in a tile's buffer), and the result is the reference's bits.
TEST(EmulatedSplitMemory, SlabsAlongYStreamWhereZPlanesDoNotFitBitwise) {
  const LimitedGpu run("1", "streamed-y", {64, 128, 8}, {0, 0, 0});
  const tessera::Grid<3>& grid = run.grid;
  EXPECT_GT(grid.stream_depth(), 0) << grid.chosen();
  EXPECT_THAT(grid.chosen(), testing::HasSubstr("GPU slabs along y")) << grid.chosen();
  EXPECT_GT(grid.tiles(), 2) << grid.chosen();
  test::expect_heat3d_advance_matches_reference(grid, 13, grid.stream_depth());
}

// A GPU's memory of tens of GB goes through the runtime's agreement of figures whole (it once
// overflowed a fixed-point scale and read as unknown): 40 GiB for the stand-in, a grid of 38.7
// GB at the planner's 24 bytes a point streams, against 0.85 of 42949672960 bytes.
TEST(EmulatedSplitMemory, TensOfGigabytesAgreed) {
  const LimitedGpu run("40960", "agreed", {1024, 1024, 1536}, {0, 0, 0});
  const tessera::Grid<3>& grid = run.grid;
  EXPECT_GT(grid.stream_depth(), 0) << grid.chosen();
  EXPECT_THAT(grid.chosen(), testing::HasSubstr("against 3.65e+10 it may hold")) << grid.chosen();
}

INSTANTIATE_TEST_SUITE_P(EmulatedDevice, EmulatedSplit, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "ExchangesInTheTileTasks" : "SeparateExchangeTasks";
                         });

}  // namespace
