// Traces: the Chrome JSON of a real run (one event per submitted task, ordered times, known
// workers), the HTML report's content, the merge of several ranks, and the --fxt refusal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <starpu_config.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/test_support.hpp"
#include "trace/encoding.hpp"

namespace {

using testing::HasSubstr;

struct Average {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = 0.25 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
};

// Runs `steps` steps of a 4-tile periodic average with the given outputs; returns the number
// of tasks the runtime submitted.
std::size_t run_average(tessera::Options o, int steps) {
  tessera::Runtime rt(o);
  const tessera::Grid<2> grid({16, 16}, {8, 8}, {true, true});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), v(grid, 1, {}, "v");
  u.fill([](tessera::Index<2> i) { return static_cast<double>(i[0] + 3 * i[1]); });
  tessera::Stencil<2> s("average", tessera::Shape::Star, 1);
  for (int step = 0; step < steps; ++step) {
    s.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
  rt.wait();
  return rt.tasks_submitted();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Trace, JsonHasEveryTaskInOrderOnItsWorker) {
  const std::string path = testing::TempDir() + "tessera_trace_tasks.json";
  tessera::Options o = test::options({"dmda", 2});
  o.trace = path;
  const std::size_t submitted = run_average(o, 4);
  ASSERT_GT(submitted, 0u);

  const nlohmann::json trace = nlohmann::json::parse(slurp(path));
  std::set<std::pair<int, int>> tracks;  // (pid, tid) of each worker track
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tracks.insert({e["pid"].get<int>(), e["tid"].get<int>()});
  EXPECT_EQ(tracks.size(), 2u);  // --ncpu 2
  std::size_t tasks = 0;
  std::map<std::string, int> kinds;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++tasks;
    ++kinds[e["cat"].get<std::string>()];
    const double start = e["ts"].get<double>(), dur = e["dur"].get<double>();
    EXPECT_LE(e["args"]["submit_us"].get<double>(), start) << e.dump();
    EXPECT_GE(dur, 0.0) << e.dump();
    EXPECT_EQ(e["pid"].get<int>(), 0);
    EXPECT_EQ(e["args"]["rank"].get<int>(), 0);
    EXPECT_EQ(tracks.count({e["pid"].get<int>(), e["tid"].get<int>()}), 1u) << e.dump();
    // Every task's tag travels with it: stencil, tile and step; halo tasks name their field.
    EXPECT_EQ(e["args"]["stencil"], "average") << e.dump();
    EXPECT_GE(e["args"]["tile"].get<int>(), 0) << e.dump();
    EXPECT_LT(e["args"]["tile"].get<int>(), 4) << e.dump();
    if (e["cat"] == "interior+halo" || e["cat"] == "halo-pack") {
      EXPECT_GE(e["args"]["step"].get<int>(), 0);
      EXPECT_LT(e["args"]["step"].get<int>(), 4);
    }
    if (e["cat"] == "halo-pack") {
      const std::string field = e["args"]["field"].get<std::string>();
      EXPECT_TRUE(field == "u" || field == "v") << e.dump();
      EXPECT_EQ(e["args"]["task"], "average:" + e["cat"].get<std::string>() + " " + field +
                                       " tile=" + std::to_string(e["args"]["tile"].get<int>()) +
                                       " step=" + std::to_string(e["args"]["step"].get<int>()));
    }
  }
  EXPECT_EQ(tasks, submitted);
  EXPECT_EQ(kinds["interior+halo"], 4 * 4);  // interior tasks that exchange the ghost layers
}

TEST(Trace, HtmlReportHoldsEveryTaskAndWorker) {
  const std::string path = testing::TempDir() + "tessera_report.html";
  tessera::Options o = test::options({"eager", 2});
  o.report = path;
  const std::size_t submitted = run_average(o, 2);
  const std::string html = slurp(path);
  EXPECT_THAT(html, HasSubstr("data-tasks=\"" + std::to_string(submitted) + "\""));
  EXPECT_THAT(html, HasSubstr("<table id=\"kinds\">"));
  EXPECT_THAT(html, HasSubstr("CPU / GPU split"));
  EXPECT_EQ(html.find("<script src"), std::string::npos);  // self-contained
  const nlohmann::json data =
      nlohmann::json::parse(html.substr(html.find('>', html.find("id=\"trace-data\"")) + 1,
                                        html.find("</script>", html.find("id=\"trace-data\"")) -
                                            html.find('>', html.find("id=\"trace-data\"")) - 1));
  EXPECT_EQ(data["ranks"][0]["tasks"].size(), submitted);
  EXPECT_EQ(data["ranks"][0]["workers"].size(), 2u);
}

