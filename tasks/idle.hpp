// StarPU's CPU workers poll for tasks in a tight loop while they have none (Debian's 1.3 build
// and 1.4 alike), so a live but idle Runtime keeps one core busy per worker. Tessera pauses
// them where it knows nothing is left for them (a short while after waiting for every task,
// and from start-up to the first use) and wakes them before anything that needs them: every
// submission, data access and wait holds an Awake guard, and the shutdown wakes them
// (docs/reliability.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace tessera::tasks {

class IdleWorkers {
 public:
  /// How long the workers keep polling after a wait before they are paused: as OpenMP's threads
  /// spin a while after a parallel region, so that a submission soon after a wait (a timed
  /// region's first) does not pay the workers' wake-up, tens of microseconds (a resume
  /// broadcast, then each thread scheduled again).
  static constexpr std::chrono::microseconds kGrace{200};

  IdleWorkers() = default;
  IdleWorkers(const IdleWorkers&) = delete;
  IdleWorkers& operator=(const IdleWorkers&) = delete;
  ~IdleWorkers();

  /// Pauses the workers (starpu_pause) if no task is submitted and not finished: at once, or
  /// after `grace` if nothing woke them meanwhile (a thread of this object's waits it out). A
  /// task submitted while they are paused would wait until they are woken (Awake).
  void pause_if_idle(std::chrono::microseconds grace = std::chrono::microseconds{0});
  /// Wakes the workers and keeps them awake while it lives: around every call that blocks on
  /// StarPU (a wait, a synchronous acquire, an unregistration), whose internal tasks and data
  /// requests need running workers. No pause lands meanwhile, whichever thread asks for it.
  class Awake {
   public:
    explicit Awake(IdleWorkers& idle) : idle_(idle) { idle_.hold(); }
    ~Awake() { idle_.unhold(); }
    Awake(const Awake&) = delete;
    Awake& operator=(const Awake&) = delete;

   private:
    IdleWorkers& idle_;
  };
  /// Wakes the workers and ends the pausing thread: before StarPU shuts down.
  void stop();

  /// Where the workers take every core this process may run on (CPU workers only, one rank),
  /// a waiting thread woken by the last task's end waits for a core too: StarPU's idle
  /// workers poll, and the kernel lets a polling worker run out its time slice (a tick, up to
  /// 4 ms) before the woken thread gets a core. With `on`, the workers are paused as the last
  /// task of a wait ends (Draining, task_ended), so the waiting thread finds a free core.
  void pause_when_drained(bool on);
  bool pauses_when_drained() const { return drain_pause_; }
  /// Awake for a wait for every task: the workers stay awake until the last task ends, then,
  /// with pause_when_drained, that task's end pauses them (the next submission wakes them).
  class Draining {
   public:
    explicit Draining(IdleWorkers& idle);
    ~Draining();
    Draining(const Draining&) = delete;
    Draining& operator=(const Draining&) = delete;

   private:
    IdleWorkers& idle_;
  };
  /// Every task submitted with pause_when_drained calls task_ended from its callback
  /// (tasks::Submitter): it pauses the workers if a Draining wait is the only holder and this
  /// task is the last one submitted.
  void task_submitted() { unended_.fetch_add(1, std::memory_order_relaxed); }
  void task_ended();

 private:
  void pausing_thread();
  // Resumes the workers (starpu_resume) if they are paused; cancels a pause still to come.
  // With mutex_ held.
  void wake();
  void hold();
  void unhold();
  bool may_pause() const;  // with mutex_ held

  bool drain_pause_ = false;
  std::atomic<bool> draining_{false};  // a Draining wait is on: task callbacks look
  std::atomic<long> unended_{0};       // tasks submitted whose callback has not ended
  std::mutex mutex_;                   // submission and the callers of data access may be threads
  std::condition_variable requested_;
  bool paused_ = false;
  bool stopping_ = false;
  int held_ = 0;               // Awake guards alive
  std::uint64_t request_ = 0;  // the pending pause (0: none), cancelled by a wake
  std::uint64_t requests_ = 0;
  std::chrono::steady_clock::time_point due_;
  std::thread thread_;
};

}  // namespace tessera::tasks
