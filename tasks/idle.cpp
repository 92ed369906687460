#include "tasks/idle.hpp"

#include "tasks/starpu.hpp"

namespace tessera::tasks {

void IdleWorkers::pause_if_idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (paused_ || starpu_task_nsubmitted() != 0) return;
  starpu_pause();
  paused_ = true;
}

void IdleWorkers::wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!paused_) return;
  starpu_resume();
  paused_ = false;
}

}  // namespace tessera::tasks
