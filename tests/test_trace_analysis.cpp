// The analysis of recorded runs: the task graph rebuilt from data accesses, the critical path
// and the area bound on graphs whose answers are known by hand, the idle split and the
// per-step view on hand-made traces, and the same rules checked against real runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/test_support.hpp"
#include "trace/analysis.hpp"
#include "trace/encoding.hpp"

namespace {

namespace tt = tessera::trace;
using testing::HasSubstr;
using testing::Not;

constexpr std::uint8_t R = tt::DataAccess::kRead, W = tt::DataAccess::kWrite;

// A hand-made rank: workers by arch, then tasks added in submission order.
struct Made {
  tt::RankTrace rank;
  explicit Made(std::vector<std::string> archs) {
    for (std::size_t i = 0; i < archs.size(); ++i)
      rank.workers.push_back(
          {static_cast<int>(i), archs[i] + " " + std::to_string(i), archs[i], 0});
  }
  // A task of `kind` on `worker` from `start` for `us`, accessing {data, mode}...
  Made& task(const std::string& kind, int worker, double start, double us,
             std::vector<std::pair<std::uint64_t, std::uint8_t>> data, int step = -1,
             double submit = 0) {
    tt::TaskEvent e;
    e.stencil = "s";
    e.kind = kind;
    e.worker = worker;
    e.step = step;
    e.submit_us = submit;
    e.start_us = start;
    e.end_us = start + us;
    e.seq = rank.tasks.size();
    for (auto [d, m] : data) e.data.push_back({d, 8, m});
    rank.tasks.push_back(e);
    rank.begin_us = std::min(rank.begin_us, start);
    rank.end_us = std::max(rank.end_us, start + us);
    return *this;
  }
};

TEST(TraceAnalysis, ChainIsTheSumOfItsTasks) {
  // x written, updated, read: each waits for the one before; on one worker with gaps.
  Made run({"cpu"});
  run.task("a", 0, 0, 10, {{1, W}})
      .task("b", 0, 15, 20, {{1, R | W}})
      .task("c", 0, 40, 5, {{1, R}});
  const tt::Bounds b = tt::bounds({run.rank});
  EXPECT_DOUBLE_EQ(b.makespan_us, 45);
  EXPECT_DOUBLE_EQ(b.critical_path_us, 35);
  EXPECT_EQ(b.critical_path_tasks, 3);
  EXPECT_DOUBLE_EQ(b.area_bound_us, 35);  // one worker: all the work
  EXPECT_DOUBLE_EQ(b.efficiency(), 35.0 / 45);
  const tt::Graph g = tt::rebuild_graph({run.rank});
  ASSERT_EQ(g.critical.size(), 3u);
  EXPECT_EQ(g.critical[2].index, 2u);
  // Ready when the predecessor ended: b at 10 (it started at 15), c at 35.
  EXPECT_DOUBLE_EQ(g.ready_us[0][1], 10);
  EXPECT_DOUBLE_EQ(g.ready_us[0][2], 35);
}

TEST(TraceAnalysis, DiamondFollowsItsLongerBranch) {
  // a writes x and y; b (30 us) reads x, c (10 us) reads y; d reads what both wrote.
  Made run({"cpu", "cpu"});
  run.task("a", 0, 0, 10, {{1, W}, {2, W}})
      .task("b", 0, 10, 30, {{1, R}, {3, W}})
      .task("c", 1, 10, 10, {{2, R}, {4, W}})
      .task("d", 0, 40, 5, {{3, R}, {4, R}, {5, W}});
  const tt::Graph g = tt::rebuild_graph({run.rank});
  EXPECT_DOUBLE_EQ(g.critical_path_us, 45);
  ASSERT_EQ(g.critical.size(), 3u);
  EXPECT_EQ(g.critical[0].index, 0u);
  EXPECT_EQ(g.critical[1].index, 1u);  // b, not c
  EXPECT_EQ(g.critical[2].index, 3u);
  EXPECT_DOUBLE_EQ(g.ready_us[0][3], 40);  // when b, the later of its two inputs, ended
  const tt::Bounds b = tt::bounds({run.rank});
  EXPECT_DOUBLE_EQ(b.area_bound_us, 55.0 / 2);  // two CPU workers share 55 us
  EXPECT_DOUBLE_EQ(b.efficiency(), 1.0);        // the critical path takes the whole run
}

TEST(TraceAnalysis, WritersWaitForReadersAndWriters) {
  Made run({"cpu", "cpu"});
  run.task("w", 0, 0, 5, {{1, W}})
      .task("r", 0, 5, 10, {{1, R}})
      .task("r", 1, 5, 20, {{1, R}})
      .task("w", 0, 25, 1, {{1, W}})   // write after read: after both readers, the longer one
      .task("w", 0, 26, 2, {{1, W}});  // write after write
  const tt::Graph g = tt::rebuild_graph({run.rank});
  EXPECT_DOUBLE_EQ(g.path_us[0][3], 5 + 20 + 1);
  EXPECT_DOUBLE_EQ(g.ready_us[0][3], 25);
  EXPECT_DOUBLE_EQ(g.critical_path_us, 28);
  std::vector<std::size_t> chain;
  for (const tt::TaskRef& t : g.critical) chain.push_back(t.index);
  EXPECT_EQ(chain, (std::vector<std::size_t>{0, 2, 3, 4}));
}

TEST(TraceAnalysis, IndependentTasksOnTwoClassesShareTheWorkOptimally) {
  // Kind a: 10 us on CPU, 2 us on CUDA (4 tasks); b: CPU only (4 us, 1 task); c: 6 us on
  // either (2 tasks). By hand: all of a on CUDA (8 us), b on CPU (4 us), and c split so that
  // both classes end together: 8 + 6y = 4 + 6 (2 - y)  =>  y = 2/3, T = 12 us.
  Made run({"cpu", "cuda"});
  run.task("a", 0, 0, 10, {})
      .task("a", 0, 10, 10, {})
      .task("a", 1, 0, 2, {})
      .task("a", 1, 2, 2, {});
  run.task("b", 0, 20, 4, {}).task("c", 0, 24, 6, {}).task("c", 1, 4, 6, {});
  EXPECT_DOUBLE_EQ(tt::area_bound(run.rank), 12);
  // Independent: the critical path is the longest task.
  EXPECT_DOUBLE_EQ(tt::bounds({run.rank}).critical_path_us, 10);
  // A kind that ran on one class only stays there: with b 40 us on CPU, CPU alone bounds it.
  Made heavy({"cpu", "cuda"});
  heavy.task("a", 1, 0, 2, {}).task("a", 0, 0, 10, {}).task("b", 0, 10, 40, {});
  EXPECT_DOUBLE_EQ(tt::area_bound(heavy.rank), 40);  // a (both tasks) fits on CUDA: 4 us
  // The models may place a kind where it did not run: with b predicted at 8 us on CUDA, both
  // kinds run 5 times faster there, so 60 us of CPU work on one CPU and one CUDA worker end
  // together at 60 / (1 + 5) = 10 us.
  heavy.rank.model_times = {{"b", "cuda", 1, 8}};
  EXPECT_DOUBLE_EQ(tt::area_bound(heavy.rank), 10);
  // Two workers of one class: the work over both.
  Made two({"cpu", "cpu", "cuda"});
  two.task("a", 0, 0, 10, {}).task("a", 1, 0, 10, {}).task("a", 2, 0, 10, {});
  EXPECT_DOUBLE_EQ(tt::area_bound(two.rank), 10);
}

TEST(TraceAnalysis, RanksChainThroughTheDataTheyShare) {
  // Rank 0 writes data 7; rank 1's task reads it (a message in between): one chain.
  Made r0({"cpu"}), r1({"cpu"});
  r0.task("pack", 0, 0, 10, {{7, W}});
  r1.task("use", 0, 12, 10, {{7, R}, {8, W}});
  r1.rank.rank = 1;
  r1.rank.tasks[0].seq = 1;
  const tt::Bounds b = tt::bounds({r0.rank, r1.rank});
  EXPECT_DOUBLE_EQ(b.critical_path_us, 20);
  EXPECT_DOUBLE_EQ(b.makespan_us, 22);
  EXPECT_DOUBLE_EQ(b.area_bound_us, 10);  // each rank's own work on its own worker
  // Data accesses travel between ranks with the tasks.
  std::string bytes;
  tt::encode(r1.rank, bytes);
  const auto back = tt::decode(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].tasks[0].data.size(), 2u);
  EXPECT_EQ(back[0].tasks[0].data[0].data, 7u);
  EXPECT_EQ(back[0].tasks[0].data[0].mode, R);
  EXPECT_EQ(back[0].tasks[0].seq, 1u);
}

