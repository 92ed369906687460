// Checking mode (TESSERA_CHECKED_ACCESS): an In offset outside what the stencil or loop
// declared stops the run with a message naming the stencil, the input, the offset and the
// rule. Each case below is a mistake that, unchecked, runs to the end with a wrong answer
// (it reads ghost layers that were never filled, or another row of the tile).
// usage: checked_access CASE   (radius | star | dims | centre | loop | fine)
#include <cstdio>
#include <cstring>

#include <tessera/tessera.hpp>

namespace {

struct TooFar {  // u(2, 0) in a radius-1 stencil
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = u(-1, 0) + u(2, 0);
  }
};
struct Diagonal {  // u(1, 1) in a Star stencil
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = u(1, 0) + u(1, 1);
  }
};
struct ThirdAxis {  // u(0, 0, 1) in a 2-D stencil
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = u(0, 1) + u(0, 0, 1);
  }
};
struct NeighbourOfCentreOnly {  // w(1, 0) of an input declared tessera::centre(w)
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u, tessera::In<double> w,
                             tessera::Out<double> o) const {
    o = u(1, 0) * w(1, 0);
  }
};
struct NeighbourInLoop {  // u(0, 1) in a pointwise loop
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = u(0, 1);
  }
};
struct Fine {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u, tessera::In<double> w,
                             tessera::Out<double> o) const {
    o = u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1) + w();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s radius|star|dims|centre|loop|fine\n", argv[0]);
    return 2;
  }
  const char* c = argv[1];
  tessera::Options o;
  o.quiet = true;
  o.cpu_workers = 1;
  tessera::Runtime rt(o);
  tessera::Grid<2> grid({12, 10}, {6, 5});
  tessera::Field<double, 2> u(grid, 1, {}, "u"), w(grid, 0, {}, "w"), out(grid, 1, {}, "out");
  u.fill([](tessera::Index<2> p) { return 1.0 + p[0] + 0.5 * p[1]; });
  w.fill([](tessera::Index<2>) { return 2.0; });
  tessera::Stencil<2> star("checked", tessera::Shape::Star, 1);
  if (!std::strcmp(c, "radius")) star.apply(TooFar{}, tessera::in(u), tessera::out(out));
  if (!std::strcmp(c, "star")) star.apply(Diagonal{}, tessera::in(u), tessera::out(out));
  if (!std::strcmp(c, "dims")) star.apply(ThirdAxis{}, tessera::in(u), tessera::out(out));
  if (!std::strcmp(c, "centre"))
    star.apply(NeighbourOfCentreOnly{}, tessera::in(u, tessera::centre(w)), tessera::out(out));
  if (!std::strcmp(c, "loop"))
    tessera::Loop<2>("checked-loop").apply(NeighbourInLoop{}, tessera::in(u), tessera::out(out));
  if (!std::strcmp(c, "fine"))
    star.apply(Fine{}, tessera::in(u, tessera::centre(w)), tessera::out(out));
  std::printf("finished: sum %.17g\n", tessera::sum(out));
  return 0;
}
