#include "tasks/recorder.hpp"

#include <starpu_profiling.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "tasks/device_classes.hpp"
#include "tasks/starpu.hpp"

namespace tessera::tasks {

namespace {
double to_us(const timespec& t) { return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

std::string memory_node_name(int node) {
  char name[64];
  starpu_memory_node_get_name(static_cast<unsigned>(node), name, sizeof(name));
  return name;
}

// What a watched task's callback receives: the recorder, the task's tag, its place among the
// watched tasks and its data.
struct Watched {
  Recorder* recorder;
  starpu_task* task;
  TaskTag tag;
  std::uint64_t order;
  std::vector<trace::DataAccess> data;
  // trace::TaskEvent::pinned_worker, read as submitted: by the callback StarPU 1.3.10 no longer
  // holds it in task->workerid (tasks that ran on worker 1 read 0 there).
  int pinned_worker;
};

std::uint64_t data_id(starpu_data_handle_t h, bool distributed) {
#ifdef TESSERA_WITH_MPI
  if (distributed) return static_cast<std::uint64_t>(starpu_mpi_data_get_tag(h));
#endif
  (void)distributed;
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h));
}
}  // namespace

// StarPU's profiling timestamps come from its own clock (CLOCK_MONOTONIC_RAW where it exists),
// which starpu_timing_now() reads once StarPU is up.
void Recorder::start_clock() {
  origin_us_ = starpu_timing_now();
  classes_.clear();
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    const std::string arch = is_cuda_worker(static_cast<int>(w)) ? "cuda" : "cpu";
    bool known = false;
    for (const auto& [a, id] : classes_) known = known || a == arch;
    if (!known) classes_.push_back({arch, static_cast<int>(w)});
  }
}

// What the models predict for `task` on the classes other than its worker's (the area bound
// may place its kind there); nothing with one class. Asked before mutex_ is taken: in a
// simulated run (SimGrid) a model's lookup may switch to another simulated worker, which would
// then wait forever on mutex_ held by this one (all of them run in one system thread).
std::vector<std::pair<std::string, double>> Recorder::predict_elsewhere(starpu_task* task,
                                                                        int worker) const {
  std::vector<std::pair<std::string, double>> out;
  if (classes_.size() < 2) return out;  // classes_ is set before any task runs (start_clock)
  const bool on_cuda = is_cuda_worker(worker);
  for (const auto& [arch, id] : classes_) {
    if ((arch == "cuda") == on_cuda) continue;
    starpu_perfmodel_arch* perf = starpu_worker_get_perf_archtype(id, STARPU_NMAX_SCHED_CTXS);
    const double us = starpu_task_expected_length(task, perf, 0);
    if (!std::isfinite(us) || us <= 0) continue;  // no model, or no implementation there
    out.emplace_back(arch, us);
  }
  return out;
}

// Adds predict_elsewhere's answers. Under mutex_.
void Recorder::add_elsewhere(const std::vector<std::pair<std::string, double>>& predicted,
                             const char* kind) {
  for (const auto& [arch, us] : predicted) {
    trace::ModelTime& m = model_times_[{kind, arch}];
    m.kind = kind;
    m.arch = arch;
    ++m.tasks;
    m.predicted_us += us;
  }
}

void Recorder::watch(starpu_task* task, const TaskTag& tag, bool distributed) {
  std::vector<trace::DataAccess> data(task->nbuffers);
  for (unsigned i = 0; i < task->nbuffers; ++i) {
    starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
    const starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
    data[i].data = data_id(h, distributed);
    data[i].bytes = starpu_data_get_size(h);
    data[i].mode = static_cast<std::uint8_t>(((mode & STARPU_R) ? trace::DataAccess::kRead : 0) |
                                             ((mode & STARPU_W) ? trace::DataAccess::kWrite : 0));
  }
  task->callback_func = &Recorder::task_done;
  const int pinned =
      task->execute_on_a_specific_worker != 0 ? static_cast<int>(task->workerid) : -1;
  task->callback_arg = new Watched{this, task, tag, watched_++, std::move(data), pinned};
  // starpu_mpi_task_build marks the callback argument as StarPU's to free; it is ours.
  task->callback_arg_free = 0;
}

void Recorder::task_done(void* arg) {
  std::unique_ptr<Watched> w(static_cast<Watched*>(arg));
  const starpu_profiling_task_info* info = w->task->profiling_info;
  Recorder& self = *w->recorder;
  if (info == nullptr) {  // not profiled: later tasks' chains still need it folded
    std::lock_guard<std::mutex> lock(self.mutex_);
    if (!self.keep_events_) self.fold(w->order, std::move(w->data), 0);
    return;
  }
  const double start_us = to_us(info->start_time) - self.origin_us_;
  const double end_us = to_us(info->end_time) - self.origin_us_;
  // Model-based schedulers set `predicted` (us); others leave 0, uncalibrated models NaN.
  const bool predicted = std::isfinite(w->task->predicted) && w->task->predicted > 0;
  const auto elsewhere = self.predict_elsewhere(w->task, info->workerid);
  if (!self.keep_events_) {
    std::lock_guard<std::mutex> lock(self.mutex_);
    if (self.totals_.empty()) self.first_start_us_ = start_us;
    // The key is the codelet's kind name: one entry per (worker, codelet kind), a bounded set.
    trace::TaskTotals& t = self.totals_[{info->workerid, w->tag.kind}];
    if (t.tasks == 0) {
      t.worker = info->workerid;
      t.kind = w->tag.kind;
    }
    self.first_start_us_ = std::min(self.first_start_us_, start_us);
    self.last_end_us_ = std::max(self.last_end_us_, end_us);
    ++t.tasks;
    t.measured_us += end_us - start_us;
    if (predicted) {
      ++t.predicted_tasks;
      t.predicted_us += w->task->predicted;
      t.measured_with_prediction_us += end_us - start_us;
    }
    self.fold(w->order, std::move(w->data), end_us - start_us);
    self.add_elsewhere(elsewhere, w->tag.kind);
    return;
  }
  trace::TaskEvent e;
  e.stencil = w->tag.stencil;
  e.kind = w->tag.kind;
  if (w->tag.field != nullptr) e.field = w->tag.field;
  e.tile = w->tag.tile;
  e.step = static_cast<int>(w->tag.step);
  e.worker = info->workerid;
  e.pinned_worker = w->pinned_worker;
  e.early_copies = w->tag.early_copies;
  e.submit_us = to_us(info->submit_time) - self.origin_us_;
  e.start_us = start_us;
  e.end_us = end_us;
  if (predicted) e.predicted_us = w->task->predicted;
  e.seq = w->tag.seq;
  e.data = std::move(w->data);
  std::lock_guard<std::mutex> lock(self.mutex_);
  self.events_.push_back(std::move(e));
  self.add_elsewhere(elsewhere, w->tag.kind);
  self.sample_buses(end_us);
}