TEST(TraceAnalysis, DataReadOnAnotherRankIsOneMessagePerVersionAndRank) {
  // Rank 0 writes data 7 twice; rank 1 reads each version twice, rank 2 the second once.
  Made r0({"cpu"}), r1({"cpu"}), r2({"cpu"});
  r1.rank.rank = 1;
  r2.rank.rank = 2;
  std::uint64_t seq = 0;
  const auto at = [&seq](Made& m, const char* kind, double start, std::uint8_t mode) {
    m.task(kind, 0, start, 1, {{7, mode}});
    m.rank.tasks.back().seq = seq++;
  };
  at(r0, "pack", 0, W);
  at(r1, "use", 2, R);
  at(r1, "use", 3, R);  // StarPU-MPI's cache: no second message
  at(r0, "pack", 5, W);
  at(r1, "use", 7, R);
  at(r2, "use", 7, R);
  at(r0, "use", 8, R);  // on the writer's rank: no message
  const tt::Graph g = tt::rebuild_graph({r0.rank, r1.rank, r2.rank});
  ASSERT_EQ(g.messages.size(), 3u);
  EXPECT_EQ(g.messages[0].from.index, 0u);
  EXPECT_EQ(g.messages[0].to.rank, 1u);
  EXPECT_EQ(g.messages[0].to.index, 0u);
  EXPECT_EQ(g.messages[1].from.index, 1u);  // the second version
  EXPECT_EQ(g.messages[1].to.index, 2u);
  EXPECT_EQ(g.messages[2].to.rank, 2u);
  EXPECT_EQ(g.messages[2].bytes, 8u);
  // In the JSON: a flow start on the writer's track, a flow end on the reader's, one id.
  std::stringstream json;
  tt::write_chrome_json({r0.rank, r1.rank, r2.rank}, json);
  std::map<long, std::pair<int, int>> ends;  // id -> (pid of "s", pid of "f"), plus one
  const nlohmann::json doc = nlohmann::json::parse(json.str());
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") ends[e["id"].get<long>()].first = e["pid"].get<int>() + 1;
    if (e["ph"] == "f") ends[e["id"].get<long>()].second = e["pid"].get<int>() + 1;
  }
  ASSERT_EQ(ends.size(), 3u);
  for (const auto& [id, pids] : ends) {
    EXPECT_EQ(pids.first, 1) << id;  // from rank 0
    EXPECT_GT(pids.second, 1) << id;
  }
}

