// NAS FT's task bodies: the initial conditions, the twiddle factors, the FFTs of a slab or a
// pencil tile, the transposes between them and the checksum's samples, each with a CPU body
// (FFTW through LineFft) and a CUDA body (cuFFT through apps/ft/line_batch.hpp, the rest a
// thread per point with the same point arithmetic), so FT runs with GPU workers only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "apps/ft/fft_lines.hpp"
#include "apps/ft/line_batch.hpp"
#include "apps/mg/gpu.hpp"
#include "apps/mg/npb_random.hpp"

namespace apps {

// NPB's twiddle exponent -4 alpha pi^2 (alpha = 1e-6) and its index folding: 0, 1, ..., n/2 - 1,
// -n/2, ..., -1.
inline double ft_exponent() { return -4.0 * 1.0e-6 * 3.141592653589793238 * 3.141592653589793238; }
TESSERA_HD std::int64_t ft_fold(std::int64_t i, std::int64_t n) { return (i + n / 2) % n - n / 2; }

// NPB's compute_initial_conditions on one slab: plane z starts at seed * a^(2 nx ny z), and the
// plane's 2 nx ny numbers follow in order, real and imaginary parts interleaved, x fastest.
struct InitialConditions {
  std::int64_t nx, ny;
  void cpu(tessera::TileView<double, 3> a) const {
    const std::uint64_t plane_step =
        NpbRandom::power(NpbRandom::kA, static_cast<std::uint64_t>(2 * nx * ny));
    for (std::int64_t z = 0; z < a.extent[2]; ++z) {
      std::uint64_t x =
          NpbRandom::mul(NpbRandom::kSeed,
                         NpbRandom::power(plane_step, static_cast<std::uint64_t>(a.origin[2] + z)));
      for (std::int64_t y = 0; y < a.extent[1]; ++y)
        for (std::int64_t i = 0; i < 2 * nx; ++i) {
          x = NpbRandom::mul(x, NpbRandom::kA);
          a(i, y, z) = NpbRandom::value(x);
        }
    }
  }
#if TESSERA_CUDA_BODIES
  // A thread per row: the row's first number is the plane's start advanced 2 nx y times (exact
  // integer arithmetic, so the same numbers as the CPU's one sequence per plane).
  struct Row {
    std::int64_t nx;
    std::uint64_t plane_step;
    tessera::TileView<double, 3> a;
    TESSERA_HD void operator()(std::int64_t y, std::int64_t z, std::int64_t) const {
      std::uint64_t x = NpbRandom::mul(
          NpbRandom::mul(NpbRandom::kSeed,
                         NpbRandom::power(plane_step, static_cast<std::uint64_t>(a.origin[2] + z))),
          NpbRandom::power(NpbRandom::kA, static_cast<std::uint64_t>(2 * nx * y)));
      for (std::int64_t i = 0; i < 2 * nx; ++i) {
        x = NpbRandom::mul(x, NpbRandom::kA);
        a(i, y, z) = NpbRandom::value(x);
      }
    }
  };
  void cuda(void* stream, tessera::TileView<double, 3> a) const {
    const Row row{nx, NpbRandom::power(NpbRandom::kA, static_cast<std::uint64_t>(2 * nx * ny)), a};
    for_points("ft_initial_conditions", stream, row, a.extent[1], a.extent[2], 1);
  }
#endif
};

// NPB's twiddle factors exp(ap (ii^2 + jj^2 + kk^2)) on one pencil tile, once per complex
// value's real and imaginary slot. The integer ii^2 + jj^2 + kk^2 takes few values: exp is
// taken once per value (the same argument, so the same bits as once per point).
struct Twiddle {
  std::int64_t nx, ny, nz;
  void cpu(tessera::TileView<double, 3> t) const {
    const double ap = ft_exponent();
    std::vector<double> of_sum(static_cast<std::size_t>((nx * nx + ny * ny + nz * nz) / 4 + 1));
    for (std::size_t k = 0; k < of_sum.size(); ++k)
      of_sum[k] = std::exp(ap * static_cast<double>(k));
    for (std::int64_t x = 0; x < t.extent[2]; ++x) {
      const std::int64_t ii = ft_fold(t.origin[2] + x, nx);
      for (std::int64_t y = 0; y < t.extent[1]; ++y) {
        const std::int64_t jj = ft_fold(y, ny);
        for (std::int64_t z = 0; z < nz; ++z) {
          const std::int64_t kk = ft_fold(z, nz);
          const double w = of_sum[static_cast<std::size_t>(ii * ii + jj * jj + kk * kk)];
          t(2 * z, y, x) = w;
          t(2 * z + 1, y, x) = w;
        }
      }
    }
  }
#if TESSERA_CUDA_BODIES
  // A thread per complex value, exp of the same argument as the CPU's table entry (the same
  // bits on the emulated device; a GPU's exp may differ in the last bit).
  struct Point {
    std::int64_t nx, ny, nz;
    double ap;
    tessera::TileView<double, 3> t;
    TESSERA_HD void operator()(std::int64_t z, std::int64_t y, std::int64_t x) const {
      const std::int64_t ii = ft_fold(t.origin[2] + x, nx), jj = ft_fold(y, ny),
                         kk = ft_fold(z, nz);
      const double w = exp(ap * static_cast<double>(ii * ii + jj * jj + kk * kk));
      t(2 * z, y, x) = w;
      t(2 * z + 1, y, x) = w;
    }
  };
  void cuda(void* stream, tessera::TileView<double, 3> t) const {
    for_points("ft_twiddle", stream, Point{nx, ny, nz, ft_exponent(), t}, nz, t.extent[1],
               t.extent[2]);
  }
#endif
};

// The FFT of every row (axis 0) of a tile, each row copied into an aligned line.
inline void fft_rows(const LineFft& f, tessera::TileView<double, 3> v) {
  AlignedLines buf(1, f.n());
  const std::size_t bytes = static_cast<std::size_t>(2 * f.n()) * sizeof(double);
  for (std::int64_t z = 0; z < v.extent[2]; ++z)
    for (std::int64_t y = 0; y < v.extent[1]; ++y) {
      double* row = &v(0, y, z);
      std::memcpy(buf.line(0), row, bytes);
      f.run(buf.line(0));
      std::memcpy(row, buf.line(0), bytes);
    }
}

// The FFT along axis 1 of every column of a tile, 16 columns gathered at a time (the reads
// and writes of a block stay in cache lines, as NPB's fftblock).
inline void fft_columns(const LineFft& f, tessera::TileView<double, 3> v) {
  constexpr std::int64_t kBlock = 16;
  const std::int64_t n = v.extent[1], columns = v.extent[0] / 2;
  AlignedLines buf(kBlock, n);
  for (std::int64_t z = 0; z < v.extent[2]; ++z)
    for (std::int64_t c0 = 0; c0 < columns; c0 += kBlock) {
      const std::int64_t nb = std::min(kBlock, columns - c0);
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t b = 0; b < nb; ++b) {
          buf.line(b)[y][0] = v(2 * (c0 + b), y, z);
          buf.line(b)[y][1] = v(2 * (c0 + b) + 1, y, z);
        }
      for (std::int64_t b = 0; b < nb; ++b) f.run(buf.line(b));
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t b = 0; b < nb; ++b) {
          v(2 * (c0 + b), y, z) = buf.line(b)[y][0];
          v(2 * (c0 + b) + 1, y, z) = buf.line(b)[y][1];
        }
    }
}

