// A minimal execution trace from StarPU's task profiling (works without FxT): one event per
// task with its worker and start/end, written as Chrome/Perfetto trace-event JSON.
#pragma once

#include <mutex>
#include <string>
#include <vector>

struct starpu_task;

namespace tessera {

class TraceRecorder {
 public:
  explicit TraceRecorder(std::string path);
  // Hooked as the callback of every task when tracing; `task` is the task itself.
  static void task_done(void* task);
  void write() const;
  static TraceRecorder* active;

 private:
  struct Event {
    std::string name;
    int worker;
    double start_us, end_us;
  };
  std::string path_;
  double origin_us_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

}  // namespace tessera
