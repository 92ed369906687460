// The one per-tile point loop behind stencils, loops and reductions: the user's functor at every
// point of a tile's window, called with its accessors in the user's order and its reducers.
// Buffers: the fields read (In), then the fields written (Out, InOut), then, with reductions,
// one buffer of partial results: one ReduceSlot per reduction (the tile's), then 2 doubles per
// reduction per row of the window (a CUDA task's rows' Min and Max values).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/access.hpp"
#include "tessera/detail/kernel_launch.hpp"

namespace tessera::detail {

template <class... T>
struct TypeList {};

template <class A>
struct AccessOf;
template <class T>
struct AccessOf<In<T>> {
  static constexpr bool reads = true;
  using type = T;
};
template <class T>
struct AccessOf<Out<T>> {
  static constexpr bool reads = false;
  using type = T;
};
template <class T>
struct AccessOf<InOut<T>> {
  static constexpr bool reads = false;
  using type = T;
};

template <int N>
struct AccessRules {
  AccessRule rule[N];
};
struct NoAccessRules {};

/// Whether a functor has an interior fast path: a member `interior` with operator()'s
/// parameters, for the points whose whole neighbourhood lies inside the grid (docs/api.md).
template <class F, class = void>
struct HasInterior : std::false_type {};
template <class F>
struct HasInterior<F, std::void_t<decltype(&F::interior)>> : std::true_type {};

/// Whether a reduction's functor contributes exactly one value per point, given by
/// `double F::value(Index, accessors...)`: it says so with `using OneValuePerPoint = void;`
/// (tessera::sum, min, max).
template <class F, class = void>
struct HasValue : std::false_type {};
template <class F>
struct HasValue<F, std::void_t<typename F::OneValuePerPoint>> : std::true_type {};

/// The global index box [lo, hi) where a functor's `interior` runs on CPU workers (a stencil's
/// points at least its radius from every non-periodic face); empty, as made, for loops.
struct InnerBox {
  std::int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
};
struct NoInnerBox {};

/// What the argument block carries besides the frame: the user's functor, in checking mode one
/// access rule per input, and for a functor with an interior fast path the box where it runs.
template <class F, int NIn>
struct Payload {
  F f;
  std::conditional_t<(TESSERA_CHECKED_ACCESS != 0 && NIn > 0), AccessRules<NIn>, NoAccessRules>
      rules;
  std::conditional_t<HasInterior<F>::value, InnerBox, NoInnerBox> inner;
};

template <int D, class F, class Accessors, class Reductions>
struct TilePoints;

template <int D, class F, class... A, class... R>
struct TilePoints<D, F, TypeList<A...>, TypeList<R...>> {
  static constexpr int kFields = static_cast<int>(sizeof...(A));
  static constexpr int kIn = (0 + ... + (AccessOf<A>::reads ? 1 : 0));
  static constexpr int kReduce = static_cast<int>(sizeof...(R));
  static constexpr int kExtrema = (0 + ... + (std::is_same_v<R, Sum> ? 0 : 1));
  static constexpr int kBuffers = kFields + (kReduce > 0 ? 1 : 0);
  // One Sum of one value per point: CPU rows feed the batch directly.
  static constexpr bool kSumOfValues = kReduce == 1 && kExtrema == 0 && HasValue<F>::value;
  using Args = TileArgs<Payload<F, kIn>, kFields>;

  /// The buffer (and frame field) of accessor j: reads first, then writes, each in order.
  TESSERA_HD static constexpr int buffer_of(int j) {
    constexpr bool reads[] = {AccessOf<A>::reads..., false};
    int before = 0;
    for (int k = 0; k < j; ++k) before += reads[k] == reads[j] ? 1 : 0;
    return reads[j] ? before : kIn + before;
  }

  template <std::size_t J>
  TESSERA_HD static auto accessor(const Args& a, void* const* base, std::int64_t x, std::int64_t y,
                                  std::int64_t z) {
    using Acc = std::tuple_element_t<J, std::tuple<A...>>;
    using T = typename AccessOf<Acc>::type;
    constexpr int b = buffer_of(static_cast<int>(J));
    const TileFrame<kFields>& t = a.frame;
    const std::int64_t at = t.offset0(b) + x + y * t.sy(b) + z * t.sz(b);
    if constexpr (AccessOf<Acc>::reads) {
#if TESSERA_CHECKED_ACCESS
      return Acc{static_cast<const T*>(base[b]) + at, t.sy(b), t.sz(b), &a.f.rules.rule[b]};
#else
      return Acc{static_cast<const T*>(base[b]) + at, t.sy(b), t.sz(b)};
#endif
    } else {
      return Acc{static_cast<T*>(base[b]) + at};
    }
  }

