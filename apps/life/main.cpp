// life: Conway's Game of Life on a periodic 2-D grid of uint8 cells (PSkel's GoL).
#include "apps/common/run.hpp"
#include "apps/life/life.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"life: Game of Life, periodic, uint8 cells"};
  apps::RunOptions o{{4096, 4096}, {0, 0}, 100, {}};  // tiles: the library chooses
  o.add_to(cli);
  o.add_io_options(cli);
  o.add_time_block_option(cli);
  CLI11_PARSE(cli, argc, argv);
  o.about = "life --size " + o.grid_name();

  return apps::run_guarded([&] {
    tessera::Runtime rt(o.runtime);
    tessera::Grid<2> grid({o.size[0], o.size[1]}, {o.tile[0], o.tile[1]}, {true, true},
                          tessera::PointData::of<std::uint8_t, std::uint8_t>());  // cells, next
    tessera::Stencil<2> life("life", tessera::Shape::Box, 1);
    const int depth = apps::steps_per_exchange(life, grid, o.steps_per_exchange);
    tessera::Field<std::uint8_t, 2> cells(grid, depth, {}, "cells"), next(grid, depth, {}, "next");
    apps::print_depth("life", depth, o.steps_per_exchange == tessera::kAutoDepth, o.runtime.quiet,
                      rt.rank());
    auto init = [&] { cells.fill(apps::life_seed); };
    apps::State state;
    state.add("cells", cells);
    const double seconds = apps::timed_blocks(
        rt, o, static_cast<double>(grid.points()), init,
        [&](long n) { life.advance(apps::Life{}, cells, next, n, depth); }, depth, &state);
    apps::print_result("life", o, rt, grid.tiles(), seconds, static_cast<double>(grid.points()),
                       2.0 * sizeof(std::uint8_t), tessera::sum(cells));
    rt.finish();
  });
}
