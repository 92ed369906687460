// NAS MG's hierarchy (NPB 3.x): the levels, their tiles and fields, and the V-cycle (mg3P) as
// tasks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tessera/levels.hpp>
#include <tessera/tessera.hpp>

#include "apps/mg/coarse_cycle.hpp"
#include "apps/mg/operators.hpp"
#include "apps/mg/slab.hpp"
#include "apps/mg/verification.hpp"

namespace apps {

// The hierarchy: levels 1 (2^3 points) to lt (n^3), u and r on each, v at the top, and a
// scratch field t on the levels whose stencils double-buffer (tiled across ranks, or with
// `coarse_task` false).
//
// Tiles: the top level in z slabs `tile_z` thick; each coarser level halves them (at least
// `min_tile` thick), then thickens them until a tile holds `min_points` points or the whole
// level, keeping at least `min_tiles` tiles (one per rank): below that size a tile's work is
// smaller than the cost of its tasks (ghost pack, boundary, interior, per stencil), and the
// coarse levels of a V-cycle are nearly all task overhead. The levels that end up in one tile
// each (from level 1 up) then run as one CoarseCycle task per V-cycle (`coarse_task`); the
// tiled levels held on one rank run resid and psinv as slab tasks (namespace slab).
class Mg {
 public:
  static constexpr std::int64_t kMinTilePoints = 32768;

  // The default top tiling. On one rank up to kOneTaskSize^3 points, one tile: the whole
  // V-cycle and the residual after it are one task per iteration, serial, at about NPB's
  // one-thread speed, which beats the chain of dependent per-tile tasks (a ghost pack, a copy
  // and the operator per level and operator, each link paying the runtime's latency) on 2
  // workers. Else four z slabs: two per worker here, one per rank up to 4 ranks (fewer,
  // thicker slabs copy fewer ghost points and chain fewer tasks). The results, rnm2
  // included (PlaneNorms), are the same bits for any top tiling, so the default may depend
  // on the ranks.
  static constexpr std::int64_t kOneTaskSize = 64;
  static std::int64_t default_tile_z(std::int64_t n, int ranks = 1) {
    return ranks == 1 && n <= kOneTaskSize ? n : std::max<std::int64_t>(2, n / 4);
  }

  // `coarse_task`: the levels held in one tile each run as one task per V-cycle (CoarseCycle).
  Mg(std::int64_t n, std::int64_t tile_z, std::int64_t min_tile = 1,
     std::int64_t min_points = kMinTilePoints, int min_tiles = 1, bool coarse_task = true) {
    if (n < 4 || (n & (n - 1)) != 0)
      throw tessera::Error("MG size " + std::to_string(n) +
                           ": give a power of two >= 4 (the "
                           "hierarchy halves it down to 2 points per axis)");
    lt = 0;
    for (std::int64_t m = n; m > 1; m /= 2) ++lt;
    std::vector<tessera::Grid<3>> grids{
        tessera::Grid<3>({n, n, n}, {n, n, tile_z}, {true, true, true})};
    for (int k = lt - 1; k >= 1; --k) {
      const tessera::Grid<3> halved = tessera::coarser(grids.front(), min_tile);
      const tessera::Index<3> e = halved.extent();
      std::int64_t tz = halved.tile()[2];
      while (tz < e[2] && e[0] * e[1] * tz < min_points &&
             (e[2] + 2 * tz - 1) / (2 * tz) >= min_tiles)
        tz *= 2;
      grids.insert(grids.begin(),
                   tessera::Grid<3>(e, {e[0], e[1], std::min(tz, e[2])}, {true, true, true}));
    }
    for (int k = 1; k <= lt; ++k) {
      const tessera::Grid<3>& g = grids[static_cast<std::size_t>(k - 1)];
      const std::string level = std::to_string(k);
      u.emplace_back(g, 1, tessera::Boundaries<3>{}, "u" + level);
      r.emplace_back(g, 1, tessera::Boundaries<3>{}, "r" + level);
    }
    v = std::make_unique<tessera::Field<double, 3>>(grids.back(), 0, tessera::Boundaries<3>{}, "v");
    // The norm planes in the top level's z slabs, as the planner made them (it merges the
    // slabs it puts on a GPU), cut so that it keeps them: a slab's norms task writes its tile.
    tessera::Grid<3>::Cuts slab_starts;
    for (int t = 1; t < grids.back().tiles(); ++t)
      slab_starts[2].push_back(tessera::tile_of(u.back(), t).origin[2]);
    planes = std::make_unique<tessera::Field<double, 3>>(
        tessera::Grid<3>::cut({kPlaneWords, 1, n}, slab_starts), 0, tessera::Boundaries<3>{},
        "norm-planes");
    while (coarse_task && one_task_levels < std::min(lt, kMaxOneTaskLevels) &&
           grid(one_task_levels + 1).tiles() == 1)
      ++one_task_levels;
    // A second field per level only where the stencils double-buffer (the one task and the
    // slab tasks update in place).
    for (int k = 1; k <= lt; ++k)
      t.push_back(k > one_task_levels && !slabs(k)
                      ? std::make_unique<tessera::Field<double, 3>>(
                            grid(k), 1, tessera::Boundaries<3>{}, "t" + std::to_string(k))
                      : nullptr);
  }

