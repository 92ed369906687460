// NAS MG's one-task levels: the tasks that run the coarse end of a V-cycle (CoarseCycle), or
// the residual of a one-tile top level (TopResid), as one task, with a CPU and a CUDA body.
#pragma once

#include <cstdint>
#include <vector>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "apps/mg/gpu.hpp"
#include "apps/mg/operators.hpp"
#include "apps/mg/verification.hpp"

namespace apps {

// The operators of the one-task levels (CoarseCycle, below) as its CPU body runs them: the row
// loops of coarse::, each team member on its share of the planes, the team synced between them.
struct HostLevelOps {
  const tessera::Team& team;
  Resid k;
  double *s0, *s1;  // scratch rows, each member its own (CoarseCycle::cpu)
  void wrap(const View& v) const { coarse::wrap_ghosts(v, team); }
  void rprj3(const View& f, const View& c) const { coarse::rprj3(f, c, s0, s1, team); }
  void interp(bool add, const View& c, const View& f) const { coarse::interp(add, c, f, s0, team); }
  void resid(const View& u, const double* v, std::int64_t vsy, std::int64_t vsz,
             const View& r) const {
    coarse::resid(k, u, v, vsy, vsz, r, s0, s1, team);
  }
  void psinv(const Psinv& s, const View& r, const View& u) const {
    coarse::psinv(s, r, u, s0, s1, team);
  }
  void norms(const View& r, const View& planes) const {
    team.sync();  // r is whole
    plane_norms(r, planes, team.begin(r.extent[2]), team.end(r.extent[2]));
  }
  void sync() const { team.sync(); }
};

#if TESSERA_CUDA_BODIES
// The same operators as the CUDA body runs them: launches on the task's stream, which orders
// them (nothing to sync).
struct GpuLevelOps {
  void* stream;
  Resid k;
  void wrap(const View& v) const { coarse_gpu::wrap_ghosts(stream, v); }
  void rprj3(const View& f, const View& c) const { coarse_gpu::rprj3(stream, f, c); }
  void interp(bool add, const View& c, const View& f) const {
    coarse_gpu::interp(stream, add, c, f);
  }
  void resid(const View& u, const double* v, std::int64_t vsy, std::int64_t vsz,
             const View& r) const {
    coarse_gpu::resid(stream, k, u, v, vsy, vsz, r);
  }
  void psinv(const Psinv& s, const View& r, const View& u) const {
    coarse_gpu::psinv(stream, s, r, u);
  }
  void norms(const View& r, const View& planes) const {
    const tessera::TileView<const double, 3> read{r.data, r.origin, r.extent, r.sy, r.sz};
    for_points("mg_plane_norms", stream, PlaneNormsAt{read, planes}, r.extent[2], 1, 1);
  }
  void sync() const {}
};
#endif

// The coarse end of a V-cycle in one task: levels 1..K, each held in one tile (the whole level),
// go through NPB's restriction, smoothing and prolongation in one task, so that a V-cycle's
// small levels cost one task instead of a chain of dependent ones (ghost pack and copy, then the
// operator, per level and operator). Below some size a level's work is smaller than the latency
// of those tasks. resid and psinv update r and u in place (each reads the field it writes only
// at the point it writes), as NPB does. The order of the operators is written once (run,
// cycle); the CPU and CUDA bodies differ only in how an operator runs (HostLevelOps,
// GpuLevelOps), with the same bits per point.
struct CoarseCycle {
  Resid resid;
  Psinv smooth;             // from_zero is set per level
  int levels;               // K
  bool top;                 // level K is the top level (v is its right-hand side)
  bool then_resid = false;  // `top`: then r = v - A u at the top, as Mg::resid_top (Mg::iteration)
  int cycles = 1;           // V-cycles (each with the top residual when then_resid) in a row
  // `top` only, both with the norms' planes as the last view (Mg::timed_iterations):
  bool start = false;  // first r = v - A u and its norms (NPB's timed region starts so)
  bool norms = false;  // last the norms of the top residual (Mg::norms)

