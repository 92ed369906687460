// The task graph rebuilt from data accesses, the run's bounds, the idle split and the per-step
// view (trace/analysis.hpp).
#include "trace/analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace tessera::trace {

DependencyTracker::Before DependencyTracker::before(const std::vector<DataAccess>& data) const {
  Before b;
  const auto take = [&b](const Reach& r) {
    if (r.task < 0) return;
    if (b.via < 0 || r.path_us > b.path_us) {
      b.path_us = r.path_us;
      b.via = r.task;
    }
    b.ready_us = std::max(b.ready_us, r.end_us);
  };
  for (const DataAccess& a : data) {
    const auto at = data_.find(a.data);
    if (at == data_.end()) continue;
    take(at->second.writer);                                    // read after write
    if (a.mode & DataAccess::kWrite) take(at->second.readers);  // write after read
  }
  return b;
}

void DependencyTracker::add(const std::vector<DataAccess>& data, long task, double path_us,
                            double end_us) {
  const Reach me{path_us, task, end_us};
  // Reads first, so that a task reading and writing the same data ends as its writer.
  for (const DataAccess& a : data)
    if (!(a.mode & DataAccess::kWrite)) {
      Reach& r = data_[a.data].readers;
      if (r.task < 0 || path_us > r.path_us) {
        r.path_us = path_us;
        r.task = task;
      }
      r.end_us = std::max(r.end_us, end_us);
    }
  for (const DataAccess& a : data)
    if (a.mode & DataAccess::kWrite) {
      // Every later task that touches the data waits for this one, and this one waited for
      // every earlier one: the readers before it need not be kept.
      State& s = data_[a.data];
      s.writer = me;
      s.readers = Reach{};
    }
}

long DependencyTracker::writer(std::uint64_t data) const {
  const auto at = data_.find(data);
  return at == data_.end() ? -1 : at->second.writer.task;
}

Graph rebuild_graph(const std::vector<RankTrace>& ranks) {
  Graph g;
  std::vector<TaskRef> order;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    g.ready_us.emplace_back(ranks[r].tasks.size(), 0.0);
    g.path_us.emplace_back(ranks[r].tasks.size(), 0.0);
    for (std::size_t i = 0; i < ranks[r].tasks.size(); ++i) { order.push_back({r, i}); }
  }
  const auto task = [&](const TaskRef& t) -> const TaskEvent& {
    return ranks[t.rank].tasks[t.index];
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const TaskRef& a, const TaskRef& b) { return task(a).seq < task(b).seq; });
  DependencyTracker tracker;
  std::set<std::tuple<std::uint64_t, long, std::size_t>> sent;  // (data, writer, to rank)
  std::vector<long> via(order.size(), -1);
  long last = -1;
  for (std::size_t n = 0; n < order.size(); ++n) {
    const TaskEvent& t = task(order[n]);
    const DependencyTracker::Before b = tracker.before(t.data);
    // Data written on another rank reaches this one as one StarPU-MPI message per version
    // and rank (StarPU-MPI caches what it received): from its writer to its first reader.
    for (const DataAccess& a : t.data) {
      const long w = (a.mode & DataAccess::kRead) ? tracker.writer(a.data) : -1;
      if (w < 0 || order[static_cast<std::size_t>(w)].rank == order[n].rank) continue;
      if (sent.insert({a.data, w, order[n].rank}).second)
        g.messages.push_back({order[static_cast<std::size_t>(w)], order[n], a.bytes});
    }
    const double path = b.path_us + (t.end_us - t.start_us);
    via[n] = b.via;
    tracker.add(t.data, static_cast<long>(n), path, t.end_us);
    // Clocks of different ranks and the end of a callback are not exact: never after start.
    g.ready_us[order[n].rank][order[n].index] =
        std::min(t.start_us, std::max(t.submit_us, b.ready_us));
    g.path_us[order[n].rank][order[n].index] = path;
    if (path > g.critical_path_us) {
      g.critical_path_us = path;
      last = static_cast<long>(n);
    }
  }
  for (long n = last; n >= 0; n = via[static_cast<std::size_t>(n)])
    g.critical.push_back(order[static_cast<std::size_t>(n)]);
  std::reverse(g.critical.begin(), g.critical.end());
  return g;
}

