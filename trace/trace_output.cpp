// The outputs of a trace, from plain records: task names, Chrome JSON, totals and the summary.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "trace/analysis.hpp"

namespace tessera::trace {

namespace {
std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c);
  return buf;
}

// Left-aligned first column, right-aligned others, two spaces between columns.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      out += (c == 0 ? "  " + row[c] + pad : "  " + pad + row[c]);
    }
    out += "\n";
  }
  return out;
}
}  // namespace

std::string task_name(const TaskEvent& e) {
  std::string name = e.stencil.empty() ? e.kind : e.stencil + ":" + e.kind;
  if (!e.field.empty()) name += " " + e.field;
  if (e.tile >= 0) name += " tile=" + std::to_string(e.tile);
  if (e.step >= 0) name += " step=" + std::to_string(e.step);
  return name;
}

namespace {
std::string bounds_text(const Bounds& b) {
  const auto line = [](const char* name, const std::string& value, const std::string& note) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "  %-14s %10s  %s\n", name, value.c_str(), note.c_str());
    return std::string(buf);
  };
  const auto seconds = [](double us) {
    return us < 0 ? std::string("-") : format("%.3f ms", us / 1e3);
  };
  const std::string path_note = b.critical_path_per_rank
                                    ? "per rank: chains through other ranks not followed"
                                    : "the longest chain of dependent tasks";
  return line("makespan", seconds(b.makespan_us), "first task start to last task end") +
         line("critical path", seconds(b.critical_path_us), path_note) +
         line("area bound", seconds(b.area_bound_us), "all tasks on all workers, no dependencies") +
         line("efficiency", format("%.1f %%", 100 * b.efficiency()),
              "max(critical path, area bound) / makespan");
}
}  // namespace

