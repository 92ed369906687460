// airfoil: OP2's Airfoil (2-D Euler, finite volume, predictor/corrector) as Tessera mesh loops.
#include <cstdio>

#include "apps/airfoil/solver.hpp"
#include "apps/common/run.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"airfoil: OP2's nonlinear 2-D inviscid airfoil code on Tessera mesh loops"};
  tessera::Options runtime;
  tessera::add_options(cli, runtime);
  apps::add_common_flags(cli);
  std::vector<long> size{400, 600};
  int tiles = 0, iterations = 1000;
  std::string mesh_file, partitioner = "metis";
  CLI::Option* generated =
      cli.add_option("--mesh-size", size,
                     "I J of the generated mesh: 3I x J cells (OP2's: 400 600)")
          ->expected(2)
          ->check(apps::whole());
  // One mesh: --mesh-size beside --mesh was ignored without a word.
  cli.add_option("--mesh", mesh_file, "read OP2's new_grid.dat text format instead of generating")
      ->check(apps::named("mesh file name", "new_grid.dat"))
      ->excludes(generated);
  cli.add_option("--tiles", tiles,
                 "tiles the cells are cut into (default 0: the library chooses from the workers)")
      ->check(apps::at_least<int>(0));
  cli.add_option("--partitioner", partitioner, "metis or block")
      ->check(CLI::IsMember({"metis", "block"}));
  cli.add_option("--iterations", iterations, "iterations (rms printed every 100)")
      ->check(apps::at_least<int>(1));
  cli.callback([&] { runtime.summary = !runtime.quiet; });
  CLI11_PARSE(cli, argc, argv);

  return apps::run_guarded([&] {
    const apps::airfoil::Mesh mesh = mesh_file.empty()
                                         ? apps::airfoil::generate_mesh(size[0], size[1])
                                         : apps::airfoil::read_mesh(mesh_file);
    tessera::Runtime rt(runtime);
    apps::airfoil::Solver solver(
        mesh, tiles,
        partitioner == "metis" ? tessera::Partitioner::Metis : tessera::Partitioner::Block);
    rt.wait();
    const double start = apps::now_seconds();
    double rms = 0;
    for (int iter = 1; iter <= iterations; ++iter) {
      solver.iterate();
      if (iter % 100 == 0 || iter == iterations) {
        rms = solver.rms();
        if (rt.rank() == 0 && iter % 100 == 0) std::printf(" %d  %10.5e\n", iter, rms);
      }
    }
    rt.wait();
    const double seconds = apps::now_seconds() - start;
    const double maxerr = solver.maxerr();
    apps::require_finite("airfoil", "rms", rms, iterations,
                         "the flow diverged; check the mesh (cells turned inside out, "
                         "coordinates too large)");
    if (rt.rank() == 0)
      std::printf(
          "airfoil cells=%d edges=%d tiles=%d iterations=%d seconds=%.4f rms=%.17g maxerr=%.17g "
          "ranks=%d\n",
          mesh.ncell, mesh.nedge, solver.tiles(), iterations, seconds, rms, maxerr, rt.ranks());
    rt.finish();
  });
}