namespace {

// Per kind and worker class of one rank: tasks and their measured time.
struct Work {
  double tasks = 0, us = 0;
};
using ClassWork = std::map<std::string, std::map<std::string, Work>>;  // kind -> arch -> work

// With `predicted`: the models' times on the classes where a kind did not run instead.
ClassWork work_by_kind_and_class(const RankTrace& r, bool predicted) {
  ClassWork out;
  if (predicted) {
    for (const ModelTime& m : r.model_times) {
      Work& w = out[m.kind][m.arch];
      w.tasks += static_cast<double>(m.tasks);
      w.us += m.predicted_us;
    }
    return out;
  }
  std::map<int, std::string> arch;
  for (const Worker& w : r.workers) arch[w.id] = w.arch;
  for (const TaskEvent& t : r.tasks) {
    Work& w = out[t.kind][arch[t.worker]];
    w.tasks += 1;
    w.us += t.end_us - t.start_us;
  }
  for (const TaskTotals& t : r.totals) {
    Work& w = out[t.kind][arch[t.worker]];
    w.tasks += static_cast<double>(t.tasks);
    w.us += t.measured_us;
  }
  return out;
}

}  // namespace

// Each kind's tasks may be split between the worker classes it ran on, at its mean time on
// each. One class: its work over its workers. Two classes (cpu and cuda, the only ones a
// Tessera worker has): the linear program  min T  s.t. every kind's tasks are placed and each
// class's load <= T x its workers  is solved exactly by moving kinds to the second class in
// the order of their relative speed there (the greedy order is optimal for two classes).
double area_bound(const RankTrace& r) {
  std::map<std::string, double> workers;  // per class
  for (const Worker& w : r.workers) workers[w.arch] += 1;
  const ClassWork work = work_by_kind_and_class(r, false), model = work_by_kind_and_class(r, true);
  if (workers.empty() || work.empty()) return 0;
  if (workers.size() == 1) {
    double us = 0;
    for (const auto& [kind, by] : work)
      for (const auto& [arch, w] : by) us += w.us;
    return us / workers.begin()->second;
  }
  const std::string a = workers.begin()->first, b = std::next(workers.begin())->first;
  const double wa = workers[a], wb = workers[b];
  double load_a = 0, load_b = 0;  // fixed loads, then kinds that may go either way
  struct Flexible {
    double tasks, us_a, us_b;  // count and mean time on each class
  };
  std::vector<Flexible> flexible;
  for (const auto& [kind, by] : work) {
    // A class where the kind did not run: the models' time there, if they predicted one.
    const auto time_on = [&, &kind = kind, &by = by](const std::string& c) {
      const auto ran = by.find(c);
      if (ran != by.end()) return ran->second.us / ran->second.tasks;
      const auto k = model.find(kind);
      if (k == model.end()) return -1.0;
      const auto m = k->second.find(c);
      return m == k->second.end() || m->second.tasks <= 0 ? -1.0 : m->second.us / m->second.tasks;
    };
    double n = 0;
    for (const auto& [c, w] : by) n += w.tasks;
    const double us_a = time_on(a), us_b = time_on(b);
    if (us_b < 0) {
      load_a += n * us_a;
    } else if (us_a < 0) {
      load_b += n * us_b;
    } else {
      flexible.push_back({n, us_a, us_b});
      load_a += n * us_a;  // all on a to begin with
    }
  }
  std::sort(flexible.begin(), flexible.end(), [](const Flexible& x, const Flexible& y) {
    return x.us_b * y.us_a < y.us_b * x.us_a;  // x.us_b / x.us_a < y.us_b / y.us_a
  });
  for (const Flexible& k : flexible) {
    const double ta = load_a / wa, tb = load_b / wb;
    if (tb >= ta) break;
    const double da = k.tasks * k.us_a / wa, db = k.tasks * k.us_b / wb;
    if (tb + db <= ta - da) {  // all of this kind moves to b
      load_a -= k.tasks * k.us_a;
      load_b += k.tasks * k.us_b;
      continue;
    }
    const double f = (ta - tb) / (da + db);  // the share that levels the two classes
    return ta - f * da;
  }
  return std::max(load_a / wa, load_b / wb);
}