// The x and y FFTs of one slab, in NPB's order (forward x then y, inverse y then x), plane by
// plane: a plane stays in cache between the two.
struct FftXY {
  const LineFft* x;
  const LineFft* y;
  bool forward;
  void cpu(tessera::TileView<double, 3> slab) const {
    for (std::int64_t z = 0; z < slab.extent[2]; ++z) {
      tessera::TileView<double, 3> plane = slab;
      plane.data = &slab(0, 0, z);
      plane.origin[2] += z;
      plane.extent[2] = 1;
      if (forward) fft_rows(*x, plane);
      fft_columns(*y, plane);
      if (!forward) fft_rows(*x, plane);
    }
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<double, 3> slab) const {
    if (forward) rows_on_device(stream, *x, slab);
    columns_on_device(stream, *y, slab);
    if (!forward) rows_on_device(stream, *x, slab);
  }
#endif
};

// The z FFT of one pencil tile (its rows are z lines).
struct FftZ {
  const LineFft* z;
  void cpu(tessera::TileView<double, 3> pencil) const { fft_rows(*z, pencil); }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<double, 3> pencil) const {
    rows_on_device(stream, *z, pencil);
  }
#endif
};

// Visits the block one slab shares with one pencil tile, x in the pencil tile's range and z in
// the slab's: move(&slab(x, y, z), &pencil(z, y, x)) per complex value, 8 x values per pass (8
// rows of the pencil tile written together).
template <class Slab, class Pencil, class Move>
void for_each_shared(const Slab& slab, const Pencil& pencil, Move move) {
  constexpr std::int64_t kBlock = 8;
  const std::int64_t z0 = slab.origin[2], nzb = slab.extent[2];
  const std::int64_t x0 = pencil.origin[2], nxb = pencil.extent[2];
  for (std::int64_t y = 0; y < slab.extent[1]; ++y)
    for (std::int64_t xb = 0; xb < nxb; xb += kBlock) {
      const std::int64_t xe = std::min(nxb, xb + kBlock);
      for (std::int64_t z = 0; z < nzb; ++z)
        for (std::int64_t x = xb; x < xe; ++x)
          move(&slab(2 * (x0 + x), y, z), &pencil(2 * (z0 + z), y, x));
    }
}
#if TESSERA_CUDA_BODIES
// A thread per complex value of the block a slab shares with a pencil tile (for_each_shared's).
template <bool ToPencil, class Slab, class Pencil>
struct Shared {
  Slab slab;
  Pencil pencil;
  TESSERA_HD void operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    auto* s = &slab(2 * (pencil.origin[2] + x), y, z);
    auto* p = &pencil(2 * (slab.origin[2] + z), y, x);
    if constexpr (ToPencil) {
      p[0] = s[0];
      p[1] = s[1];
    } else {
      s[0] = p[0];
      s[1] = p[1];
    }
  }
};
template <bool ToPencil, class Slab, class Pencil>
void shared_on_device(void* stream, const Slab& slab, const Pencil& pencil) {
  for_points("ft_transpose", stream, Shared<ToPencil, Slab, Pencil>{slab, pencil}, pencil.extent[2],
             slab.extent[1], slab.extent[2]);
}
#endif

