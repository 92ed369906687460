// What the application-vs-OpenMP-twin benchmarks share: timing steps and the report.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One untimed step (first-time set-up: ghost plans, codelets, first touch), then steps - 1
// timed ones; sync() waits for submitted work. Seconds per step.
template <class Step, class Sync>
double seconds_per_step(long steps, Step step, Sync sync) {
  step();
  sync();
  const double t0 = now();
  for (long k = 1; k < steps; ++k) step();
  sync();
  return (now() - t0) / static_cast<double>(steps - 1);
}

// The report; returns the exit status (1 when the results differ).
inline int report(const std::string& what, long steps, int threads, double points, double omp_s,
                  double tessera_s, bool same) {
  std::printf("%s steps=%ld threads=%d\n", what.c_str(), steps, threads);
  std::printf("  openmp   %.6f s/step  %.1f MLUPS\n", omp_s, points / omp_s / 1e6);
  std::printf("  tessera  %.6f s/step  %.1f MLUPS\n", tessera_s, points / tessera_s / 1e6);
  std::printf("  tessera/openmp time ratio %.2f; results %s\n", tessera_s / omp_s,
              same ? "bitwise equal" : "DIFFER");
  return same ? 0 : 1;
}

}  // namespace bench
