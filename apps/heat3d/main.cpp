// heat3d: explicit 3-D heat diffusion (7-point Laplacian) on a tiled grid.
#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

#include "apps/common/run.hpp"
#include "apps/heat3d/heat3d.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"heat3d: 7-point explicit heat diffusion (Panda's Laplacian benchmark)"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  std::vector<long> size{256, 256, 256}, tile{256, 256, 32};
  long steps = 50;
  double alpha = 0.1;
  cli.add_option("--size", size, "grid points per axis (x y z)")->expected(3);
  cli.add_option("--tile", tile, "tile points per axis (x y z)")->expected(3);
  cli.add_option("--steps", steps, "time steps")->check(CLI::PositiveNumber);
  cli.add_option("--alpha", alpha, "dt/h^2 (<= 1/6 for stability)");
  CLI11_PARSE(cli, argc, argv);

  try {
    tessera::Runtime rt(opts);
    tessera::Grid<3> grid({size[0], size[1], size[2]}, {tile[0], tile[1], tile[2]});
    tessera::Field<double, 3> u(grid, 1, apps::heat3d_boundaries(), "u");
    tessera::Field<double, 3> next(grid, 1, apps::heat3d_boundaries(), "next");
    u.fill([](tessera::Index<3>) { return 0.0; });
    tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
    const apps::Heat3d update{alpha};

    rt.wait();
    const double start = apps::now_seconds();
    for (long s = 0; s < steps; ++s) {
      heat.apply(update, tessera::in(u), tessera::out(next));
      tessera::swap(u, next);
    }
    rt.wait();
    const double seconds = apps::now_seconds() - start;
    apps::print({"heat3d", std::to_string(size[0]) + "x" + std::to_string(size[1]) + "x" +
                               std::to_string(size[2]),
                 std::to_string(grid.tiles()), steps, seconds, static_cast<double>(grid.points()),
                 2.0 * sizeof(double), tessera::sum(u)});
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
