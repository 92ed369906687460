// The HTML run report: one self-contained file (inline CSS, SVG and a little JS; no network).
// The tables are written here; the Gantt chart is drawn in the browser from the embedded task
// list, so the page stays small and the chart can show a tooltip per task.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>

#include "tessera/trace.hpp"

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

constexpr const char* kStyle = R"(
body{font:14px/1.4 sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f4f4f4}
.idle{fill:#e6e6e6}.busy{fill:#4a7fb5}.gpu{fill:#6aa84f}
#gantt text{font-size:11px}#gantt .lane{fill:#f7f7f7}
#tip{position:fixed;background:#fff;border:1px solid #999;padding:3px 6px;display:none;font-size:12px}
)";

// Draws one row (<g class="gantt-row">) per worker of each rank and one <rect class="task">
// per task, coloured by kind.
constexpr const char* kScript = R"(
const data = JSON.parse(document.getElementById('trace-data').textContent);
const svgNS = 'http://www.w3.org/2000/svg';
const palette = ['#4a7fb5','#e69138','#6aa84f','#a64d79','#cc4125','#45818e','#bf9000','#674ea7'];
const kinds = [...new Set(data.ranks.flatMap(r => r.tasks.map(t => t.kind)))];
const colour = k => palette[kinds.indexOf(k) % palette.length];
const begin = Math.min(...data.ranks.map(r => r.begin_us));
const end = Math.max(begin + 1, ...data.ranks.map(r => r.end_us));
const label = 110, width = 1000, rowH = 24;
const rows = data.ranks.flatMap(r => r.workers.map(w => ({rank: r, worker: w})));
const svg = document.createElementNS(svgNS, 'svg');
svg.setAttribute('id', 'gantt');
svg.setAttribute('width', label + width + 10);
svg.setAttribute('height', rows.length * rowH + 24);
const tip = document.getElementById('tip');
rows.forEach((row, i) => {
  const g = document.createElementNS(svgNS, 'g');
  g.setAttribute('class', 'gantt-row');
  g.setAttribute('data-rank', row.rank.rank);
  g.setAttribute('data-worker', row.worker.id);
  g.setAttribute('transform', `translate(0,${i * rowH})`);
  const name = document.createElementNS(svgNS, 'text');
  name.setAttribute('y', rowH - 5);
  name.textContent = (data.ranks.length > 1 ? `r${row.rank.rank} ` : '') + row.worker.name;
  g.appendChild(name);
  const lane = document.createElementNS(svgNS, 'rect');
  lane.setAttribute('class', 'lane');
  lane.setAttribute('x', label); lane.setAttribute('width', width);
  lane.setAttribute('y', 1); lane.setAttribute('height', rowH - 2);
  g.appendChild(lane);
  for (const t of row.rank.tasks) {
    if (t.worker !== row.worker.id) continue;
    const r = document.createElementNS(svgNS, 'rect');
    r.setAttribute('class', 'task');
    r.setAttribute('x', label + width * (t.start_us - begin) / (end - begin));
    r.setAttribute('width', Math.max(0.5, width * (t.end_us - t.start_us) / (end - begin)));
    r.setAttribute('y', 2); r.setAttribute('height', rowH - 4);
    r.setAttribute('fill', colour(t.kind));
    r.addEventListener('mousemove', e => {
      tip.style.display = 'block';
      tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
      tip.textContent = `${t.name}: ${(t.end_us - t.start_us).toFixed(1)} us`;
    });
    r.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
    g.appendChild(r);
  }
  svg.appendChild(g);
});
const axis = document.createElementNS(svgNS, 'text');
axis.setAttribute('x', label); axis.setAttribute('y', rows.length * rowH + 16);
axis.textContent = `${(begin / 1000).toFixed(2)} .. ${(end / 1000).toFixed(2)} ms`;
svg.appendChild(axis);
document.getElementById('gantt-box').appendChild(svg);
document.getElementById('legend').innerHTML = kinds.map(k =>
  `<span style="color:${colour(k)}">&#9632;</span> ${k}`).join(' &nbsp; ');
)";
}  // namespace

void write_html_report(const std::vector<RankTrace>& ranks, const std::string& about,
                       std::ostream& out) {
  using nlohmann::json;
  json data = {{"ranks", json::array()}};
  long task_count = 0;
  for (const RankTrace& r : ranks) {
    json workers = json::array(), tasks = json::array();
    for (const Worker& w : r.workers) workers.push_back({{"id", w.id}, {"name", w.name}});
    for (const TaskEvent& t : r.tasks)
      tasks.push_back({{"name", task_name(t)},
                       {"kind", t.kind},
                       {"worker", t.worker},
                       {"start_us", t.start_us},
                       {"end_us", t.end_us}});
    task_count += static_cast<long>(r.tasks.size());
    data["ranks"].push_back({{"rank", r.rank},
                             {"begin_us", r.begin_us},
                             {"end_us", r.end_us},
                             {"workers", workers},
                             {"tasks", tasks}});
  }
  std::string payload = data.dump();
  // "</" inside a <script> element would end it early.
  for (std::size_t at = payload.find("</"); at != std::string::npos; at = payload.find("</", at))
    payload.replace(at, 2, "<\\/");

  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Tessera run report"
      << "</title><style>" << kStyle << "</style></head><body>\n<h1>Tessera run report</h1>\n<p>"
      << html_escaped(about) << "</p>\n<p id=\"overview\" data-tasks=\"" << task_count << "\">"
      << task_count << " tasks on " << ranks.size() << (ranks.size() == 1 ? " rank" : " ranks")
      << "</p>\n";

  out << "<h2>Tasks per worker over time</h2>\n<div id=\"legend\"></div><div id=\"gantt-box\">"
         "</div><div id=\"tip\"></div>\n";

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

  out << "<script type=\"application/json\" id=\"trace-data\">" << payload << "</script>\n"
      << "<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace tessera::trace
