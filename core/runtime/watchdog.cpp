#include "core/runtime/watchdog.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>

#include "core/runtime/comm.hpp"

namespace tessera::detail {

namespace {
// The innermost open Waiting section of the process (null: none) and how many sections were
// entered or left: the main thread's side of the watchdog. Process-wide, as MPI is: one
// Runtime at a time, and comm's collectives run without a Runtime's context at hand.
std::atomic<const char*> waiting_for{nullptr};
std::atomic<std::uint64_t> waits_seen{0};

// The exit status of a run the watchdog ended (errors use 2): scripts can tell a timeout.
constexpr int kWatchdogStatus = 3;

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", s);
  return text;
}
}  // namespace

Waiting::Waiting(const char* what) : outer_(waiting_for.exchange(what)) { ++waits_seen; }

Waiting::~Waiting() {
  waiting_for.store(outer_);
  ++waits_seen;
}

// One look at this rank: unchanged between looks while it waits means no progress.
struct Watchdog::Look {
  const char* what = nullptr;
  std::uint64_t waits = 0;
  TaskProgress tasks;
  bool waiting() const { return what != nullptr || tasks.pending > 0; }
  bool same_as(const Look& o) const {
    return what == o.what && waits == o.waits && !(tasks != o.tasks);
  }
};

Watchdog::Watchdog(double seconds, double floor, int rank, int ranks,
                   std::function<TaskProgress()> probe)
    : seconds_(seconds),
      floor_(floor),
      rank_(rank),
      ranks_(ranks),
      probe_(std::move(probe)),
      thread_([this] { run(); }) {}

std::string Watchdog::describe(double seconds, double floor) {
  if (seconds == 0) return "watchdog off (--watchdog SECONDS turns it on)";
  if (seconds > 0)
    return "watchdog after " + seconds_text(seconds) + " s without progress (--watchdog; 0: off)";
  return "watchdog after " + seconds_text(floor) +
         " s without progress, longer after long tasks (--watchdog SECONDS sets it, 0 turns it "
         "off)";
}

double Watchdog::limit() const {
  return seconds_ > 0 ? seconds_ : std::max(floor_, kAutomaticFactor * longest_wait_);
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Watchdog::stop_probing() {
  std::lock_guard<std::mutex> lock(mutex_);  // not while the thread is in the probe
  probe_ = nullptr;
}

Watchdog::Look Watchdog::look() {
  Look l;
  l.what = waiting_for.load();
  l.waits = waits_seen.load();
  if (probe_) l.tasks = probe_();
  return l;
}

void Watchdog::run() {
  using clock = std::chrono::steady_clock;
  // Looks often enough that the timeout is kept to within a tenth (at most a second late).
  const double shortest = seconds_ > 0 ? seconds_ : floor_;
  const auto period = std::chrono::duration<double>(std::clamp(shortest / 10, 0.01, 1.0));
  std::unique_lock<std::mutex> lock(mutex_);
  Look last = look();
  clock::time_point since = clock::now();
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const Look now = look();
    // Not waiting (host work between waits, however long): nothing to time.
    if (!now.waiting() || !now.same_as(last)) {
      if (last.waiting())  // a wait that ended in progress: the automatic time scales with it
        longest_wait_ =
            std::max(longest_wait_, std::chrono::duration<double>(clock::now() - since).count());
      last = now;
      since = clock::now();
      continue;
    }
    const double stuck = std::chrono::duration<double>(clock::now() - since).count();
    if (stuck >= limit()) fire(now, stuck, limit());
  }
}

void Watchdog::fire(const Look& stuck, double seconds_stuck, double limit) {
  const std::string rank = ranks_ > 1 ? "rank " + std::to_string(rank_) + ": " : "";
  std::string what = stuck.what != nullptr ? stuck.what : "its tasks to finish";
  if (stuck.tasks.pending > 0)
    what += " (" + std::to_string(stuck.tasks.pending) +
            " of this rank's tasks submitted and not finished)";
  const std::string cause =
      ranks_ > 1
          ? "Another rank may be stopped (SIGSTOP) or deadlocked, or a task runs longer than that"
          : "A task may be deadlocked or run longer than that";
  const std::string time = seconds_ > 0 ? "--watchdog " + seconds_text(seconds_)
                                        : "the watchdog's automatic time, " + seconds_text(limit) +
                                              " s: at least " + seconds_text(floor_) + ", " +
                                              seconds_text(kAutomaticFactor) +
                                              " times the longest wait seen";
  std::fprintf(stderr,
               "tessera: %sthe watchdog saw no progress for %s s (no task finished, none "
               "submitted) while this rank waited for %s. %s. Ending every rank (%s). "
               "Give --watchdog a longer time in seconds (Options::watchdog), or 0 to turn it "
               "off; see docs/reliability.md\n",
               rank.c_str(), seconds_text(seconds_stuck).c_str(), what.c_str(), cause.c_str(),
               time.c_str());
  std::fflush(stderr);
  comm::abort_every_rank(kWatchdogStatus);
}

}  // namespace tessera::detail