TEST(TraceAnalysis, SummaryJsonAndReportGiveTheBounds) {
  Made run({"cpu"});
  run.task("a", 0, 0, 10, {{1, W}}).task("b", 0, 15, 20, {{1, R | W}});
  const std::string summary = tt::summary_table({run.rank});
  EXPECT_THAT(summary, HasSubstr("makespan"));
  EXPECT_THAT(summary, HasSubstr("0.035 ms"));
  EXPECT_THAT(summary, HasSubstr("critical path    0.030 ms"));
  EXPECT_THAT(summary, HasSubstr("85.7 %"));  // 30 / 35
  std::stringstream json;
  tt::write_chrome_json({run.rank}, json);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_DOUBLE_EQ(doc["otherData"]["tessera_bounds"]["critical_path_us"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(doc["otherData"]["tessera_bounds"]["makespan_us"].get<double>(), 35);
  std::stringstream html;
  tt::write_html_report({run.rank}, "", html);
  EXPECT_THAT(html.str(), HasSubstr("data-critical-path-us=\"30.000\""));
  EXPECT_THAT(html.str(), HasSubstr("data-efficiency=\"0.8571\""));
}

// Worker 0 runs a (writes x) then b (reads x) 10 us after b became ready; worker 1 runs c
// and then has nothing it could run but b.
Made idle_run() {
  Made run({"cpu", "cpu"});
  run.task("a", 0, 0, 10, {{1, W}}, 0)
      .task("c", 1, 0, 5, {{2, W}}, 0)
      .task("b", 0, 20, 10, {{1, R}}, 1);
  return run;
}

TEST(TraceAnalysis, IdleSplitsIntoStarvedAndReadyElsewhere) {
  const Made run = idle_run();
  const tt::Graph g = tt::rebuild_graph({run.rank});
  const auto rows = tt::idle_by_worker_and_step({run.rank}, g);
  const auto workers = tt::idle_by_worker(rows);
  ASSERT_EQ(workers.size(), 2u);
  // Worker 0: idle 10..20 while b was ready (placement or scheduling), never starved.
  EXPECT_DOUBLE_EQ(workers[0].busy_us, 20);
  EXPECT_DOUBLE_EQ(workers[0].idle.idle_us, 10);
  EXPECT_DOUBLE_EQ(workers[0].idle.ready_us, 10);
  EXPECT_DOUBLE_EQ(workers[0].idle.starved_us, 0);
  // Worker 1: idle 5..30; b ready 10..20 (its class runs b), nothing ready otherwise.
  EXPECT_DOUBLE_EQ(workers[1].idle.idle_us, 25);
  EXPECT_DOUBLE_EQ(workers[1].idle.ready_us, 10);
  EXPECT_DOUBLE_EQ(workers[1].idle.starved_us, 15);
  // Per step: worker 0's gap belongs to b's step, worker 1's tail to no step.
  for (const auto& r : rows) {
    if (r.worker == 0 && r.step == 1) EXPECT_DOUBLE_EQ(r.idle.ready_us, 10);
    if (r.worker == 0 && r.step == 0) EXPECT_DOUBLE_EQ(r.idle.idle_us, 0);
    if (r.worker == 1 && r.step == -1) EXPECT_DOUBLE_EQ(r.idle.idle_us, 25);
  }
  // Tasks ready, not started, in three 10 us bins: b waits through the middle one.
  EXPECT_EQ(tt::ready_curve(run.rank, g.ready_us[0], 3), (std::vector<double>{0, 1, 0}));
}

TEST(TraceAnalysis, IdleOnACudaWorkerIsStarvedWhenOnlyCpuKindsWait) {
  // b ran on a CPU worker only: the CUDA worker's idle time is starvation, not placement.
  Made run({"cpu", "cuda"});
  run.task("a", 1, 0, 10, {{1, W}}).task("b", 0, 20, 10, {{1, R}});
  const tt::Graph g = tt::rebuild_graph({run.rank});
  const auto workers = tt::idle_by_worker(tt::idle_by_worker_and_step({run.rank}, g));
  EXPECT_DOUBLE_EQ(workers[1].idle.idle_us, 20);
  EXPECT_DOUBLE_EQ(workers[1].idle.starved_us, 20);
  EXPECT_DOUBLE_EQ(workers[0].idle.ready_us, 10);  // the CPU worker could have run b at 10
  EXPECT_DOUBLE_EQ(workers[0].idle.starved_us, 10);
}

TEST(TraceAnalysis, StepsGiveSpanPerRankAndImbalance) {
  const Made run = idle_run();
  const auto steps = tt::step_times({run.rank});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_EQ(steps[0].rank_span_us, (std::vector<double>{10}));
  EXPECT_DOUBLE_EQ(steps[0].imbalance(), 10 / 7.5);  // busy 10 and 5
  EXPECT_DOUBLE_EQ(steps[1].imbalance(), 2);         // busy 10 and 0
  std::stringstream html;
  tt::write_html_report({run.rank}, "", html);
  EXPECT_THAT(html.str(), HasSubstr("<table id=\"idle\">"));
  EXPECT_THAT(html.str(), HasSubstr("<table id=\"steps\">"));
  EXPECT_THAT(html.str(), HasSubstr("\"ready\":[0.0"));
}

struct Average {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = 0.25 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
};

void run_average(tessera::Runtime& rt, int steps) {
  const tessera::Grid<2> grid({32, 32}, {8, 8}, {true, true});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), v(grid, 1, {}, "v");
  u.fill([](tessera::Index<2> i) { return static_cast<double>(i[0] + 3 * i[1]); });
  tessera::Stencil<2> s("average", tessera::Shape::Star, 1);
  for (int step = 0; step < steps; ++step) {
    s.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
  rt.wait();
}

// The rebuilt graph must hold only orders StarPU enforced: every predecessor ended before its
// successor started (the critical path is then at most the makespan).
TEST(TraceAnalysis, RebuiltGraphOfARealRunHoldsOnlyEnforcedOrders) {
  for (const char* sched : {"eager", "dmda"}) {
    tessera::Options o = test::options({sched, 2});
    o.report = testing::TempDir() + "tessera_analysis_report.html";
    tessera::Runtime rt(o);
    run_average(rt, 6);
    const tt::RankTrace r = rt.recorded();
    ASSERT_EQ(r.tasks.size(), rt.tasks_submitted());
    tt::DependencyTracker tracker;
    std::vector<const tt::TaskEvent*> order;
    for (const tt::TaskEvent& t : r.tasks) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
    long edges = 0;
    for (std::size_t n = 0; n < order.size(); ++n) {
      ASSERT_FALSE(order[n]->data.empty()) << tt::task_name(*order[n]);
      const auto before = tracker.before(order[n]->data);
      if (before.via >= 0) {
        ++edges;
        EXPECT_LE(order[static_cast<std::size_t>(before.via)]->end_us, order[n]->start_us + 1)
            << tt::task_name(*order[static_cast<std::size_t>(before.via)]) << " -> "
            << tt::task_name(*order[n]);
      }
      EXPECT_LE(before.ready_us, order[n]->start_us + 1) << tt::task_name(*order[n]);
      tracker.add(order[n]->data, static_cast<long>(n), 0, order[n]->end_us);
    }
    EXPECT_GT(edges, 6 * 16 / 2);  // the steps depend on each other
    const tt::Bounds b = tt::bounds({r});
    EXPECT_GT(b.critical_path_us, 0);
    EXPECT_LE(b.critical_path_us, b.makespan_us + 1);
    EXPECT_GE(b.critical_path_tasks, 6);  // at least one task per step
    EXPECT_GT(b.area_bound_us, 0);
    EXPECT_LE(b.area_bound_us, b.makespan_us + 1);
    EXPECT_GT(b.efficiency(), 0);
    EXPECT_LE(b.efficiency(), 1.0 + 1e-6);
  }
}

// A summary-only rank folds the critical path as tasks end; it keeps no events.
TEST(TraceAnalysis, SummaryOnlyRunFoldsTheCriticalPath) {
  tessera::Options o = test::options({"eager", 2});
  o.summary = true;
  o.quiet = true;
  tessera::Runtime rt(o);
  run_average(rt, 6);
  const tt::RankTrace r = rt.recorded();
  EXPECT_TRUE(r.tasks.empty());
  double sum = 0;
  for (const tt::TaskTotals& t : r.totals) sum += t.measured_us;
  EXPECT_GT(r.critical_path_us, 0);
  EXPECT_LE(r.critical_path_us, r.wall_us() + 1);
  EXPECT_LE(r.critical_path_us, sum);
  const tt::Bounds b = tt::bounds({r});
  EXPECT_DOUBLE_EQ(b.critical_path_us, r.critical_path_us);
  EXPECT_THAT(tt::summary_table({r}), HasSubstr("critical path"));
}

}  // namespace

// A synthetic run of `tiles` x `steps` tasks on 4 CPU workers: a 1-D stencil between two
// buffers (each task reads its tile and its two neighbours in one, writes its tile in the
// other), 10 us each, laid out worker by worker.
tt::RankTrace synthetic(int tiles, int steps) {
  Made run({"cpu", "cpu", "cpu", "cpu"});
  run.rank.tasks.reserve(static_cast<std::size_t>(tiles) * static_cast<std::size_t>(steps));
  const double per_step = 10.0 * tiles / 4;
  const auto data = [tiles](int buffer, int t) {
    return static_cast<std::uint64_t>(buffer * tiles + (t + tiles) % tiles);
  };
  for (int s = 0; s < steps; ++s)
    for (int t = 0; t < tiles; ++t) {
      const int in = s % 2, out = 1 - in;
      run.task("interior", t % 4, s * per_step + (t / 4) * 10.0, 10,
               {{data(in, t - 1), R}, {data(in, t), R}, {data(in, t + 1), R}, {data(out, t), W}},
               s);
      run.rank.tasks.back().tile = t;
    }
  return run.rank;
}

TEST(TraceAnalysis, LargeRunsDrawTimeBinsNotTasks) {
  const tt::RankTrace r = synthetic(1000, 101);  // 101000 tasks: above the report's limit
  std::stringstream html;
  tt::write_html_report({r}, "", html);
  const std::string page = html.str();
  EXPECT_THAT(page, HasSubstr("data-tasks=\"101000\""));
  EXPECT_THAT(page, HasSubstr("\"binned\":true"));
  // The critical path (one task per step here) is still drawn task by task.
  const std::size_t at = page.find("id=\"trace-data\"");
  const auto data = nlohmann::json::parse(
      page.substr(page.find('>', at) + 1, page.find("</script>", at) - page.find('>', at) - 1));
  EXPECT_EQ(data["ranks"][0]["tasks"].size(), 101u);
  EXPECT_EQ(data["ranks"][0]["bins"].size(), 4u);  // one row of bins per worker
  EXPECT_LT(page.size(), 2u << 20);
}

TEST(TraceAnalysis, BytesBetweenGpusCountedPerStep) {
  // Two GPUs: step 0 moves 100 bytes from main memory and 40 from CUDA 0 to CUDA 1; step 1
  // 8 bytes back between the GPUs. The table says both, the GPU<->GPU column only the latter.
  Made run({"cuda", "cuda"});
  run.task("k", 0, 0, 10, {{1, W}}, 0).task("k", 1, 0, 10, {{2, W}}, 0);
  run.task("k", 0, 10, 10, {{1, W}}, 1).task("k", 1, 10, 10, {{2, W}}, 1);
  run.rank.transfers = {{"NUMA 0", "CUDA 0", 100, 1, false},
                        {"CUDA 0", "CUDA 1", 40, 1, false},
                        {"CUDA 1", "CUDA 0", 8, 1, false}};
  run.rank.transfer_samples = {{1, 0, 100, 1}, {2, 1, 40, 1}, {15, 2, 8, 1}};
  const auto steps = tt::step_times({run.rank});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].bus_bytes, 140u);
  EXPECT_EQ(steps[0].gpu_to_gpu_bytes, 40u);
  EXPECT_EQ(steps[1].gpu_to_gpu_bytes, 8u);
  std::stringstream html;
  tt::write_html_report({run.rank}, "", html);
  EXPECT_THAT(html.str(), HasSubstr("<th>GPU\u2194GPU KiB</th>"));
  // One GPU: no such column.
  run.rank.transfers.resize(1);
  run.rank.transfer_samples.resize(1);
  std::stringstream one;
  tt::write_html_report({run.rank}, "", one);
  EXPECT_THAT(one.str(), Not(HasSubstr("<th>GPU\u2194GPU KiB</th>")));
}

