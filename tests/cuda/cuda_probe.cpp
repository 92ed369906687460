// Exits 0 when CUDA tasks can run in this build on this machine, else prints why and exits 77
// (CTest's SKIP_RETURN_CODE). tests/cuda/app_gpu_vs_cpu.sh runs it before the GPU-only apps.
#include <cstdio>
#include <string>

#include "tests/cuda/cuda_available.hpp"

int main() {
  const std::string reason = test::cuda_unavailable_reason();
  if (!reason.empty()) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    return 77;
  }
  std::printf("CUDA tasks can run\n");
  return 0;
}