  const tessera::Grid<3>& grid(int k) const { return u[static_cast<std::size_t>(k - 1)].grid(); }
  tessera::Field<double, 3>& U(int k) { return u[static_cast<std::size_t>(k - 1)]; }
  tessera::Field<double, 3>& R(int k) { return r[static_cast<std::size_t>(k - 1)]; }
  tessera::Field<double, 3>& V() { return *v; }

  // v = NPB's charges, u = 0 at the top.
  void initialise() {
    const std::int64_t n = grid(lt).extent()[0];
    const Charges c = zran3(n);
    v->fill([&](tessera::Index<3> p) {
      const std::int64_t g = p[0] + n * (p[1] + n * p[2]);
      for (std::int64_t at : c.minus)
        if (at == g) return -1.0;
      for (std::int64_t at : c.plus)
        if (at == g) return 1.0;
      return 0.0;
    });
    set.apply(Set{0.0}, tessera::out(U(lt)));
  }

  // r = v - A u at the top level: one task (TopResid) when the top is one tile, as the V-cycle.
  void resid_top() {
    if (one_task_levels == lt)
      coarse.submit(TopResid{Resid{a0, a2, a3}}, tessera::read_tile(*v, 0),
                    tessera::update_tile(U(lt), 0), tessera::write_tile(R(lt), 0));
    else if (slabs(lt))
      for (int t = 0; t < grid(lt).tiles(); ++t)
        resid_slab.submit(slab::Resid{Resid{a0, a2, a3}}, below(U(lt), t),
                          tessera::read_tile(U(lt), t), above(U(lt), t), tessera::read_tile(*v, t),
                          tessera::write_tile(R(lt), t));
    else
      resid.apply(Resid{a0, a2, a3}, tessera::in(U(lt), tessera::centre(*v)), tessera::out(R(lt)));
  }

  // One V-cycle (NPB's mg3P).
  void mg3p() {
    const int tiled = std::max(2, one_task_levels + 1);  // the finest level of the one task, + 1
    for (int k = lt; k >= tiled; --k) rprj3.apply(Rprj3{}, R(k), R(k - 1));
    if (one_task_levels > 0)
      coarse_cycle();
    else
      smooth(1, true);
    for (int k = tiled; k <= lt - 1; ++k) {
      interp.apply(Interp{false}, U(k - 1), U(k));
      if (slabs(k)) {  // r = r - A u in place
        for (int t = 0; t < grid(k).tiles(); ++t)
          resid_slab.submit(slab::Resid{Resid{a0, a2, a3}}, below(U(k), t),
                            tessera::read_tile(U(k), t), above(U(k), t),
                            tessera::update_tile(R(k), t));
      } else {
        resid.apply(Resid{a0, a2, a3}, tessera::in(U(k), tessera::centre(R(k))),
                    tessera::out(T(k)));
        tessera::swap(R(k), T(k));
      }
      smooth(k, false);
    }
    if (one_task_levels == lt) return;  // the whole V-cycle was one task
    interp.apply(Interp{true}, U(lt - 1), U(lt));
    resid_top();
    smooth(lt, false);
  }