double Bounds::efficiency() const {
  if (makespan_us <= 0) return 0;
  return std::max(critical_path_us, area_bound_us) / makespan_us;
}

Bounds bounds(const std::vector<RankTrace>& ranks) {
  bool events = false;
  for (const RankTrace& r : ranks) events = events || !r.tasks.empty();
  return bounds(ranks, events ? rebuild_graph(ranks) : Graph{});
}

Bounds bounds(const std::vector<RankTrace>& ranks, const Graph& graph) {
  Bounds b;
  double begin = std::numeric_limits<double>::infinity(), end = -begin;
  for (const RankTrace& r : ranks) {
    if (r.task_count() == 0) continue;
    begin = std::min(begin, r.begin_us);
    end = std::max(end, r.end_us);
    b.area_bound_us = std::max(b.area_bound_us, area_bound(r));
  }
  if (end > begin) b.makespan_us = end - begin;
  bool events = false;
  for (const RankTrace& r : ranks) events = events || !r.tasks.empty();
  if (events) {
    b.critical_path_us = graph.critical_path_us;
    b.critical_path_tasks = static_cast<long>(graph.critical.size());
  } else {
    for (const RankTrace& r : ranks)
      b.critical_path_us = std::max(b.critical_path_us, r.critical_path_us);
    b.critical_path_per_rank = ranks.size() > 1;
  }
  return b;
}

namespace {

// Disjoint, sorted intervals.
using Intervals = std::vector<std::pair<double, double>>;

Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [a, b] : v) {
    if (b <= a) continue;
    if (!out.empty() && a <= out.back().second)
      out.back().second = std::max(out.back().second, b);
    else
      out.push_back({a, b});
  }
  return out;
}

// How much of [a, b) the intervals cover.
double covered(const Intervals& v, double a, double b) {
  double sum = 0;
  auto at = std::lower_bound(v.begin(), v.end(), std::make_pair(a, a),
                             [](const auto& x, const auto& y) { return x.second < y.first; });
  for (; at != v.end() && at->first < b; ++at)
    sum += std::max(0.0, std::min(b, at->second) - std::max(a, at->first));
  return sum;
}

}  // namespace

std::vector<WorkerStep> idle_by_worker_and_step(const std::vector<RankTrace>& ranks,
                                                const Graph& graph) {
  std::vector<WorkerStep> rows;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    const RankTrace& r = ranks[ri];
    std::map<int, std::string> arch;
    for (const Worker& w : r.workers) arch[w.id] = w.arch;
    // A task could have run on a worker of a class that ran its kind somewhere on this rank.
    std::set<std::pair<std::string, std::string>> runs;  // (arch, kind)
    for (const TaskEvent& t : r.tasks) runs.insert({arch[t.worker], t.kind});
    std::map<std::string, Intervals> waiting;  // per class: tasks ready, not started
    std::set<std::string> classes;
    for (const Worker& w : r.workers) classes.insert(w.arch);
    for (std::size_t i = 0; i < r.tasks.size(); ++i)
      for (const std::string& a : classes)
        if (runs.count({a, r.tasks[i].kind}))
          waiting[a].push_back({graph.ready_us[ri][i], r.tasks[i].start_us});
    for (auto& [a, v] : waiting) v = merged(std::move(v));
    for (const Worker& w : r.workers) {
      std::vector<const TaskEvent*> mine;
      for (const TaskEvent& t : r.tasks)
        if (t.worker == w.id) mine.push_back(&t);
      std::sort(mine.begin(), mine.end(),
                [](auto* x, auto* y) { return x->start_us < y->start_us; });
      std::map<int, WorkerStep> by_step;
      const auto idle = [&](int step, double a, double b) {
        if (b <= a) return;
        WorkerStep& s = by_step[step];
        const double ready = covered(waiting[w.arch], a, b);
        s.idle.idle_us += b - a;
        s.idle.ready_us += ready;
        s.idle.starved_us += b - a - ready;
      };
      double free_at = r.begin_us;  // when the worker last became free
      for (const TaskEvent* t : mine) {
        idle(t->step, free_at, t->start_us);
        by_step[t->step].busy_us += t->end_us - t->start_us;
        free_at = std::max(free_at, t->end_us);
      }
      idle(-1, free_at, r.end_us);
      for (auto& [step, s] : by_step) {
        s.rank = ri;
        s.worker = w.id;
        s.step = step;
        rows.push_back(s);
      }
    }
  }
  return rows;
}

