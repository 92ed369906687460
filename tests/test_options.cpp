// Runtime flags: parsed with CLI11 and stripped, STARPU_* honoured and never silently
// overridden, unknown flags rejected, the configuration printed once, the trace written.
#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <tessera/options_fields.hpp>

#include "apps/common/progress.hpp"
#include "tests/test_support.hpp"

namespace {

using testing::AllOf;
using testing::HasSubstr;

TEST(Options, RuntimeFlagsAreParsedAndStripped) {
  std::vector<std::string> args{"prog",   "--sched", "eager",   "--gtest_brief=1",
                                "--ncpu", "1",       "--quiet", "input.dat"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  const tessera::Options o = tessera::parse_options(argc, argv.data());
  EXPECT_EQ(o.scheduler, "eager");
  EXPECT_EQ(o.cpu_workers, 1);
  EXPECT_TRUE(o.quiet);
  ASSERT_EQ(argc, 3);
  EXPECT_STREQ(argv[1], "--gtest_brief=1");
  EXPECT_STREQ(argv[2], "input.dat");
}

TEST(Options, ApplicationParserRejectsUnknownFlags) {
  CLI::App app{"app"};
  tessera::Options o;
  tessera::add_options(app, o);
  EXPECT_THROW(app.parse(std::vector<std::string>{"--bogus"}), CLI::ParseError);
  app.parse(std::vector<std::string>{"2", "--ncpu", "dmda", "--sched"});  // reversed argv
  EXPECT_EQ(o.scheduler, "dmda");
  EXPECT_EQ(o.cpu_workers, 2);
}

TEST(Options, EnvironmentIsHonouredAndContradictionsAreErrors) {
  setenv("STARPU_SCHED", "eager", 1);
  {
    tessera::Options o;
    o.quiet = true;
    tessera::Runtime rt(o);
    EXPECT_EQ(rt.scheduler(), "eager");
    EXPECT_THAT(rt.configuration(), HasSubstr("scheduler eager (STARPU_SCHED)"));
  }
  tessera::Options o;
  o.quiet = true;
  o.scheduler = "dmda";
  try {
    tessera::Runtime rt(o);
    ADD_FAILURE() << "contradiction accepted";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--sched dmda contradicts STARPU_SCHED=eager"));
  }
  unsetenv("STARPU_SCHED");
}

// The default scheduler is chosen for the run and the configuration line says which and why:
// lws where only CPU workers can start, dmda where CUDA workers may (docs/scheduling.md); a
// user's --sched still wins.
TEST(Options, DefaultSchedulerIsChosenForTheWorkers) {
  if (std::getenv("STARPU_SCHED") != nullptr || std::getenv("TESSERA_EMULATED_CUDA") != nullptr)
    GTEST_SKIP() << "STARPU_SCHED or TESSERA_EMULATED_CUDA set: the default is not asked for";
  tessera::Options o;
  o.quiet = true;
  o.cuda_workers = 0;
  o.cpu_workers = 2;
  {
    tessera::Runtime rt(o);
    if (rt.simulated()) GTEST_SKIP() << "a simulated node: CUDA workers are simulated";
    EXPECT_EQ(rt.scheduler(), "lws");
    EXPECT_THAT(rt.configuration(), HasSubstr("scheduler lws (default for CPU workers only)"));
  }
  o.scheduler = "dmda";
  tessera::Runtime rt(o);
  EXPECT_THAT(rt.configuration(), HasSubstr("scheduler dmda (--sched)"));
}

TEST(Options, UnknownSchedulerAndTooManyWorkersAreErrors) {
  tessera::Options o;
  o.quiet = true;
  o.scheduler = "fastest";
  try {
    tessera::Runtime rt(o);
    ADD_FAILURE();
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'fastest'"));
    EXPECT_THAT(e.what(), HasSubstr("dmda"));
  }
  o.scheduler.clear();
  o.cpu_workers = 100000;
  try {
    tessera::Runtime rt(o);
    ADD_FAILURE();
  } catch (const tessera::Error& e) { EXPECT_THAT(e.what(), HasSubstr("--ncpu 100000 exceeds")); }
}

struct Left {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> a,
                             tessera::Out<double> b) const {
    b = a(-1, 0);
  }
};

TEST(Options, GpuFractionNeedsWorkersOfEachKindItPinsTo) {
  tessera::Options o;
  o.quiet = true;
  o.cpu_workers = 1;
  o.cuda_workers = 0;
  o.gpu_fraction = 0.5;
  try {
    tessera::Runtime rt(o);
    ADD_FAILURE() << "a GPU share without CUDA workers was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--gpu-fraction 0.5"));
    EXPECT_THAT(e.what(), HasSubstr("pins tiles to CUDA workers, but there are none"));
  }
  // StarPU was shut down cleanly: the next Runtime starts, and fraction 0 (every tile on the
  // CPU workers, the only ones) must still give the reference result.
  o.gpu_fraction = 0;
  tessera::Runtime rt(o);
  tessera::Grid<2> grid({8, 6}, {3, 2});
  tessera::Field<double, 2> u(grid, 1), v(grid, 1);
  u.fill([](tessera::Index<2> p) { return double(p[0] + 10 * p[1]); });
  tessera::Stencil<2>("left", tessera::Shape::Star, 1)
      .apply(Left{}, tessera::in(u), tessera::out(v));
  EXPECT_EQ(v.at({0, 3}), 0.0);  // Dirichlet 0 ghost
  EXPECT_EQ(v.at({5, 3}), 34.0);
}

