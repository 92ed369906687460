// The HTML run report: one self-contained file (inline CSS, SVG and a little JS; no network).
// The tables are written here, one function per section; the Gantt chart, the ready-task
// curves and the maps are drawn in the browser (trace/report.js, styled by trace/report.css,
// both built into the library) from the embedded data, so the page stays small and the chart
// can show a tooltip per task.
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <map>

#include "trace/analysis.hpp"
#include "trace/report_page.hpp"  // generated from trace/report.js and .css (trace/embed.cmake)

namespace tessera::trace {

namespace {
std::string html_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(const char* fmt, double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// A horizontal bar of `fraction` (0..1) in an inline SVG.
std::string bar(double fraction, const char* cls) {
  const double w = 200 * std::max(0.0, std::min(1.0, fraction));
  return "<svg class=\"bar\" width=\"200\" height=\"12\"><rect width=\"200\" height=\"12\" "
         "class=\"idle\"/><rect width=\"" +
         num("%.1f", w) + "\" height=\"12\" class=\"" + cls + "\"/></svg>";
}

// A stacked horizontal bar: busy, starved, waiting shares of `total`.
std::string split_bar(double total, const std::array<double, 3>& parts) {
  static const char* cls[] = {"busy", "starved", "waiting"};
  std::string out =
      "<svg class=\"bar\" width=\"200\" height=\"12\"><rect width=\"200\" "
      "height=\"12\" class=\"idle\"/>";
  double x = 0;
  for (int i = 0; i < 3; ++i) {
    const double w = total > 0 ? 200 * parts[static_cast<std::size_t>(i)] / total : 0;
    out += "<rect x=\"" + num("%.1f", x) + "\" width=\"" + num("%.1f", w) +
           "\" height=\"12\" class=\"" + cls[i] + "\"/>";
    x += w;
  }
  return out + "</svg>";
}

constexpr int kReadyBins = 500;       // points of the ready-task curve per rank
constexpr long kGanttTasks = 100000;  // more tasks than this: the Gantt chart draws time bins
constexpr long kGanttBins = 1000;     // bins per worker then

// Per tile t < tiles, of the tasks of `names`: the worker that ran most of them, as {position
// of its rank in `ranks`, worker id (-1: none), its tasks there, the tile's tasks in all}.
std::vector<std::array<long, 4>> tile_workers(const std::vector<RankTrace>& ranks,
                                              const std::vector<std::string>& names,
                                              std::size_t tiles) {
  // tile -> (rank position, worker) -> tasks
  std::vector<std::map<std::pair<std::size_t, int>, long>> runs(tiles);
  for (std::size_t ri = 0; ri < ranks.size(); ++ri)
    for (const TaskEvent& t : ranks[ri].tasks)
      if (t.tile >= 0 && static_cast<std::size_t>(t.tile) < tiles &&
          std::find(names.begin(), names.end(), t.stencil) != names.end())
        ++runs[static_cast<std::size_t>(t.tile)][{ri, t.worker}];
  std::vector<std::array<long, 4>> out;
  for (const auto& by_worker : runs) {
    std::array<long, 4> most{0, -1, 0, 0};
    for (const auto& [where, n] : by_worker) {
      most[3] += n;
      if (n > most[2]) {
        most[0] = static_cast<long>(where.first);
        most[1] = where.second;
        most[2] = n;
      }
    }
    out.push_back(most);
  }
  return out;
}

// The maps of `maps` with their tiles and, per tile, the worker that ran most of its tasks
// (position of its rank in `ranks`, worker id, tasks there, tasks in all); maps of the same
// geometry (several stencils on one grid) are drawn once.
nlohmann::json tile_maps(const std::vector<RankTrace>& ranks, const std::vector<TileMap>& maps) {
  using nlohmann::json;
  std::vector<std::pair<const TileMap*, std::vector<std::string>>> unique;
  const auto same = [](const TileMap& a, const TileMap& b) {
    if (a.dims != b.dims || a.tiles.size() != b.tiles.size()) return false;
    for (int k = 0; k < 3; ++k)
      if (a.extent[k] != b.extent[k]) return false;
    for (std::size_t t = 0; t < a.tiles.size(); ++t)
      for (int k = 0; k < 3; ++k)
        if (a.tiles[t].origin[k] != b.tiles[t].origin[k] ||
            a.tiles[t].extent[k] != b.tiles[t].extent[k] || a.tiles[t].rank != b.tiles[t].rank)
          return false;
    return true;
  };
  for (const TileMap& m : maps) {
    bool found = false;
    for (auto& [u, names] : unique)
      if (same(*u, m)) {
        names.push_back(m.stencil);
        found = true;
      }
    if (!found) unique.push_back({&m, {m.stencil}});
  }
  json out = json::array();
  for (const auto& [m, names] : unique) {
    const std::vector<std::array<long, 4>> most = tile_workers(ranks, names, m->tiles.size());
    json tiles = json::array();
    for (std::size_t t = 0; t < m->tiles.size(); ++t) {
      const TileMap::Box& b = m->tiles[t];
      tiles.push_back({b.origin[0], b.origin[1], b.origin[2], b.extent[0], b.extent[1], b.extent[2],
                       b.rank, most[t][0], most[t][1], most[t][2], most[t][3]});
    }
    out.push_back({{"stencils", names},
                   {"dims", m->dims},
                   {"extent", {m->extent[0], m->extent[1], m->extent[2]}},
                   {"tiles", tiles}});
  }
  return out;
}
}  // namespace

namespace {
constexpr std::size_t kPolygons = 20000;  // more elements: the partition map is a raster
constexpr double kMapSide = 560;          // px of a partition map's longer side
constexpr double kRasterCell = 2;         // px of a raster cell

double tenth(double v) { return std::round(v * 10) / 10; }

// Whether (x, y) lies in the convex polygon p (either orientation).
bool inside(const std::vector<std::array<double, 2>>& p, double x, double y) {
  int sign = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const auto& a = p[k];
    const auto& b = p[(k + 1) % p.size()];
    const double cross = (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
    const int s = cross > 0 ? 1 : cross < 0 ? -1 : 0;
    if (s != 0 && sign != 0 && s != sign) return false;
    if (s != 0) sign = s;
  }
  return true;
}

// The partition maps in page coordinates (px, y up): per tile {rank, worker as tile_workers};
// up to kPolygons elements each as its polygon (or dot), beyond as runs of raster cells
// {row, first column, last column, tile} coloured by the tile that covers each cell last; and
// the borders between tiles as segments {x1, y1, x2, y2, 1 between ranks else 0}: polygon
// sides shared by elements of two tiles, or raster cell sides between two tiles' cells.
nlohmann::json partition_maps(const std::vector<RankTrace>& ranks,
                              const std::vector<PartitionMap>& meshes) {
  using nlohmann::json;
  json out = json::array();
  for (const PartitionMap& m : meshes) {
    const std::size_t n = m.tile.size(), points = m.xy.size() / 2;
    // A map whose numbers do not fit together is left out rather than drawn wrong.
    const auto valid = [&] {
      if (n == 0 || points == 0 || m.corners < 1 ||
          m.corner.size() != n * static_cast<std::size_t>(m.corners))
        return false;
      for (std::int32_t t : m.tile)
        if (t < 0 || static_cast<std::size_t>(t) >= m.owner.size()) return false;
      for (std::int32_t p : m.corner)
        if (p < 0 || static_cast<std::size_t>(p) >= points) return false;
      return true;
    };
    if (!valid()) continue;
    double lo[2] = {m.xy[0], m.xy[1]}, hi[2] = {m.xy[0], m.xy[1]};
    for (std::size_t p = 0; p < points; ++p)
      for (int a = 0; a < 2; ++a) {
        lo[a] = std::min(lo[a], m.xy[2 * p + a]);
        hi[a] = std::max(hi[a], m.xy[2 * p + a]);
      }
    const double scale = kMapSide / std::max({hi[0] - lo[0], hi[1] - lo[1], 1e-300});
    const double width = std::max(1.0, (hi[0] - lo[0]) * scale);
    const double height = std::max(1.0, (hi[1] - lo[1]) * scale);
    const auto px = [&](std::int32_t p) {
      const auto i = static_cast<std::size_t>(p);
      return std::array<double, 2>{(m.xy[2 * i] - lo[0]) * scale,
                                   (hi[1] - m.xy[2 * i + 1]) * scale};
    };
    const auto rank_of = [&](std::size_t e) {
      return m.owner[static_cast<std::size_t>(m.tile[e])];
    };
    const std::size_t k = static_cast<std::size_t>(m.corners);
    json shapes = json::array(), borders = json::array();
    const bool raster = n > kPolygons;
    if (!raster) {
      // A side shared by elements of two tiles: a border. Sides are matched by where their
      // ends lie (to a tenth of a px), so that meshes with duplicated nodes along a cut (as
      // Airfoil's wake) have their borders there too.
      using End = std::pair<long long, long long>;
      std::map<std::pair<End, End>, std::size_t> sides;
      const auto end_at = [&](std::int32_t p) {
        const auto [x, y] = px(p);
        return End{std::llround(x * 10), std::llround(y * 10)};
      };
      for (std::size_t e = 0; e < n; ++e) {
        json shape = json::array({m.tile[e]});
        for (std::size_t c = 0; c < k; ++c) {
          const auto [x, y] = px(m.corner[e * k + c]);
          shape.push_back(tenth(x));
          shape.push_back(tenth(y));
          if (k < 3) continue;
          const std::int32_t a = m.corner[e * k + c], b = m.corner[e * k + (c + 1) % k];
          const auto [it, fresh] = sides.emplace(std::minmax(end_at(a), end_at(b)), e);
          if (!fresh && m.tile[it->second] != m.tile[e]) {
            const auto [x1, y1] = px(a);
            const auto [x2, y2] = px(b);
            borders.push_back({tenth(x1), tenth(y1), tenth(x2), tenth(y2),
                               rank_of(it->second) != rank_of(e) ? 1 : 0});
          }
        }
        shapes.push_back(shape);
      }
    } else {
      const auto cols = static_cast<std::size_t>(std::ceil(width / kRasterCell));
      const auto rows = static_cast<std::size_t>(std::ceil(height / kRasterCell));
      std::vector<std::int32_t> cell(rows * cols, -1);
      std::vector<std::array<double, 2>> poly(k);
      for (std::size_t e = 0; e < n; ++e) {
        double cx = 0, cy = 0, x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
        for (std::size_t c = 0; c < k; ++c) {
          poly[c] = px(m.corner[e * k + c]);
          for (double& v : poly[c]) v /= kRasterCell;
          cx += poly[c][0] / static_cast<double>(k);
          cy += poly[c][1] / static_cast<double>(k);
          x0 = std::min(x0, poly[c][0]), x1 = std::max(x1, poly[c][0]);
          y0 = std::min(y0, poly[c][1]), y1 = std::max(y1, poly[c][1]);
        }
        const auto at = [&](double x, double y) -> std::int32_t& {
          const auto c = std::min(cols - 1, static_cast<std::size_t>(std::max(0.0, x)));
          const auto r = std::min(rows - 1, static_cast<std::size_t>(std::max(0.0, y)));
          return cell[r * cols + c];
        };
        at(cx, cy) = m.tile[e];  // elements smaller than a cell: the cell of their centre
        if (k >= 3)
          for (double y = std::floor(y0) + 0.5; y < y1; ++y)
            for (double x = std::floor(x0) + 0.5; x < x1; ++x)
              if (inside(poly, x, y)) at(x, y) = m.tile[e];
      }
      // A side between cells of two tiles: {x1, y1, x2, y2, 1 if the tiles' ranks differ}.
      const auto border = [&](std::int32_t t, std::int32_t u, double x1, double y1, double x2,
                              double y2) {
        if (u < 0 || u == t) return;
        borders.push_back(
            {x1, y1, x2, y2,
             m.owner[static_cast<std::size_t>(t)] != m.owner[static_cast<std::size_t>(u)] ? 1 : 0});
      };
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
          const std::int32_t t = cell[r * cols + c];
          if (t < 0) continue;
          if (c == 0 || cell[r * cols + c - 1] != t) shapes.push_back({r, c, c, t});
          shapes.back()[2] = c;
          const double x = static_cast<double>(c) * kRasterCell;
          const double y = static_cast<double>(r) * kRasterCell;
          if (c + 1 < cols)
            border(t, cell[r * cols + c + 1], x + kRasterCell, y, x + kRasterCell, y + kRasterCell);
          if (r + 1 < rows)
            border(t, cell[(r + 1) * cols + c], x, y + kRasterCell, x + kRasterCell,
                   y + kRasterCell);
        }
    }
    const std::vector<std::array<long, 4>> most = tile_workers(ranks, m.loops, m.owner.size());
    json tiles = json::array();
    for (std::size_t t = 0; t < m.owner.size(); ++t)
      tiles.push_back({m.owner[t], most[t][0], most[t][1], most[t][2], most[t][3]});
    out.push_back({{"set", m.set},
                   {"loops", m.loops},
                   {"elements", n},
                   {"width", tenth(width)},
                   {"height", tenth(height)},
                   {"raster", raster ? kRasterCell : 0},
                   {"tiles", tiles},
                   {"shapes", shapes},
                   {"borders", borders}});
  }
  return out;
}
// The kinds in name order, each with its place (the script colours a kind by its place).
std::map<std::string, int> kind_places(const std::vector<RankTrace>& ranks) {
  std::map<std::string, int> places;
  for (const RankTrace& r : ranks)
    for (const TaskEvent& t : r.tasks) places.emplace(t.kind, 0);
  int place = 0;
  for (auto& [kind, p] : places) p = place++;
  return places;
}

// Each worker's busy share per time bin of rank `r`, with the kind that took most of it:
// {worker: [[bin, kind place, share], ...]}, bins without tasks left out.
nlohmann::json busy_bins(const RankTrace& r, const std::map<std::string, int>& kinds) {
  // worker -> bin -> kind -> busy us
  std::map<int, std::map<long, std::map<int, double>>> busy;
  const double width = std::max(1e-9, r.wall_us() / kGanttBins);
  for (const TaskEvent& t : r.tasks) {
    const int k = kinds.at(t.kind);
    for (long b = static_cast<long>((t.start_us - r.begin_us) / width);
         b < kGanttBins && r.begin_us + width * static_cast<double>(b) < t.end_us; ++b) {
      const double lo = r.begin_us + width * static_cast<double>(b);
      busy[t.worker][b][k] += std::min(t.end_us, lo + width) - std::max(t.start_us, lo);
    }
  }
  nlohmann::json bins = nlohmann::json::object();
  for (const auto& [worker, by_bin] : busy) {
    nlohmann::json row = nlohmann::json::array();
    for (const auto& [b, by_kind] : by_bin) {
      double sum = 0, most = 0;
      int top = 0;
      for (const auto& [k, us] : by_kind) {
        sum += us;
        if (us > most) {
          most = us;
          top = k;
        }
      }
      row.push_back({b, top, std::round(100 * std::min(1.0, sum / width)) / 100});
    }
    bins[std::to_string(worker)] = row;
  }
  return bins;
}

// What the script draws for rank ranks[ri]: its workers, its tasks (binned: only those on the
// critical path, the rest as busy_bins), its ready-task curve.
nlohmann::json rank_data(const std::vector<RankTrace>& ranks, std::size_t ri, const Graph& graph,
                         const std::vector<bool>& critical, bool binned,
                         const std::map<std::string, int>& kinds) {
  using nlohmann::json;
  const RankTrace& r = ranks[ri];
  json workers = json::array(), tasks = json::array();
  for (const Worker& w : r.workers)
    workers.push_back({{"id", w.id}, {"name", w.name}, {"arch", w.arch}});
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const TaskEvent& t = r.tasks[i];
    if (binned && !critical[i]) continue;
    tasks.push_back({{"name", task_name(t)},
                     {"kind", t.kind},
                     {"worker", t.worker},
                     {"start_us", t.start_us},
                     {"end_us", t.end_us}});
    if (critical[i]) tasks.back()["crit"] = 1;
  }
  const std::vector<double> ready = graph.critical_path_us >= 0
                                        ? ready_curve(r, graph.ready_us[ri], kReadyBins)
                                        : std::vector<double>{};
  json curve = json::array();
  for (double v : ready) curve.push_back(std::round(v * 100) / 100);
  return {{"rank", r.rank},
          {"ready", curve},
          {"begin_us", r.begin_us},
          {"end_us", r.end_us},
          {"workers", workers},
          {"tasks", tasks},
          {"bins", binned ? busy_bins(r, kinds) : json::object()}};
}

// The page's data for its script (trace/report.js), as the text of a <script> element.
std::string page_data(const std::vector<RankTrace>& ranks, const Graph& graph, bool binned,
                      const std::vector<TileMap>& maps, const std::vector<PartitionMap>& meshes) {
  using nlohmann::json;
  std::vector<std::vector<bool>> critical;
  for (const RankTrace& r : ranks) critical.emplace_back(r.tasks.size(), false);
  for (const TaskRef& t : graph.critical) critical[t.rank][t.index] = true;
  const std::map<std::string, int> kinds = kind_places(ranks);
  json data = {{"ranks", json::array()}, {"kinds", json::array()}, {"binned", binned}};
  for (const auto& [kind, place] : kinds) data["kinds"].push_back(kind);
  for (std::size_t ri = 0; ri < ranks.size(); ++ri)
    data["ranks"].push_back(rank_data(ranks, ri, graph, critical[ri], binned, kinds));
  data["tile_maps"] = tile_maps(ranks, maps);
  data["partition_maps"] = partition_maps(ranks, meshes);
  std::string payload = data.dump();
  // "</" inside a <script> element would end it early.
  for (std::size_t at = payload.find("</"); at != std::string::npos; at = payload.find("</", at))
    payload.replace(at, 2, "<\\/");
  return payload;
}

void write_heading(std::ostream& out, const std::vector<RankTrace>& ranks, const std::string& about,
                   long task_count, bool binned) {
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Tessera run report"
      << "</title><style>\n"
      << embedded::kReportStyle << "</style></head><body>\n<h1>Tessera run report</h1>\n<p>"
      << html_escaped(about) << "</p>\n<p id=\"overview\" data-tasks=\"" << task_count << "\">"
      << task_count << " tasks on " << ranks.size() << (ranks.size() == 1 ? " rank" : " ranks")
      << (binned ? " (more than " + std::to_string(kGanttTasks) +
                       ": the chart shows each worker's busy share per time bin, and the "
                       "critical path's tasks)"
                 : "")
      << "</p>\n";
}

void write_bounds(std::ostream& out, const std::vector<RankTrace>& ranks, const Graph& graph) {
  const Bounds b = bounds(ranks, graph);
  out << "<h2>How far from the best possible</h2>\n<table id=\"bounds\" data-makespan-us=\""
      << num("%.3f", b.makespan_us) << "\" data-critical-path-us=\""
      << num("%.3f", b.critical_path_us) << "\" data-area-bound-us=\""
      << num("%.3f", b.area_bound_us) << "\" data-efficiency=\"" << num("%.4f", b.efficiency())
      << "\"><tr><th></th><th>ms</th><th>of makespan %</th><th></th></tr>\n";
  const auto bound_row = [&](const char* name, double us, const std::string& note) {
    const double f = b.makespan_us > 0 && us >= 0 ? us / b.makespan_us : 0;
    out << "<tr><td>" << name << "</td><td>" << (us < 0 ? "-" : num("%.3f", us / 1e3))
        << "</td><td>" << (us < 0 ? "-" : num("%.1f", 100 * f)) << "</td><td>" << bar(f, "busy")
        << " " << note << "</td></tr>\n";
  };
  bound_row("makespan", b.makespan_us, "first task start to last task end");
  bound_row("critical path", b.critical_path_us,
            std::to_string(b.critical_path_tasks) +
                " dependent tasks, outlined in black below (measured task times only)");
  bound_row("area bound", b.area_bound_us,
            "every task on the workers, dependencies ignored (mean time per kind and class)");
  out << "<tr><td>efficiency</td><td></td><td>" << num("%.1f", 100 * b.efficiency()) << "</td><td>"
      << bar(b.efficiency(), "gpu")
      << " max(critical path, area bound) / makespan</td></tr>\n</table>\n";
}

// The Gantt chart's and the ready-task curves' places; the script draws them.
void write_chart_boxes(std::ostream& out) {
  out << "<h2>Tasks per worker over time</h2>\n<div id=\"legend\"></div><div id=\"gantt-box\">"
         "</div><div id=\"tip\"></div>\n";
  out << "<h2>Tasks ready but not started</h2>\n<p>How many tasks had their predecessors "
         "ended and were submitted, but had not started (mean per time bin, on the time axis of "
         "the chart above). Near zero while workers idle: the graph or the submission starved "
         "them.</p><div id=\"ready-box\"></div>\n";
}

void write_idle(std::ostream& out, const std::vector<RankTrace>& ranks,
                const std::vector<WorkerStep>& idle_rows) {
  if (idle_rows.empty()) return;
  out << "<h2>Why workers idle</h2>\n<table id=\"idle\"><tr><th>worker</th><th>idle s</th>"
         "<th>no task ready s</th><th>ready, not started here s</th><th></th></tr>\n";
  for (const WorkerStep& w : idle_by_worker(idle_rows)) {
    std::string name = std::to_string(w.worker);
    for (const Worker& k : ranks[w.rank].workers)
      if (k.id == w.worker) name = k.name;
    const double span = w.busy_us + w.idle.idle_us;
    out << "<tr class=\"idle-row\"><td>"
        << (ranks.size() > 1 ? "rank " + std::to_string(ranks[w.rank].rank) + " " : "")
        << html_escaped(name) << "</td><td>" << num("%.4f", w.idle.idle_us / 1e6) << "</td><td>"
        << num("%.4f", w.idle.starved_us / 1e6) << "</td><td>" << num("%.4f", w.idle.ready_us / 1e6)
        << "</td><td>" << split_bar(span, {w.busy_us, w.idle.starved_us, w.idle.ready_us})
        << "</td></tr>\n";
  }
  out << "</table>\n<p>Idle time of each worker over its rank's window, split: <span "
         "class=\"legend-starved\">no task ready</span> (no task of a kind its worker class "
         "ran in this run was ready on its rank: the graph or the submission starved it), "
         "<span class=\"legend-waiting\">ready, not started here</span> (one was: placement or "
         "scheduling kept this worker idle). Bars: busy, no task ready, ready.</p>\n";
}

// One row per step: each rank's span, imbalance, idle split, MPI messages and bus transfers.
void write_steps(std::ostream& out, const std::vector<RankTrace>& ranks, const Graph& graph,
                 const std::vector<WorkerStep>& idle_rows) {
  const std::vector<StepTimes> steps = step_times(ranks);
  if (steps.empty()) return;
  std::map<int, IdleSplit> step_idle;
  for (const WorkerStep& s : idle_rows) {
    IdleSplit& i = step_idle[s.step];
    i.idle_us += s.idle.idle_us;
    i.starved_us += s.idle.starved_us;
    i.ready_us += s.idle.ready_us;
  }
  out << "<h2>Per step</h2>\n<table id=\"steps\"><tr><th>step</th>";
  for (const RankTrace& r : ranks) out << "<th>rank " << r.rank << " ms</th>";
  // MPI messages by the step of the task that read them.
  std::map<int, std::pair<long, std::uint64_t>> messages;
  for (const Graph::Message& m : graph.messages) {
    auto& [count, bytes] = messages[ranks[m.to.rank].tasks[m.to.index].step];
    ++count;
    bytes += m.bytes;
  }
  bool sampled = false;  // bus transfers recorded over time (a CPU-only run has none)
  for (const RankTrace& r : ranks) sampled = sampled || !r.transfer_samples.empty();
  bool gpus = false;  // a bus between two GPUs (a run on several)
  for (const RankTrace& r : ranks)
    for (const Transfer& x : r.transfers) gpus = gpus || between_gpus(x);
  out << "<th>imbalance (max/mean busy)</th><th>idle: no task ready ms</th>"
         "<th>idle: ready, not started ms</th>"
      << (ranks.size() > 1 ? "<th>MPI messages</th><th>MPI KiB</th>" : "")
      << (sampled ? "<th>bus transfers</th><th>bus KiB</th>" : "")
      << (sampled && gpus ? "<th>GPU\u2194GPU KiB</th>" : "") << "</tr>\n";
  for (const StepTimes& st : steps) {
    out << "<tr class=\"step-row\"><td>" << st.step << "</td>";
    for (double us : st.rank_span_us) out << "<td>" << num("%.3f", us / 1e3) << "</td>";
    const IdleSplit& i = step_idle[st.step];
    out << "<td>" << num("%.2f", st.imbalance()) << "</td><td>" << num("%.3f", i.starved_us / 1e3)
        << "</td><td>" << num("%.3f", i.ready_us / 1e3) << "</td>";
    if (ranks.size() > 1)
      out << "<td>" << messages[st.step].first << "</td><td>"
          << num("%.1f", static_cast<double>(messages[st.step].second) / 1024) << "</td>";
    if (sampled)
      out << "<td>" << st.bus_transfers << "</td><td class=\"bus-bytes\" data-bytes=\""
          << st.bus_bytes << "\">" << num("%.1f", static_cast<double>(st.bus_bytes) / 1024)
          << "</td>";
    if (sampled && gpus)
      out << "<td class=\"gpu-gpu-bytes\">"
          << num("%.1f", static_cast<double>(st.gpu_to_gpu_bytes) / 1024) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n<p>Per rank: first start to last end of the step's tasks (steps overlap "
         "when they are submitted ahead). Imbalance: the busiest worker's time in the step "
         "over the mean of every worker of every rank. Idle time before a task counts in that "
         "task's step. MPI messages (several ranks): data written on one rank and read on "
         "another (from the rebuilt graph), by the step of the task that read them. Bus "
         "(runs with GPUs): what StarPU moved between memory nodes, from its bus counters "
         "read as each task ended; a transfer counts in the first step whose last task (or an "
         "earlier step's) ended after it; GPU\u2194GPU: of those, the bytes moved directly "
         "between two GPUs (a run on several: their faces).</p>\n";
}

void write_bus(std::ostream& out, const std::vector<RankTrace>& ranks) {
  out << "<h2>Data moved over the bus</h2>\n";
  bool buses = false;
  for (const RankTrace& r : ranks)
    for (const Transfer& x : r.transfers) buses = buses || !x.mpi;
  if (!buses) {
    out << "<p id=\"no-bus\">None: every worker of the run shares one memory node.</p>\n";
    return;
  }
  out << "<table id=\"bus\"><tr><th>bus</th><th>transfers</th><th>KiB</th></tr>\n";
  for (const RankTrace& r : ranks)
    for (const Transfer& x : r.transfers)
      if (!x.mpi)
        out << "<tr><td>" << (ranks.size() > 1 ? "rank " + std::to_string(r.rank) + " " : "")
            << html_escaped(x.from + " \u2192 " + x.to) << "</td><td>" << x.count << "</td><td>"
            << num("%.1f", static_cast<double>(x.bytes) / 1024) << "</td></tr>\n";
  out << "</table>\n<p>StarPU's bus counters over the whole run (per step in the table "
         "above).</p>\n";
}

// The tile maps' place; the script draws them.
void write_map_box(std::ostream& out) {
  out << "<h2>Tile map</h2>\n<p>Every tile at its place, coloured by the worker that ran most "
         "of its tasks (blues: CPU workers, greens: CUDA workers; grey: no task recorded); "
         "thick lines: borders between ranks. 3-D grids: one map per layer of tiles along z "
         "(at most 24 shown). Meshes: every element at its place, coloured by its tile's "
         "worker, thin lines between tiles (above "
      << kPolygons
      << " elements, cells of a raster). Hover a tile or element for its numbers.</p>\n"
         "<div id=\"tile-legend\"></div><div id=\"tile-maps\"></div>\n";
}

// Busy and idle per worker, then the CPU / GPU split of their busy time.
void write_workers(std::ostream& out, const std::vector<RankTrace>& ranks) {
  out << "<h2>Busy and idle per worker</h2>\n<table id=\"workers\"><tr><th>worker</th>"
         "<th>arch</th><th>tasks</th><th>busy s</th><th>busy %</th><th></th></tr>\n";
  double cpu_us = 0, gpu_us = 0;
  for (const WorkerTotals& w : totals_by_worker(ranks)) {
    const bool gpu = w.worker.arch != "cpu";
    (gpu ? gpu_us : cpu_us) += w.busy_us;
    out << "<tr><td>" << (ranks.size() > 1 ? "rank " + std::to_string(w.rank) + " " : "")
        << html_escaped(w.worker.name) << "</td><td>" << w.worker.arch << "</td><td>" << w.tasks
        << "</td><td>" << num("%.4f", w.busy_us / 1e6) << "</td><td>"
        << num("%.1f", 100 * w.busy_fraction()) << "</td><td>"
        << bar(w.busy_fraction(), gpu ? "gpu" : "busy") << "</td></tr>\n";
  }
  out << "</table>\n";

  const double total = cpu_us + gpu_us;
  out << "<h2>CPU / GPU split of work</h2>\n<table id=\"split\"><tr><th>arch</th><th>busy s"
         "</th><th>share %</th><th></th></tr>\n";
  for (const auto& [arch, us, cls] : {std::tuple{"cpu", cpu_us, "busy"}, {"cuda", gpu_us, "gpu"}})
    out << "<tr><td>" << arch << "</td><td>" << num("%.4f", us / 1e6) << "</td><td>"
        << num("%.1f", total > 0 ? 100 * us / total : 0) << "</td><td>"
        << bar(total > 0 ? us / total : 0, cls) << "</td></tr>\n";
  out << "</table>\n";
}

void write_kinds(std::ostream& out, const std::vector<RankTrace>& ranks) {
  out << "<h2>Time per task kind, predicted versus measured</h2>\n<table id=\"kinds\"><tr>"
         "<th>kind</th><th>tasks</th><th>time s</th><th>mean measured us</th>"
         "<th>mean predicted us</th><th>prediction error %</th></tr>\n";
  for (const KindTotals& k : totals_by_kind(ranks)) {
    const double err = k.prediction_error();
    out << "<tr><td>" << html_escaped(k.kind) << "</td><td>" << k.tasks << "</td><td>"
        << num("%.4f", k.measured_us / 1e6) << "</td><td>"
        << num("%.1f", k.measured_us / static_cast<double>(k.tasks)) << "</td><td>"
        << (k.predicted_tasks ? num("%.1f", k.predicted_us / k.predicted_tasks) : "-")
        << "</td><td>" << (std::isnan(err) ? "-" : num("%+.1f", 100 * err)) << "</td></tr>\n";
  }
  out << "</table>\n<p>Predictions come from StarPU's history-based models (model-based "
         "schedulers such as dmda only); \"-\": no prediction, e.g. uncalibrated models.</p>\n";
}
}  // namespace

void write_html_report(const std::vector<RankTrace>& ranks, const std::string& about,
                       std::ostream& out, const std::vector<TileMap>& maps,
                       const std::vector<PartitionMap>& meshes) {
  long task_count = 0;
  for (const RankTrace& r : ranks) task_count += static_cast<long>(r.tasks.size());
  // Above kGanttTasks the chart draws time bins (each worker's busy share per bin, coloured by
  // the kind that took most of it) and only the critical path's tasks one by one.
  const bool binned = task_count > kGanttTasks;
  const Graph graph = rebuild_graph(ranks);
  const std::vector<WorkerStep> idle_rows = graph.critical_path_us >= 0
                                                ? idle_by_worker_and_step(ranks, graph)
                                                : std::vector<WorkerStep>{};
  write_heading(out, ranks, about, task_count, binned);
  write_bounds(out, ranks, graph);
  write_chart_boxes(out);
  write_idle(out, ranks, idle_rows);
  write_steps(out, ranks, graph, idle_rows);
  write_bus(out, ranks);
  if (!maps.empty() || !meshes.empty()) write_map_box(out);
  write_workers(out, ranks);
  write_kinds(out, ranks);
  out << "<script type=\"application/json\" id=\"trace-data\">"
      << page_data(ranks, graph, binned, maps, meshes) << "</script>\n"
      << "<script>\n"
      << embedded::kReportScript << "</script>\n</body></html>\n";
}

}  // namespace tessera::trace
