// Temporal blocking: several steps of a one-field stencil (u -> next, then next -> u, ...), which
// may also read fields that the steps do not change (a source term) and update fields in place
// at the point (the state of a point's ODE), in one task per tile, after one exchange of ghost
// layers deep enough for all of them.
//
// Step j of a block of b computes the tile's interior widened by (b - 1 - j) * radius on every
// side, so that step j + 1 finds its ghost layers already up to date: the points a neighbour
// tile owns are computed twice, by the same arithmetic from the same values, so the result is
// bitwise the one of b separate steps. Widened windows stop at Dirichlet faces (whose ghost
// values never change) and wrap around periodic ones (the window is cut at the face and the
// ghost part is given the wrapped global index, as the tile across the face computes it).
// At mirror faces (Neumann, cell- or vertex-centred) the ghost values follow the interior: after
// each step the block copies them from the points it just computed (MirrorLayer), so that the
// next step reads what a boundary task would have written.
#pragma once

#include <cstdint>

#include "tessera/detail/tile_points.hpp"

namespace tessera::detail {

/// What a block task knows besides its tile's frame.
struct BlockSpan {
  std::int64_t steps;        // steps in this block
  std::int64_t radius;       // the stencil's
  std::int64_t extent[3];    // the grid's
  std::int64_t periodic[3];  // per axis: 1 when the window may wrap
  // Per face [axis][low, high] of u and next: 0 none (Dirichlet, periodic), 1 cell-centred
  // mirror (Neumann: ghost -k takes point k - 1), 2 vertex-centred (NeumannVertex: point k).
  std::int64_t mirror[3][2];
};

/// Ghost points copied from inside the tile: one layer of a mirror face from its mirror image,
/// or the wrapped columns of a periodic x axis from the columns they wrap to. The points of an
/// extent[0] x extent[1] x extent[2] box from element offset `at` (strides sy, sz), each from
/// the element `from` further. A point loop on both backends (launch_points on CUDA).
template <class T>
struct MirrorLayer {
  static constexpr int kFields = 1;
  struct Box {
    std::int64_t n[3];
    TESSERA_HD std::int64_t extent(int axis) const { return n[axis]; }
  };
  struct Args {
    Box frame;
    std::int64_t at, from, sy, sz;
  };
  TESSERA_HD static void point(const Args& a, void* const* base, std::int64_t x, std::int64_t y,
                               std::int64_t z) {
    T* p = static_cast<T*>(base[0]);
    const std::int64_t i = a.at + x + y * a.sy + z * a.sz;
    p[i] = p[i + a.from];
  }
  static void cpu(const Args& a, void* base) {
    const Args m = a;  // a local: a store through a one-byte T may alias a's fields
    for (std::int64_t z = 0; z < m.frame.n[2]; ++z)
      for (std::int64_t y = 0; y < m.frame.n[1]; ++y)
        for (std::int64_t x = 0; x < m.frame.n[0]; ++x) point(m, &base, x, y, z);
  }
};

/// One cut of a widened window along one axis: where it starts relative to the tile (may be
/// negative: ghost layers), its length, and the global index of its first point.
struct WindowCut {
  std::int64_t start, length, index;
};

/// The cuts of the tile [origin, origin + extent) widened by `margin` on both sides along an
/// axis of `n` points: clipped to [0, n) unless periodic, else cut at 0 and n and wrapped.
/// Returns how many cuts (1 to 3) were written.
inline int window_cuts(std::int64_t origin, std::int64_t extent, std::int64_t margin,
                       std::int64_t n, bool periodic, WindowCut* cut) {
  std::int64_t lo = origin - margin, hi = origin + extent + margin;
  if (!periodic) {
    lo = lo < 0 ? 0 : lo;
    hi = hi > n ? n : hi;
    cut[0] = {lo - origin, hi - lo, lo};
    return 1;
  }
  int count = 0;
  if (lo < 0) cut[count++] = {lo - origin, -lo, lo + n};
  const std::int64_t mid_lo = lo < 0 ? 0 : lo, mid_hi = hi > n ? n : hi;
  cut[count++] = {mid_lo - origin, mid_hi - mid_lo, mid_lo};
  if (hi > n) cut[count++] = {n - origin, hi - n, 0};
  return count;
}

template <int D, class F, class T, class Extras, class State>
struct TimeBlock;

template <int D, class F, class T, class... E, class... S>
struct TimeBlock<D, F, T, TypeList<E...>, TypeList<S...>> {
  static constexpr int kExtra = static_cast<int>(sizeof...(E));
  static constexpr int kFields = kExtra + 2 + static_cast<int>(sizeof...(S));
  /// The point loop of one step: u, then the extra inputs E (read only, the same for every
  /// step), then next, then the fields S updated in place, as the functor takes them:
  /// f(index, In<T> u, In<E> e..., Out<T> next, InOut<S> s...).
  using Points = TilePoints<D, F, TypeList<In<T>, In<E>..., Out<T>, InOut<S>...>, TypeList<>>;
  /// The frame and functor as a stencil step has them, then the block's span. The frame
  /// submitted holds the task's buffers in the task's order: the extra inputs, then u, then
  /// next, then the in-place fields (reads before writes); each_window reorders u and next for
  /// each step.
  struct Args {
    typename Points::Args points;
    BlockSpan span;
  };

