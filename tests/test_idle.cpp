// Idle workers are paused (docs/reliability.md, "StarPU's idle workers"): StarPU's CPU workers
// poll for tasks in a tight loop, so a live Runtime whose program works on the host would keep
// a core busy per worker. Measured as this process's CPU time (not wall time) over a second
// of host-side sleep with 2 workers: polling workers cost about 2 s of it (on a loaded machine,
// twice what one polling thread gets meanwhile), paused ones almost nothing. And the work
// after a pause runs: submission, data access and waiting wake the workers.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>
#include <vector>

#include <tessera/task.hpp>

#include "tests/test_support.hpp"

namespace {

// CPU seconds of a clock: the process's threads (every one, the runtime's workers too), or the
// calling thread's; to the nanosecond (getrusage's are counted in scheduler ticks, too coarse
// for the 150 us after a wait).
double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
double process_cpu_seconds() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }
double thread_cpu_seconds() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

// While the calling thread sleeps 1 s on the host: the CPU time of the process's threads
// (the runtime's workers) and, for scale, that of one thread polling in a tight loop meanwhile,
// which is what one polling worker costs on this machine now (a whole second when it is free,
// a share when other programs load it).
struct IdleCost {
  double runtime = 0, one_poller = 0;
};
IdleCost cost_of_host_sleep() {
  std::atomic<bool> stop{false};
  double poller = 0;
  const double before = process_cpu_seconds();
  std::thread spin([&] {
    const double start = thread_cpu_seconds();
    while (!stop.load(std::memory_order_relaxed)) {}
    poller = thread_cpu_seconds() - start;
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop = true;
  spin.join();
  return {process_cpu_seconds() - before - poller, poller};
}

// Two polling workers cost about twice one poller (2 s on a free machine); paused ones close
// to nothing.
void expect_paused(const IdleCost& c, const char* when) {
  EXPECT_LT(c.runtime, 0.3) << "CPU seconds used by 2 workers over 1 s " << when;
  EXPECT_LT(c.runtime, 0.25 * c.one_poller)
      << "CPU seconds used by 2 workers over 1 s " << when << ", against " << c.one_poller
      << " s by one thread polling meanwhile";
}

struct Average {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = 0.25 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
};

struct AddOne {
  void cpu(tessera::TileView<double, 2> u) const {
    for (std::int64_t y = 0; y < u.extent[1]; ++y)
      for (std::int64_t x = 0; x < u.extent[0]; ++x) u(x, y) += 1.0;
  }
};

TEST(IdleWorkers, HostWorkAfterWaitCostsNoWorkerTime) {
  tessera::Runtime rt(test::options({"dmda", 2}));
  ASSERT_EQ(rt.cpu_workers(), 2);
  const tessera::Grid<2> grid({64, 48}, {16, 16});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), v(grid, 1, {}, "v");
  u.fill([](tessera::Index<2> p) { return test::noise<2>(p); });
  tessera::Stencil<2> average("average", tessera::Shape::Star, 1);
  for (int step = 0; step < 10; ++step) {
    average.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
  rt.wait();
  expect_paused(cost_of_host_sleep(), "of host work after Runtime::wait()");
  // The next submission wakes the workers: the tasks run and the result is right.
  const std::vector<double> before = u.gather();  // a data access while paused
  tessera::Task add("add-one");
  for (int t = 0; t < grid.tiles(); ++t) add.submit(AddOne{}, tessera::update_tile(u, t));
  const std::vector<double> after = u.gather();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) ASSERT_EQ(after[i], before[i] + 1.0) << "at " << i;
}

TEST(IdleWorkers, RuntimeIdleFromStartUntilFirstUse) {
  tessera::Runtime rt(test::options({"eager", 2}));
  expect_paused(cost_of_host_sleep(), "before the first task");
  const tessera::Grid<2> grid({32, 32}, {16, 16});
  tessera::Field<double, 2> u(grid, 0, {}, "u");
  tessera::Task add("add-one");
  for (int t = 0; t < grid.tiles(); ++t) add.submit(AddOne{}, tessera::update_tile(u, t));
  rt.wait();
  EXPECT_EQ(tessera::sum(u), 32.0 * 32.0);
}

// u = 3 u + round modulo a prime, in place: the record of the rounds depends on their order and
// on each running once (a +1 would not show two rounds swapped); exact in doubles (< 2^53).
struct RecordRound {
  double round;
  static constexpr double kPrime = 1000003;
  void cpu(tessera::TileView<double, 2> u) const {
    for (std::int64_t y = 0; y < u.extent[1]; ++y)
      for (std::int64_t x = 0; x < u.extent[0]; ++x)
        u(x, y) = std::fmod(3 * u(x, y) + round, kPrime);
  }
};

TEST(IdleWorkers, ManyShortWaitsBetweenSubmissions) {
  // Pausing after every wait and waking at every submission keeps the order of the work: the
  // workers are paused between the rounds (checked at three of them, where pausing removed
  // fails), and each round's tasks run once, after the round before (the record below).
  tessera::Runtime rt(test::options({"random", 2}));
  const tessera::Grid<2> grid({32, 32}, {8, 8});
  tessera::Field<double, 2> u(grid, 0, {}, "u");
  tessera::Task record("record-round");
  double expected = 0;
  for (int round = 0; round < 50; ++round) {
    for (int t = 0; t < grid.tiles(); ++t)
      record.submit(RecordRound{static_cast<double>(round)}, tessera::update_tile(u, t));
    rt.wait();
    expected = std::fmod(3 * expected + round, RecordRound::kPrime);
    if (round == 0 || round == 25 || round == 49)
      expect_paused(cost_of_host_sleep(), "after a short wait");
  }
  for (double x : u.gather()) ASSERT_EQ(x, expected);
}

// Where the workers take every core the process may use, the last task of a wait pauses them
// (tasks::IdleWorkers::pause_when_drained): the waiting thread, woken, finds a free core
// instead of waiting out a polling worker's time slice (docs/scheduling.md, "The thread that
// waits"). Right after Runtime::wait() the workers then use no CPU, where they would poll
// until the pause 200 us after a wait (IdleWorkers::kGrace): 2 x 150 us of CPU time here (paused:
// 0-55 us, under ThreadSanitizer too; the median of 9 waits is checked).
TEST(IdleWorkers, TheLastTaskOfAWaitPausesWorkersThatTakeEveryCore) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "needs 2 CPUs";
  cpu_set_t two;  // this process on 2 of them: the 2 workers take every core
  CPU_ZERO(&two);
  for (int cpu = 0, kept = 0; kept < 2; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    CPU_SET(cpu, &two);
    ++kept;
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(two), &two), 0);
  {
    tessera::Runtime rt(test::options({"eager", 2}));
    const tessera::Grid<2> grid({64, 64}, {16, 16});
    tessera::Field<double, 2> u(grid, 0, {}, "u");
    tessera::Task add("add-one");
    // The median of 9 waits: one wait's window can catch a thread of the process woken for
    // something else (246 us once in CI, ctest -j2 on 2 cores); polling workers take every one.
    constexpr int kRounds = 9;
    std::vector<double> used;
    for (int round = 0; round < kRounds; ++round) {
      for (int t = 0; t < grid.tiles(); ++t) add.submit(AddOne{}, tessera::update_tile(u, t));
      rt.wait();
      const double before = process_cpu_seconds();
      std::this_thread::sleep_for(std::chrono::microseconds(150));
      used.push_back(process_cpu_seconds() - before);
    }
    std::vector<double> sorted = used;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_LT(sorted[kRounds / 2], 100e-6)
        << "median CPU seconds of the process over 150 us after a wait; each wait's: "
        << testing::PrintToString(used);
    EXPECT_EQ(tessera::sum(u), kRounds * 64.0 * 64);
  }
  sched_setaffinity(0, sizeof(allowed), &allowed);
}

}  // namespace