std::vector<WorkerStep> idle_by_worker(const std::vector<WorkerStep>& rows) {
  std::map<std::pair<std::size_t, int>, WorkerStep> by;
  for (const WorkerStep& s : rows) {
    WorkerStep& w = by[{s.rank, s.worker}];
    w.rank = s.rank;
    w.worker = s.worker;
    w.step = -1;
    w.busy_us += s.busy_us;
    w.idle.idle_us += s.idle.idle_us;
    w.idle.ready_us += s.idle.ready_us;
    w.idle.starved_us += s.idle.starved_us;
  }
  std::vector<WorkerStep> out;
  for (auto& [key, w] : by) out.push_back(w);
  return out;
}

bool between_gpus(const Transfer& bus) {
  return !bus.mpi && bus.from.rfind("CUDA", 0) == 0 && bus.to.rfind("CUDA", 0) == 0;
}

std::vector<StepTimes> step_times(const std::vector<RankTrace>& ranks) {
  struct Span {
    double first = std::numeric_limits<double>::infinity(), last = -first;
  };
  std::map<int, std::vector<Span>> spans;
  std::map<int, std::map<std::pair<std::size_t, int>, double>> busy;  // step -> worker -> us
  std::size_t workers = 0;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    workers += ranks[ri].workers.size();
    for (const TaskEvent& t : ranks[ri].tasks) {
      if (t.step < 0) continue;
      auto& s = spans[t.step];
      s.resize(ranks.size());
      s[ri].first = std::min(s[ri].first, t.start_us);
      s[ri].last = std::max(s[ri].last, t.end_us);
      busy[t.step][{ri, t.worker}] += t.end_us - t.start_us;
    }
  }
  std::vector<StepTimes> out;
  for (const auto& [step, s] : spans) {
    StepTimes st;
    st.step = step;
    for (const Span& x : s) st.rank_span_us.push_back(x.last > x.first ? x.last - x.first : 0);
    double sum = 0;
    for (const auto& [w, us] : busy[step]) {
      st.busy_max_us = std::max(st.busy_max_us, us);
      sum += us;
    }
    st.busy_mean_us = workers > 0 ? sum / static_cast<double>(workers) : 0;
    out.push_back(st);
  }
  // Bus transfers: per rank, each sample goes to the first step whose boundary (the latest
  // end of its tasks and of earlier steps' tasks on that rank) it does not pass.
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    std::vector<double> boundary;
    double last = -std::numeric_limits<double>::infinity();
    for (const auto& [step, s] : spans) boundary.push_back(last = std::max(last, s[ri].last));
    for (const TransferSample& x : ranks[ri].transfer_samples) {
      const auto at = std::lower_bound(boundary.begin(), boundary.end(), x.at_us);
      if (at == boundary.end()) continue;  // after the last step's tasks
      StepTimes& st = out[static_cast<std::size_t>(at - boundary.begin())];
      st.bus_bytes += x.bytes;
      st.bus_transfers += x.count;
      const auto link = static_cast<std::size_t>(x.link);
      if (link < ranks[ri].transfers.size() && between_gpus(ranks[ri].transfers[link]))
        st.gpu_to_gpu_bytes += x.bytes;
    }
  }
  return out;
}

std::vector<double> ready_curve(const RankTrace& r, const std::vector<double>& ready_us, int bins) {
  std::vector<double> out(static_cast<std::size_t>(std::max(bins, 1)), 0.0);
  const double width = (r.end_us - r.begin_us) / static_cast<double>(out.size());
  if (width <= 0) return out;
  // Each task adds its waiting interval [ready, start) to the bins it overlaps.
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const double a = std::max(r.begin_us, ready_us[i]), b = r.tasks[i].start_us;
    if (b <= a) continue;
    const auto first = static_cast<std::size_t>((a - r.begin_us) / width);
    for (std::size_t k = first; k < out.size(); ++k) {
      const double lo = r.begin_us + width * static_cast<double>(k), hi = lo + width;
      if (lo >= b) break;
      out[k] += (std::min(b, hi) - std::max(a, lo)) / width;
    }
  }
  return out;
}

}  // namespace tessera::trace
