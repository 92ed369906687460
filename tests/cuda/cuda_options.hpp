// The options of the CUDA tests' runs: CPU workers only, or the CUDA bodies only. On a GPU
// that is one CUDA worker and no CPU worker (StarPU cannot fall back); on the emulated device
// (test_cuda_emulated, TESSERA_EMULATE_CUDA) one CPU worker whose kinds run their CUDA bodies
// through the emulated launcher (TESSERA_EMULATED_CUDA=1, read when the Runtime starts). With a
// trace, the kinds that ran.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

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

inline const std::string& trace_path() {
  // One per process: CTest may run this program's tests side by side (test_cuda_emulated).
  static const std::string path =
      testing::TempDir() + "tessera_cuda_trace." + std::to_string(getpid()) + ".json";
  return path;
}

// The CUDA bodies only (one CUDA worker, or the emulated device), with a trace of every task.
inline tessera::Options cuda_only(const char* scheduler) {
  tessera::Options o = cuda_bodies_only(scheduler);
  o.trace = trace_path();
  return o;
}

// Task counts per kind ("heat:interior" -> "interior") in the last CUDA run's trace; fails
// the test if any task ran on a worker whose name does not say CUDA (on the emulated device:
// if a kind that ran has no CUDA body, so its CPU body ran).
inline std::map<std::string, int> kinds_on_cuda() {
  std::ifstream in(trace_path());
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::map<int, std::string> worker_name;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M") worker_name[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
  std::map<std::string, int> kinds;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string name = e["name"].get<std::string>();
    const std::string worker = worker_name[e["tid"].get<int>()];
    const std::string kind = name.substr(name.find(':') + 1);
#if TESSERA_EMULATE_CUDA
    EXPECT_TRUE(has_cuda_body(kind)) << name << " has no CUDA body";
#else
    EXPECT_NE(worker.find("CUDA"), std::string::npos) << name << " ran on " << worker;
#endif
    ++kinds[kind];
  }
  return kinds;
}

}  // namespace test