struct SlabToPencil {  // pencil(z, y, x) = slab(x, y, z)
  void cpu(tessera::TileView<const double, 3> slab, tessera::TileView<double, 3> pencil) const {
    for_each_shared(slab, pencil, [](const double* s, double* p) {
      p[0] = s[0];
      p[1] = s[1];
    });
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<const double, 3> slab,
            tessera::TileView<double, 3> pencil) const {
    shared_on_device<true>(stream, slab, pencil);
  }
#endif
};
struct PencilToSlab {  // slab(x, y, z) = pencil(z, y, x)
  void cpu(tessera::TileView<const double, 3> pencil, tessera::TileView<double, 3> slab) const {
    for_each_shared(slab, pencil, [](double* s, const double* p) {
      s[0] = p[0];
      s[1] = p[1];
    });
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<const double, 3> pencil,
            tessera::TileView<double, 3> slab) const {
    shared_on_device<false>(stream, slab, pencil);
  }
#endif
};

// NPB's checksum samples: point j = 1..1024 is (j mod nx, 3j mod ny, 5j mod nz). One slab writes
// the samples it holds at 2 (j - 1) (real) and 2 (j - 1) + 1 (imaginary) of its row, zero
// elsewhere; the host adds them up in j order.
constexpr int kFtSamples = 1024;
struct Samples {
  std::int64_t nx, ny, nz;
  // Sample j of the slab's share (written once for the CPU and CUDA bodies).
  TESSERA_HD static void sample(std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                const tessera::TileView<const double, 3>& slab,
                                const tessera::TileView<double, 2>& out, std::int64_t j) {
    const std::int64_t z = (5 * j) % nz - slab.origin[2];
    const bool here = z >= 0 && z < slab.extent[2];
    const double* v = here ? &slab(2 * (j % nx), (3 * j) % ny, z) : nullptr;
    out(2 * (j - 1), 0) = here ? v[0] : 0.0;
    out(2 * (j - 1) + 1, 0) = here ? v[1] : 0.0;
  }
  void cpu(tessera::TileView<const double, 3> slab, tessera::TileView<double, 2> out) const {
    for (std::int64_t j = 1; j <= kFtSamples; ++j) sample(nx, ny, nz, slab, out, j);
  }
#if TESSERA_CUDA_BODIES
  struct At {
    std::int64_t nx, ny, nz;
    tessera::TileView<const double, 3> slab;
    tessera::TileView<double, 2> out;
    TESSERA_HD void operator()(std::int64_t j, std::int64_t, std::int64_t) const {
      sample(nx, ny, nz, slab, out, j + 1);
    }
  };
  void cuda(void* stream, tessera::TileView<const double, 3> slab,
            tessera::TileView<double, 2> out) const {
    for_points("ft_samples", stream, At{nx, ny, nz, slab, out}, kFtSamples, 1, 1);
  }
#endif
};

// evolve: u0 = u0 * twiddle (real and imaginary parts alike), u1 = u0.
struct Evolve {
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> twiddle,
                             tessera::InOut<double> u0, tessera::Out<double> u1) const {
    const double v = u0 * twiddle();
    u0 = v;
    u1 = v;
  }
};

}  // namespace apps