  template <std::size_t... J, std::size_t... K>
  TESSERA_HD static void call(const Args& a, void* const* base, std::int64_t x, std::int64_t y,
                              std::int64_t z, ReducePartial* parts, std::index_sequence<J...>,
                              std::index_sequence<K...>) {
    const TileFrame<kFields>& t = a.frame;
    Index<D> idx;
    idx[0] = t.origin(0) + x;
    idx[1] = t.origin(1) + y;
    if constexpr (D == 3) idx[2] = t.origin(2) + z;
    a.f.f(idx, accessor<J>(a, base, x, y, z)..., Reducer<R>{parts + K}...);
  }

  /// The one place the user's functor is called, by both backends. `parts`: this row's
  /// partial results (one per reduction), unused without reductions.
  TESSERA_HD static void point(const Args& a, void* const* base, std::int64_t x, std::int64_t y,
                               std::int64_t z, ReducePartial* parts = nullptr) {
    call(a, base, x, y, z, parts, std::index_sequence_for<A...>{}, std::index_sequence_for<R...>{});
  }

  // ---- Reductions ----------------------------------------------------------------------------
  // A row's partial results live in registers (ReducePartial); at the row's end a Sum's goes
  // into the tile's accumulator (exact, in any order: on a GPU by integer atomics from every
  // row's thread), a Min's or Max's into the tile's slot (CPU) or the row's (CUDA, folded after).

  /// Reduction k's operation.
  TESSERA_HD static constexpr ReduceOp op(int k) {
    constexpr ReduceOp ops[] = {op_of<R>()..., ReduceOp::Sum};
    return ops[k];
  }

  /// The tile's results, one ReduceSlot per reduction.
  TESSERA_HD static ReduceSlot* tile_slots(void* const* base) {
    return static_cast<ReduceSlot*>(base[kFields]);
  }
  /// Row r's (r = y + z * ny) Min and Max results (value, any) after the tile's slots.
  TESSERA_HD static double* row_extrema(const Args& a, void* const* base, std::int64_t r) {
    (void)a;
    return reinterpret_cast<double*>(tile_slots(base) + kReduce) + 2 * kReduce * r;
  }

  TESSERA_HD static void start_row(void* const* base, ReducePartial* parts) {
    for (int k = 0; k < kReduce; ++k) {
      parts[k] = ReducePartial{};
      parts[k].exact = &tile_slots(base)[k].sum;
    }
  }
  /// A row's results into the tile: a Sum's expansion into its accumulator (a CPU's batch goes
  /// there at the window's end), a Min's or Max's into the tile's slot, or into `row_out` when
  /// given (CUDA).
  TESSERA_HD static void finish_row(void* const* base, ReducePartial* parts, double* row_out) {
    ReduceSlot* tile = tile_slots(base);
    for (int k = 0; k < kReduce; ++k) {
      const ReducePartial& p = parts[k];
      if (op(k) == ReduceOp::Sum) {
        parts[k].sum.flush(tile[k].sum);
      } else if (row_out != nullptr) {
        row_out[2 * k] = p.value;
        row_out[2 * k + 1] = p.any ? 1.0 : 0.0;
      } else if (p.any) {
        tile[k].value = tile[k].any != 0.0 ? extremum(op(k), tile[k].value, p.value) : p.value;
        tile[k].any = 1.0;
      }
    }
  }

  /// One row in x order (the CUDA row kernel: one thread per row).
  TESSERA_HD static void row(const Args& a, void* const* base, std::int64_t y, std::int64_t z) {
    ReducePartial parts[kReduce > 0 ? kReduce : 1];
    start_row(base, parts);
    for (std::int64_t x = 0; x < a.frame.extent(0); ++x) point(a, base, x, y, z, parts);
    finish_row(base, parts, row_extrema(a, base, y + z * a.frame.extent(1)));
  }

  // ---- The CPU row loop ----------------------------------------------------------------------
  // The same points and the same calls as row(), written so that compilers vectorise it for
  // every element type and shape: each accessor's row start and strides are computed once per
  // row into locals (an 8-bit output could otherwise alias the frame, which would then be
  // reloaded at every point), the functor is a local copy, and without reductions the x loop
  // is `omp simd`: points are independent (no input is also written, checked before
  // submission; each point writes only itself and reads an in-place field only at itself), so
  // any vector order gives the same bits.
  // With reductions the loop stays sequential (a row's partial results are one chain).

