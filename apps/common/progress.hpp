// A progress line for long runs: at most once per second, on stderr, from a helper thread that
// reads how many submitted tasks have finished. Steps are submitted ahead of execution, within
// the runtime's window of tasks in flight, so the steps done are the steps submitted times the
// finished share of the submitted tasks.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>

#include <tessera/tessera.hpp>

namespace apps {

class ProgressLine {
 public:
  // `points` grid points per step; counts only tasks submitted after construction.
  ProgressLine(const tessera::Runtime& rt, long steps, double points)
      : rt_(rt),
        steps_(steps),
        points_(points),
        first_task_(rt.tasks_submitted()),
        start_(std::chrono::steady_clock::now()),
        thread_([this] { run(); }) {}
  ~ProgressLine() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // Called by the submitting thread after each step.
  void submitted(long steps) { steps_submitted_.store(steps, std::memory_order_relaxed); }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      const double submitted = static_cast<double>(rt_.tasks_submitted() - first_task_);
      const double pending = static_cast<double>(rt_.tasks_pending());
      if (submitted <= 0) continue;
      const double finished = std::max(0.0, std::min(1.0, 1.0 - pending / submitted));
      const double step = std::floor(
          finished * static_cast<double>(steps_submitted_.load(std::memory_order_relaxed)));
      const double done = step / static_cast<double>(steps_);
      const double eta = done > 0 ? elapsed * (1 - done) / done : 0;
      std::fprintf(stderr, "step %.0f/%ld  elapsed %.1f s  ETA %.1f s  MLUPS %.1f\n", step, steps_,
                   elapsed, eta, step * points_ / elapsed / 1e6);
    }
  }

  const tessera::Runtime& rt_;
  long steps_;
  double points_;
  std::size_t first_task_;
  std::atomic<long> steps_submitted_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above are ready
};

}  // namespace apps