TEST(TraceAnalysis, BusTransfersCountInTheStepTheyPrecede) {
  // Steps 0, 1, 2 end at 10, 20, 30; step 3's only task ends at 4, so its boundary is 30.
  Made run({"cpu", "cuda"});
  run.task("k", 0, 0, 10, {{1, W}}, 0).task("k", 1, 2, 6, {{2, W}}, 0);
  run.task("k", 0, 10, 10, {{1, W}}, 1).task("k", 1, 12, 18, {{2, W}}, 2);
  run.task("k", 0, 3, 1, {{3, W}}, 3);
  run.rank.transfers = {{"RAM", "CUDA 0", 1160, 5, false}};
  run.rank.transfer_samples = {
      {1, 0, 100, 1}, {10, 0, 50, 1}, {15, 0, 7, 1}, {25, 0, 3, 1}, {40, 0, 1000, 1}};
  // Through the multi-rank encoding, as rank 0 receives it.
  std::string bytes;
  tt::encode(run.rank, bytes);
  const auto ranks = tt::decode(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  const auto steps = tt::step_times(ranks);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].bus_bytes, 150u);
  EXPECT_EQ(steps[0].bus_transfers, 2u);
  EXPECT_EQ(steps[1].bus_bytes, 7u);
  EXPECT_EQ(steps[2].bus_bytes, 3u);
  EXPECT_EQ(steps[3].bus_bytes, 0u);  // 40 is after every step: in the totals only
  std::stringstream html, json;
  tt::write_html_report(ranks, "", html);
  EXPECT_THAT(html.str(), HasSubstr("<th>bus KiB</th>"));
  EXPECT_THAT(html.str(), HasSubstr("class=\"bus-bytes\" data-bytes=\"150\""));
  EXPECT_THAT(html.str(), HasSubstr("<table id=\"bus\">"));
  // In the JSON, the bus's counter track: bytes so far at each sample.
  tt::write_chrome_json(ranks, json);
  std::vector<std::uint64_t> so_far;
  const auto trace = nlohmann::json::parse(json.str());
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C" && e["name"] == "bus RAM->CUDA 0") so_far.push_back(e["args"]["bytes"]);
  EXPECT_EQ(so_far, (std::vector<std::uint64_t>{100, 150, 157, 160, 1160}));
}