TEST(Options, ConfigurationIsPrintedOnce) {
  testing::internal::CaptureStdout();
  {
    tessera::Options o;
    o.cpu_workers = 1;
    tessera::Runtime rt(o);
    rt.wait();
  }
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("tessera: StarPU"));
  EXPECT_THAT(out, HasSubstr("1 CPU + 0 CUDA workers"));
  EXPECT_EQ(out.find("tessera: StarPU"), out.rfind("tessera: StarPU"));
}

// At namespace scope: nvcc cannot instantiate a kernel template on a function-local type.
struct Average {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = 0.25 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
};

// Runs 3 steps of a 4-tile periodic stencil with a trace; returns the trace's task events by
// name, and checks that each ran on a worker the trace lists.
std::map<std::string, int> traced_tasks(bool fused_exchange) {
  const std::string path = testing::TempDir() + "tessera_trace.json";
  {
    tessera::Options o = test::options({"dmda", 2});
    o.trace = path;
    o.fused_exchange = fused_exchange;
    tessera::Runtime rt(o);
    const tessera::Grid<2> grid({16, 16}, {8, 8}, {true, true});  // 4 tiles
    tessera::Field<double, 2> u(grid, 1, {}, "u"), v(grid, 1, {}, "v");
    tessera::Stencil<2> s("average", tessera::Shape::Star, 1);
    for (int step = 0; step < 3; ++step) {
      s.apply(Average{}, tessera::in(u), tessera::out(v));
      tessera::swap(u, v);
    }
  }
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::set<int> workers;
  std::map<std::string, int> tasks;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M") workers.insert(e["tid"].get<int>());
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++tasks[e["name"].get<std::string>()];
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_EQ(workers.count(e["tid"].get<int>()), 1u);
  }
  return tasks;
}

TEST(Options, TraceHasOneEventPerTaskOnExistingWorkers) {
  // Exchanges in tasks of their own: per step and tile one halo-pack, one boundary, one
  // interior task.
  std::map<std::string, int> separate = traced_tasks(false);
  EXPECT_EQ(separate["average:interior"], 3 * 4);
  EXPECT_EQ(separate["average:halo-pack"], 3 * 4);
  EXPECT_EQ(separate["average:boundary"], 3 * 4);
  EXPECT_EQ(separate.size(), 3u);
  // Exchanges inside the interior tasks (the default): one task per step and tile, which
  // copies its input's ghost layers in and, from the second step on (once the output field
  // has been exchanged), packs its output's faces; halo-pack tasks only for each field's first
  // exchange (u and v), none the third step.
  std::map<std::string, int> fused = traced_tasks(true);
  EXPECT_EQ(fused["average:interior+halo"], 3 * 4);
  EXPECT_EQ(fused["average:halo-pack"], 2 * 4);
  EXPECT_EQ(fused.size(), 2u);
}

}  // namespace