TEST(Trace, TaskNamesAreMadeFromTheTag) {
  tessera::trace::TaskEvent e;
  e.stencil = "heat3d";
  e.kind = "halo-pack";
  e.field = "u";
  e.tile = 12;
  e.step = 7;
  EXPECT_EQ(tessera::trace::task_name(e), "heat3d:halo-pack u tile=12 step=7");
  e.stencil = "reduce";
  e.kind = "sum";
  e.step = -1;
  e.tile = 3;
  EXPECT_EQ(tessera::trace::task_name(e), "reduce:sum u tile=3");
  e.field.clear();
  e.stencil.clear();
  e.tile = -1;
  EXPECT_EQ(tessera::trace::task_name(e), "sum");
}

// Two ranks' records, as an MPI gather would hand them over.
std::vector<tessera::trace::RankTrace> two_ranks() {
  std::vector<tessera::trace::RankTrace> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[r].rank = r;
    ranks[r].workers = {{0, "CPU 0", "cpu", 0}, {1, "CUDA 0", "cuda", 1}};
    for (int i = 0; i < 4; ++i) {
      tessera::trace::TaskEvent e;
      e.stencil = "s";
      e.kind = "interior";
      e.tile = i;
      e.step = 0;
      e.worker = i % 2;
      e.start_us = 10.0 * i;
      e.end_us = e.start_us + (r == 0 ? 10 : 5);
      e.predicted_us = 8;
      ranks[r].tasks.push_back(e);
    }
    ranks[r].begin_us = 0;
    ranks[r].end_us = 40;
    ranks[r].transfers = {{"RAM 0", "CUDA 0", 4096, 2, false}, {"rank 0", "rank 1", 512, 1, true}};
  }
  return ranks;
}

TEST(Trace, RanksMergeIntoOneProcessEach) {
  std::stringstream out;
  tessera::trace::write_chrome_json(two_ranks(), out);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  std::set<int> pids;
  int tasks = 0, processes = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++tasks;
      pids.insert(e["pid"].get<int>());
    }
    processes += e["name"] == "process_name";
  }
  EXPECT_EQ(tasks, 8);
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_EQ(processes, 2);
  EXPECT_THAT(out.str(), HasSubstr("mpi rank 0->rank 1"));
}

TEST(Trace, SummaryGivesPerRankSpreadAndPredictionError) {
  const std::string table = tessera::trace::summary_table(two_ranks());
  EXPECT_THAT(table, HasSubstr("per rank:"));
  // Rank 0: both workers busy 20 of 40 us; rank 1: 10 of 40 us.
  EXPECT_THAT(table, HasSubstr("50.0 / 50.0 / 50.0"));
  EXPECT_THAT(table, HasSubstr("25.0 / 25.0 / 25.0"));
  const auto kinds = tessera::trace::totals_by_kind(two_ranks());
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0].tasks, 8);
  EXPECT_DOUBLE_EQ(kinds[0].prediction_error(), (64.0 - 60.0) / 60.0);
  std::stringstream html;
  tessera::trace::write_html_report(two_ranks(), "two ranks", html);
  EXPECT_THAT(html.str(), HasSubstr("data-tasks=\"8\""));
  EXPECT_THAT(html.str(), HasSubstr("rank 1 CUDA 0"));
}

TEST(Trace, SummaryOfOneRankListsEachWorker) {
  auto ranks = two_ranks();
  ranks.resize(1);
  const std::string table = tessera::trace::summary_table(ranks);
  EXPECT_THAT(table, HasSubstr("per worker:"));
  EXPECT_THAT(table, HasSubstr("CUDA 0"));
  EXPECT_THAT(table, HasSubstr("-20.0"));  // predicted 4 x 8 us for 4 x 10 us measured
}

