// Portability macro for point functions written once for the CPU and the GPU.
#pragma once

/// Marks a function or call operator callable on the host and, under nvcc, on the device:
///   struct Heat { TESSERA_HD void operator()(...) const; };
#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__ inline
#else
#define TESSERA_HD inline
#endif
