// The FFTs of NAS FT's CUDA bodies: a batch of strided lines of a tile transformed on the task's
// stream. Under nvcc that is cuFFT (one plan per device and layout, made on first use and kept);
// on the emulated device (TESSERA_EMULATE_CUDA), where no cuFFT runs on the host, each line
// goes through LineFft (FFTW) on an aligned copy, exactly as the CPU bodies transform it, so a
// strict emulated run (emulated.app.ft) gives the CPU run's bits while exercising every layout,
// stride and batch the GPU path hands to cuFFT. On a GPU the checksums differ from the CPU's in
// the last bits (cuFFT's own arithmetic); NPB's verification (1e-12) is the check there.
#pragma once

#include <cstdint>
#include <cstring>

#include <tessera/task.hpp>

#include "apps/ft/fft_lines.hpp"
#include "apps/mg/gpu.hpp"

#if defined(__CUDACC__)
#include <cufft.h>

#include <map>
#include <mutex>
#include <tuple>
#endif

#if TESSERA_CUDA_BODIES
namespace apps {

#if defined(__CUDACC__)
// One cuFFT plan per (device, length, lines, stride, distance), made on first use: a plan
// holds a work area, so a device's plans serve one stream at a time (one CUDA worker per
// device, StarPU's default), and the mutex keeps two devices' workers apart.
inline void run_lines(void* stream, const LineFft& f, double* data, std::int64_t count,
                      std::int64_t stride, std::int64_t dist) {
  static std::mutex mutex;
  static std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>,
                  cufftHandle>
      plans;
  const auto check = [&](cufftResult r, const char* call) {
    if (r != CUFFT_SUCCESS)
      throw tessera::Error(std::string(call) + " failed (cufftResult " + std::to_string(r) +
                           ") for " + std::to_string(count) + " lines of " + std::to_string(f.n()) +
                           " points");
  };
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(device, f.n(), count, stride, dist);
  auto at = plans.find(key);
  if (at == plans.end()) {
    cufftHandle plan;
    int n = static_cast<int>(f.n()), embed = n;
    check(cufftPlanMany(&plan, 1, &n, &embed, static_cast<int>(stride), static_cast<int>(dist),
                        &embed, static_cast<int>(stride), static_cast<int>(dist), CUFFT_Z2Z,
                        static_cast<int>(count)),
          "cufftPlanMany");
    at = plans.emplace(key, plan).first;
  }
  const cufftHandle plan = at->second;
  check(cufftSetStream(plan, static_cast<cudaStream_t>(stream)), "cufftSetStream");
  auto* z = reinterpret_cast<cufftDoubleComplex*>(data);
  // NPB's forward transform (sign +1) has the roots exp(+i ...): cuFFT's inverse.
  check(cufftExecZ2Z(plan, z, z, f.sign() > 0 ? CUFFT_INVERSE : CUFFT_FORWARD), "cufftExecZ2Z");
}
#else
// The emulated device: each line through FFTW on an aligned copy (the CPU bodies' arithmetic).
inline void run_lines(void*, const LineFft& f, double* data, std::int64_t count,
                      std::int64_t stride, std::int64_t dist) {
  AlignedLines buf(1, f.n());
  for (std::int64_t l = 0; l < count; ++l) {
    double* line = data + 2 * l * dist;
    for (std::int64_t i = 0; i < f.n(); ++i)
      std::memcpy(buf.line(0)[i], line + 2 * i * stride, 2 * sizeof(double));
    f.run(buf.line(0));
    for (std::int64_t i = 0; i < f.n(); ++i)
      std::memcpy(line + 2 * i * stride, buf.line(0)[i], 2 * sizeof(double));
  }
}
#endif

/// The FFT of every row (axis 0) of a tile, plane by plane (the CPU's fft_rows).
inline void rows_on_device(void* stream, const LineFft& f, const tessera::TileView<double, 3>& v) {
  for (std::int64_t z = 0; z < v.extent[2]; ++z)
    run_lines(stream, f, &v(0, 0, z), v.extent[1], 1, v.sy / 2);
}
/// The FFT along axis 1 of every column of a tile, plane by plane (the CPU's fft_columns).
inline void columns_on_device(void* stream, const LineFft& f,
                              const tessera::TileView<double, 3>& v) {
  for (std::int64_t z = 0; z < v.extent[2]; ++z)
    run_lines(stream, f, &v(0, 0, z), v.extent[0] / 2, v.sy / 2, 1);
}

}  // namespace apps
#endif
