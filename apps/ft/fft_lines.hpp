// One-dimensional FFTs of lines of complex values with FFTW, the only FFT code of NAS FT: the
// tiled application (apps/ft/ft.hpp) and its serial reference (tests/reference/ft.hpp) both
// transform every line through LineFft::run on a 64-byte-aligned copy of it, so both get the
// same bits from the same plan whatever the tiling, the schedule or the rank.
#pragma once

#include <fftw3.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include <tessera/error.hpp>

namespace apps {

// `count` lines of `n` complex values (interleaved re, im), each line starting on a 64-byte
// boundary: the alignment a plan was made for is the alignment every line it runs on has.
class AlignedLines {
 public:
  static constexpr std::size_t kAlign = 64;
  AlignedLines(std::int64_t count, std::int64_t n)
      : stride_((n + 3) / 4 * 4),  // 4 complex values = 64 bytes
        data_(static_cast<fftw_complex*>(std::aligned_alloc(
            kAlign, static_cast<std::size_t>(count * stride_) * sizeof(fftw_complex)))) {
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~AlignedLines() { std::free(data_); }
  AlignedLines(const AlignedLines&) = delete;
  AlignedLines& operator=(const AlignedLines&) = delete;
  fftw_complex* line(std::int64_t i) const { return data_ + i * stride_; }

 private:
  std::int64_t stride_;
  fftw_complex* data_;
};

// The unnormalised in-place DFT of one line of n complex values, sign +1 (NPB's forward
// transform, its roots exp(+i pi k / l)) or -1 (NPB's inverse). One plan per (n, sign) for the
// whole process, made on first use under a mutex (FFTW's planner is not thread-safe; executing
// a plan is) and kept until the process ends. FFTW_ESTIMATE: the plan is chosen without
// timing, so every process and rank gets the same plan and the same bits (FFTW_MEASURE may
// choose differently from run to run).
class LineFft {
 public:
  static const LineFft& get(std::int64_t n, int sign) {
    if (n < 1 || n > (std::int64_t(1) << 30) || (sign != 1 && sign != -1))
      throw tessera::Error("FFT of " + std::to_string(n) + " points, sign " + std::to_string(sign) +
                           ": give a length from 1 to 2^30 and a sign of +1 or -1");
    static std::mutex planner;
    static std::map<std::pair<std::int64_t, int>, std::unique_ptr<LineFft>> plans;
    std::lock_guard<std::mutex> lock(planner);
    std::unique_ptr<LineFft>& p = plans[{n, sign}];
    if (!p) {
      AlignedLines probe(1, n);
      fftw_plan plan = fftw_plan_dft_1d(static_cast<int>(n), probe.line(0), probe.line(0),
                                        sign > 0 ? FFTW_BACKWARD : FFTW_FORWARD, FFTW_ESTIMATE);
      if (plan == nullptr)
        throw tessera::Error("FFTW could not plan an FFT of " + std::to_string(n) + " points");
      p.reset(new LineFft(n, sign, plan));
    }
    return *p;
  }
  std::int64_t n() const { return n_; }
  int sign() const { return sign_; }
  /// Transforms the line in place; `line` comes from AlignedLines::line.
  void run(fftw_complex* line) const { fftw_execute_dft(plan_, line, line); }

 private:
  LineFft(std::int64_t n, int sign, fftw_plan plan) : n_(n), sign_(sign), plan_(plan) {}
  std::int64_t n_;
  int sign_;
  fftw_plan plan_;
};

}  // namespace apps