// What a summary-only rank keeps: the same records as running totals per (worker, kind).
// Each folds the critical path of its own tasks.
std::vector<tessera::trace::RankTrace> as_totals(std::vector<tessera::trace::RankTrace> ranks) {
  for (auto& r : ranks) {
    r.critical_path_us = tessera::trace::bounds({r}).critical_path_us;
    std::map<std::pair<int, std::string>, tessera::trace::TaskTotals> by;
    for (const auto& e : r.tasks) {
      auto& t = by[{e.worker, e.kind}];
      t.worker = e.worker;
      t.kind = e.kind;
      ++t.tasks;
      t.measured_us += e.end_us - e.start_us;
      if (e.predicted_us >= 0) {
        ++t.predicted_tasks;
        t.predicted_us += e.predicted_us;
        t.measured_with_prediction_us += e.end_us - e.start_us;
      }
    }
    r.tasks.clear();
    for (auto& [key, t] : by) r.totals.push_back(t);
  }
  return ranks;
}

TEST(Trace, SummaryFromRunningTotalsIsTheSameTable) {
  for (std::size_t n : {1u, 2u}) {
    auto events = two_ranks();
    events.resize(n);
    const auto totals = as_totals(events);
    ASSERT_TRUE(totals[0].tasks.empty());
    EXPECT_EQ(totals[0].task_count(), 4);
    // The same table; the critical path of several ranks is folded per rank (and says so).
    const auto upto_bounds = [](const std::string& table) {
      return table.substr(0, table.find("critical path"));
    };
    if (n == 1)
      EXPECT_EQ(tessera::trace::summary_table(totals), tessera::trace::summary_table(events));
    EXPECT_EQ(upto_bounds(tessera::trace::summary_table(totals)),
              upto_bounds(tessera::trace::summary_table(events)));
    // Totals travel between ranks like events do.
    std::string bytes;
    for (const auto& r : totals) tessera::trace::encode(r, bytes);
    const auto decoded =
        tessera::trace::decode(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    EXPECT_EQ(tessera::trace::summary_table(decoded), tessera::trace::summary_table(totals));
  }
}

TEST(Trace, SummaryOnlyKeepsTotalsNotEvents) {
  tessera::Options o = test::options({"eager", 2});
  o.summary = true;
  o.quiet = true;
  tessera::Runtime rt(o);
  const tessera::Grid<2> grid({16, 16}, {8, 8}, {true, true});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), v(grid, 1, {}, "v");
  u.fill([](tessera::Index<2> i) { return static_cast<double>(i[0]); });
  tessera::Stencil<2> s("average", tessera::Shape::Star, 1);
  for (int step = 0; step < 3; ++step) {
    s.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
  rt.wait();
  const tessera::trace::RankTrace r = rt.recorded();
  EXPECT_TRUE(r.tasks.empty());
  EXPECT_FALSE(r.totals.empty());
  EXPECT_EQ(static_cast<std::size_t>(r.task_count()), rt.tasks_submitted());
  long interiors = 0;
  for (const auto& k : tessera::trace::totals_by_kind({r}))
    if (k.kind == "interior+halo") interiors = k.tasks;
  EXPECT_EQ(interiors, 3 * 4);
  EXPECT_LE(r.begin_us, r.end_us);
  EXPECT_THAT(tessera::trace::summary_table({r}), HasSubstr("interior+halo"));
}

}  // namespace

// At namespace scope: nvcc cannot instantiate kernels on function-local types.
struct CornerSum {  // a cell's value from its 4 nodes
  TESSERA_HD void operator()(const double* a, const double* b, const double* c, const double* d,
                             double* out) const {
    *out = a[0] + b[0] + c[0] + d[0];
  }
};

