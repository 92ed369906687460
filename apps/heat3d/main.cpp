// heat3d: explicit 3-D heat diffusion (7-point Laplacian) on a tiled grid.
#include "apps/common/run.hpp"
#include "apps/heat3d/heat3d.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"heat3d: 7-point explicit heat diffusion (Panda's Laplacian benchmark)"};
  apps::RunOptions o{{256, 256, 256}, {0, 0, 0}, 50, {}};  // tiles: the library chooses
  o.add_to(cli);
  double alpha = 0.1;
  cli.add_option("--alpha", alpha,
                 "dt/h^2, between 0 and 1/6 (the explicit scheme's stability limit)");
  o.add_io_options(cli);
  o.add_time_block_option(cli);
  CLI11_PARSE(cli, argc, argv);
  char about[96];
  std::snprintf(about, sizeof(about), " --alpha %.17g", alpha);
  o.about = "heat3d --size " + o.grid_name() + about;

  return apps::run_guarded([&] {
    tessera::Runtime rt(o.runtime);
    apps::check_heat3d_alpha(alpha);  // after the Runtime: under mpirun, said once
    // u and next: what the planner sizes slabs by where the grid outgrows the GPUs' memory.
    tessera::Grid<3> grid({o.size[0], o.size[1], o.size[2]}, {o.tile[0], o.tile[1], o.tile[2]}, {},
                          tessera::PointData::of<double, double>());
    tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
    const int depth = apps::steps_per_exchange(heat, grid, o.steps_per_exchange);
    tessera::Field<double, 3> u(grid, depth, apps::heat3d_boundaries(), "u");
    tessera::Field<double, 3> next(grid, depth, apps::heat3d_boundaries(), "next");
    apps::print_depth("heat3d", depth, o.steps_per_exchange == tessera::kAutoDepth, o.runtime.quiet,
                      rt.rank());
    auto init = [&] { u.fill([](tessera::Index<3>) { return 0.0; }); };
    apps::State state;
    state.add("u", u);  // `next` is written whole by every step
    apps::Rebalancing<3> rebalancing(o);
    rebalancing.balance.add(u).add(next);
    const double seconds = apps::timed_blocks(
        rt, o, static_cast<double>(grid.points()), init,
        [&](long n) { heat.advance(apps::Heat3d{alpha}, u, next, n, depth); }, depth, &state,
        rebalancing.hook(o.steps));
    rebalancing.print(u.grid(), rt, o.runtime.quiet);
    apps::print_result("heat3d", o, rt, grid.tiles(), seconds, static_cast<double>(grid.points()),
                       2.0 * sizeof(double), tessera::sum(u), rebalancing.result_fields(u.grid()));
    rt.finish();
  });
}