  template <std::size_t J>
  using ElementOf = typename AccessOf<std::tuple_element_t<J, std::tuple<A...>>>::type;

  /// Accessor J's element at (0, y, z) of the window: const for inputs.
  template <std::size_t J>
  static auto row_start(const Args& a, void* const* base, std::int64_t y, std::int64_t z) {
    using T = ElementOf<J>;
    constexpr int b = buffer_of(static_cast<int>(J));
    const TileFrame<kFields>& t = a.frame;
    const std::int64_t at = t.offset0(b) + y * t.sy(b) + z * t.sz(b);
    if constexpr (AccessOf<std::tuple_element_t<J, std::tuple<A...>>>::reads)
      return static_cast<const T*>(base[b]) + at;
    else
      return static_cast<T*>(base[b]) + at;
  }

  template <std::size_t J, class P>
  static auto at_point(const Args& a, P p, std::int64_t sy, std::int64_t sz) {
    using Acc = std::tuple_element_t<J, std::tuple<A...>>;
    if constexpr (AccessOf<Acc>::reads) {
#if TESSERA_CHECKED_ACCESS
      return Acc{p, sy, sz, &a.f.rules.rule[buffer_of(static_cast<int>(J))]};
#else
      (void)a;
      return Acc{p, sy, sz};
#endif
    } else {
      (void)a, (void)sy, (void)sz;
      return Acc{p};
    }
  }

  /// The points [from, to) of one row: the functor, or its interior fast path.
  template <bool Inner, class Rows, std::size_t... J>
  static void cpu_points(const Args& a, const F& f, Index<D> idx, std::int64_t x0,
                         std::int64_t from, std::int64_t to, const Rows& rows,
                         const std::int64_t* sy, const std::int64_t* sz,
                         std::index_sequence<J...>) {
    TESSERA_SIMD
    for (std::int64_t x = from; x < to; ++x) {
      Index<D> i = idx;
      i[0] = x0 + x;
      if constexpr (Inner)
        f.interior(i, at_point<J>(a, std::get<J>(rows) + x, sy[J], sz[J])...);
      else
        f(i, at_point<J>(a, std::get<J>(rows) + x, sy[J], sz[J])...);
    }
  }

  template <std::size_t... J, std::size_t... K>
  static void cpu_row(const Args& a, const F& f, void* const* base, SumBatch* batch, std::int64_t y,
                      std::int64_t z, std::index_sequence<J...> fields, std::index_sequence<K...>) {
    const TileFrame<kFields>& t = a.frame;
    const std::int64_t nx = t.extent(0), x0 = t.origin(0);
    const std::tuple<decltype(row_start<J>(a, base, y, z))...> rows{row_start<J>(a, base, y, z)...};
    const std::int64_t sy[] = {t.sy(buffer_of(static_cast<int>(J)))..., 0};
    const std::int64_t sz[] = {t.sz(buffer_of(static_cast<int>(J)))..., 0};
    Index<D> idx;
    idx[0] = x0;
    idx[1] = t.origin(1) + y;
    if constexpr (D == 3) idx[2] = t.origin(2) + z;
    if constexpr (kReduce == 0) {
      if constexpr (HasInterior<F>::value) {
        // The row's part inside the box runs the fast path; a row outside it, or the points
        // before and after that part, the functor itself.
        const InnerBox& in = a.f.inner;
        bool row_inside = idx[1] >= in.lo[1] && idx[1] < in.hi[1];
        if constexpr (D == 3) row_inside = row_inside && idx[2] >= in.lo[2] && idx[2] < in.hi[2];
        std::int64_t xa = nx, xb = nx;
        if (row_inside) {
          xa = std::clamp(in.lo[0] - x0, std::int64_t{0}, nx);
          xb = std::clamp(in.hi[0] - x0, xa, nx);
        }
        cpu_points<false>(a, f, idx, x0, 0, xa, rows, sy, sz, fields);
        cpu_points<true>(a, f, idx, x0, xa, xb, rows, sy, sz, fields);
        cpu_points<false>(a, f, idx, x0, xb, nx, rows, sy, sz, fields);
      } else {
        cpu_points<false>(a, f, idx, x0, 0, nx, rows, sy, sz, fields);
      }
    } else if constexpr (kSumOfValues) {
      batch[0].add_each(
          nx,
          [&](std::int64_t x) {
            Index<D> i = idx;
            i[0] = x0 + x;
            return f.value(i, at_point<J>(a, std::get<J>(rows) + x, sy[J], sz[J])...);
          },
          tile_slots(base)[0].sum);
    } else {
      ReducePartial parts[kReduce];
      start_row(base, parts);
      for (int k = 0; k < kReduce; ++k)
        if (op(k) == ReduceOp::Sum) parts[k].batch = &batch[k];
      for (std::int64_t x = 0; x < nx; ++x) {
        Index<D> i = idx;
        i[0] = x0 + x;
        f(i, at_point<J>(a, std::get<J>(rows) + x, sy[J], sz[J])..., Reducer<R>{parts + K}...);
      }
      finish_row(base, parts, nullptr);
    }
  }

