// cardiac2d / cardiac3d: the Aliev-Panfilov model (Panda's cardiac simulator), diffusion,
// reaction and recovery as one stencil. CARDIAC_DIMS selects the dimension.
#include <cstdio>

#include "apps/cardiac/cardiac.hpp"
#include "apps/common/run.hpp"

int main(int argc, char** argv) {
  constexpr int D = CARDIAC_DIMS;
  CLI::App cli{D == 2 ? "cardiac2d: Aliev-Panfilov, 2-D, spiral-wave start"
                      : "cardiac3d: Aliev-Panfilov, 3-D, spiral-wave start"};
  // Tiles: the library chooses.
  apps::RunOptions o = D == 2 ? apps::RunOptions{{1024, 1024}, {0, 0}, 100, {}}
                              : apps::RunOptions{{128, 128, 128}, {0, 0, 0}, 50, {}};
  o.add_to(cli);
  o.add_time_block_option(cli);
  CLI11_PARSE(cli, argc, argv);
  const char* name = D == 2 ? "cardiac2d" : "cardiac3d";

  return apps::run_guarded([&] {
    tessera::Runtime rt(o.runtime);
    tessera::Index<D> size, tile;
    for (int a = 0; a < D; ++a) {
      size[a] = o.size[static_cast<std::size_t>(a)];
      tile[a] = o.tile[static_cast<std::size_t>(a)];
    }
    tessera::Grid<D> grid(size, tile);
    apps::Cardiac<D> model(grid, o.steps_per_exchange);
    apps::print_depth(name, model.depth, o.steps_per_exchange == tessera::kAutoDepth,
                      o.runtime.quiet, rt.rank());
    const double points = static_cast<double>(grid.points());
    apps::Rebalancing<D> rebalancing(o);
    rebalancing.balance.add(model.e).add(model.next).add(model.r);
    const double seconds = apps::timed_blocks(
        rt, o, points, [&] { model.init(); }, [&](long n) { model.advance(n); }, model.depth,
        nullptr, rebalancing.hook(o.steps));
    rebalancing.print(model.e.grid(), rt, o.runtime.quiet);
    const double e_sum = tessera::sum(model.e);
    const auto ex = model.extrema();
    if (!rt.simulated()) model.require_in_domain(e_sum, ex[0], o.steps);  // simulated: no values
    // Per point and step: e and r read, e_next and r written.
    apps::print_result(name, o, rt, grid.tiles(), seconds, points, 4.0 * sizeof(double), e_sum,
                       rebalancing.result_fields(model.e.grid()));
    if (rt.rank() == 0) std::printf("%s e_min=%.17g e_max=%.17g\n", name, ex[0], ex[1]);
    rt.finish();
  });
}
