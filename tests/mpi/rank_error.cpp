// A run in which an error is raised mid-run, after many steps were submitted: on rank 1 only
// ("local") or on every rank at the same point ("everywhere"), as the error handler of a
// program sees it (tessera::report_error). A rank-local error must be printed by its rank and
// end every rank within seconds; an error of every rank is printed once and every rank exits.
//   rank_error local|everywhere [runtime flags]
#include <cstring>
#include <iostream>

#include "tests/mpi/average_run.hpp"

int main(int argc, char** argv) {
  tessera::Options options = tessera::parse_options(argc, argv);
  options.quiet = true;
  const bool everywhere = argc > 1 && std::strcmp(argv[1], "everywhere") == 0;
  try {
    tessera::Runtime rt(options);
    test::AverageRun run;
    for (int step = 0; step < 400; ++step) {
      if (step == 200 && (everywhere || rt.rank() == 1))
        throw tessera::Error("injected failure at step 200");
      run.step();
    }
    const double total = tessera::sum(run.u);  // collective: rank 0 waits here for rank 1
    if (rt.rank() == 0) std::cout << "sum " << total << std::endl;
    rt.finish();
  } catch (const std::exception& e) { return tessera::report_error(e); }
  return 0;
}