  /// The task buffer behind field `k` of step j's point loop (u, extras..., next, in-place
  /// fields...): step j reads u (j even) or next (j odd) and writes the other; an in-place
  /// field is the same buffer at every step.
  static int task_buffer(int k, std::int64_t j) {
    if (k == 0) return kExtra + static_cast<int>(j % 2);
    if (k <= kExtra) return k - 1;
    if (k == kExtra + 1) return kExtra + 1 - static_cast<int>(j % 2);
    return k;
  }

  /// Calls visit(window_args) for each box of step j's window widened by `margin`: the step's
  /// frame with origin, extent and offsets moved to the box, fields in the point loop's order.
  /// With `planes` (tile-relative, [planes[0], planes[1])) the boxes are cut to those planes of
  /// the last axis (z in 3-D, y in 2-D).
  /// With `x_by_copy` and a tile spanning a whole periodic x axis (wraps_whole_x), the window
  /// keeps to x in [0, n): the caller copies the wrapped columns (each_wrapped_x_box).
  template <class Visit>
  static void each_window(const Args& a, std::int64_t j, std::int64_t margin, const Visit& visit,
                          const std::int64_t* planes = nullptr, bool x_by_copy = false) {
    const TileFrame<kFields>& t = a.points.frame;
    WindowCut cuts[3][3];
    int counts[3] = {1, 1, 1};
    for (int axis = 0; axis < 3; ++axis) {
      if (axis < D)
        counts[axis] = window_cuts(t.origin(axis), t.extent(axis), margin, a.span.extent[axis],
                                   a.span.periodic[axis] != 0, cuts[axis]);
      else
        cuts[axis][0] = {0, 1, 0};
    }
    if (x_by_copy && wraps_whole_x(a)) {
      counts[0] = 1;
      cuts[0][0] = {0, t.extent(0), 0};
    }
    if (planes != nullptr)
      for (int c = 0; c < counts[D - 1]; ++c) {
        WindowCut& cut = cuts[D - 1][c];
        const std::int64_t lo = planes[0] > cut.start ? planes[0] : cut.start;
        const std::int64_t hi =
            planes[1] < cut.start + cut.length ? planes[1] : cut.start + cut.length;
        cut = hi > lo ? WindowCut{lo, hi - lo, cut.index + (lo - cut.start)} : WindowCut{0, 0, 0};
      }
    for (int k = 0; k < counts[2]; ++k)
      for (int jy = 0; jy < counts[1]; ++jy)
        for (int i = 0; i < counts[0]; ++i) {
          const WindowCut& x = cuts[0][i];
          const WindowCut& y = cuts[1][jy];
          const WindowCut& z = cuts[2][k];
          if (x.length <= 0 || y.length <= 0 || z.length <= 0) continue;
          typename Points::Args w = a.points;
          w.frame.w[0] = x.index;
          w.frame.w[1] = y.index;
          w.frame.w[2] = z.index;
          w.frame.w[3] = x.length;
          w.frame.w[4] = y.length;
          w.frame.w[5] = z.length;
          for (int b = 0; b < kFields; ++b) {  // each field's own strides (halos may differ)
            const int s = task_buffer(b, j);
            w.frame.w[6 + 3 * b] = t.offset0(s) + x.start + y.start * t.sy(s) + z.start * t.sz(s);
            w.frame.w[7 + 3 * b] = t.sy(s);
            w.frame.w[8 + 3 * b] = t.sz(s);
          }
          visit(w);
        }
  }

