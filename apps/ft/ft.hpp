// NAS FT (NPB 3.x): the 3-D FFT of NPB's random complex field, then per iteration the
// evolution in Fourier space (u0 = u0 * twiddle), the inverse 3-D FFT and NPB's checksum of
// 1024 sampled points.
//
// Layout. A complex value is two doubles, real then imaginary, interleaved along the fastest
// axis of a Field<double, 3>:
//   slabs   (x, y, z): extent {2 nx, ny, nz}, tiles {2 nx, ny, slab_z}: z slabs; the x and y
//                      FFTs run inside a tile;
//   pencils (z, y, x): extent {2 nz, ny, nx}, tiles {2 nz, ny, pencil_x}: the transposed
//                      array, x slabs holding whole z lines; the z FFT runs inside a tile.
// The forward FFT goes slabs -> pencils (x, y FFTs, transpose, z FFT) once; u0, the twiddle
// factors, evolve and the inverse z FFT stay in the pencil layout; each iteration transposes
// once, back to the slabs, for the y and x FFTs and the checksum. The FFTs and transposes are
// user tasks (tessera::Task, apps/ft/tasks.hpp: FFTW on CPU workers, cuFFT on CUDA workers), one
// transpose task per (destination tile, source tile), so under mpirun the transpose crosses
// ranks through StarPU-MPI; evolve is a tessera::Loop. Every CPU FFT is LineFft
// (apps/ft/fft_lines.hpp) on one line, as in the serial reference, so the CPU checksums are
// bitwise the reference's (the GPU's: apps/ft/line_batch.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "apps/ft/fft_lines.hpp"
#include "apps/ft/tasks.hpp"
#include "apps/mg/npb_random.hpp"

namespace apps {

// A problem: its size, iterations and NPB's official checksums (none: class U).
struct FtClass {
  std::string name;  // "S", "W", "A", "B", "U"
  std::int64_t nx, ny, nz;
  int iterations;
  std::vector<std::complex<double>> official;
};

inline bool power_of_two(std::int64_t n) { return n >= 1 && (n & (n - 1)) == 0; }

// NPB 3.x's classes and reference checksums (ft.f, verify), or class U: any power-of-two sizes
// and iteration count, not verified.
inline FtClass ft_class(const std::string& name, std::int64_t nx = 64, std::int64_t ny = 64,
                        std::int64_t nz = 64, int iterations = 6) {
  using C = std::complex<double>;
  if (name == "S")
    return {"S",
            64,
            64,
            64,
            6,
            {C(5.546087004964e+02, 4.845363331978e+02), C(5.546385409189e+02, 4.865304269511e+02),
             C(5.546148406171e+02, 4.883910722336e+02), C(5.545423607415e+02, 4.901273169046e+02),
             C(5.544255039624e+02, 4.917475857993e+02), C(5.542683411902e+02, 4.932597244941e+02)}};
  if (name == "W")
    return {"W",
            128,
            128,
            32,
            6,
            {C(5.673612178944e+02, 5.293246849175e+02), C(5.631436885271e+02, 5.282149986629e+02),
             C(5.594024089970e+02, 5.270996558037e+02), C(5.560698047020e+02, 5.260027904925e+02),
             C(5.530898991250e+02, 5.249400845633e+02), C(5.504159734538e+02, 5.239212247086e+02)}};
  if (name == "A")
    return {"A",
            256,
            256,
            128,
            6,
            {C(5.046735008193e+02, 5.114047905510e+02), C(5.059412319734e+02, 5.098809666433e+02),
             C(5.069376896287e+02, 5.098144042213e+02), C(5.077892868474e+02, 5.101336130759e+02),
             C(5.085233095391e+02, 5.104914655194e+02), C(5.091487099959e+02, 5.107917842803e+02)}};
  if (name == "B")
    return {"B",
            512,
            256,
            256,
            20,
            {C(5.177643571579e+02, 5.077803458597e+02), C(5.154521291263e+02, 5.088249431599e+02),
             C(5.146409228649e+02, 5.096208912659e+02), C(5.142378756213e+02, 5.101023387619e+02),
             C(5.139626667737e+02, 5.103976610617e+02), C(5.137423460082e+02, 5.105948019802e+02),
             C(5.135547056878e+02, 5.107404165783e+02), C(5.133910925466e+02, 5.108576573661e+02),
             C(5.132470705390e+02, 5.109577278523e+02), C(5.131197729984e+02, 5.110460304483e+02),
             C(5.130070319283e+02, 5.111252433800e+02), C(5.129070537032e+02, 5.111968077718e+02),
             C(5.128182883502e+02, 5.112616233064e+02), C(5.127393733383e+02, 5.113203605551e+02),
             C(5.126691062020e+02, 5.113735928093e+02), C(5.126064276004e+02, 5.114218460548e+02),
             C(5.125504076570e+02, 5.114656139760e+02), C(5.125002331720e+02, 5.115053595966e+02),
             C(5.124551951846e+02, 5.115415130407e+02), C(5.124146770029e+02, 5.115744692211e+02)}};
  if (name == "U") {
    const std::int64_t n[3] = {nx, ny, nz};
    for (int a = 0; a < 3; ++a)
      if (!power_of_two(n[a]) || n[a] < 2 || n[a] > (std::int64_t(1) << 20))
        throw tessera::Error(
            "FT class U: " + std::string(1, "xyz"[a]) + " size " + std::to_string(n[a]) +
            " is not a power of two from 2 to 2^20; give --size with three such numbers "
            "(NPB's FFT needs power-of-two lengths)");
    if (iterations < 1)
      throw tessera::Error("FT class U: " + std::to_string(iterations) +
                           " iterations; give --iterations 1 or more");
    return {"U", nx, ny, nz, iterations, {}};
  }
  throw tessera::Error("--class " + name +
                       " is not an FT class; give S, W, A, B, or U with --size NX NY NZ "
                       "and --iterations");
}

// NPB's verify: every checksum within a relative error of 1e-12 of the official one (the
// complex quotient's modulus, as NPB computes it). False when there is nothing to compare.
inline bool ft_verified(const FtClass& c, const std::vector<std::complex<double>>& sums) {
  if (c.official.empty() || sums.size() != c.official.size()) return false;
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const double a = sums[i].real() - c.official[i].real(),
                 b = sums[i].imag() - c.official[i].imag();
    const double cr = c.official[i].real(), ci = c.official[i].imag();
    const double d = cr * cr + ci * ci;
    const double re = (a * cr + b * ci) / d, im = (b * cr - a * ci) / d;
    const double err = std::sqrt(re * re + im * im);
    if (!(err <= 1.0e-12)) return false;
  }
  return true;
}