  // views: v (the top's right-hand side, read when `top`), then u(1..K), r(1..K), and the
  // planes when `start` or `norms`. Under a scheduler that forms teams of workers (--sched
  // peager), every member runs this with its share of each operator's planes, as NPB's OpenMP
  // loops share them, and the team syncs between operators (the wraps sync themselves); the
  // points and their arithmetic are the same, so are the bits.
  template <class... V>
  void cpu(const tessera::Team& team, tessera::TileView<const double, 3> v, V... views) const {
    const View all[] = {views...};
    // Scratch rows: four of the widest level's row and its ghosts (rprj3 reads 2 n + 1 of the
    // level below K, n + 2 at level K).
    std::vector<double> scratch(4 * static_cast<std::size_t>(all[levels - 1].extent[0] + 2));
    run(HostLevelOps{team, resid, scratch.data(), scratch.data() + scratch.size() / 2}, v, all);
  }
#if TESSERA_CUDA_BODIES
  template <class... V>
  void cuda(void* stream, tessera::TileView<const double, 3> v, V... views) const {
    const View all[] = {views...};
    run(GpuLevelOps{stream, resid}, v, all);
  }
#endif

  template <class Ops>
  void run(const Ops& ops, const tessera::TileView<const double, 3>& v, const View* all) const {
    const View &u = all[levels - 1], &r = all[2 * levels - 1];
    if (start) {
      ops.wrap(u);
      ops.resid(u, v.data, v.sy, v.sz, r);
      ops.norms(r, all[2 * levels]);
    }
    for (int c = 0; c < cycles; ++c) {
      if (c > 0 || start)
        ops.sync();  // the last residual is written before the next cycle wraps it
      cycle(ops, v, all);
    }
    if (norms) ops.norms(r, all[2 * levels]);
  }
  template <class Ops>
  void cycle(const Ops& ops, const tessera::TileView<const double, 3>& v, const View* all) const {
    auto u = [&](int k) -> const View& { return all[k - 1]; };
    auto r = [&](int k) -> const View& { return all[levels + k - 1]; };
    for (int k = levels; k >= 2; --k) {
      ops.wrap(r(k));
      ops.rprj3(r(k), r(k - 1));
      ops.sync();
    }
    for (int k = 1; k <= levels; ++k) {
      if (k >= 2) {
        const bool at_top = top && k == levels;
        ops.wrap(u(k - 1));
        ops.interp(at_top, u(k - 1), u(k));
        ops.sync();
        ops.wrap(u(k));
        if (at_top)  // r = v - A u (Mg::resid_top)
          ops.resid(u(k), v.data, v.sy, v.sz, r(k));
        else  // r = r - A u
          ops.resid(u(k), r(k).data, r(k).sy, r(k).sz, r(k));
        ops.sync();
      }
      ops.wrap(r(k));
      Psinv s = smooth;
      s.from_zero = k == 1;
      ops.psinv(s, r(k), u(k));
      ops.sync();
    }
    if (top && then_resid) {
      ops.wrap(u(levels));
      ops.resid(u(levels), v.data, v.sy, v.sz, r(levels));
    }
  }
};

// r = v - A u over a one-tile top level, its ghosts wrapped first (Mg::resid_top).
struct TopResid {
  Resid resid;
  void cpu(tessera::TileView<const double, 3> v, View u, View r) const {
    std::vector<double> scratch(2 * static_cast<std::size_t>(u.extent[0] + 2));
    const tessera::Team alone;
    const HostLevelOps ops{alone, resid, scratch.data(), scratch.data() + u.extent[0] + 2};
    ops.wrap(u);
    ops.resid(u, v.data, v.sy, v.sz, r);
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<const double, 3> v, View u, View r) const {
    const GpuLevelOps ops{stream, resid};
    ops.wrap(u);
    ops.resid(u, v.data, v.sy, v.sz, r);
  }
#endif
};

}  // namespace apps