namespace {

// A mesh of 4 x 4 square cells on 5 x 5 nodes, cut into 4 tiles.
struct Squares {
  tessera::Set nodes{25, "nodes"}, cells{16, "cells"};
  tessera::Map corners{cells, nodes, 4, quads(), "corners"};
  tessera::Dat<double> x{nodes, 2, positions(), "x"}, level{nodes, 1, "level"};
  tessera::Dat<double> value{cells, 1, "value"}, centre{cells, 2, "centre"};
  static std::vector<std::int32_t> quads() {
    std::vector<std::int32_t> q;
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        q.insert(q.end(), {i + 5 * j, i + 1 + 5 * j, i + 6 + 5 * j, i + 5 + 5 * j});
    return q;
  }
  static std::vector<double> positions() {
    std::vector<double> p;
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 5; ++i) p.insert(p.end(), {double(i), double(j)});
    return p;
  }
  void run() {
    using tessera::Access;
    using tessera::arg;
    tessera::par_loop(CornerSum{}, "corner_sum", cells, arg(x, corners, 0, 2, Access::Read),
                      arg(x, corners, 1, 2, Access::Read), arg(x, corners, 2, 2, Access::Read),
                      arg(x, corners, 3, 2, Access::Read), arg(value, 1, Access::Write));
  }
};

TEST(Trace, ReportDrawsTheMeshPartitions) {
  const std::string path = testing::TempDir() + "tessera_partition_report.html";
  tessera::Options o = test::options({"eager", 2});
  o.report = path;
  {
    tessera::Runtime rt(o);
    Squares m;
    tessera::partition_mesh(m.cells, 4, tessera::Partitioner::Block);
    tessera::show_partitions(m.x, m.corners);
    m.run();
    rt.wait();
  }
  const std::string html = slurp(path);
  const nlohmann::json data =
      nlohmann::json::parse(html.substr(html.find('>', html.find("id=\"trace-data\"")) + 1,
                                        html.find("</script>", html.find("id=\"trace-data\"")) -
                                            html.find('>', html.find("id=\"trace-data\"")) - 1));
  ASSERT_EQ(data["partition_maps"].size(), 1u);
  const auto& map = data["partition_maps"][0];
  EXPECT_EQ(map["set"], "cells");
  EXPECT_EQ(map["loops"], nlohmann::json({"corner_sum"}));
  EXPECT_EQ(map["elements"], 16);
  ASSERT_EQ(map["tiles"].size(), 4u);
  for (const auto& t : map["tiles"]) {  // every tile ran its loop task on a worker
    EXPECT_GE(t[2].get<int>(), 0) << t;
    EXPECT_GE(t[3].get<int>(), 1) << t;
  }
  // Block cuts: 4 consecutive cells (a row of squares) per tile, each a square of 4 corners.
  ASSERT_EQ(map["shapes"].size(), 16u);
  for (int e = 0; e < 16; ++e) {
    EXPECT_EQ(map["shapes"][e][0], e / 4) << e;
    EXPECT_EQ(map["shapes"][e].size(), 9u) << e;
  }
  EXPECT_EQ(map["borders"].size(), 3u * 4);  // 3 lines of 4 sides between the rows
}

TEST(Trace, ShowPartitionsNamesWhatIsWrong) {
  tessera::Options o = test::options({"eager", 1});
  o.report = testing::TempDir() + "tessera_partition_errors.html";
  tessera::Runtime rt(o);
  Squares m;
  const auto error_of = [](auto&& call) {
    try {
      call();
    } catch (const tessera::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_THAT(error_of([&] { tessera::show_partitions(m.x, m.corners); }),
              HasSubstr("call show_partitions after partition_mesh"));
  tessera::partition_mesh(m.cells, 2, tessera::Partitioner::Block);
  EXPECT_THAT(error_of([&] { tessera::show_partitions(m.level, m.corners); }),
              HasSubstr("dat 'level' has dim 1; positions need 2 or 3 values"));
  EXPECT_THAT(error_of([&] { tessera::show_partitions(m.centre, m.corners); }),
              HasSubstr("map 'corners' goes to set 'nodes' but dat 'centre' is on set 'cells'"));
  tessera::show_partitions(m.x);  // nodes as dots: fine
}

#ifndef STARPU_USE_FXT
TEST(Trace, FxtNeedsAStarpuWithFxt) {
  tessera::Options o = test::options({"eager", 1});
  o.fxt = testing::TempDir();
  try {
    tessera::Runtime rt(o);
    FAIL() << "a StarPU without FxT accepted --fxt";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("built with FxT"));
    EXPECT_THAT(e.what(), HasSubstr("docs/building.md"));
  }
}
#endif

}  // namespace
