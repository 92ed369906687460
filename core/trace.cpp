#include "core/trace.hpp"

#include <starpu.h>
#include <starpu_profiling.h>

#include <fstream>

#include "tessera/error.hpp"

namespace tessera {

TraceRecorder* TraceRecorder::active = nullptr;

namespace {
double to_us(const timespec& t) { return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

std::string json_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}
}  // namespace

TraceRecorder::TraceRecorder(std::string path) : path_(std::move(path)) {
  std::ofstream probe(path_);
  if (!probe)
    throw Error("cannot write the trace file '" + path_ + "'; give --trace a writable path");
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  origin_us_ = to_us(now);
}

void TraceRecorder::task_done(void* arg) {
  auto* task = static_cast<starpu_task*>(arg);
  TraceRecorder* self = active;
  if (self == nullptr || task->profiling_info == nullptr) return;
  const starpu_profiling_task_info* info = task->profiling_info;
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->events_.push_back({task->name ? task->name : "task", info->workerid,
                           to_us(info->start_time) - self->origin_us_,
                           to_us(info->end_time) - self->origin_us_});
}

void TraceRecorder::write() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> entries;
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w) {
    char name[64];
    starpu_worker_get_name(static_cast<int>(w), name, sizeof(name));
    entries.push_back("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":" +
                      std::to_string(w) + ",\"args\":{\"name\":\"" + json_escaped(name) + "\"}}");
  }
  for (const Event& e : events_) {
    const std::string kind = e.name.substr(0, e.name.find(' '));
    entries.push_back("{\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(e.worker) +
                      ",\"name\":\"" + json_escaped(kind) + "\",\"ts\":" +
                      std::to_string(e.start_us) + ",\"dur\":" +
                      std::to_string(e.end_us - e.start_us) + ",\"args\":{\"task\":\"" +
                      json_escaped(e.name) + "\"}}");
  }
  std::ofstream out(path_);
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (std::size_t i = 0; i < entries.size(); ++i)
    out << entries[i] << (i + 1 < entries.size() ? ",\n" : "\n");
  out << "]}\n";
}

}  // namespace tessera
