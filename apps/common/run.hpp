// What the applications share: grid options, timing a run and printing its one result line.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace apps {

// --size, --tile and --steps, plus the Tessera runtime flags.
struct RunOptions {
  std::vector<long> size, tile;
  long steps;
  tessera::Options runtime;

  void add_to(CLI::App& cli) {
    tessera::add_options(cli, runtime);
    const auto n = static_cast<int>(size.size());
    cli.add_option("--size", size, "grid points per axis")->expected(n);
    cli.add_option("--tile", tile, "tile points per axis (the last tile may be smaller)")->expected(n);
    cli.add_option("--steps", steps, "time steps")->check(CLI::PositiveNumber);
  }
  std::string grid_name() const {
    std::string s;
    for (long v : size) s += (s.empty() ? "" : "x") + std::to_string(v);
    return s;
  }
};

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Submits `step` `steps` times without waiting in between; returns the seconds until all ran.
template <class Step>
double timed_steps(tessera::Runtime& rt, long steps, Step step) {
  rt.wait();
  const double start = now_seconds();
  for (long s = 0; s < steps; ++s) step();
  rt.wait();
  return now_seconds() - start;
}

// One line, key=value, so scripts and tests can read it; printed by rank 0 only. The halo
// traffic between ranks is per step, over every rank (0 in a one-rank run); call it on every
// rank (collective).
inline void print_result(const char* app, const RunOptions& o, const tessera::Runtime& rt,
                         int tiles, double seconds, double points, double bytes_per_point,
                         double checksum) {
  const double updates = points * static_cast<double>(o.steps);
  const tessera::Traffic traffic = rt.traffic();
  if (rt.rank() != 0) return;
  std::printf("%s grid=%s tiles=%d steps=%ld seconds=%.4f MLUPS=%.1f GB/s=%.2f checksum=%.17g "
              "ranks=%d halo_messages/step=%.1f halo_bytes/step=%.0f\n",
              app, o.grid_name().c_str(), tiles, o.steps, seconds, updates / seconds / 1e6,
              updates * bytes_per_point / seconds / 1e9, checksum, rt.ranks(),
              static_cast<double>(traffic.messages) / static_cast<double>(o.steps),
              static_cast<double>(traffic.bytes) / static_cast<double>(o.steps));
}

// Runs the application body; bad input (tessera::Error) is reported and exits with 2. Every
// rank of a distributed run detects the same bad input, so rank 0 alone reports it.
template <class Body>
int run_guarded(Body body) {
  try {
    body();
  } catch (const tessera::Error& e) {
    if (tessera::process_rank() == 0) std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace apps
