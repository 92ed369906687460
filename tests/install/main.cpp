// Uses an installed Tessera through its public API only: a 2-D 5-point smoothing stencil on
// an unevenly tiled grid (Dirichlet x faces, Neumann y faces), checked against a serial loop.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

struct Smooth {
  double w;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> next) const {
    next = (1.0 - 4.0 * w) * u() + w * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1));
  }
};

int main(int argc, char** argv) {
  const long nx = 23, ny = 17, steps = 10;
  const double w = 0.2, hot = 1.0;
  const auto start = [](tessera::Index<2> p) {
    return 0.01 * static_cast<double>(p[0] * p[1] % 7);
  };

  // Serial reference: ghost x-low = hot, x-high = 0 (Dirichlet); y mirrored (Neumann).
  std::vector<double> ref(nx * ny), nxt(nx * ny);
  for (long y = 0; y < ny; ++y)
    for (long x = 0; x < nx; ++x) ref[x + nx * y] = start({x, y});
  for (long s = 0; s < steps; ++s) {
    for (long y = 0; y < ny; ++y)
      for (long x = 0; x < nx; ++x) {
        auto at = [&](long i, long j) {
          if (i < 0) return hot;
          if (i >= nx) return 0.0;
          j = j < 0 ? -1 - j : (j >= ny ? 2 * ny - 1 - j : j);
          return ref[i + nx * j];
        };
        nxt[x + nx * y] = (1.0 - 4.0 * w) * at(x, y) +
                          w * (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1));
      }
    ref.swap(nxt);
  }

  try {
    tessera::Options opts = tessera::parse_options(argc, argv);
    opts.quiet = true;
    tessera::Runtime rt(opts);
    tessera::Grid<2> grid({nx, ny}, {8, 5});  // 3 x 4 tiles, the last ones thinner
    tessera::Boundaries<2> bc;
    bc.set(0, 0, tessera::Boundary::dirichlet(hot))
        .set(0, 1, tessera::Boundary::dirichlet(0.0))
        .set(1, 0, tessera::Boundary::neumann())
        .set(1, 1, tessera::Boundary::neumann());
    tessera::Field<double, 2> u(grid, 1, bc, "u"), next(grid, 1, bc, "next");
    u.fill(start);
    tessera::Stencil<2> smooth("consumer-smooth", tessera::Shape::Star, 1);
    for (long s = 0; s < steps; ++s) {
      smooth.apply(Smooth{w}, tessera::in(u), tessera::out(next));
      tessera::swap(u, next);
    }
    rt.wait();

    const std::vector<double> got = u.gather();
    double worst = 0, expected_sum = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::fmax(worst, std::fabs(got[i] - ref[i]));
      expected_sum += ref[i];
    }
    const double total = tessera::sum(u);
    std::printf("consumer: %d tiles, max |error| %.3g, sum %.17g (expected %.17g)\n", grid.tiles(),
                worst, total, expected_sum);
    if (!(worst <= 1e-12) || !(std::fabs(total - expected_sum) <= 1e-9)) {
      std::fprintf(stderr, "consumer: FAILED: result differs from the serial reference\n");
      return 1;
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
  std::printf("consumer: OK\n");
  return 0;
}
