// life: Conway's Game of Life on a periodic 2-D grid of uint8 cells (PSkel's GoL).
#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

#include "apps/common/run.hpp"
#include "apps/life/life.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"life: Game of Life, periodic, uint8 cells"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  std::vector<long> size{4096, 4096}, tile{4096, 512};
  long steps = 100;
  cli.add_option("--size", size, "grid points per axis (x y)")->expected(2);
  cli.add_option("--tile", tile, "tile points per axis (x y)")->expected(2);
  cli.add_option("--steps", steps, "generations")->check(CLI::PositiveNumber);
  CLI11_PARSE(cli, argc, argv);

  try {
    tessera::Runtime rt(opts);
    tessera::Grid<2> grid({size[0], size[1]}, {tile[0], tile[1]}, {true, true});
    tessera::Field<std::uint8_t, 2> cells(grid, 1, {}, "cells"), next(grid, 1, {}, "next");
    cells.fill(apps::life_seed);
    tessera::Stencil<2> life("life", tessera::Shape::Box, 1);

    rt.wait();
    const double start = apps::now_seconds();
    for (long s = 0; s < steps; ++s) {
      life.apply(apps::Life{}, tessera::in(cells), tessera::out(next));
      tessera::swap(cells, next);
    }
    rt.wait();
    const double seconds = apps::now_seconds() - start;
    apps::print({"life", std::to_string(size[0]) + "x" + std::to_string(size[1]),
                 std::to_string(grid.tiles()), steps, seconds, static_cast<double>(grid.points()),
                 2.0 * sizeof(std::uint8_t), tessera::sum(cells)});
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
