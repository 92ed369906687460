// Reductions over a field's interior: sum, min, max and the sum of a point function, each one
// task per tile through the loop machinery (tessera/loop.hpp has the general form: several
// reductions of a function of several fields, fused in one pass, non-blocking).
// Sums are exact and rounded once (tessera/detail/exact_sum.hpp): the result is the same bits
// for any tiling, scheduling, worker count, rank count or backend. Min and max are the extreme
// values.
#pragma once

#include "tessera/loop.hpp"

namespace tessera {

/// The exact sum of any doubles, rounded once by round(), for sums in user tasks that must give
/// Tessera's bits: add(v), merge(other); a SumFront in front of it makes adding cheap:
///   tessera::ExactSum total{};  tessera::SumFront f;
///   for (double v : values) f.add(v, total);
///   f.flush(total);  double s = total.round();
using detail::ExactSum;
using detail::SumFront;

namespace detail {

template <class T>
struct AsDouble {
  TESSERA_HD double operator()(T v) const { return static_cast<double>(v); }
};

// Contributes g(value) of every point to one reduction: exactly one value per point, which
// `value` gives (CPU rows of a Sum then fill their batch without a branch per point).
template <class G, class Tag>
struct ReduceValue {
  using OneValuePerPoint = void;
  G g;
  template <int D, class T>
  TESSERA_HD double value(Index<D>, In<T> u) const {
    return g(u());
  }
  template <int D, class T>
  TESSERA_HD void operator()(Index<D> i, In<T> u, Reducer<Tag> r) const {
    r(value(i, u));
  }
};

// `what` names the task kind: "sum", "sum-of", "min" or "max". Blocks.
template <class Tag, class T, int D, class G>
double reduce(const Field<T, D>& field, const G& g, const char* what) {
  using K = TilePoints<D, ReduceValue<G, Tag>, TypeList<In<T>>, TypeList<Tag>>;
  typename K::Args prototype{{}, {{g}, {}}};
  set_rules(prototype, {access_rule("reduction", field.storage(), 0, D, false, false)});
  auto pending =
      apply_loop("reduce", K::kind(what, Access::ReadWrite, /*untimed=*/true), {&field.storage()},
                 {}, {}, LoopBox{}, ArgBlock::of(prototype), {op_of<Tag>()}, true);
  return finish_reduction(*pending)[0];
}

}  // namespace detail

/// Sum of the interior values, exact and rounded once: double total = tessera::sum(u);
template <class T, int D>
double sum(const Field<T, D>& f) {
  return detail::reduce<Sum>(f, detail::AsDouble<T>{}, "sum");
}
/// Sum of g(value) over the interior (exact, rounded once); g is a trivially copyable TESSERA_HD
/// functor T -> double.
template <class T, int D, class G>
double sum(const Field<T, D>& f, const G& g) {
  return detail::reduce<Sum>(f, g, "sum-of");
}
/// Smallest interior value.
template <class T, int D>
double min(const Field<T, D>& f) {
  return detail::reduce<Min>(f, detail::AsDouble<T>{}, "min");
}
/// Largest interior value.
template <class T, int D>
double max(const Field<T, D>& f) {
  return detail::reduce<Max>(f, detail::AsDouble<T>{}, "max");
}

}  // namespace tessera
