// The FT oracle: NPB's serial algorithm on one plain array of nx x ny x nz complex values
// (x fastest), written out loop by loop: one random sequence over the whole array, the twiddle
// factors, the forward FFT along x, y, z and per iteration evolve, the inverse FFT along z, y, x
// and the checksum. Each 1-D FFT copies its line into an aligned buffer and runs the
// application's LineFft on it (the FFT itself is checked by NPB's official checksums), so the
// checksums must be the tiled application's bits.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "apps/ft/ft.hpp"

namespace reference {

struct FtReference {
  std::int64_t nx, ny, nz;
  std::vector<std::complex<double>> u0, u1;
  std::vector<double> twiddle;

  FtReference(std::int64_t x, std::int64_t y, std::int64_t z) : nx(x), ny(y), nz(z) {
    const std::size_t n = static_cast<std::size_t>(nx * ny * nz);
    u1.resize(n);
    twiddle.resize(n);
    std::uint64_t r = apps::NpbRandom::kSeed;  // one sequence, x fastest, real then imaginary
    for (std::complex<double>& v : u1) {
      r = apps::NpbRandom::mul(r, apps::NpbRandom::kA);
      const double re = apps::NpbRandom::value(r);
      r = apps::NpbRandom::mul(r, apps::NpbRandom::kA);
      v = {re, apps::NpbRandom::value(r)};
    }
    const double ap = apps::ft_exponent();
    for (std::int64_t k = 0; k < nz; ++k)
      for (std::int64_t j = 0; j < ny; ++j)
        for (std::int64_t i = 0; i < nx; ++i) {
          const std::int64_t ii = apps::ft_fold(i, nx), jj = apps::ft_fold(j, ny),
                             kk = apps::ft_fold(k, nz);
          twiddle[at(i, j, k)] = std::exp(ap * static_cast<double>(ii * ii + jj * jj + kk * kk));
        }
  }
  std::size_t at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return static_cast<std::size_t>(i + nx * (j + ny * k));
  }

  // The FFT of every line along `axis` of `u`.
  void fft_axis(std::vector<std::complex<double>>& u, int axis, int sign) const {
    const std::int64_t n[3] = {nx, ny, nz};
    const apps::LineFft& f = apps::LineFft::get(n[axis], sign);
    apps::AlignedLines line(1, n[axis]);
    const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    for (std::int64_t q = 0; q < n[a2]; ++q)
      for (std::int64_t p = 0; p < n[a1]; ++p) {
        std::int64_t idx[3];
        idx[a1] = p;
        idx[a2] = q;
        for (idx[axis] = 0; idx[axis] < n[axis]; ++idx[axis]) {
          const std::complex<double> v = u[at(idx[0], idx[1], idx[2])];
          line.line(0)[idx[axis]][0] = v.real();
          line.line(0)[idx[axis]][1] = v.imag();
        }
        f.run(line.line(0));
        for (idx[axis] = 0; idx[axis] < n[axis]; ++idx[axis])
          u[at(idx[0], idx[1], idx[2])] = {line.line(0)[idx[axis]][0], line.line(0)[idx[axis]][1]};
      }
  }

  // NPB's main loop: the checksum of every iteration.
  std::vector<std::complex<double>> run(int iterations) {
    u0 = u1;
    for (int axis = 0; axis < 3; ++axis) fft_axis(u0, axis, 1);
    std::vector<std::complex<double>> sums;
    for (int it = 1; it <= iterations; ++it) {
      for (std::size_t p = 0; p < u0.size(); ++p) {
        u0[p] = {u0[p].real() * twiddle[p], u0[p].imag() * twiddle[p]};
        u1[p] = u0[p];
      }
      for (int axis = 2; axis >= 0; --axis) fft_axis(u1, axis, -1);
      double re = 0.0, im = 0.0;
      for (std::int64_t j = 1; j <= 1024; ++j) {
        const std::complex<double> v = u1[at(j % nx, (3 * j) % ny, (5 * j) % nz)];
        re += v.real();
        im += v.imag();
      }
      const double ntotal = static_cast<double>(nx * ny * nz);
      sums.emplace_back(re / ntotal, im / ntotal);
    }
    return sums;
  }
};

}  // namespace reference
