// mg: NAS MG (NPB 3.x) on Tessera: classes S, W (NPB 3.3+), W-npb3.0, A, B, or U (any power-of-two
// cube and iteration count); NPB's output and verification, Mop/s as NPB computes it, and
// Tessera's result line.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "apps/common/run.hpp"
#include "apps/mg/mg.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"mg: NAS MG benchmark (V-cycle multigrid) on Tessera"};
  tessera::Options runtime;
  tessera::add_options(cli, runtime);
  apps::add_common_flags(cli);
  std::string cls = "S";
  long size = 32, tile_z = 0, min_tile = 1, min_points = apps::Mg::kMinTilePoints;
  int iterations = 4, cycles_per_task = 0;
  bool coarse_task = true;
  cli.add_option("--class", cls, "S, W (NPB 3.3+: 128^3, 4 it.), W-npb3.0 (64^3, 40 it.), A, B, U");
  cli.add_option("--size", size, "class U: points per axis (a power of two >= 4)")
      ->check(apps::whole());  // as typed: CLI11 alone clamps 10^20 to 2^63 - 1
  cli.add_option("--iterations", iterations, "class U: V-cycles")->check(apps::at_least<int>(1));
  cli.add_option(
         "--tile-z", tile_z,
         "z-thickness of the top level's tiles (default: on one rank the whole grid up to 64^3, "
         "one task per iteration; else size / 4)")
      ->check(apps::whole());
  cli.add_option("--min-tile", min_tile, "coarser levels halve tiles while they stay this thick")
      ->check(apps::whole());
  cli.add_option(
         "--min-tile-points", min_points,
         "coarser levels thicken tiles until each holds this many points (or the whole level)")
      ->check(apps::at_least(1));
  cli.add_option(
      "--coarse-task", coarse_task,
      "run the levels held in one tile each (the coarse end of the V-cycle) as one task");
  cli.add_option(
         "--cycles-per-task", cycles_per_task,
         "when the whole V-cycle is one task (one tile): iterations per task (default: all)")
      ->check(apps::at_least<int>(0));
  CLI11_PARSE(cli, argc, argv);
  // peager unless the user chose: it runs the one-task V-cycle (and the coarse end of the tiled
  // ones) on a team of all CPU workers, each with its share of every operator's planes, as
  // NPB's OpenMP loops do; its other tasks it places as eager does. Any other scheduler runs
  // that task on one worker (the same bits).
  if (runtime.scheduler.empty() && std::getenv("STARPU_SCHED") == nullptr)
    runtime.default_scheduler = "peager";

  return apps::run_guarded([&] {
    const apps::MgClass c = apps::mg_class(cls, size, iterations);
    tessera::Runtime rt(runtime);
    const bool talk = rt.rank() == 0;
    const double t_init0 = apps::now_seconds();
    // One tile (one task per iteration) up to 64^3 on one rank, else four (Mg::default_tile_z).
    if (tile_z <= 0) tile_z = apps::Mg::default_tile_z(c.n, rt.ranks());
    apps::Mg mg(c.n, tile_z, min_tile, min_points, rt.ranks(), coarse_task);
    if (c.name == "B") mg.use_smoother_b();
    if (talk) {
      std::printf("\n\n NAS Parallel Benchmarks (NPB 3.x algorithm, Tessera) - MG Benchmark\n\n");
      std::printf(" Size: %4lldx%4lldx%4lld  (class %s)\n", static_cast<long long>(c.n),
                  static_cast<long long>(c.n), static_cast<long long>(c.n), c.name.c_str());
      std::printf(" Iterations: %3d\n\n", c.iterations);
    }
    // As NPB: one V-cycle for start-up (codelets, plans, first touch), then start again. With
    // the norms, as the timed region has them: a task kind's first submission (codelet,
    // performance model) took 55-90 us, which NPB's norm2u3 does not pay in the timed region.
    mg.initialise();
    (void)mg.timed_iterations(1, cycles_per_task).get();
    mg.initialise();
    rt.wait();
    if (talk)
      std::printf(" Initialization time: %15.3f seconds\n\n", apps::now_seconds() - t_init0);

    const double t0 = apps::now_seconds();
    const std::size_t tasks0 = rt.tasks_submitted();
    // NPB's progress lines, printed as the iterations are submitted.
    for (int it = 1; it <= c.iterations; ++it)
      if (talk && (it == 1 || it == c.iterations || it % 5 == 0)) std::printf("  iter %3d\n", it);
    const auto norms = mg.timed_iterations(c.iterations, cycles_per_task).get();
    const double t = apps::now_seconds() - t0;
    const double tasks_per_cycle =
        static_cast<double>(rt.tasks_submitted() - tasks0) / c.iterations;
    const double rnm2 = mg.rnm2(norms[0]);

    bool verified = false;
    if (talk) std::printf("\n Benchmark completed\n");
    if (c.verify_value != 0.0) {
      const double err = std::fabs(rnm2 - c.verify_value) / c.verify_value;
      verified = err <= 1.0e-8;
      if (talk && verified)
        std::printf(" VERIFICATION SUCCESSFUL\n L2 Norm is %20.13E\n Error is   %20.13E\n", rnm2,
                    err);
      else if (talk)
        std::printf(
            " VERIFICATION FAILED\n L2 Norm is             %20.13E\n The correct L2 Norm is "
            "%20.13E\n",
            rnm2, c.verify_value);
    } else if (talk) {
      std::printf(" Problem size unknown\n NO VERIFICATION PERFORMED\n L2 Norm is %20.13E\n", rnm2);
    }
    const double nn =
        static_cast<double>(c.n) * static_cast<double>(c.n) * static_cast<double>(c.n);
    const double mops = t > 0 ? 58.0 * c.iterations * nn * 1.0e-6 / t : 0.0;
    if (talk) {
      std::printf("\n\n MG Benchmark Completed.\n");
      std::printf(" Class           =  %12s\n", c.name.c_str());
      std::printf(" Size            =  %4lldx%4lldx%4lld\n", static_cast<long long>(c.n),
                  static_cast<long long>(c.n), static_cast<long long>(c.n));
      std::printf(" Iterations      =  %12d\n", c.iterations);
      std::printf(" Time in seconds =  %12.2f\n", t);
      std::printf(" Mop/s total     =  %15.2f\n", mops);
      std::printf(" Operation type  =  floating point\n");
      std::printf(" Verification    =  %12s\n\n", c.verify_value == 0 ? "NOT PERFORMED"
                                                  : verified          ? "SUCCESSFUL"
                                                                      : "UNSUCCESSFUL");
      std::printf(
          "mg class=%s grid=%lldx%lldx%lld tiles=%d levels=%d iterations=%d seconds=%.4f "
          "Mop/s=%.1f "
          "rnm2=%.17g rnmu=%.17g verified=%s ranks=%d tasks/iteration=%.1f\n",
          c.name.c_str(), static_cast<long long>(c.n), static_cast<long long>(c.n),
          static_cast<long long>(c.n), mg.grid(mg.lt).tiles(), mg.lt, c.iterations, t, mops, rnm2,
          norms[1],
          c.verify_value == 0 ? "none"
          : verified          ? "yes"
                              : "no",
          rt.ranks(), tasks_per_cycle);
    }
    rt.finish();
    if (c.verify_value != 0 && !verified) throw tessera::Error("MG verification failed");
  });
}