void write_chrome_json(const std::vector<RankTrace>& ranks, std::ostream& out) {
  using nlohmann::json;
  json events = json::array();
  const Graph graph = rebuild_graph(ranks);
  std::vector<std::vector<bool>> critical;
  for (const RankTrace& r : ranks) critical.emplace_back(r.tasks.size(), false);
  for (const TaskRef& t : graph.critical) critical[t.rank][t.index] = true;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    const RankTrace& r = ranks[ri];
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", r.rank},
                      {"tid", 0},
                      {"args", {{"name", "rank " + std::to_string(r.rank)}}}});
    for (const Worker& w : r.workers)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", r.rank},
                        {"tid", w.id},
                        {"args", {{"name", w.name}}}});
    for (std::size_t i = 0; i < r.tasks.size(); ++i) {
      const TaskEvent& t = r.tasks[i];
      json args = {{"task", task_name(t)},     {"stencil", t.stencil}, {"tile", t.tile},
                   {"step", t.step},           {"worker", t.worker},   {"rank", r.rank},
                   {"submit_us", t.submit_us}, {"seq", t.seq}};
      if (!t.field.empty()) args["field"] = t.field;
      if (t.pinned_worker >= 0) args["pinned_worker"] = t.pinned_worker;
      if (t.early_copies > 0) args["early_copies"] = t.early_copies;
      if (graph.critical_path_us >= 0) {
        args["ready_us"] = graph.ready_us[ri][i];
        if (critical[ri][i]) args["critical"] = true;
      }
      if (t.predicted_us >= 0) args["predicted_us"] = t.predicted_us;
      // Named "<stencil>:<kind>" so that tracks of two stencils stay apart.
      const std::string name = t.stencil.empty() ? t.kind : t.stencil + ":" + t.kind;
      events.push_back({{"ph", "X"},
                        {"cat", t.kind},
                        {"name", name},
                        {"pid", r.rank},
                        {"tid", t.worker},
                        {"ts", t.start_us},
                        {"dur", t.end_us - t.start_us},
                        {"args", args}});
    }
    // Transfers as counters of bytes and transfers so far: a bus's at each sample of its
    // counters (as tasks ended), otherwise (MPI, or no samples) its totals at the end.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> so_far(r.transfers.size());
    std::vector<bool> sampled(r.transfers.size(), false);
    const auto counter = [&](const Transfer& x, double at, std::uint64_t bytes,
                             std::uint64_t count) {
      events.push_back({{"ph", "C"},
                        {"name", (x.mpi ? "mpi " : "bus ") + x.from + "->" + x.to},
                        {"pid", r.rank},
                        {"ts", at},
                        {"args", {{"bytes", bytes}, {"transfers", count}}}});
    };
    for (const TransferSample& x : r.transfer_samples) {
      const auto link = static_cast<std::size_t>(x.link);
      if (link >= r.transfers.size()) continue;
      sampled[link] = true;
      so_far[link].first += x.bytes;
      so_far[link].second += x.count;
      counter(r.transfers[link], x.at_us, so_far[link].first, so_far[link].second);
    }
    for (std::size_t k = 0; k < r.transfers.size(); ++k)
      if (!sampled[k])
        counter(r.transfers[k], r.end_us, r.transfers[k].bytes, r.transfers[k].count);
  }
  // Each StarPU-MPI message as a flow arrow from its writer's end to its reader's start.
  long id = 0;
  for (const Graph::Message& m : graph.messages) {
    const TaskEvent& from = ranks[m.from.rank].tasks[m.from.index];
    const TaskEvent& to = ranks[m.to.rank].tasks[m.to.index];
    const json args = {{"bytes", m.bytes}};
    // Inside the slices, so that Perfetto binds each end to its task.
    events.push_back({{"ph", "s"},
                      {"cat", "mpi"},
                      {"name", "mpi message"},
                      {"id", id},
                      {"pid", ranks[m.from.rank].rank},
                      {"tid", from.worker},
                      {"ts", std::max(from.start_us, from.end_us - 0.01)},
                      {"args", args}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"cat", "mpi"},
                      {"name", "mpi message"},
                      {"id", id},
                      {"pid", ranks[m.to.rank].rank},
                      {"tid", to.worker},
                      {"ts", to.start_us},
                      {"args", args}});
    ++id;
  }
  json doc = {{"displayTimeUnit", "ms"}, {"traceEvents", events}};
  json meta = json::array();
  for (const RankTrace& r : ranks) {
    json workers = json::array();
    for (const Worker& w : r.workers)
      workers.push_back(
          {{"id", w.id}, {"name", w.name}, {"arch", w.arch}, {"memory_node", w.memory_node}});
    meta.push_back(
        {{"rank", r.rank}, {"begin_us", r.begin_us}, {"end_us", r.end_us}, {"workers", workers}});
  }
  const Bounds b = bounds(ranks, graph);
  doc["otherData"] = {{"tessera_ranks", meta},
                      {"tessera_bounds",
                       {{"makespan_us", b.makespan_us},
                        {"critical_path_us", b.critical_path_us},
                        {"critical_path_tasks", b.critical_path_tasks},
                        {"area_bound_us", b.area_bound_us},
                        {"efficiency", b.efficiency()}}}};
  out << doc.dump(1) << "\n";
}

double KindTotals::prediction_error() const {
  if (predicted_tasks == 0 || measured_with_prediction_us <= 0)
    return std::numeric_limits<double>::quiet_NaN();
  return (predicted_us - measured_with_prediction_us) / measured_with_prediction_us;
}

long RankTrace::task_count() const {
  long n = static_cast<long>(tasks.size());
  for (const TaskTotals& t : totals) n += t.tasks;
  return n;
}

