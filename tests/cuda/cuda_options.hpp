// The options of the CUDA tests' runs: CPU workers only, or the CUDA bodies only. On a GPU
// that is one CUDA worker and no CPU worker (StarPU cannot fall back); on the emulated device
// (test_cuda_emulated, TESSERA_EMULATE_CUDA) one CPU worker whose kinds run their CUDA bodies
// through the emulated launcher (TESSERA_EMULATED_CUDA=1, read when the Runtime starts).
#pragma once

#include <cstdlib>
#include <set>
#include <string>

#include "tessera/tessera.hpp"

namespace test {

inline tessera::Options cpu_workers_only() {
#if TESSERA_EMULATE_CUDA
  unsetenv("TESSERA_EMULATED_CUDA");
#endif
  tessera::Options o;
  o.scheduler = "eager";
  o.cpu_workers = 1;
  o.cuda_workers = 0;
  o.quiet = true;
  return o;
}

inline tessera::Options cuda_bodies_only(const char* scheduler) {
  tessera::Options o;
  o.scheduler = scheduler;
#if TESSERA_EMULATE_CUDA
  setenv("TESSERA_EMULATED_CUDA", "1", 1);
  o.cpu_workers = 1;
  o.cuda_workers = 0;
#else
  o.cpu_workers = 0;
  o.cuda_workers = 1;
#endif
  o.quiet = true;
  return o;
}

/// Whether a task kind has a CUDA body (Tessera's kinds; user tasks' bodies are the user's).
inline bool has_cuda_body(const std::string& kind) {
  static const std::set<std::string> kinds = {"interior",
                                              "interior+halo",
                                              "loop",
                                              "loop+halo",
                                              "time-block",
                                              "time-block+halo",
                                              "halo-pack",
                                              "boundary",
                                              "constant-ghosts",
                                              "boundary-function",
                                              "sum",
                                              "sum-of",
                                              "min",
                                              "max",
                                              "pairs",
                                              "halo-gather",
                                              "halo-import",
                                              "inc-combine",
                                              "write-back"};
  return kinds.count(kind) > 0;
}

}  // namespace test
