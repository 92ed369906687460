// The run the failure programs share (mpi/rank_error.cpp, reliability/watchdog.cpp): a 2-D
// average stencil over 64 x 64 points in 16 x 16 tiles, one step at a time, so that a program
// can fail or stop between any two steps.
#pragma once

#include <tessera/tessera.hpp>

namespace test {

struct Average {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = 0.25 * (u(1, 0) + u(-1, 0) + u(0, 1) + u(0, -1));
  }
};

struct AverageRun {
  tessera::Grid<2> grid{{64, 64}, {16, 16}};
  tessera::Field<double, 2> u{grid, 1, {}, "u"}, v{grid, 1, {}, "v"};
  tessera::Stencil<2> average{"average", tessera::Shape::Star, 1};

  AverageRun() {
    u.fill([](tessera::Index<2> p) { return double(p[0] * p[1] % 7); });
  }
  void step() {  // submits, returns
    average.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
};

}  // namespace test