std::vector<KindTotals> totals_by_kind(const std::vector<RankTrace>& ranks) {
  std::map<std::string, KindTotals> by;
  for (const RankTrace& r : ranks) {
    for (const TaskEvent& t : r.tasks) {
      KindTotals& k = by[t.kind];
      k.kind = t.kind;
      ++k.tasks;
      k.measured_us += t.end_us - t.start_us;
      if (t.predicted_us >= 0) {
        ++k.predicted_tasks;
        k.predicted_us += t.predicted_us;
        k.measured_with_prediction_us += t.end_us - t.start_us;
      }
    }
    for (const TaskTotals& t : r.totals) {
      KindTotals& k = by[t.kind];
      k.kind = t.kind;
      k.tasks += t.tasks;
      k.measured_us += t.measured_us;
      k.predicted_tasks += t.predicted_tasks;
      k.predicted_us += t.predicted_us;
      k.measured_with_prediction_us += t.measured_with_prediction_us;
    }
  }
  std::vector<KindTotals> out;
  for (auto& [name, k] : by) out.push_back(k);
  return out;
}

std::vector<WorkerTotals> totals_by_worker(const std::vector<RankTrace>& ranks) {
  std::vector<WorkerTotals> out;
  for (const RankTrace& r : ranks) {
    std::map<int, WorkerTotals> by;
    for (const Worker& w : r.workers) by[w.id] = {r.rank, w, 0, 0, r.wall_us()};
    for (const TaskEvent& t : r.tasks) {
      WorkerTotals& w = by[t.worker];
      ++w.tasks;
      w.busy_us += t.end_us - t.start_us;
    }
    for (const TaskTotals& t : r.totals) {
      WorkerTotals& w = by[t.worker];
      w.tasks += t.tasks;
      w.busy_us += t.measured_us;
    }
    for (auto& [id, w] : by) out.push_back(w);
  }
  return out;
}

std::string summary_table(const std::vector<RankTrace>& ranks) {
  const std::vector<WorkerTotals> workers = totals_by_worker(ranks);
  std::string out;
  if (ranks.size() <= 1) {
    std::vector<std::vector<std::string>> rows = {{"worker", "arch", "busy %", "tasks", "busy s"}};
    for (const WorkerTotals& w : workers)
      rows.push_back({w.worker.name, w.worker.arch, format("%.1f", 100 * w.busy_fraction()),
                      std::to_string(w.tasks), format("%.4f", w.busy_us / 1e6)});
    out += "per worker:\n" + table(rows);
  } else {
    // Per rank: min/avg/max over its workers of busy %, and its task count and busy time.
    std::vector<std::vector<std::string>> rows = {
        {"rank", "workers", "busy % min/avg/max", "tasks", "busy s"}};
    for (const RankTrace& r : ranks) {
      double lo = 1e300, hi = 0, sum = 0, busy = 0;
      long tasks = 0, n = 0;
      for (const WorkerTotals& w : workers)
        if (w.rank == r.rank) {
          lo = std::min(lo, w.busy_fraction());
          hi = std::max(hi, w.busy_fraction());
          sum += w.busy_fraction();
          busy += w.busy_us;
          tasks += w.tasks;
          ++n;
        }
      if (n == 0) lo = 0;
      rows.push_back({std::to_string(r.rank), std::to_string(n),
                      format("%.1f / %.1f / %.1f", 100 * lo, n ? 100 * sum / n : 0, 100 * hi),
                      std::to_string(tasks), format("%.4f", busy / 1e6)});
    }
    out += "per rank:\n" + table(rows);
  }
  std::vector<std::vector<std::string>> kinds = {
      {"task kind", "tasks", "time s", "mean us", "predicted us", "error %"}};
  for (const KindTotals& k : totals_by_kind(ranks)) {
    const double err = k.prediction_error();
    kinds.push_back({k.kind, std::to_string(k.tasks), format("%.4f", k.measured_us / 1e6),
                     format("%.1f", k.measured_us / static_cast<double>(k.tasks)),
                     k.predicted_tasks ? format("%.1f", k.predicted_us / k.predicted_tasks) : "-",
                     std::isnan(err) ? "-" : format("%+.1f", 100 * err)});
  }
  out += "per task kind:\n" + table(kinds);
  out += "how far from the best possible:\n" + bounds_text(bounds(ranks));
  return out;
}

}  // namespace tessera::trace
