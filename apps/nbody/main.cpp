// nbody: all-pairs gravitational N-body (XMP-ACC's benchmark) on tiles of bodies: a Plummer
// sphere from a fixed seed, kick-drift-kick leapfrog; prints the energy at start and end and
// its relative drift.
#include <cmath>
#include <cstdio>

#include "apps/common/memory.hpp"
#include "apps/common/run.hpp"
#include "apps/nbody/nbody.hpp"

namespace {
struct Square {  // the checksum: positions and velocities sum to zero (centre of mass at rest)
  TESSERA_HD double operator()(double v) const { return v * v; }
};
}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"nbody: all-pairs gravitational N-body, Plummer sphere, leapfrog"};
  // Tiles: the planner's for all-pairs work (0), or --tile's.
  apps::RunOptions o{{16384}, {0}, 10, {}};
  o.size_help = "number of bodies";
  o.add_to(cli);
  apps::NBodyParams params;
  std::uint64_t seed = 12345;
  cli.add_option("--dt", params.dt, "time step (N-body units)")
      ->check(apps::finite_in(0, HUGE_VAL, "above 0", true));
  cli.add_option("--eps", params.eps, "softening length")
      ->check(apps::finite_in(0, HUGE_VAL, "above 0 (a body's force on itself must stay finite)",
                              true));
  cli.add_option("--seed", seed, "seed of the Plummer sphere, a whole number from 0 to 2^63 - 1")
      ->check(apps::whole_in(0, std::numeric_limits<long>::max()));
  CLI11_PARSE(cli, argc, argv);

  return apps::run_guarded([&] {
    tessera::Runtime rt(o.runtime);
    const std::int64_t n = o.size[0];
    if (n < 2) throw tessera::Error("--size " + std::to_string(n) + ": give at least 2 bodies");
    // Per body: the start's 7 arrays and the 11 fields, doubles (plummer fills the start for
    // minutes before a size that cannot fit would fail).
    const double per_body = 18 * sizeof(double);
    apps::require_memory(
        "--size " + std::to_string(n) + " (bodies)", per_body * static_cast<double>(n),
        "give at most " +
            std::to_string(
                static_cast<long long>(tessera::detail::available_memory_bytes() / per_body)) +
            " bodies");
    const apps::Bodies start = apps::plummer(n, seed);
    apps::NBody sim(n, o.tile[0], start, params);
    const auto e0 = sim.energies().get();
    const double seconds = apps::timed_steps(
        rt, o, static_cast<double>(n), [&] { sim.init(start); }, [&] { sim.step(); });
    const auto e1 = sim.energies().get();
    const double E0 = e0[0] + e0[1], E1 = e1[0] + e1[1];
    const double checksum = tessera::sum(sim.x, Square{}) + tessera::sum(sim.vx, Square{});
    const std::string fix =
        "give a smaller --dt or a larger --eps (close pairs then stay resolved; the defaults, "
        "0.005 and 0.05, are stable)";
    if (!rt.simulated()) {  // a simulated run computes no values (docs/simulation.md)
      apps::require_finite("nbody", "E1", E1, o.steps, fix);
      apps::require_finite("nbody", "checksum", checksum, o.steps, fix);
    }
    // Each step sums n^2 pair interactions (the self-pair included), 20 flops each by the
    // usual count.
    const double pairs =
        static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(o.steps);
    if (rt.rank() == 0)
      std::printf(
          "nbody bodies=%lld tiles=%d steps=%ld seconds=%.4f Ginteractions/s=%.3f GFLOP/s=%.2f "
          "E0=%.17g E1=%.17g drift=%.3e checksum=%.17g ranks=%d\n",
          static_cast<long long>(n), sim.grid.tiles(), o.steps, seconds, pairs / seconds / 1e9,
          20.0 * pairs / seconds / 1e9, E0, E1, std::fabs((E1 - E0) / E0), checksum, rt.ranks());
    rt.finish();
  });
}
