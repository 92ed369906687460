// The watchdog (Options::watchdog, --watchdog SECONDS; off by default): a thread that ends
// every rank, with a message, when this rank waits and nothing progresses for that long. A
// rank stopped without an error (SIGSTOP, a deadlocked task) would otherwise hang the whole
// job: the other ranks wait for its data or in a collective forever (docs/reliability.md).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::detail {

/// What the engine says about this rank's tasks; any change between two looks is progress.
struct TaskProgress {
  std::uint64_t submitted = 0;  ///< tasks submitted so far (those run by other ranks too)
  std::size_t pending = 0;      ///< tasks submitted to this rank and not finished
  bool operator!=(const TaskProgress& o) const {
    return submitted != o.submitted || pending != o.pending;
  }
};

class Watchdog {
 public:
  /// Starts the thread. `probe` is called from it (it must only read counters); `rank` and
  /// `ranks` are for the message (the thread makes no MPI call but the abort).
  Watchdog(double seconds, int rank, int ranks, std::function<TaskProgress()> probe);
  /// Stops the thread.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  /// The probe's engine is about to go (StarPU's shutdown): from now on only the Waiting
  /// sections tell whether this rank waits and progresses.
  void stop_probing();

 private:
  struct Look;
  Look look();
  [[noreturn]] void fire(const Look& stuck, double seconds_stuck);
  void run();

  double seconds_;
  int rank_, ranks_;
  std::function<TaskProgress()> probe_;  // null once stop_probing() was called
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above are ready
};

/// Marks the scope in which the calling thread blocks waiting for something outside this
/// rank's control (the other ranks in a collective, every rank's tasks): entering and leaving
/// one is progress, and while one is open the watchdog counts the time. `what` (a literal)
/// ends "... while it waited for <what>". Nestable; costs two atomic stores without a watchdog.
class Waiting {
 public:
  explicit Waiting(const char* what);
  ~Waiting();
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;

 private:
  const char* outer_;
};

}  // namespace tessera::detail