  // One iteration of NPB's timed loop: a V-cycle, then the top residual. When the whole
  // V-cycle is one task, so is the residual (one task per iteration instead of four: the
  // stencil's ghost pack and copy, then the operator, each a link of the chain).
  void iteration() { iterations(1); }
  // `n` iterations. When the whole V-cycle is one task, up to `per_task` of them run in one
  // task (default: all): each further task would be one more link of a chain of dependent
  // tasks, whose start costs a team of workers tens of microseconds (docs/performance.md).
  void iterations(int n, int per_task = 0) {
    if (one_task_levels == lt) {
      const int block = per_task > 0 ? per_task : std::max(n, 1);
      for (int done = 0; done < n; done += block) coarse_cycle(true, std::min(block, n - done));
      return;
    }
    for (int it = 0; it < n; ++it) {
      mg3p();
      resid_top();
    }
  }

  // NPB's timed region: r = v - A u at the top and its norms (NPB's old2 and oldu, computed
  // and not used), `n` iterations, and the norms of the last residual; get() waits. When the
  // whole V-cycle is one task, the residual and the norms are in its first and last task: as
  // tasks of their own, each was a link of the chain, and the residual ran on one worker.
  MgNorms timed_iterations(int n, int per_task = 0) {
    if (one_task_levels != lt || n < 1) {
      resid_top();
      (void)norms();
      iterations(n, per_task);
      return norms();
    }
    const int block = per_task > 0 ? per_task : n;
    for (int done = 0; done < n; done += block)
      coarse_cycle(true, std::min(block, n - done), done == 0, done + block >= n);
    return MgNorms(*planes);
  }

  // {rnm2, rnmu} of the top residual (NPB's norm2u3); get() waits.
  MgNorms norms() {
    for (int t = 0; t < grid(lt).tiles(); ++t)
      norm.submit(PlaneNorms{}, tessera::read_tile(R(lt), t), tessera::write_tile(*planes, t));
    return MgNorms(*planes);
  }
  double rnm2(double sum_of_squares) const {
    const double n = static_cast<double>(grid(lt).extent()[0]);
    return std::sqrt(sum_of_squares / (n * n * n));
  }

  int lt;
  int one_task_levels = 0;  // levels 1..K in one task per V-cycle (0: none)
  static constexpr int kMaxOneTaskLevels = 8;
  double a0 = -8.0 / 3.0, a2 = 1.0 / 6.0, a3 = 1.0 / 12.0;    // a1 = 0
  double c0 = -3.0 / 8.0, c1 = 1.0 / 32.0, c2 = -1.0 / 64.0;  // S(a), classes S, W, A (c3 = 0)

  // The S(b) smoother of classes B and larger.
  void use_smoother_b() {
    c0 = -3.0 / 17.0;
    c1 = 1.0 / 33.0;
    c2 = -1.0 / 61.0;
  }

