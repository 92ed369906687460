#include "tasks/idle.hpp"

#include "tasks/starpu.hpp"

namespace tessera::tasks {

IdleWorkers::~IdleWorkers() { stop(); }

void IdleWorkers::pause_if_idle(std::chrono::microseconds grace) {
#ifdef STARPU_SIMGRID
  // Simulated workers burn no core while idle, and the pausing thread would call StarPU from
  // outside SimGrid's simulated threads, which SimGrid aborts on.
  (void)grace;
  return;
#endif
  std::lock_guard<std::mutex> lock(mutex_);
  if (!may_pause()) return;
  if (grace.count() <= 0) {
    starpu_pause();
    paused_ = true;
    return;
  }
  request_ = ++requests_;
  due_ = std::chrono::steady_clock::now() + grace;
  if (!thread_.joinable()) thread_ = std::thread([this] { pausing_thread(); });
  requested_.notify_one();
}

void IdleWorkers::wake() {
  if (request_ != 0) {  // a pause still to come: the pausing thread, woken, finds no request
    request_ = 0;
    requested_.notify_one();
    return;
  }
  if (!paused_) return;
  starpu_resume();
  paused_ = false;
}

bool IdleWorkers::may_pause() const {
  return !paused_ && !stopping_ && held_ == 0 && starpu_task_nsubmitted() == 0;
}

void IdleWorkers::hold() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++held_;  // in the same critical section as the wake: no pause slips in between
  wake();
}

void IdleWorkers::unhold() {
  std::lock_guard<std::mutex> lock(mutex_);
  --held_;
}

void IdleWorkers::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  requested_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  wake();
}

void IdleWorkers::pause_when_drained(bool on) {
#ifdef STARPU_SIMGRID
  on = false;  // simulated workers burn no core (pause_if_idle)
#endif
  drain_pause_ = on;
}

IdleWorkers::Draining::Draining(IdleWorkers& idle) : idle_(idle) {
  idle_.hold();
  idle_.draining_.store(idle_.drain_pause_, std::memory_order_release);
}

IdleWorkers::Draining::~Draining() {
  idle_.draining_.store(false, std::memory_order_release);
  idle_.unhold();
}

void IdleWorkers::task_ended() {
  // The task whose callback takes the count to 0 is the last (StarPU's own count,
  // starpu_task_nsubmitted, drops only after the callbacks: two workers ending the last two
  // tasks at once would both see 2).
  const bool last = unended_.fetch_sub(1, std::memory_order_acq_rel) == 1;
  if (!last || !draining_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // The wait alone holds them (another holder's data request may still need them).
  if (!draining_.load(std::memory_order_relaxed) || paused_ || stopping_ || held_ != 1) return;
  request_ = 0;
  starpu_pause();
  paused_ = true;
}

void IdleWorkers::pausing_thread() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (request_ == 0) {
      requested_.wait(lock);
      continue;
    }
    const std::uint64_t id = request_;
    requested_.wait_until(lock, due_, [&] { return stopping_ || request_ != id; });
    if (stopping_ || request_ != id) continue;  // woken meanwhile, or a later request
    request_ = 0;
    if (may_pause()) {
      starpu_pause();
      paused_ = true;
    }
  }
}

}  // namespace tessera::tasks
