// Runs that stop making progress, for the watchdog (--watchdog SECONDS, docs/reliability.md):
//   watchdog stop         rank 1 stops itself (SIGSTOP) at step 20 of 400, while rank 0 still
//                         submits: rank 0 waits for its tasks, whose data rank 1 never sends
//   watchdog stop-at-sum  rank 1 stops itself after the steps: rank 0 waits in the sum's gather
//   watchdog slow-task S  one user task whose body sleeps S seconds (a deadlocked kernel)
//   watchdog slow-tasks S a task of S/2 seconds, then one of S*2 (the automatic watchdog's time
//                         grows with the first: a floor of S must not fire on the second)
//   watchdog host-work    the program sleeps 3 s on the host between runs, nothing submitted:
//                         not waiting, so a short watchdog must not fire
//   watchdog options-differ  rank 1 sets Options::fused_exchange = false in code (the command
//                         lines agree): the Runtime must refuse to start, on every rank
// Runtime flags follow (e.g. --watchdog 2). Prints "finished: sum ..." on rank 0 at the end.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include <tessera/task.hpp>

#include "tests/mpi/average_run.hpp"

namespace {
struct Sleep {  // a task body that does not return for a while
  double seconds;
  void cpu(tessera::TileView<double, 2>) const {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
};
}  // namespace

int main(int argc, char** argv) {
  tessera::Options options = tessera::parse_options(argc, argv);
  options.quiet = true;
  const std::string mode = argc > 1 ? argv[1] : "";
  // MPI is not up before the Runtime: the launcher's variable says which rank this is.
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (mode == "options-differ" && rank != nullptr && std::strcmp(rank, "1") == 0)
    options.fused_exchange = false;
  try {
    tessera::Runtime rt(options);
    test::AverageRun run;
    const auto steps = [&](int count, int stop_at) {
      for (int step = 0; step < count; ++step) {
        if (step == stop_at && rt.rank() == 1) std::raise(SIGSTOP);  // stopped, no error
        run.step();
      }
    };
    if (mode == "stop") {
      steps(400, 20);
    } else if (mode == "stop-at-sum") {
      steps(20, -1);
      rt.wait();
      if (rt.rank() == 1) std::raise(SIGSTOP);
    } else if (mode == "slow-task" && argc > 2) {
      tessera::Task("sleep").submit(Sleep{std::atof(argv[2])}, tessera::update_tile(run.u, 0));
      rt.wait();
    } else if (mode == "slow-tasks" && argc > 2) {
      for (double seconds : {std::atof(argv[2]) / 2, std::atof(argv[2]) * 2}) {
        tessera::Task("sleep").submit(Sleep{seconds}, tessera::update_tile(run.u, 0));
        rt.wait();
      }
    } else if (mode == "host-work") {
      steps(20, -1);
      rt.wait();
      std::this_thread::sleep_for(std::chrono::seconds(3));
      steps(20, -1);
    } else if (mode == "options-differ") {
      steps(20, -1);
    } else {
      std::cerr << "usage: watchdog stop|stop-at-sum|slow-task(s) SECONDS|host-work|options-differ "
                   "[runtime flags]\n";
      return 2;
    }
    const double total = tessera::sum(run.u);  // collective
    if (rt.rank() == 0) std::cout << "finished: sum " << total << std::endl;
    rt.finish();
  } catch (const std::exception& e) { return tessera::report_error(e); }
  return 0;
}
