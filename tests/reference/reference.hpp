// The oracle: a plain serial whole-grid implementation, never optimised. It pads each input
// with ghost layers by the ghost value rule and calls the user's point functor at every point.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <tessera/boundary.hpp>
#include <tessera/stencil.hpp>

#include "tests/reference/fsum.hpp"

namespace reference {

template <int D>
struct Domain {
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<bool, 3> periodic{};
};

// Per face ([axis][side]) the function of a Function face: f(ghost index, mirrored value).
template <class T, int D>
using FaceFunctions = std::array<std::array<std::function<T(tessera::Index<D>, T)>, 2>, 3>;

template <class T, int D>
struct RefField {
  std::vector<T> values;  // x fastest
  tessera::Boundaries<D> bc;
  // The Function faces' functions, given to the oracle directly (the library's copy is
  // compiled into its tasks): f(global index of the ghost point, mirrored interior value).
  FaceFunctions<T, D> functions{};
};

template <class T>
struct Padded {
  std::vector<T> v;
  std::int64_t sy = 0, sz = 0, origin = 0;  // origin: offset of interior point (0,0,0)
};

// The ghost value rule: wrap periodic axes, mirror Neumann and Function faces (-1-i) and
// NeumannVertex faces (-i); the constant of the lowest axis that lands on a Dirichlet face;
// else the function of the lowest axis that lands on a Function face, of the ghost point's
// index and the value at the mapped point; else the value at the mapped point.
template <class T, int D>
T ghost_value(const Domain<D>& dom, const RefField<T, D>& f, std::array<std::int64_t, 3> p) {
  std::optional<double> constant;
  const std::function<T(tessera::Index<D>, T)>* function = nullptr;
  tessera::Index<D> ghost;
  for (int a = 0; a < D; ++a) ghost[a] = p[a];
  for (int a = 0; a < D; ++a) {
    const std::int64_t n = dom.n[a];
    if (p[a] >= 0 && p[a] < n) continue;
    const int side = p[a] < 0 ? 0 : 1;
    const tessera::Boundary b =
        dom.periodic[a] ? tessera::Boundary::periodic() : f.bc.face[a][side];
    if (b.kind == tessera::Boundary::Kind::Periodic) {
      p[a] = ((p[a] % n) + n) % n;
    } else if (b.kind == tessera::Boundary::Kind::Neumann ||
               b.kind == tessera::Boundary::Kind::Function) {
      if (b.kind == tessera::Boundary::Kind::Function && function == nullptr)
        function = &f.functions[a][side];
      p[a] = p[a] < 0 ? -1 - p[a] : 2 * n - 1 - p[a];
    } else if (b.kind == tessera::Boundary::Kind::NeumannVertex) {
      p[a] = p[a] < 0 ? -p[a] : 2 * (n - 1) - p[a];
    } else {
      if (!constant) constant = b.value;
      p[a] = 0;
    }
  }
  if (constant) return static_cast<T>(*constant);
  const T mapped = f.values[static_cast<std::size_t>(p[0] + dom.n[0] * (p[1] + dom.n[1] * p[2]))];
  return function != nullptr ? (*function)(ghost, mapped) : mapped;
}

template <class T, int D>
Padded<T> pad(const Domain<D>& dom, const RefField<T, D>& f, int r) {
  const int rz = D == 3 ? r : 0;
  Padded<T> out;
  const std::int64_t px = dom.n[0] + 2 * r, py = dom.n[1] + 2 * r, pz = dom.n[2] + 2 * rz;
  out.sy = px;
  out.sz = px * py;
  out.origin = r + r * out.sy + rz * out.sz;
  out.v.resize(static_cast<std::size_t>(px * py * pz));
  for (std::int64_t z = -rz; z < dom.n[2] + rz; ++z)
    for (std::int64_t y = -r; y < dom.n[1] + r; ++y)
      for (std::int64_t x = -r; x < dom.n[0] + r; ++x)
        out.v[static_cast<std::size_t>(out.origin + x + y * out.sy + z * out.sz)] =
            ghost_value(dom, f, {x, y, z});
  return out;
}

// One application of functor f: inputs padded by radius r, outputs written at every point.
template <int D, class F, class... Ts, class... Us, std::size_t... Is, std::size_t... Os>
void apply_impl(const Domain<D>& dom, int r, const F& f, const std::tuple<RefField<Ts, D>*...>& in,
                const std::tuple<std::vector<Us>*...>& out, std::index_sequence<Is...>,
                std::index_sequence<Os...>) {
  auto padded = std::make_tuple(pad(dom, *std::get<Is>(in), r)...);
  for (std::int64_t z = 0; z < dom.n[2]; ++z)
    for (std::int64_t y = 0; y < dom.n[1]; ++y)
      for (std::int64_t x = 0; x < dom.n[0]; ++x) {
        tessera::Index<D> idx;
        idx[0] = x;
        idx[1] = y;
        if constexpr (D == 3) idx[2] = z;
        const std::int64_t g = x + dom.n[0] * (y + dom.n[1] * z);
        f(idx,
          tessera::In<Ts>{std::get<Is>(padded).v.data() + std::get<Is>(padded).origin + x +
                              y * std::get<Is>(padded).sy + z * std::get<Is>(padded).sz,
                          std::get<Is>(padded).sy, std::get<Is>(padded).sz}...,
          tessera::Out<Us>{&(*std::get<Os>(out))[static_cast<std::size_t>(g)]}...);
      }
}

template <int D, class F, class... Ts, class... Us>
void apply(const Domain<D>& dom, int r, const F& f, std::tuple<RefField<Ts, D>*...> in,
           std::tuple<std::vector<Us>*...> out) {
  apply_impl(dom, r, f, in, out, std::index_sequence_for<Ts...>{},
             std::index_sequence_for<Us...>{});
}

// The exact sum of the values rounded once (reference::fsum, independent of the library's
// accumulator): what tessera::sum gives for any tiling.
template <class T>
double exact_sum(const std::vector<T>& values) {
  return fsum(std::vector<double>(values.begin(), values.end()));
}

// One value into a Min's or Max's partial result (value, any), written independently of the
// library.
inline void fold(tessera::detail::ReduceOp op, double* slot, double v) {
  using tessera::detail::ReduceOp;
  if (slot[1] == 0)
    slot[0] = v;
  else if (op == ReduceOp::Min)
    slot[0] = v < slot[0] ? v : slot[0];
  else
    slot[0] = v > slot[0] ? v : slot[0];
  slot[1] = 1;
}

// The partial results a reference loop's functor writes into: one per reduction, made into
// Reducers as Reducer<Tag>{parts + k}.
using Partial = tessera::detail::ReducePartial;

// A pointwise loop over the box [lo, hi) (global indices, unused axes 0..1) of a grid cut in
// tiles of `tile`, with K reductions of ops `ops`: call(idx, flat, parts) applies the user's
// functor at one point (flat: its x-fastest index), its Reducers writing into `parts` (one per
// reduction). Points are visited the way Tessera visits them: each tile's window row by row in
// x order, rows in order, tiles in tile order. A Sum is the exact sum of every point's
// contribution (reference::fsum; a point's contributions, if several, are added first), a Min
// or Max folds in that order. Returns the reductions (0, +inf, -inf when nothing was
// contributed).
template <int D, std::size_t K, class Call>
std::array<double, K> loop(const Domain<D>& dom, std::array<std::int64_t, 3> tile,
                           std::array<std::int64_t, 3> lo, std::array<std::int64_t, 3> hi,
                           std::array<tessera::detail::ReduceOp, K> ops, Call call) {
  using tessera::detail::ReduceOp;
  std::array<std::int64_t, 3> count{};
  for (int a = 0; a < 3; ++a) count[a] = (dom.n[a] + tile[a] - 1) / tile[a];
  std::array<double, 2 * K + 1> total{};
  std::array<std::vector<double>, K + 1> contributions;
  for (std::int64_t tz = 0; tz < count[2]; ++tz)
    for (std::int64_t ty = 0; ty < count[1]; ++ty)
      for (std::int64_t tx = 0; tx < count[0]; ++tx) {
        const std::array<std::int64_t, 3> t{tx, ty, tz};
        std::array<std::int64_t, 3> a0{}, a1{};
        for (int a = 0; a < 3; ++a) {
          a0[a] = std::max(t[a] * tile[a], lo[a]);
          a1[a] = std::min(std::min(dom.n[a], (t[a] + 1) * tile[a]), hi[a]);
        }
        for (std::int64_t z = a0[2]; z < a1[2]; ++z)
          for (std::int64_t y = a0[1]; y < a1[1]; ++y)
            for (std::int64_t x = a0[0]; x < a1[0]; ++x) {
              tessera::Index<D> idx;
              idx[0] = x;
              idx[1] = y;
              if constexpr (D == 3) idx[2] = z;
              std::array<tessera::detail::ExactSum, K + 1> point_sum{};
              std::array<Partial, K + 1> parts{};
              for (std::size_t k = 0; k < K; ++k) parts[k].exact = &point_sum[k];
              call(idx, static_cast<std::size_t>(x + dom.n[0] * (y + dom.n[1] * z)), parts.data());
              for (std::size_t k = 0; k < K; ++k) {
                if (ops[k] == ReduceOp::Sum) {
                  if (!parts[k].sum.any) continue;
                  parts[k].sum.flush(point_sum[k]);
                  contributions[k].push_back(point_sum[k].round());
                } else if (parts[k].any) {
                  fold(ops[k], &total[2 * k], parts[k].value);
                }
              }
            }
      }
  std::array<double, K> out{};
  for (std::size_t k = 0; k < K; ++k)
    out[k] = ops[k] == ReduceOp::Sum   ? fsum(contributions[k])
             : total[2 * k + 1] != 0   ? total[2 * k]
             : ops[k] == ReduceOp::Min ? std::numeric_limits<double>::infinity()
                                       : -std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace reference
