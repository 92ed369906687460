// What the applications share: timing a run and printing its one result line.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace apps {

struct Result {
  std::string app, grid, tiles;
  long steps;
  double seconds, points, bytes_per_point;
  double checksum;
};

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One line, key=value, so scripts and tests can read it.
inline void print(const Result& r) {
  const double updates = r.points * static_cast<double>(r.steps);
  std::printf("%s grid=%s tiles=%s steps=%ld seconds=%.4f MLUPS=%.1f GB/s=%.2f checksum=%.17g\n",
              r.app.c_str(), r.grid.c_str(), r.tiles.c_str(), r.steps, r.seconds,
              updates / r.seconds / 1e6, updates * r.bytes_per_point / r.seconds / 1e9,
              r.checksum);
}

}  // namespace apps