  /// A tile spanning the whole of a periodic x axis (a thin slab of a 2-D grid, one tile a row):
  /// its wrapped window parts are a few points at each end of every row, each cut off from the
  /// vector loop and paying a row's setup (a fifth of a 1024-point row of bytes).
  static bool wraps_whole_x(const Args& a) {
    const TileFrame<kFields>& t = a.points.frame;
    return a.span.periodic[0] != 0 && t.origin(0) == 0 && t.extent(0) == a.span.extent[0];
  }

  /// Calls visit(box) for the two boxes of step j's ghost columns beyond x's ends, on the rows
  /// of its window within `planes`, each copied from the columns it wraps to (x - n, x + n)
  /// after step j computed them: a window kept to x in [0, n) then gives step j + 1 what the
  /// wrapped parts would have computed, the same points from the same values, bit for bit.
  /// A radius of columns each side: what step j + 1, kept to x in [0, n) too, reads of them.
  template <class Visit>
  static void each_wrapped_x_box(const Args& a, std::int64_t j, const std::int64_t* planes,
                                 const Visit& visit) {
    const TileFrame<kFields>& t = a.points.frame;
    const std::int64_t margin = (a.span.steps - 1 - j) * a.span.radius;
    if (!wraps_whole_x(a) || margin <= 0) return;
    std::int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    for (int axis = 1; axis < D; ++axis) {  // the window's rows, tile-relative
      WindowCut cuts[3];
      const int n = window_cuts(t.origin(axis), t.extent(axis), margin, a.span.extent[axis],
                                a.span.periodic[axis] != 0, cuts);
      lo[axis] = cuts[0].start;
      hi[axis] = cuts[n - 1].start + cuts[n - 1].length;
    }
    constexpr int L = D - 1;
    if (planes[0] > lo[L]) lo[L] = planes[0];
    if (planes[1] < hi[L]) hi[L] = planes[1];
    if (hi[L] <= lo[L]) return;
    const int s = task_buffer(kExtra + 1, j);  // the buffer step j wrote
    const std::int64_t n = t.extent(0), r = a.span.radius;
    for (const std::int64_t ghost : {-r, n}) {
      typename MirrorLayer<T>::Args m{};
      m.frame.n[0] = r;
      m.frame.n[1] = hi[1] - lo[1];
      m.frame.n[2] = hi[2] - lo[2];
      m.at = t.offset0(s) + ghost + lo[1] * t.sy(s) + lo[2] * t.sz(s);
      m.from = ghost < 0 ? n : -n;
      m.sy = t.sy(s);
      m.sz = t.sz(s);
      visit(m);
    }
  }