TEST(TraceAnalysis, ReportSaysWhenNothingMovedOverTheBus) {
  std::stringstream html;
  tt::write_html_report({idle_run().rank}, "", html);
  EXPECT_THAT(html.str(), HasSubstr("id=\"no-bus\""));
  EXPECT_EQ(html.str().find("<th>bus KiB</th>"), std::string::npos);
}

// The report's data block, parsed.
nlohmann::json page_data(const std::string& page) {
  const std::size_t at = page.find("id=\"trace-data\"");
  return nlohmann::json::parse(
      page.substr(page.find('>', at) + 1, page.find("</script>", at) - page.find('>', at) - 1));
}

// A mesh of n x n unit squares (points (n+1) x (n+1)), element e = i + n j.
tt::PartitionMap squares(int n) {
  tt::PartitionMap m;
  m.set = "cells";
  m.loops = {"s"};
  m.corners = 4;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) m.xy.insert(m.xy.end(), {double(i), double(j)});
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int p = i + (n + 1) * j;
      m.corner.insert(m.corner.end(), {p, p + 1, p + n + 2, p + n + 1});
    }
  return m;
}

TEST(TraceAnalysis, PartitionMapDrawsElementsWithTileAndRankBorders) {
  // 2 x 2 squares: e0 e1 below, e2 e3 above; tiles 0 1 / 0 2, tile 2 on rank 1.
  tt::PartitionMap m = squares(2);
  m.tile = {0, 1, 0, 2};
  m.owner = {0, 0, 1};
  // e3's lower left corner is a second point at the same place (a cut with duplicated nodes).
  m.xy.insert(m.xy.end(), {1, 1});
  m.corner[3 * 4] = 9;
  Made run({"cpu", "cpu"});
  run.task("loop", 1, 0, 5, {{1, W}}).task("loop", 0, 5, 5, {{2, W}});
  run.rank.tasks[0].tile = 2;  // tile 2: one task, on worker 1
  run.rank.tasks[1].tile = 0;
  tt::PartitionMap bad = m, bad_corner = m;  // numbers that do not fit: left out
  bad.tile[1] = 3;
  bad_corner.corner[0] = 10;
  std::stringstream html;
  tt::write_html_report({run.rank}, "", html, {}, {bad, m, bad_corner});
  const auto maps = page_data(html.str())["partition_maps"];
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0]["elements"], 4);
  EXPECT_EQ(maps[0]["raster"], 0);
  ASSERT_EQ(maps[0]["shapes"].size(), 4u);
  EXPECT_EQ(maps[0]["shapes"][3].size(), 9u);  // tile, then 4 corners
  EXPECT_EQ(maps[0]["shapes"][3][0], 2);
  // Tile t: {rank, rank position, worker, its tasks there, all its tasks}.
  EXPECT_EQ(maps[0]["tiles"][2], nlohmann::json({1, 0, 1, 1, 1}));
  EXPECT_EQ(maps[0]["tiles"][0], nlohmann::json({0, 0, 0, 1, 1}));
  EXPECT_EQ(maps[0]["tiles"][1], nlohmann::json({0, 0, -1, 0, 0}));  // no task recorded
  // Borders: e0|e1 between tiles of rank 0; e1|e3 and e2|e3 (the duplicated point) between
  // ranks; e0|e2 none (one tile).
  int tile_borders = 0, rank_borders = 0;
  for (const auto& b : maps[0]["borders"]) (b[4] == 1 ? rank_borders : tile_borders)++;
  EXPECT_EQ(tile_borders, 1);
  EXPECT_EQ(rank_borders, 2);
}

