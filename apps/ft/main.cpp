// ft: NAS FT (NPB 3.x) on Tessera: classes S, W, A, B, or U (any power-of-two sizes and
// iteration count); NPB's output, checksums and verification, Mop/s as NPB computes it, and
// Tessera's result line.
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/common/run.hpp"
#include "apps/ft/ft.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"ft: NAS FT benchmark (3-D FFT PDE solver) on Tessera"};
  tessera::Options runtime;
  tessera::add_options(cli, runtime);
  apps::add_common_flags(cli);
  std::string cls = "S";
  std::vector<long> size{64, 64, 64};
  int iterations = 6;
  long slab_z = 0, pencil_x = 0;
  cli.add_option("--class", cls, "S (64^3), W (128x128x32), A (256x256x128), B (512x256x256), U");
  cli.add_option("--size", size, "class U: points along x, y, z (powers of two >= 2)")->expected(3);
  cli.add_option("--iterations", iterations, "class U: iterations")->check(apps::at_least<int>(1));
  cli.add_option("--slab-z", slab_z,
                 "z-thickness of the slabs (x and y FFTs; default nz / 8, at least 1)")
      ->check(apps::at_least(1));
  cli.add_option("--pencil-x", pencil_x,
                 "x-thickness of the transposed tiles (z FFT, evolve; default nx / 8)")
      ->check(apps::at_least(1));
  CLI11_PARSE(cli, argc, argv);

  return apps::run_guarded([&] {
    const apps::FtClass c = apps::ft_class(cls, size[0], size[1], size[2], iterations);
    runtime.summary = !runtime.quiet;  // the table of task times at the end, as the other apps
    tessera::Runtime rt(runtime);
    const bool talk = rt.rank() == 0;
    apps::Ft ft(c.nx, c.ny, c.nz, slab_z > 0 ? slab_z : std::max<long>(1, c.nz / 8),
                pencil_x > 0 ? pencil_x : std::max<long>(1, c.nx / 8));
    if (talk) {
      std::printf("\n\n NAS Parallel Benchmarks (NPB 3.x algorithm, Tessera) - FT Benchmark\n\n");
      std::printf(" Size                : %4lldx%4lldx%4lld  (class %s)\n",
                  static_cast<long long>(c.nx), static_cast<long long>(c.ny),
                  static_cast<long long>(c.nz), c.name.c_str());
      std::printf(" Iterations                  :%7d\n\n", c.iterations);
    }
    // As NPB: the set-up and forward FFT once untimed (plans, codelets, first touch), then the
    // whole problem from the beginning, every operation timed.
    ft.setup();
    ft.forward();
    rt.wait();

    const double t0 = apps::now_seconds();
    ft.setup();
    ft.forward();
    for (int it = 1; it <= c.iterations; ++it) ft.iterate();
    const std::vector<std::complex<double>> sums = ft.checksums();
    const double t = apps::now_seconds() - t0;

    const bool verified = apps::ft_verified(c, sums);
    if (talk) {
      for (std::size_t i = 0; i < sums.size(); ++i)
        std::printf(" T =%5zu     Checksum =%22.12E%22.12E\n", i + 1, sums[i].real(),
                    sums[i].imag());
      if (c.official.empty())
        std::printf(" Problem size unknown\n NO VERIFICATION PERFORMED\n");
      else if (verified)
        std::printf(" Result verification successful\n VERIFICATION SUCCESSFUL\n");
      else
        std::printf(" Result verification failed\n VERIFICATION FAILED\n");
      std::printf(" class = %s\n", c.name.c_str());
    }
    const double mops = t > 0 ? apps::ft_mops(c) / t : 0.0;
    if (talk) {
      std::printf("\n\n FT Benchmark Completed.\n");
      std::printf(" Class           =  %12s\n", c.name.c_str());
      std::printf(" Size            =  %4lldx%4lldx%4lld\n", static_cast<long long>(c.nx),
                  static_cast<long long>(c.ny), static_cast<long long>(c.nz));
      std::printf(" Iterations      =  %12d\n", c.iterations);
      std::printf(" Time in seconds =  %12.2f\n", t);
      std::printf(" Mop/s total     =  %15.2f\n", mops);
      std::printf(" Operation type  =  floating point\n");
      std::printf(" Verification    =  %12s\n\n", c.official.empty() ? "NOT PERFORMED"
                                                  : verified         ? "SUCCESSFUL"
                                                                     : "UNSUCCESSFUL");
      const std::complex<double> last = sums.back();
      std::printf(
          "ft class=%s grid=%lldx%lldx%lld slabs=%d pencils=%d iterations=%d seconds=%.4f "
          "Mop/s=%.1f "
          "checksum=%.17g,%.17g verified=%s ranks=%d\n",
          c.name.c_str(), static_cast<long long>(c.nx), static_cast<long long>(c.ny),
          static_cast<long long>(c.nz), ft.slab_grid().tiles(), ft.pencil_grid().tiles(),
          c.iterations, t, mops, last.real(), last.imag(),
          c.official.empty() ? "none"
          : verified         ? "yes"
                             : "no",
          rt.ranks());
    }
    rt.finish();
    if (!c.official.empty() && !verified) throw tessera::Error("FT verification failed");
  });
}