  /// Calls visit(layer) for every ghost layer (radius deep) of step j's output beyond the mirror
  /// faces this tile touches: the ghost columns of the lateral faces (x; x then y in 3-D) for
  /// the last-axis planes [planes[0], planes[1]) that step j has just computed (all of its
  /// window without `planes`), then, once their sources are computed, the ghost planes of the
  /// last axis' faces, whole rows. A face refreshed after another spans that one's ghost layers
  /// too, so corners beyond two faces take their mirror of a mirror, as a boundary task fills
  /// them. Step j + 1 reads only these (its window stops at the face) and points of step j's
  /// window, so it finds them current in the wavefront's order.
  template <class Visit>
  static void each_mirror_layer(const Args& a, std::int64_t j, const std::int64_t* planes,
                                const Visit& visit) {
    const TileFrame<kFields>& t = a.points.frame;
    const std::int64_t r = a.span.radius, margin = (a.span.steps - 1 - j) * r;
    constexpr int L = D - 1;  // the last axis
    bool face[3][2] = {};
    bool any = false;
    for (int axis = 0; axis < D; ++axis) {
      face[axis][0] = a.span.mirror[axis][0] != 0 && t.origin(axis) == 0;
      face[axis][1] =
          a.span.mirror[axis][1] != 0 && t.origin(axis) + t.extent(axis) == a.span.extent[axis];
      any = any || face[axis][0] || face[axis][1];
    }
    if (!any) return;
    // Step j's window, tile-relative, per axis (the union of its cuts: contiguous).
    std::int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    for (int axis = 0; axis < D; ++axis) {
      WindowCut cuts[3];
      const int n = window_cuts(t.origin(axis), t.extent(axis), margin, a.span.extent[axis],
                                a.span.periodic[axis] != 0, cuts);
      lo[axis] = cuts[0].start;
      hi[axis] = cuts[n - 1].start + cuts[n - 1].length;
    }
    const std::int64_t p0 = planes != nullptr && planes[0] > lo[L] ? planes[0] : lo[L];
    const std::int64_t p1 = planes != nullptr && planes[1] < hi[L] ? planes[1] : hi[L];
    if (p1 <= p0) return;
    const int s = task_buffer(kExtra + 1, j);  // the buffer step j wrote
    const std::int64_t stride[3] = {1, t.sy(s), t.sz(s)};
    // One layer: `ghost` and its source `from` along `axis`; the box spans [lo, hi) on the other
    // axes, widened by r at the mirror faces of the axes in `done` (already refreshed).
    const auto layer = [&](int axis, std::int64_t ghost, std::int64_t from, std::int64_t plane_lo,
                           std::int64_t plane_hi, const bool* done) {
      typename MirrorLayer<T>::Args m{};
      std::int64_t start[3];
      for (int b = 0; b < 3; ++b) {
        std::int64_t b_lo = lo[b], b_hi = hi[b];
        if (b == L && axis != L) b_lo = plane_lo, b_hi = plane_hi;
        if (b < D && b != axis && done[b]) {
          if (face[b][0]) b_lo -= r;
          if (face[b][1]) b_hi += r;
        }
        if (b == axis) b_lo = ghost, b_hi = ghost + 1;
        start[b] = b_lo;
        m.frame.n[b] = b_hi - b_lo;
      }
      m.at = t.offset0(s) + start[0] + start[1] * stride[1] + start[2] * stride[2];
      m.from = (from - ghost) * stride[axis];
      m.sy = stride[1];
      m.sz = stride[2];
      visit(m);
    };
    bool done[3] = {false, false, false};
    for (int axis = 0; axis < L; ++axis) {
      for (int side = 0; side < 2; ++side) {
        if (!face[axis][side]) continue;
        const bool vertex = a.span.mirror[axis][side] == 2;
        const std::int64_t n = t.extent(axis);
        for (std::int64_t k = 1; k <= r; ++k)
          if (side == 0)
            layer(axis, -k, vertex ? k : k - 1, p0, p1, done);
          else
            layer(axis, n - 1 + k, vertex ? n - 1 - k : n - k, p0, p1, done);
      }
      done[axis] = true;
    }
    const std::int64_t n = t.extent(L);
    if (face[L][0]) {  // the low ghost planes, in the turn that computes their last source
      const bool vertex = a.span.mirror[L][0] == 2;
      const std::int64_t last_source = vertex ? r : r - 1;
      if (p0 <= last_source && last_source < p1)
        for (std::int64_t k = 1; k <= r; ++k) layer(L, -k, vertex ? k : k - 1, 0, 0, done);
    }
    if (face[L][1] && p1 == n) {  // the high ghost planes, in the turn that computes plane n - 1
      const bool vertex = a.span.mirror[L][1] == 2;
      for (std::int64_t k = 1; k <= r; ++k)
        layer(L, n - 1 + k, vertex ? n - 1 - k : n - k, 0, 0, done);
    }
  }

