// Why CUDA tasks cannot run in this build or on this machine, or "" when they can. The CUDA
// tests exit 77 (CTest's SKIP_RETURN_CODE) with this reason instead of passing silently.
#pragma once

#include <starpu_config.h>

#include <string>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace test {

inline std::string cuda_unavailable_reason() {
#if TESSERA_EMULATE_CUDA
  return "";  // the emulated device: CPU workers run the CUDA bodies (tests/cuda/cuda_options.hpp)
#elif !defined(STARPU_USE_CUDA)
  return "this StarPU was built without CUDA (build one with scripts/build-starpu.sh, see "
         "docs/gpu.md)";
#elif !defined(__CUDACC__)
  return "the tests were not compiled by nvcc (TESSERA_CUDA_APPS=OFF), so stencils have no "
         "CUDA implementation";
#else
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess)
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
  if (devices == 0) return "no CUDA device (cudaGetDeviceCount found 0)";
  return "";
#endif
}

}  // namespace test
