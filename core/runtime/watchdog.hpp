// The watchdog (Options::watchdog, --watchdog SECONDS; on by default): a thread that ends
// every rank, with a message, when this rank waits and nothing progresses for that long. A
// rank stopped without an error (SIGSTOP, a deadlocked task) would otherwise hang the whole
// job: the other ranks wait for its data or in a collective forever (docs/reliability.md).
// By default the time is automatic: kAutomaticFactor times the longest wait of this run that
// ended in progress (a task finishing: the longest task seen, where one task ran alone), and
// never below a floor (TESSERA_WATCHDOG_MIN_SECONDS, default kAutomaticFloorSeconds) that
// covers a first task no healthy run takes longer over.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
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

/// Options::watchdog's default: the automatic time.
constexpr double kWatchdogAutomatic = -1;
/// The automatic time: this many times the longest wait that ended in progress...
constexpr double kAutomaticFactor = 10;
/// ...and at least this many seconds (10 minutes: a first task, a calibration, a slow CI).
constexpr double kAutomaticFloorSeconds = 600;

class Watchdog {
 public:
  /// Starts the thread: `seconds` > 0 a fixed time, kWatchdogAutomatic the automatic one with
  /// `floor` seconds at least. `probe` is called from the thread (it must only read counters);
  /// `rank` and `ranks` are for the message (the thread makes no MPI call but the abort).
  Watchdog(double seconds, double floor, int rank, int ranks, std::function<TaskProgress()> probe);
  /// What the configuration line says of it ("watchdog after 600 s without progress ...").
  static std::string describe(double seconds, double floor);
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
  [[noreturn]] void fire(const Look& stuck, double seconds_stuck, double limit);
  void run();
  double limit() const;

  double seconds_, floor_;
  double longest_wait_ = 0;  // the longest wait of this run that ended in progress, in seconds
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