  /// Step j reads u (j even) or next (j odd) and writes the other. On CPU workers the steps
  /// advance together as a wavefront along the last axis: at each turn p, steps 0, 1, ... in
  /// that order compute planes [p - r j, p - r j + c) of their windows, so a block brings each
  /// plane of the tile from memory about once and the planes in flight stay in cache. Step j's
  /// planes read planes up to p - r j + c - 1 + r of step j - 1, which computed them earlier in
  /// the same turn. They overwrite step j - 2's planes below p - r j + c, which step j - 1 read
  /// last for its planes below p - r (j - 1) + c, also computed by then. `c` planes per turn
  /// (a few rows in 2-D, one plane of a large 3-D tile) keep the cost of visiting a window
  /// small next to its points. An in-place field is read and written at the point only: step j
  /// updates plane q after step j - 1 did (same turn, earlier step, or an earlier turn) and
  /// before step j + 1, which trails it; its windows shrink, so every point step j updates was
  /// updated by every step before it.
  static void cpu(void** buffers, void* arg) {
    const Args a = *static_cast<const Args*>(arg);
    void* buffer[kFields];
    for (int k = 0; k < kFields; ++k) buffer[k] = buffer_data(buffers, k);
    const std::int64_t steps = a.span.steps, r = a.span.radius;
    std::int64_t plane_points = 1;
    for (int axis = 0; axis + 1 < D; ++axis) plane_points *= a.points.frame.extent(axis);
    constexpr std::int64_t kTurnPoints = 32768;
    const std::int64_t c = plane_points >= kTurnPoints ? 1 : kTurnPoints / plane_points;
    // Step j's window spans [-(steps - 1 - j) r, extent + (steps - 1 - j) r) and it trails step
    // 0 by r j planes: it reaches its first plane at a turn >= `first` (step 0 at `first`) and
    // its last at turn extent + (steps - 1) r - 1 (every step alike), before `last`.
    const std::int64_t first = -(steps - 1) * r;
    const std::int64_t last = a.points.frame.extent(D - 1) + (steps - 1) * r;
    for (std::int64_t p = first; p < last; p += c)
      for (std::int64_t j = 0; j < steps; ++j) {
        const std::int64_t planes[2] = {p - r * j, p - r * j + c};
        void* base[kFields];
        for (int k = 0; k < kFields; ++k) base[k] = buffer[task_buffer(k, j)];
        each_window(
            a, j, (steps - 1 - j) * r,
            [&](const typename Points::Args& w) { Points::cpu_window(w, base); }, planes, true);
        if (j + 1 < steps) {  // the next step reads step j's wrapped and mirror ghosts
          const auto copy = [&](const typename MirrorLayer<T>::Args& m) {
            MirrorLayer<T>::cpu(m, buffer[task_buffer(kExtra + 1, j)]);
          };
          each_wrapped_x_box(a, j, planes, copy);  // first: mirror rows span the x ghosts
          each_mirror_layer(a, j, planes, copy);
        }
      }
  }

#if TESSERA_CUDA_BODIES
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    for (std::int64_t j = 0; j < a.span.steps; ++j) {
      Pointers<kFields> base;
      for (int k = 0; k < kFields; ++k) base.p[k] = buffer_data(buffers, task_buffer(k, j));
      each_window(a, j, (a.span.steps - 1 - j) * a.span.radius,
                  [&](const typename Points::Args& w) { launch_points<Points>(w, base); });
      if (j + 1 < a.span.steps) {
        Pointers<1> out{{ base.p[kExtra + 1] }};
        each_mirror_layer(a, j, nullptr, [&](const typename MirrorLayer<T>::Args& m) {
          launch_points<MirrorLayer<T>>(m, out);
        });
      }
    }
  }
#endif

  /// The extra inputs are read; u, next and the in-place fields are read and written: u's
  /// and the in-place fields' ghost layers come from the exchange, and every step writes u or
  /// next and updates the in-place fields.
  static TaskKind kind() {
#if TESSERA_CUDA_BODIES
    return {"time-block", Access::Read, Access::ReadWrite, &cpu, &cuda};
#else
    return {"time-block", Access::Read, Access::ReadWrite, &cpu, nullptr};
#endif
  }
};

}  // namespace tessera::detail
