// The Parallel Research Kernels' stencil (docs/tutorial.md, "On the interior, accumulating"):
// out += a radius-2 star of in at the points at least 2 from every face, then in += 1 at every
// point, for some iterations; checked bitwise against plain serial loops and by PRK's own norm.
//   prk_stencil [tile-rows] [runtime flags]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tessera/tessera.hpp>

constexpr int kRadius = 2;

// PRK's star weights for radius 2: +-1/4 at distance 1, +-1/8 at distance 2, along each axis.
struct AddStar {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> in,
                             tessera::InOut<double> out) const {
    out = out() + (0.25 * (in(1, 0) - in(-1, 0)) + 0.125 * (in(2, 0) - in(-2, 0)) +
                   0.25 * (in(0, 1) - in(0, -1)) + 0.125 * (in(0, 2) - in(0, -2)));
  }
};
struct AddOne {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::InOut<double> in) const {
    in = in() + 1.0;
  }
};

// The serial reference: the same arithmetic as plain loops.
std::vector<double> serial_prk(long n, int iterations) {
  std::vector<double> in(static_cast<std::size_t>(n * n)), out(in.size(), 0.0);
  const auto at = [n](long x, long y) { return static_cast<std::size_t>(y * n + x); };
  for (long y = 0; y < n; ++y)
    for (long x = 0; x < n; ++x) in[at(x, y)] = static_cast<double>(x + y);
  for (int it = 0; it <= iterations; ++it) {
    for (long y = kRadius; y < n - kRadius; ++y)
      for (long x = kRadius; x < n - kRadius; ++x)
        out[at(x, y)] = out[at(x, y)] + (0.25 * (in[at(x + 1, y)] - in[at(x - 1, y)]) +
                                         0.125 * (in[at(x + 2, y)] - in[at(x - 2, y)]) +
                                         0.25 * (in[at(x, y + 1)] - in[at(x, y - 1)]) +
                                         0.125 * (in[at(x, y + 2)] - in[at(x, y - 2)]));
    for (double& v : in) v = v + 1.0;
  }
  return out;
}

int main(int argc, char** argv) {
  try {
    tessera::Runtime rt(tessera::parse_options(argc, argv));
    const long n = 64, tile_rows = argc > 1 ? std::atol(argv[1]) : 16;
    const int iterations = 10;  // PRK runs iterations + 1, the first untimed

    tessera::Grid<2> grid({n, n}, {n, tile_rows});
    const auto faces = tessera::Boundaries<2>::all(tessera::Boundary::dirichlet(0.0));
    // in is read at neighbours up to 2 away: ghost layers of 2. out is read and written at the
    // point only (tessera::inout): no ghost layers.
    tessera::Field<double, 2> in(grid, kRadius, faces, "in"), out(grid, 0, faces, "out");
    in.fill([](tessera::Index<2> p) { return static_cast<double>(p[0] + p[1]); });
    out.fill([](tessera::Index<2>) { return 0.0; });

    tessera::Stencil<2> star("prk-star", tessera::Shape::Star, kRadius);
    tessera::Loop<2> add_one("prk-add-one");
    // The interior: the points at least the radius from every face. The points outside keep
    // their values (here 0).
    const auto interior = tessera::Box<2>::whole(grid).inset(kRadius);

    double start = 0;
    for (int it = 0; it <= iterations; ++it) {
      if (it == 1) {  // PRK times the iterations after the first
        rt.wait();
        start = rt.seconds();
      }
      // No write-only output (an empty tessera::out()); out accumulates in place.
      star.apply(interior, AddStar{}, tessera::in(in), tessera::out(), tessera::inout(out));
      add_one.apply(AddOne{}, tessera::inout(in));
    }
    rt.wait();
    const double seconds = rt.seconds() - start;

    const std::vector<double> got = out.gather(), want = serial_prk(n, iterations);
    const bool same = got.size() == want.size() &&
                      std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0;
    // PRK's verification: the L1 norm of out over the interior, per point, against
    // (iterations + 1) x (COEFX + COEFY) with both coefficients 1.
    double norm = 0;
    for (long y = kRadius; y < n - kRadius; ++y)
      for (long x = kRadius; x < n - kRadius; ++x)
        norm += std::fabs(got[static_cast<std::size_t>(y * n + x)]);
    norm /= static_cast<double>((n - 2 * kRadius) * (n - 2 * kRadius));
    const double expected = (iterations + 1) * 2.0;
    const bool verified = std::fabs(norm - expected) / expected < 1e-8;
    if (rt.rank() == 0)
      std::printf(
          "prk_stencil: %ld x %ld in %d tiles, radius %d, %d iterations in %.6f s, norm "
          "%.17g (PRK: %s): %s\n",
          n, n, grid.tiles(), kRadius, iterations, seconds, norm,
          verified ? "verified" : "NOT VERIFIED",
          same ? "bitwise equal to the serial reference" : "DIFFERS from the reference");
    rt.finish();
    return same && verified ? 0 : 1;
  } catch (const std::exception& e) { return tessera::report_error(e); }
}
