// The tutorial's first stencil (docs/tutorial.md): 2-D heat on a grid cut into tiles, checked
// bitwise against plain serial loops, with the time of its steps. The same program runs on CPU
// workers, on a GPU (built with TESSERA_GPU=ON), on several ranks (mpirun) and with --trace.
//   heat2d [tile-rows] [runtime flags: --ncpu 2, --trace heat2d.json, ...]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tessera/tessera.hpp>

// One point update, written once; TESSERA_HD makes it a GPU function too under nvcc.
struct Heat {
  double alpha;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> next) const {
    next = u() + alpha * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4.0 * u());
  }
};

// The same steps as plain loops over one array with a ring of ghost points holding the
// boundary values: the serial reference.
std::vector<double> serial_heat(long nx, long ny, int steps, double alpha) {
  const long sx = nx + 2;
  std::vector<double> u(static_cast<std::size_t>(sx * (ny + 2)), 0.0), next = u;
  for (long y = 1; y <= ny; ++y) u[static_cast<std::size_t>(y * sx)] = 1.0;  // hot x-low face
  next = u;
  for (int s = 0; s < steps; ++s) {
    for (long y = 1; y <= ny; ++y)
      for (long x = 1; x <= nx; ++x) {
        const auto at = [&](long dx, long dy) {
          return u[static_cast<std::size_t>((y + dy) * sx + x + dx)];
        };
        next[static_cast<std::size_t>(y * sx + x)] =
            at(0, 0) + alpha * (at(-1, 0) + at(1, 0) + at(0, -1) + at(0, 1) - 4.0 * at(0, 0));
      }
    u.swap(next);
  }
  std::vector<double> points;  // without the ghost ring, x fastest: Field::gather's order
  for (long y = 1; y <= ny; ++y)
    for (long x = 1; x <= nx; ++x) points.push_back(u[static_cast<std::size_t>(y * sx + x)]);
  return points;
}

int main(int argc, char** argv) {
  try {
    tessera::Runtime rt(tessera::parse_options(argc, argv));  // takes the runtime flags out
    const long nx = 96, ny = 64, tile_rows = argc > 1 ? std::atol(argv[1]) : 16;
    const int steps = 20;
    const double alpha = 0.2;

    tessera::Grid<2> grid({nx, ny}, {nx, tile_rows});  // tiles of whole rows
    auto bc = tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0));
    bc.set(0, 0, tessera::Boundary::dirichlet(1.0));  // axis 0 (x), side 0 (low): hot
    tessera::Field<double, 2> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
    u.fill([](tessera::Index<2>) { return 0.0; });
    tessera::Stencil<2> heat("heat2d", tessera::Shape::Star, 1);  // 5 points, radius 1

    rt.wait();  // the fill done: time the steps alone
    const double start = rt.seconds();
    for (int s = 0; s < steps; ++s) {
      heat.apply(Heat{alpha}, tessera::in(u), tessera::out(next));  // submits, returns
      tessera::swap(u, next);
    }
    rt.wait();
    const double seconds = rt.seconds() - start;

    // gather and sum are collective: every rank calls them.
    const std::vector<double> got = u.gather(), want = serial_heat(nx, ny, steps, alpha);
    const double total = tessera::sum(u);
    const bool same = got.size() == want.size() &&
                      std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0;
    if (rt.rank() == 0)
      std::printf("heat2d: %ld x %ld in %d tiles, %d steps in %.6f s, sum %.17g: %s\n", nx, ny,
                  grid.tiles(), steps, seconds, total,
                  same ? "bitwise equal to the serial reference" : "DIFFERS from the reference");
    rt.finish();
    return same ? 0 : 1;
  } catch (const std::exception& e) { return tessera::report_error(e); }
}