// NPB's operation count of a run (Mop/s = ft_mops / seconds).
inline double ft_mops(const FtClass& c) {
  const double n =
      static_cast<double>(c.nx) * static_cast<double>(c.ny) * static_cast<double>(c.nz);
  return 1.0e-6 * n *
         (14.8157 + 7.19641 * std::log(n) + (5.23518 + 7.21113 * std::log(n)) * c.iterations);
}

// --- The benchmark --------------------------------------------------------------------------

class Ft {
 public:
  // z slabs `slab_z` thick and x slabs of the transposed array `pencil_x` thick (the last tile
  // of an axis may be thinner).
  Ft(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t slab_z, std::int64_t pencil_x)
      : nx_(nx),
        ny_(ny),
        nz_(nz),
        slab_grid_({2 * nx, ny, nz}, {2 * nx, ny, slab_z}),
        pencil_grid_({2 * nz, ny, nx}, {2 * nz, ny, pencil_x}),
        slabs_(slab_grid_, 0, {}, "ft-slabs"),
        u0_(pencil_grid_, 0, {}, "ft-u0"),
        u1_(pencil_grid_, 0, {}, "ft-u1"),
        twiddle_(pencil_grid_, 0, {}, "ft-twiddle") {
    for (std::int64_t n : {nx, ny, nz})
      if (!power_of_two(n) || n < 2)
        throw tessera::Error("FT size " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
                             std::to_string(nz) +
                             ": every axis needs a power of two >= 2 points (NPB's FFT)");
    for (int sign : {1, -1}) {  // plans made here, before any task runs
      fx_[sign > 0] = &LineFft::get(nx, sign);
      fy_[sign > 0] = &LineFft::get(ny, sign);
      fz_[sign > 0] = &LineFft::get(nz, sign);
    }
    for (int t = 0; t < slab_grid_.tiles(); ++t) {
      const auto info = tessera::tile_of(slabs_, t);
      for (std::int64_t z = 0; z < info.extent[2]; ++z) slab_of_z_.push_back(t);
    }
  }

