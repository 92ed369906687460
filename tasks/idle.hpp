// StarPU's CPU workers poll for tasks in a tight loop while they have none (Debian's 1.3 build
// and 1.4 alike), so a live but idle Runtime keeps one core busy per worker. Tessera pauses
// them where it knows nothing is left for them (after waiting for every task, and from
// start-up to the first use) and wakes them before anything that needs them: every
// submission, data access, wait and the shutdown go through wake() (docs/reliability.md).
#pragma once

#include <mutex>

namespace tessera::tasks {

class IdleWorkers {
 public:
  /// Pauses the workers (starpu_pause) if no task is submitted and not finished; a task
  /// submitted while they are paused would wait until wake().
  void pause_if_idle();
  /// Resumes the workers (starpu_resume) if they are paused.
  void wake();

 private:
  mutable std::mutex mutex_;  // submission and the callers of data access may be threads
  bool paused_ = false;
};

}  // namespace tessera::tasks