// StarPU counts a transfer on its bus when the copy starts; its counters have no lock, so a
// transfer counted at the very moment of a read (between StarPU's copy and its reset) may be
// lost. Without a second memory node there is no bus and nothing to read.
void Recorder::sample_buses(double at_us) const {
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus) {
    starpu_profiling_bus_info info{};
    if (starpu_bus_get_profiling_info(bus, &info) != 0 || info.transfer_count == 0) continue;
    trace::Transfer& total = bus_totals_[bus];
    if (total.from.empty()) {
      total.from = memory_node_name(starpu_bus_get_src(bus));
      total.to = memory_node_name(starpu_bus_get_dst(bus));
    }
    const auto bytes = static_cast<std::uint64_t>(info.transferred_bytes);
    const auto count = static_cast<std::uint64_t>(info.transfer_count);
    total.bytes += bytes;
    total.count += count;
    if (keep_events_) samples_.push_back({bus, {at_us, 0, bytes, count}});
  }
}

void Recorder::fold(std::uint64_t order, std::vector<trace::DataAccess> data, double duration_us) {
  ended_.emplace(order, std::make_pair(std::move(data), duration_us));
  for (auto next = ended_.begin(); next != ended_.end() && next->first == folded_;
       next = ended_.erase(next), ++folded_) {
    const auto& [accesses, duration] = next->second;
    const double path = tracker_.before(accesses).path_us + duration;
    tracker_.add(accesses, static_cast<long>(folded_), path, 0);
    critical_path_us_ = std::max(critical_path_us_, path);
  }
}

trace::RankTrace Recorder::rank_trace() const {
  trace::RankTrace r;
  r.rank = rank_;
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w) {
    char name[64];
    starpu_worker_get_name(static_cast<int>(w), name, sizeof(name));
    const bool cuda = is_cuda_worker(static_cast<int>(w));
    // The emulated device's stand-ins for CUDA workers (docs/gpu.md) say so in their name.
    r.workers.push_back(
        {static_cast<int>(w),
         is_cuda_stand_in(static_cast<int>(w)) ? std::string(name) + " (emulated CUDA)"
                                               : std::string(name),
         cuda ? "cuda" : "cpu", static_cast<int>(starpu_worker_get_memory_node(w))});
  }
  // StarPU without FxT reports transfers as totals per bus, and reading them resets them:
  // keep the running totals here so that every read sees the whole run. With events, the
  // counters were also sampled as each task ended; what moved since is sampled now.
  std::lock_guard<std::mutex> lock(mutex_);
  sample_buses(starpu_timing_now() - origin_us_);
  std::map<int, int> link;  // bus id -> place in r.transfers
  for (const auto& [bus, total] : bus_totals_) {
    link[bus] = static_cast<int>(r.transfers.size());
    r.transfers.push_back(total);
  }
  for (const auto& [bus, sample] : samples_) {
    r.transfer_samples.push_back(sample);
    r.transfer_samples.back().link = link[bus];
  }
  r.tasks = events_;
  for (const auto& [key, t] : totals_) r.totals.push_back(t);
  for (const auto& [key, m] : model_times_) r.model_times.push_back(m);
  std::sort(
      r.tasks.begin(), r.tasks.end(),
      [](const trace::TaskEvent& a, const trace::TaskEvent& b) { return a.start_us < b.start_us; });
  if (!r.tasks.empty()) r.begin_us = r.tasks.front().start_us;
  for (const trace::TaskEvent& t : r.tasks) r.end_us = std::max(r.end_us, t.end_us);
  if (!totals_.empty()) {
    r.begin_us = first_start_us_;
    r.end_us = last_end_us_;
    r.critical_path_us = critical_path_us_;
  }
  return r;
}

void Recorder::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  totals_.clear();
  bus_totals_.clear();
  samples_.clear();
  model_times_.clear();
  // Every task watched so far has ended (clear follows a wait): the next chain starts afresh.
  ended_.clear();
  folded_ = watched_;
  tracker_ = trace::DependencyTracker();
  critical_path_us_ = 0;
  starpu_profiling_bus_info discarded{};  // reading StarPU's bus totals resets them
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus)
    starpu_bus_get_profiling_info(bus, &discarded);
}

}  // namespace tessera::tasks