  /// Rows of one y-block of the window visited for every z before the next block: a 3-D stencil
  /// then finds the planes it re-reads (z - 1, z + 1) in cache when whole planes would not fit.
  /// Row order does not change any result (rows are independent, sums are exact; Min and Max
  /// differ by order only between -0 and +0, or with a nan).
  static std::int64_t y_block(const Args& a) {
    std::size_t bytes_per_point = 0;
    ((bytes_per_point += AccessOf<A>::reads ? sizeof(typename AccessOf<A>::type) : 0), ...);
    const std::int64_t plane =
        a.frame.extent(0) * a.frame.extent(1) * static_cast<std::int64_t>(bytes_per_point);
    if (D < 3 || a.frame.extent(2) < 4 || plane <= kPlaneBytes) return a.frame.extent(1);
    const std::int64_t rows =
        kPlaneBytes / (a.frame.extent(0) * static_cast<std::int64_t>(bytes_per_point) + 1);
    return rows < 4 ? 4 : rows;
  }
  static constexpr std::int64_t kPlaneBytes = 256 * 1024;  // per input plane (of 3 re-read)

  /// Every row of the frame's window on the CPU (temporal blocks call it for each box of
  /// their widened windows). Sums: one batch per reduction for the whole window (the rows run
  /// one after another in this thread), into the tile's accumulator at the end.
  static void cpu_window(const Args& a, void* const* base) {
    if constexpr (kReduce == 0) {
      cpu_rows(a, base, nullptr);
    } else {
      SumBatch batch[kReduce];
      cpu_rows(a, base, batch);
      for (int k = 0; k < kReduce; ++k)
        if (op(k) == ReduceOp::Sum) batch[k].flush(tile_slots(base)[k].sum);
    }
  }
  static void cpu_rows(const Args& a, void* const* base, SumBatch* batch) {
    parallel_rows(a.frame.extent(1), a.frame.extent(2), y_block(a),
                  [&](std::int64_t y, std::int64_t z) {
                    const F f = a.f.f;  // a local the loop may keep in registers
                    cpu_row(a, f, base, batch, y, z, std::index_sequence_for<A...>{},
                            std::index_sequence_for<R...>{});
                  });
  }

  static void cpu(void** buffers, void* arg) {
    const Args a = *static_cast<const Args*>(arg);  // a local copy: no aliasing with outputs
    void* base[kBuffers];
    for (int k = 0; k < kBuffers; ++k) base[k] = buffer_data(buffers, k);
    for (int k = 0; k < kReduce; ++k) tile_slots(base)[k] = ReduceSlot{};
    cpu_window(a, base);
  }

#if TESSERA_CUDA_BODIES
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    Pointers<kBuffers> base;
    for (int k = 0; k < kBuffers; ++k) base.p[k] = buffer_data(buffers, k);
    if constexpr (kReduce == 0)
      launch_points<TilePoints>(a, base);
    else
      launch_rows<TilePoints>(a, base);
  }
#endif

  /// The task kind: inputs read, the rest (outputs, partial results) `rest`.
  static TaskKind kind(const char* name, Access rest, bool untimed = false) {
#if TESSERA_CUDA_BODIES
    return {name, Access::Read, rest, &cpu, &cuda, untimed};
#else
    return {name, Access::Read, rest, &cpu, nullptr, untimed};
#endif
  }
};

/// Copies `text` into a fixed-size field of an access rule, truncated.
template <std::size_t N>
void copy_name(char (&to)[N], const std::string& text) {
  std::size_t n = text.size() < N - 1 ? text.size() : N - 1;
  for (std::size_t i = 0; i < n; ++i) to[i] = text[i];
  to[n] = '\0';
}

}  // namespace tessera::detail
