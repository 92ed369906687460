// jacobi2d: PSkel's Jacobi iteration for a 2-D Poisson problem with a source term.
#include "apps/common/run.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"jacobi2d: Jacobi iteration for -lap(u) = f (PSkel)"};
  apps::RunOptions o{{4096, 4096}, {0, 0}, 100, {}};  // tiles: the library chooses
  o.add_to(cli);
  o.add_io_options(cli);
  o.add_time_block_option(cli);
  CLI11_PARSE(cli, argc, argv);
  o.about = "jacobi2d --size " + o.grid_name();

  return apps::run_guarded([&] {
    tessera::Runtime rt(o.runtime);
    // u, next and f: what the planner sizes slabs by where the grid outgrows the GPUs' memory.
    tessera::Grid<2> grid({o.size[0], o.size[1]}, {o.tile[0], o.tile[1]}, {},
                          tessera::PointData::of<float, float, float>());
    const auto zero = tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0));
    tessera::Stencil<2> jacobi("jacobi2d", tessera::Shape::Star, 1);
    const int depth = apps::steps_per_exchange(jacobi, grid, o.steps_per_exchange);
    tessera::Field<float, 2> u(grid, depth, zero, "u"), next(grid, depth, zero, "next"),
        f(grid, depth, zero, "f");
    f.fill([&](tessera::Index<2> p) { return apps::jacobi2d_source(p, o.size[0], o.size[1]); });
    const float h = 1.0f / static_cast<float>(o.size[0] + 1);
    apps::print_depth("jacobi2d", depth, o.steps_per_exchange == tessera::kAutoDepth,
                      o.runtime.quiet, rt.rank());
    auto init = [&] { u.fill([](tessera::Index<2>) { return 0.0f; }); };
    apps::State state;
    state.add("u", u);  // f is set from the size above; `next` is written whole by every step
    apps::Rebalancing<2> rebalancing(o);
    rebalancing.balance.add(u).add(next).add(f);
    const double seconds = apps::timed_blocks(
        rt, o, static_cast<double>(grid.points()), init,
        [&](long n) { jacobi.advance(apps::Jacobi2d{h * h}, u, next, n, depth, tessera::in(f)); },
        depth, &state, rebalancing.hook(o.steps));
    rebalancing.print(u.grid(), rt, o.runtime.quiet);
    apps::print_result("jacobi2d", o, rt, grid.tiles(), seconds, static_cast<double>(grid.points()),
                       3.0 * sizeof(float), tessera::sum(u), rebalancing.result_fields(u.grid()));
    rt.finish();
  });
}
