// cloudsim: PSkel's cloud-dynamics cellular automaton (temperature, read-only winds, 5 cells).
#include <cstdio>

#include "apps/cloudsim/cloudsim.hpp"
#include "apps/common/run.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"cloudsim: PSkel's cloud-dynamics cellular automaton, float"};
  apps::RunOptions o{{2048, 2048}, {0, 0}, 100, {}};  // tiles: the library chooses
  o.add_to(cli);
  o.add_time_block_option(cli);
  apps::CloudParams params;
  cli.add_option("--cloud-radius", params.cloud_radius, "radius of the starting cloud (points)")
      ->check(apps::at_least<int>(0));
  cli.add_option("--dt", params.dt, "time step (PSkel: 0.01, which is unstable: see cloudsim.hpp)")
      ->check(apps::finite_in(0, 1, "above 0 and at most 1", true));
  CLI11_PARSE(cli, argc, argv);
  // cloudsim.hpp: the winds move 270 x dt cells per step, stable below one cell.
  o.diverged_fix =
      "give a smaller --dt (the winds then move under one cell per step: at most about 0.0037; "
      "the default is 0.001)";

  return apps::run_guarded([&] {
    tessera::Runtime rt(o.runtime);
    // t, next and the two winds (CloudSim): what the planner sizes slabs by where the grid
    // outgrows the GPUs' memory.
    tessera::Grid<2> grid({o.size[0], o.size[1]}, {o.tile[0], o.tile[1]}, {},
                          tessera::PointData::of<float, float, float, float>());
    apps::CloudSim sim(grid, params, o.steps_per_exchange);
    apps::print_depth("cloudsim", sim.depth, o.steps_per_exchange == tessera::kAutoDepth,
                      o.runtime.quiet, rt.rank());
    const double points = static_cast<double>(grid.points());
    const double seconds = apps::timed_blocks(
        rt, o, points, [&] { sim.init(); }, [&](long n) { sim.advance(n); }, sim.depth);
    // Per point and step: t read, next written, two wind values read.
    apps::print_result("cloudsim", o, rt, grid.tiles(), seconds, points, 4.0 * sizeof(float),
                       tessera::sum(sim.t));
    const auto c = sim.cells();
    if (rt.rank() == 0)
      std::printf("cloudsim cloud_cells=%.17g t_min=%.9g t_max=%.9g\n", c[0], c[1], c[2]);
    rt.finish();
  });
}