 private:
  template <std::size_t... I>
  void submit_coarse_cycle(const CoarseCycle& body, std::index_sequence<I...>) {
    if (body.start || body.norms)
      coarse.submit(body, tessera::read_tile(*v, 0), tessera::update_tile(U(I + 1), 0)...,
                    tessera::update_tile(R(I + 1), 0)..., tessera::write_tile(*planes, 0));
    else
      coarse.submit(body, tessera::read_tile(*v, 0), tessera::update_tile(U(I + 1), 0)...,
                    tessera::update_tile(R(I + 1), 0)...);
  }
  // Restriction from level K down, smoothing and prolongation up to K (CoarseCycle, in place:
  // no swaps); `then_resid`: and the top residual, when K is the top; `cycles` times; `start`
  // and `norms`: as CoarseCycle's (K the top).
  void coarse_cycle(bool then_resid = false, int cycles = 1, bool start = false,
                    bool norms = false) {
    const int k = one_task_levels;
    const CoarseCycle body{
        Resid{a0, a2, a3}, Psinv{c0, c1, c2, false}, k, k == lt, then_resid, cycles, start, norms};
    switch (k) {
      case 1: submit_coarse_cycle(body, std::make_index_sequence<1>{}); break;
      case 2: submit_coarse_cycle(body, std::make_index_sequence<2>{}); break;
      case 3: submit_coarse_cycle(body, std::make_index_sequence<3>{}); break;
      case 4: submit_coarse_cycle(body, std::make_index_sequence<4>{}); break;
      case 5: submit_coarse_cycle(body, std::make_index_sequence<5>{}); break;
      case 6: submit_coarse_cycle(body, std::make_index_sequence<6>{}); break;
      case 7: submit_coarse_cycle(body, std::make_index_sequence<7>{}); break;
      default: submit_coarse_cycle(body, std::make_index_sequence<kMaxOneTaskLevels>{}); break;
    }
  }
  tessera::Field<double, 3>& T(int k) { return *t[static_cast<std::size_t>(k - 1)]; }
  void smooth(int k, bool from_zero) {
    if (slabs(k)) {  // u = u + C r in place
      for (int t = 0; t < grid(k).tiles(); ++t)
        psinv_slab.submit(slab::Psinv{Psinv{c0, c1, c2, from_zero}}, below(R(k), t),
                          tessera::read_tile(R(k), t), above(R(k), t),
                          tessera::update_tile(U(k), t));
      return;
    }
    psinv.apply(Psinv{c0, c1, c2, from_zero}, tessera::in(R(k), tessera::centre(U(k))),
                tessera::out(T(k)));
    tessera::swap(U(k), T(k));
  }
  // Level k runs resid and psinv as slab tasks (namespace slab): at least 3 z slabs (so that a
  // slab's neighbours are two other tiles), all on one rank (reading a neighbour moves no data).
  bool slabs(int k) const {
    const tessera::Grid<3>& g = grid(k);
    if (g.tiles() < 3 || g.tile()[0] != g.extent()[0] || g.tile()[1] != g.extent()[1]) return false;
    for (int t = 0; t < g.tiles(); ++t)
      if (tessera::tile_of(u[static_cast<std::size_t>(k - 1)], t).owner !=
          tessera::tile_of(u[static_cast<std::size_t>(k - 1)], 0).owner)
        return false;
    return true;
  }
  static tessera::TileUse<double, 3, tessera::Mode::Read> below(const tessera::Field<double, 3>& f,
                                                                int t) {
    return tessera::read_tile(f, (t + f.grid().tiles() - 1) % f.grid().tiles());
  }
  static tessera::TileUse<double, 3, tessera::Mode::Read> above(const tessera::Field<double, 3>& f,
                                                                int t) {
    return tessera::read_tile(f, (t + 1) % f.grid().tiles());
  }

  std::vector<tessera::Field<double, 3>> u, r;
  std::vector<std::unique_ptr<tessera::Field<double, 3>>>
      t;  // null where no stencil double-buffers
  std::unique_ptr<tessera::Field<double, 3>> v;
  tessera::Stencil<3> resid{"mg-resid", tessera::Shape::Box, 1},
      psinv{"mg-psinv", tessera::Shape::Box, 1};
  tessera::Restriction<3> rprj3{"mg-rprj3"};
  tessera::Prolongation<3> interp{"mg-interp"};
  std::unique_ptr<tessera::Field<double, 3>>
      planes;  // PlaneNorms' exact sum and max per top z plane
  tessera::Loop<3> set{"mg-set"};
  tessera::Task norm{"mg-norm"};
  tessera::Task coarse{"mg-coarse"}, resid_slab{"mg-resid-slab"}, psinv_slab{"mg-psinv-slab"};
};

}  // namespace apps
