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

// The steps finished, from this rank's tasks submitted so far (`submitted`), StarPU's
// unfinished ones (`pending`) and the steps submitted. Under mpirun StarPU also counts
// StarPU-MPI's own tasks of the halo exchanges (3 per task of ours on 2 ranks: heat3d showed
// "step 0" for two thirds of the run), so pending / submitted starts above 1: that start, the
// highest ratio seen, is what "nothing finished" reads as. One rank: the ratio starts at 1.
class ProgressEstimate {
 public:
  double step(double submitted, double pending, long steps_submitted) {
    if (submitted <= 0) return 0;
    const double ratio = pending / submitted;
    unfinished_ = std::max(unfinished_, ratio);
    const double finished = std::max(0.0, std::min(1.0, 1.0 - ratio / unfinished_));
    return std::floor(finished * static_cast<double>(steps_submitted));
  }

 private:
  double unfinished_ = 1;  // pending / submitted while nothing has finished
};

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
    ProgressEstimate estimate;
    // Sampled every 0.1 s, so that the first samples see the start (the estimate's scale);
    // printed every 10th.
    for (int sample = 1;
         !wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; });
         ++sample) {
      const double step = estimate.step(static_cast<double>(rt_.tasks_submitted() - first_task_),
                                        static_cast<double>(rt_.tasks_pending()),
                                        steps_submitted_.load(std::memory_order_relaxed));
      if (sample % 10 != 0 || rt_.tasks_submitted() == first_task_) continue;
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
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