  const tessera::Grid<3>& slab_grid() const { return slab_grid_; }
  // One row of samples per slab tile, each its own tile (cut, so that the planner keeps them
  // as they are numbered: a slab's samples task writes row s).
  tessera::Grid<2> samples_grid() const {
    tessera::Grid<2>::Cuts rows;
    for (int s = 1; s < slab_grid_.tiles(); ++s) rows[1].push_back(s);
    return tessera::Grid<2>::cut({2 * kFtSamples, slab_grid_.tiles()}, rows);
  }
  const tessera::Grid<3>& pencil_grid() const { return pencil_grid_; }
  tessera::Field<double, 3>& slabs() { return slabs_; }

  // NPB's compute_indexmap (the twiddle factors) and compute_initial_conditions (the slabs);
  // forgets the checksums of an earlier run.
  void setup() {
    samples_.clear();
    for (int t = 0; t < pencil_grid_.tiles(); ++t)
      twiddle_task_.submit(Twiddle{nx_, ny_, nz_}, tessera::write_tile(twiddle_, t));
    for (int t = 0; t < slab_grid_.tiles(); ++t)
      init_task_.submit(InitialConditions{nx_, ny_}, tessera::write_tile(slabs_, t));
  }

  // u0 = the forward 3-D FFT of the slabs (which it overwrites), in the pencil layout.
  void forward() {
    for (int s = 0; s < slab_grid_.tiles(); ++s)
      fft_xy_.submit(FftXY{fx_[1], fy_[1], true}, tessera::update_tile(slabs_, s));
    for (int d = 0; d < pencil_grid_.tiles(); ++d) {
      for (int s = 0; s < slab_grid_.tiles(); ++s)
        to_pencils_.submit(SlabToPencil{}, tessera::read_tile(slabs_, s),
                           tessera::update_tile(u0_, d));
      fft_z_.submit(FftZ{fz_[1]}, tessera::update_tile(u0_, d));
    }
  }

  // One iteration: evolve, the inverse 3-D FFT into the slabs, the checksum's samples.
  void iterate() {
    evolve_.apply(Evolve{}, tessera::in(twiddle_), tessera::inout(u0_), tessera::out(u1_));
    for (int d = 0; d < pencil_grid_.tiles(); ++d)
      fft_z_.submit(FftZ{fz_[0]}, tessera::update_tile(u1_, d));
    samples_.emplace_back(samples_grid(), 0, tessera::Boundaries<2>{}, "ft-samples");
    for (int s = 0; s < slab_grid_.tiles(); ++s) {
      for (int d = 0; d < pencil_grid_.tiles(); ++d)
        to_slabs_.submit(PencilToSlab{}, tessera::read_tile(u1_, d),
                         tessera::update_tile(slabs_, s));
      fft_xy_.submit(FftXY{fx_[0], fy_[0], false}, tessera::update_tile(slabs_, s));
      sample_.submit(Samples{nx_, ny_, nz_}, tessera::read_tile(slabs_, s),
                     tessera::write_tile(samples_.back(), s));
    }
  }

  // NPB's checksums of the iterations so far: the samples summed in j order, divided by the
  // number of points. Waits; collective under mpirun.
  std::vector<std::complex<double>> checksums() const {
    std::vector<std::complex<double>> out;
    const double ntotal =
        static_cast<double>(nx_) * static_cast<double>(ny_) * static_cast<double>(nz_);
    for (const auto& field : samples_) {
      const std::vector<double> v = field.gather();
      double re = 0.0, im = 0.0;
      for (std::int64_t j = 1; j <= kFtSamples; ++j) {
        const std::size_t at = static_cast<std::size_t>(
            2 * (j - 1) + 2 * kFtSamples * slab_of_z_[static_cast<std::size_t>((5 * j) % nz_)]);
        re += v[at];
        im += v[at + 1];
      }
      out.emplace_back(re / ntotal, im / ntotal);
    }
    return out;
  }

 private:
  std::int64_t nx_, ny_, nz_;
  tessera::Grid<3> slab_grid_, pencil_grid_;
  tessera::Field<double, 3> slabs_, u0_, u1_, twiddle_;
  std::vector<tessera::Field<double, 2>> samples_;  // one per iteration, rows by slab
  std::vector<std::int64_t> slab_of_z_;
  const LineFft* fx_[2];  // [0] inverse (sign -1), [1] forward (sign +1)
  const LineFft* fy_[2];
  const LineFft* fz_[2];
  tessera::Task init_task_{"ft-init"}, twiddle_task_{"ft-twiddle"}, fft_xy_{"ft-fft-xy"},
      fft_z_{"ft-fft-z"}, to_pencils_{"ft-to-pencils"}, to_slabs_{"ft-to-slabs"},
      sample_{"ft-samples"};
  tessera::Loop<3> evolve_{"ft-evolve"};
};

}  // namespace apps