namespace {

std::string start_error(const tessera::Options& o) {
  try {
    tessera::Runtime rt(o);
  } catch (const tessera::Error& e) { return e.what(); }
  ADD_FAILURE() << "the Runtime started";
  return {};
}

// StarPU aborts the program on these; Tessera refuses them first, with a message.
TEST(Options, EnvironmentStarPUWouldAbortOnIsRefused) {
  tessera::Options o;
  o.quiet = true;
  setenv("STARPU_NCPU", "abc", 1);
  EXPECT_THAT(start_error(o),
              AllOf(HasSubstr("STARPU_NCPU=abc is not a whole number"), HasSubstr("unset it")));
  setenv("STARPU_NCPU", "-1", 1);
  EXPECT_THAT(start_error(o), HasSubstr("STARPU_NCPU=-1"));
  // Compared as numbers: 02 is 2.
  setenv("STARPU_NCPU", "02", 1);
  o.cpu_workers = 2;
  {
    tessera::Runtime rt(o);
    EXPECT_EQ(rt.cpu_workers(), 2);
  }
  o.cpu_workers = 1;
  EXPECT_THAT(start_error(o), HasSubstr("--ncpu 1 contradicts STARPU_NCPU=02"));
  unsetenv("STARPU_NCPU");
  o.cpu_workers = 0;
  o.cuda_workers = 0;
  EXPECT_THAT(start_error(o),
              AllOf(HasSubstr("--ncpu 0 leaves no worker"), HasSubstr("at least 1 CPU")));
}

TEST(Options, PerfmodelDirMustBeAWritableDirectory) {
  const std::string file = testing::TempDir() + "tessera_not_a_dir";
  std::ofstream(file) << "x";
  tessera::Options o = test::options({"eager", 1});
  o.perfmodel_dir = file;
  EXPECT_THAT(start_error(o),
              AllOf(HasSubstr("--perfmodel-dir '" + file + "' is not a directory")));
  o.perfmodel_dir = file + "/models";
  EXPECT_THAT(start_error(o),
              HasSubstr("'" + file + "' is not a directory; give a directory you can write"));
  // A missing directory is created (with its parents), as StarPU would.
  const std::string fresh =
      testing::TempDir() + "tessera_models_" + std::to_string(getpid()) + "/a/b";
  o.perfmodel_dir = fresh;
  { tessera::Runtime rt(o); }
  struct stat st {};
  ASSERT_EQ(stat(fresh.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST(Options, NanAndEmptyValuesAreRefused) {
  tessera::Options o = test::options({"eager", 1});
  o.gpu_fraction = std::nan("");
  EXPECT_THAT(start_error(o), HasSubstr("--gpu-fraction nan is not a number"));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--gpu-fraction", "nan"},
                                               {"--sched", ""},
                                               {"--ncpu", "-1"},
                                               {"--trace", ""},
                                               {"--perfmodel-dir", ""}}) {
    CLI::App app{"app"};
    tessera::Options parsed;
    tessera::add_options(app, parsed);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    EXPECT_THROW(app.parse(reversed), CLI::ValidationError) << args[0] << " '" << args[1] << "'";
  }
}

TEST(Options, TraceAndReportMustBeDifferentFilesAndExistingOnesAreKept) {
  tessera::Options o = test::options({"eager", 1});
  o.trace = testing::TempDir() + "tessera_same.out";
  o.report = testing::TempDir() + "./tessera_same.out";
  EXPECT_THAT(start_error(o), HasSubstr("--trace and --report both name"));
  // Checking the path at start-up leaves an existing file as it was.
  const std::string kept = testing::TempDir() + "tessera_kept.json";
  std::ofstream(kept) << "previous";
  o.trace = kept;
  o.report.clear();
  try {
    tessera::Runtime rt(o);
    throw tessera::Error("a failure after start-up");
  } catch (const tessera::Error&) {}
  std::ifstream in(kept);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "previous");
}

}  // namespace

// The cross-rank check compares every field of Options: the visitor names each once (a new
// field does not compile until it is named there). Before, a hand-written list left out
// fused_exchange, max_submitted_tasks and watchdog.
TEST(Options, EveryFieldIsComparedAcrossRanks) {
  std::set<std::string> names;
  tessera::detail::for_each_option(tessera::Options{},
                                   [&](const char* name, const auto&) { names.insert(name); });
  EXPECT_EQ(names.size(), 18u);
  for (const char* name : {"fused_exchange", "merge_gpu_tiles", "max_submitted_tasks", "watchdog",
                           "rank_grid", "default_scheduler"})
    EXPECT_EQ(names.count(name), 1u) << name;
}

// Under mpirun StarPU also counts StarPU-MPI's tasks of the halo exchanges as pending (heat3d
// on 2 ranks: 244 pending for this rank's 78 tasks at the start): the progress line must count
// steps as the tasks finish, not show step 0 until two thirds of the run are done.
TEST(ProgressLine, ExchangeTasksOfStarpuMpiDoNotHoldTheStepAtZero) {
  apps::ProgressEstimate e;
  EXPECT_EQ(e.step(78, 244, 300), 0);  // nothing finished yet
  EXPECT_EQ(e.step(78, 122, 300), 150);
  EXPECT_EQ(e.step(78, 0, 300), 300);
}

TEST(ProgressLine, OneRankCountsTheFinishedShareOfItsTasks) {
  apps::ProgressEstimate e;
  EXPECT_EQ(e.step(0, 0, 0), 0);
  EXPECT_EQ(e.step(100, 100, 10), 0);
  EXPECT_EQ(e.step(100, 50, 10), 5);
  EXPECT_EQ(e.step(200, 20, 20), 18);
}