TEST(TraceAnalysis, LargePartitionMapIsARaster) {
  // 150 x 150 squares (above the report's 20000 polygons): left half tile 0 on rank 0, right
  // half tile 1 on rank 1.
  tt::PartitionMap m = squares(150);
  for (int e = 0; e < 150 * 150; ++e) m.tile.push_back(e % 150 < 75 ? 0 : 1);
  m.owner = {0, 1};
  std::stringstream html;
  tt::write_html_report({Made({"cpu"}).rank}, "", html, {}, {m});
  const auto map = page_data(html.str())["partition_maps"].at(0);
  EXPECT_GT(map["raster"].get<double>(), 0);
  // Each row of cells: a run of tile 0, then one of tile 1, and one rank border between them.
  const std::size_t rows = map["shapes"].size() / 2;
  EXPECT_GT(rows, 100u);
  for (std::size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(map["shapes"][2 * r][3], 0) << r;
    EXPECT_EQ(map["shapes"][2 * r + 1][3], 1) << r;
    EXPECT_EQ(map["shapes"][2 * r][2].get<int>() + 1, map["shapes"][2 * r + 1][1].get<int>()) << r;
  }
  EXPECT_EQ(map["borders"].size(), rows);
  for (const auto& b : map["borders"]) EXPECT_EQ(b[4], 1);
  EXPECT_LT(html.str().size(), 1u << 20);
}

// Measures what a million-task report costs (docs/tracing.md); run it by hand:
//   test_trace_analysis --gtest_also_run_disabled_tests --gtest_filter='*MillionTask*'
TEST(TraceAnalysis, DISABLED_MillionTaskReportCost) {
  const tt::RankTrace r = synthetic(1000, 1000);
  const auto time = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::stringstream html, json;
  std::string summary;
  const double report_s = time([&] { tt::write_html_report({r}, "", html); });
  const double json_s = time([&] { tt::write_chrome_json({r}, json); });
  const double summary_s = time([&] { summary = tt::summary_table({r}); });
  std::printf("%zu tasks: report %.1f MB in %.2f s, JSON %.1f MB in %.2f s, summary in %.2f s\n",
              r.tasks.size(), html.str().size() / 1e6, report_s, json.str().size() / 1e6, json_s,
              summary_s);
  std::ofstream("million_task_report.html") << html.str();
}
