// The oracle for Airfoil: OP2's five loops as plain serial loops over whole arrays, calling the
// application's kernels with pointers into the arrays (increments straight into the cells'
// residuals, in element order), never optimised. Global reductions follow Tessera's rule:
// each element's kernel call reduces into its own value, started at the identity (-0.0 for a
// sum, -inf for a maximum); a maximum combines them in element order, a sum exactly (fsum:
// the exact sum rounded once).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "apps/airfoil/airfoil.hpp"
#include "apps/airfoil/mesh.hpp"
#include "tests/reference/fsum.hpp"

namespace reference {

class Airfoil {
 public:
  explicit Airfoil(const apps::airfoil::Mesh& m)
      : m_(m),
        c_(apps::airfoil::constants()),
        q_(static_cast<std::size_t>(4 * m.ncell)),
        qold_(q_.size()),
        res_(q_.size(), 0.0),
        adt_(static_cast<std::size_t>(m.ncell)) {
    for (std::size_t k = 0; k < q_.size(); ++k) q_[k] = c_.qinf[k % 4];
  }

  void iterate() {
    using namespace apps::airfoil;
    const auto x = [&](std::int32_t n) { return &m_.x[static_cast<std::size_t>(2 * n)]; };
    const auto at4 = [](std::vector<double>& v, std::int32_t c) {
      return &v[static_cast<std::size_t>(4 * c)];
    };
    for (std::int32_t c = 0; c < m_.ncell; ++c) SaveSoln{}(at4(q_, c), at4(qold_, c));
    for (int k = 0; k < 2; ++k) {
      for (std::int32_t c = 0; c < m_.ncell; ++c) {
        const std::int32_t* n = &m_.cell[static_cast<std::size_t>(4 * c)];
        AdtCalc{c_}(x(n[0]), x(n[1]), x(n[2]), x(n[3]), at4(q_, c),
                    &adt_[static_cast<std::size_t>(c)]);
      }
      for (std::int32_t e = 0; e < m_.nedge; ++e) {
        const std::int32_t* n = &m_.edge[static_cast<std::size_t>(2 * e)];
        const std::int32_t* c = &m_.ecell[static_cast<std::size_t>(2 * e)];
        ResCalc{c_}(x(n[0]), x(n[1]), at4(q_, c[0]), at4(q_, c[1]),
                    &adt_[static_cast<std::size_t>(c[0])], &adt_[static_cast<std::size_t>(c[1])],
                    at4(res_, c[0]), at4(res_, c[1]));
      }
      for (std::int32_t e = 0; e < m_.nbedge; ++e) {
        const std::int32_t* n = &m_.bedge[static_cast<std::size_t>(2 * e)];
        const std::int32_t c = m_.becell[static_cast<std::size_t>(e)];
        BresCalc{c_}(x(n[0]), x(n[1]), at4(q_, c), &adt_[static_cast<std::size_t>(c)], at4(res_, c),
                     &m_.bound[static_cast<std::size_t>(e)]);
      }
      std::vector<double> rms{0.0};  // the global's start value, then every cell's
      maxerr_ = 0.0;
      for (std::int32_t c = 0; c < m_.ncell; ++c) {
        double cell = -0.0, maxerr = -std::numeric_limits<double>::infinity();
        Update{}(at4(qold_, c), at4(q_, c), at4(res_, c), &adt_[static_cast<std::size_t>(c)], &cell,
                 &maxerr);
        rms.push_back(cell);
        if (maxerr > maxerr_) maxerr_ = maxerr;
      }
      rms_ = fsum(rms);  // exact, rounded once: as Tessera's increment of a global
    }
  }
  double rms() const { return std::sqrt(rms_ / static_cast<double>(m_.ncell)); }
  double maxerr() const { return maxerr_; }
  const std::vector<double>& q() const { return q_; }

 private:
  const apps::airfoil::Mesh& m_;
  apps::airfoil::Constants c_;
  std::vector<double> q_, qold_, res_, adt_;
  double rms_ = 0, maxerr_ = 0;
};

}  // namespace reference
