#include "core/trace.hpp"

#include <starpu.h>
#include <starpu_profiling.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "core/comm.hpp"
#include "tessera/error.hpp"

namespace tessera {

TraceRecorder* TraceRecorder::active = nullptr;

namespace {
double to_us(const timespec& t) { return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

void check_writable(const std::string& path, const char* flag) {
  if (path.empty()) return;
  std::ofstream probe(path);
  if (!probe)
    throw Error(std::string("cannot write the ") + flag + " file '" + path + "'; give " + flag +
                " a path in a writable directory");
}

std::string memory_node_name(int node) {
  char name[64];
  starpu_memory_node_get_name(static_cast<unsigned>(node), name, sizeof(name));
  return name;
}
}  // namespace

TraceRecorder::TraceRecorder(std::string json_path, std::string html_path, int rank)
    : json_path_(std::move(json_path)), html_path_(std::move(html_path)), rank_(rank) {
  check_writable(json_path_, "--trace");
  check_writable(html_path_, "--report");
}

// StarPU's profiling timestamps come from its own clock (CLOCK_MONOTONIC_RAW where it exists),
// which starpu_timing_now() reads once StarPU is up.
void TraceRecorder::start_clock() { origin_us_ = starpu_timing_now(); }

void TraceRecorder::task_done(void* arg) {
  auto* task = static_cast<starpu_task*>(arg);
  TraceRecorder* self = active;
  if (self == nullptr || task->profiling_info == nullptr) return;
  const starpu_profiling_task_info* info = task->profiling_info;
  trace::TaskEvent e;
  e.name = task->name ? task->name : "task";
  trace::parse_task_name(e);
  e.worker = info->workerid;
  e.submit_us = to_us(info->submit_time) - self->origin_us_;
  e.start_us = to_us(info->start_time) - self->origin_us_;
  e.end_us = to_us(info->end_time) - self->origin_us_;
  // Model-based schedulers set `predicted` (us); others leave 0, uncalibrated models NaN.
  if (std::isfinite(task->predicted) && task->predicted > 0) e.predicted_us = task->predicted;
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->events_.push_back(std::move(e));
}

trace::RankTrace TraceRecorder::rank_trace() const {
  trace::RankTrace r;
  r.rank = rank_;
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w) {
    char name[64];
    starpu_worker_get_name(static_cast<int>(w), name, sizeof(name));
    const bool cuda = starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER;
    r.workers.push_back({static_cast<int>(w), name, cuda ? "cuda" : "cpu",
                         static_cast<int>(starpu_worker_get_memory_node(w))});
  }
  // StarPU without FxT reports transfers as totals per bus, and reading them resets them:
  // keep the running totals here so that every read sees the whole run.
  std::lock_guard<std::mutex> lock(mutex_);
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus) {
    starpu_profiling_bus_info info{};
    if (starpu_bus_get_profiling_info(bus, &info) != 0 || info.transfer_count == 0) continue;
    trace::Transfer& total = bus_totals_[bus];
    total.from = memory_node_name(starpu_bus_get_src(bus));
    total.to = memory_node_name(starpu_bus_get_dst(bus));
    total.bytes += static_cast<std::uint64_t>(info.transferred_bytes);
    total.count += static_cast<std::uint64_t>(info.transfer_count);
  }
  for (const auto& [bus, total] : bus_totals_) r.transfers.push_back(total);
  r.tasks = events_;
  std::sort(r.tasks.begin(), r.tasks.end(),
            [](const trace::TaskEvent& a, const trace::TaskEvent& b) { return a.start_us < b.start_us; });
  if (!r.tasks.empty()) r.begin_us = r.tasks.front().start_us;
  for (const trace::TaskEvent& t : r.tasks) r.end_us = std::max(r.end_us, t.end_us);
  return r;
}

void TraceRecorder::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  bus_totals_.clear();
  starpu_profiling_bus_info discarded{};  // reading StarPU's bus totals resets them
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus) starpu_bus_get_profiling_info(bus, &discarded);
}

void TraceRecorder::write(const std::vector<trace::RankTrace>& ranks, const std::string& title) const {
  if (json_path_.empty() && html_path_.empty()) return;
  if (!json_path_.empty()) {
    std::ofstream out(json_path_);
    trace::write_chrome_json(ranks, out);
  }
  if (!html_path_.empty()) {
    std::ofstream out(html_path_);
    trace::write_html_report(ranks, title, out);
  }
}

namespace {

// A flat byte encoding of a RankTrace, so that ranks can send their records to each other.
// `fields` lists what travels once; the Encoder writes and the Decoder reads through it.
struct Encoder {
  std::string bytes;
  template <class T>
  void field(const T& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  void field(const std::string& s) {
    field(static_cast<std::uint64_t>(s.size()));
    bytes += s;
  }
  template <class T>
  void count(const std::vector<T>& v) {
    field(static_cast<std::uint64_t>(v.size()));
  }
};

struct Decoder {
  const unsigned char* p;
  template <class T>
  void field(T& v) {
    std::memcpy(&v, p, sizeof(v));
    p += sizeof(v);
  }
  void field(std::string& s) {
    std::uint64_t n = 0;
    field(n);
    s.assign(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  template <class T>
  void count(std::vector<T>& v) {
    std::uint64_t n = 0;
    field(n);
    v.resize(n);
  }
};

// RankTrace is `trace::RankTrace` or `const trace::RankTrace`. A task's kind, stencil, tile
// and step do not travel: they are parsed from its name again.
template <class Io, class RankTrace>
void fields(Io& io, RankTrace& r) {
  io.field(r.rank);
  io.field(r.begin_us);
  io.field(r.end_us);
  io.count(r.workers);
  for (auto& w : r.workers) {
    io.field(w.id);
    io.field(w.name);
    io.field(w.arch);
    io.field(w.memory_node);
  }
  io.count(r.tasks);
  for (auto& t : r.tasks) {
    io.field(t.name);
    io.field(t.worker);
    io.field(t.submit_us);
    io.field(t.start_us);
    io.field(t.end_us);
    io.field(t.predicted_us);
  }
  io.count(r.transfers);
  for (auto& t : r.transfers) {
    io.field(t.from);
    io.field(t.to);
    io.field(t.bytes);
    io.field(t.count);
    io.field(t.mpi);
  }
}

}  // namespace

std::vector<trace::RankTrace> gather_rank_traces(const trace::RankTrace& mine) {
  if (detail::comm::ranks() == 1) return {mine};
  Encoder out;
  fields(out, mine);
  const std::vector<unsigned char> all = detail::comm::all_gather(out.bytes.data(), out.bytes.size());
  std::vector<trace::RankTrace> ranks;
  Decoder in{all.data()};
  while (in.p < all.data() + all.size()) {
    fields(in, ranks.emplace_back());
    for (trace::TaskEvent& t : ranks.back().tasks) trace::parse_task_name(t);
  }
  return ranks;
}

}  // namespace tessera
