// Portability macro for point functions written once for the CPU and the GPU.
#pragma once

/// Marks a function or call operator callable on the host and, under nvcc, on the device:
///   struct Heat { TESSERA_HD void operator()(...) const; };
#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__ inline
#else
#define TESSERA_HD inline
#endif

/// Before a loop whose iterations are independent (the CPU point loop): lets the compiler
/// vectorise it without proving that its pointers do not overlap. No flag needed (unlike
/// `omp simd`, which needs -fopenmp-simd).
#if defined(__clang__)
#define TESSERA_SIMD _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define TESSERA_SIMD _Pragma("GCC ivdep")
#else
#define TESSERA_SIMD
#endif
