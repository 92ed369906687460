// jacobi2d: PSkel's Jacobi iteration for a 2-D Poisson problem with a source term.
#include <CLI/CLI.hpp>

#include <tessera/tessera.hpp>

#include "apps/common/run.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"jacobi2d: Jacobi iteration for -lap(u) = f (PSkel)"};
  tessera::Options opts;
  tessera::add_options(cli, opts);
  std::vector<long> size{4096, 4096}, tile{4096, 512};
  long steps = 100;
  cli.add_option("--size", size, "grid points per axis (x y)")->expected(2);
  cli.add_option("--tile", tile, "tile points per axis (x y)")->expected(2);
  cli.add_option("--steps", steps, "iterations")->check(CLI::PositiveNumber);
  CLI11_PARSE(cli, argc, argv);

  try {
    tessera::Runtime rt(opts);
    tessera::Grid<2> grid({size[0], size[1]}, {tile[0], tile[1]});
    const auto zero = tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0));
    tessera::Field<float, 2> u(grid, 1, zero, "u"), next(grid, 1, zero, "next"), f(grid, 1, zero, "f");
    u.fill([](tessera::Index<2>) { return 0.0f; });
    f.fill([&](tessera::Index<2> p) { return apps::jacobi2d_source(p, size[0], size[1]); });
    const float h = 1.0f / static_cast<float>(size[0] + 1);
    tessera::Stencil<2> jacobi("jacobi2d", tessera::Shape::Star, 1);

    rt.wait();
    const double start = apps::now_seconds();
    for (long s = 0; s < steps; ++s) {
      jacobi.apply(apps::Jacobi2d{h * h}, tessera::in(u, f), tessera::out(next));
      tessera::swap(u, next);
    }
    rt.wait();
    const double seconds = apps::now_seconds() - start;
    apps::print({"jacobi2d", std::to_string(size[0]) + "x" + std::to_string(size[1]),
                 std::to_string(grid.tiles()), steps, seconds, static_cast<double>(grid.points()),
                 3.0 * sizeof(float), tessera::sum(u)});
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
