// Airfoil on Tessera: the mesh as sets, maps and dats, cut into tiles, and OP2's iteration
// (save_soln, then twice adt_calc, res_calc, bres_calc, update) as five mesh loops.
#pragma once

#include <cmath>
#include <vector>

#include <tessera/mesh.hpp>

#include "apps/airfoil/airfoil.hpp"
#include "apps/airfoil/mesh.hpp"

namespace apps::airfoil {

inline std::vector<double> free_stream(const Constants& c, std::int32_t ncell) {
  std::vector<double> q(static_cast<std::size_t>(4 * ncell));
  for (std::size_t k = 0; k < q.size(); ++k) q[k] = c.qinf[k % 4];
  return q;
}

class Solver {
 public:
  Solver(const Mesh& m, int tiles, tessera::Partitioner method)
      : c_(constants()),
        nodes_(m.nnode, "nodes"),
        edges_(m.nedge, "edges"),
        bedges_(m.nbedge, "bedges"),
        cells_(m.ncell, "cells"),
        pedge_(edges_, nodes_, 2, m.edge, "pedge"),
        pecell_(edges_, cells_, 2, m.ecell, "pecell"),
        pbedge_(bedges_, nodes_, 2, m.bedge, "pbedge"),
        pbecell_(bedges_, cells_, 1, m.becell, "pbecell"),
        pcell_(cells_, nodes_, 4, m.cell, "pcell"),
        bound_(bedges_, 1, m.bound, "bound"),
        x_(nodes_, 2, m.x, "x"),
        q_(cells_, 4, free_stream(c_, m.ncell), "q"),
        qold_(cells_, 4, "qold"),
        adt_(cells_, 1, "adt"),
        res_(cells_, 4, "res"),
        rms_("rms", 0.0),
        maxerr_("maxerr", 0.0) {
    tessera::partition_mesh(cells_, tiles, method);
    tessera::show_partitions(x_, pcell_);  // the report's partition map: cells as quadrilaterals
  }

  /// The tiles the cells were cut into (the library's choice where the Solver was given 0).
  int tiles() const { return cells_.tiles(); }

  /// One iteration: save the solution, then the predictor and the corrector. The rms and
  /// largest squared change of the last update are then in rms() and maxerr().
  void iterate() {
    using tessera::Access;
    using tessera::arg;
    tessera::par_loop(SaveSoln{}, "save_soln", cells_, arg(q_, 4, Access::Read),
                      arg(qold_, 4, Access::Write));
    for (int k = 0; k < 2; ++k) {
      tessera::par_loop(AdtCalc{c_}, "adt_calc", cells_, arg(x_, pcell_, 0, 2, Access::Read),
                        arg(x_, pcell_, 1, 2, Access::Read), arg(x_, pcell_, 2, 2, Access::Read),
                        arg(x_, pcell_, 3, 2, Access::Read), arg(q_, 4, Access::Read),
                        arg(adt_, 1, Access::Write));
      tessera::par_loop(
          ResCalc{c_}, "res_calc", edges_, arg(x_, pedge_, 0, 2, Access::Read),
          arg(x_, pedge_, 1, 2, Access::Read), arg(q_, pecell_, 0, 4, Access::Read),
          arg(q_, pecell_, 1, 4, Access::Read), arg(adt_, pecell_, 0, 1, Access::Read),
          arg(adt_, pecell_, 1, 1, Access::Read), arg(res_, pecell_, 0, 4, Access::Inc),
          arg(res_, pecell_, 1, 4, Access::Inc));
      tessera::par_loop(BresCalc{c_}, "bres_calc", bedges_, arg(x_, pbedge_, 0, 2, Access::Read),
                        arg(x_, pbedge_, 1, 2, Access::Read), arg(q_, pbecell_, 0, 4, Access::Read),
                        arg(adt_, pbecell_, 0, 1, Access::Read),
                        arg(res_, pbecell_, 0, 4, Access::Inc), arg(bound_, 1, Access::Read));
      rms_.set(0.0);
      maxerr_.set(0.0);
      tessera::par_loop(Update{}, "update", cells_, arg(qold_, 4, Access::Read),
                        arg(q_, 4, Access::Write), arg(res_, 4, Access::ReadWrite),
                        arg(adt_, 1, Access::Read), arg(rms_, 1, Access::Inc),
                        arg(maxerr_, 1, Access::Max));
    }
  }
  /// sqrt(sum of squared changes / cells), as OP2 prints it (waits; collective under MPI).
  double rms() const { return std::sqrt(rms_.value() / static_cast<double>(cells_.size())); }
  double maxerr() const { return maxerr_.value(); }
  std::vector<double> q() const { return q_.gather(); }
  const tessera::Set& cells() const { return cells_; }
  const tessera::Set& edges() const { return edges_; }

 private:
  Constants c_;
  tessera::Set nodes_, edges_, bedges_, cells_;
  tessera::Map pedge_, pecell_, pbedge_, pbecell_, pcell_;
  tessera::Dat<std::int32_t> bound_;
  tessera::Dat<double> x_, q_, qold_, adt_, res_;
  tessera::Global<double> rms_, maxerr_;
};

}  // namespace apps::airfoil
