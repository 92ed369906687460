// Pointwise loops: the user writes the update of one point, reading and writing any number of
// fields at that point only; Tessera runs it on every tile (or on the tiles a box meets), one
// task per tile, with no halo exchange. A loop may also produce reductions as a by-product.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tessera/box.hpp"
#include "tessera/stencil.hpp"

namespace tessera {

/// The reductions a loop produces, in the order its functor receives their Reducers:
/// tessera::reductions(tessera::Sum{}, tessera::Min{}, tessera::Max{}).
template <class... Tags>
struct Reductions {};
template <class... Tags>
Reductions<Tags...> reductions(Tags...) {
  return {};
}

namespace detail {

struct PendingReduction;  // the partial results of submitted tasks (core/grid/reduce.cpp)
/// Waits for the tasks, merges every tile's results on every rank (collective; sums exactly,
/// rounded once), and returns one value per reduction. Once only.
std::vector<double> finish_reduction(PendingReduction& pending);

/// The points a loop visits: the whole grid, or [lo, hi).
struct LoopBox {
  bool whole = true;
  Extent3 lo{0, 0, 0}, hi{0, 0, 0};
};

/// Submits one loop (library): checks the fields and the box, then one `kind` task per tile the
/// box meets (reads the inputs' tiles, reads and writes the written fields'; of those,
/// `in_place` are read at the point too: InOut). With `ops`, each task also writes its partial
/// results; the returned object collects them. Returns without waiting.
std::shared_ptr<PendingReduction> apply_loop(const std::string& name, const TaskKind& kind,
                                             const std::vector<FieldStorage*>& reads,
                                             const std::vector<FieldStorage*>& writes,
                                             const std::vector<FieldStorage*>& in_place,
                                             const LoopBox& box, const ArgBlock& args,
                                             const std::vector<ReduceOp>& ops, bool untimed);

template <class G>
struct Group;  // a group of loop arguments: its accessors, whether it reads, its fields
template <class... Fs>
struct Group<Inputs<Fs...>> {
  using accessors = TypeList<In<ValueOf<Fs>>...>;
  using reductions = TypeList<>;
  static constexpr bool reads = true;
  static constexpr bool in_place = false;
};
template <class... Fs>
struct Group<Outputs<Fs...>> {
  using accessors = TypeList<Out<ValueOf<Fs>>...>;
  using reductions = TypeList<>;
  static constexpr bool reads = false;
  static constexpr bool in_place = false;
};
template <class... Fs>
struct Group<InOuts<Fs...>> {
  using accessors = TypeList<InOut<ValueOf<Fs>>...>;
  using reductions = TypeList<>;
  static constexpr bool reads = false;
  static constexpr bool in_place = true;  // written, and read at the point
};
template <class... Tags>
struct Group<Reductions<Tags...>> {
  using accessors = TypeList<>;
  using reductions = TypeList<Tags...>;
  static constexpr bool reads = false;
};

template <class... L>
struct Concat {
  using type = TypeList<>;
};
template <class... A>
struct Concat<TypeList<A...>> {
  using type = TypeList<A...>;
};
template <class... A, class... B, class... L>
struct Concat<TypeList<A...>, TypeList<B...>, L...> {
  using type = typename Concat<TypeList<A..., B...>, L...>::type;
};

template <class L>
struct Length;
template <class... T>
struct Length<TypeList<T...>> {
  static constexpr int value = static_cast<int>(sizeof...(T));
};

template <class G>
constexpr bool is_reductions = false;
template <class... T>
constexpr bool is_reductions<Reductions<T...>> = true;

}  // namespace detail

/// The results of the reductions of one submitted loop: get() waits for its tasks and returns
/// one double per reduction, in the order given. Collective under mpirun: every rank calls it.
template <int K>
class Reduction {
 public:
  Reduction(std::shared_ptr<const void> fields, std::shared_ptr<detail::PendingReduction> pending)
      : fields_(std::move(fields)), pending_(std::move(pending)) {}

  /// The results (waits the first time; later calls return the same values).
  const std::array<double, K>& get() {
    if (pending_) {
      const std::vector<double> v = detail::finish_reduction(*pending_);
      for (int k = 0; k < K; ++k)
        values_[static_cast<std::size_t>(k)] = v[static_cast<std::size_t>(k)];
      pending_.reset();
    }
    return values_;
  }
  double get(int k) { return get()[static_cast<std::size_t>(k)]; }

 private:
  std::shared_ptr<const void> fields_;  // the loop's fields, alive until the results are in
  std::shared_ptr<detail::PendingReduction> pending_;  // declared last: released first
  std::array<double, K> values_{};
};

/// A pointwise loop: a name (for task names and performance models) and the points it visits
/// (the whole grid, or a Box). Its functor is called at every point as
/// f(index, accessors..., reducers...), the accessors in the order of the groups given:
///   struct Reaction {
///     double dt;
///     TESSERA_HD void operator()(tessera::Index<2>, tessera::InOut<double> e,
///                                tessera::InOut<double> r, tessera::Reducer<tessera::Max> emax)
///                                const {
///       const double ev = e;
///       e = ev - dt * ev * r;
///       emax(ev);
///     }
///   };
///   tessera::Loop<2> ode("ode");
///   auto m = ode.apply(Reaction{0.01}, tessera::inout(e, r), tessera::reductions(tessera::Max{}));
///   double largest = m.get(0);   // waits; without reductions apply returns nothing
template <int D>
class Loop {
 public:
  explicit Loop(std::string name) : name_(detail::check_name("loop", name)) {}
  Loop(std::string name, const Box<D>& box) : name_(detail::check_name("loop", name)) {
    box_.whole = false;
    for (int a = 0; a < D; ++a) {
      box_.lo[a] = box.lo[a];
      box_.hi[a] = box.hi[a];
    }
    if constexpr (D == 2) box_.hi[2] = 1;
  }

  const std::string& name() const { return name_; }

  /// Submits the loop: one task per tile, no ghost layers touched. Groups: tessera::in(...)
  /// (read at the point), tessera::out(...) (written), tessera::inout(...) (read and written in
  /// place), and last, optionally, tessera::reductions(...). Returns without waiting; with
  /// reductions, a Reduction<K> whose get() waits.
  template <class F, class... G>
  auto apply(const F& f, const G&... groups) const {
    static_assert(std::is_trivially_copyable_v<F>,
                  "the point functor is copied to every task and to the GPU: make it trivially "
                  "copyable (plain data members, no std::vector or references)");
    constexpr bool has_reductions = (false || ... || detail::is_reductions<G>);
    if constexpr (has_reductions) {
      static_assert(detail::is_reductions<std::tuple_element_t<sizeof...(G) - 1, std::tuple<G...>>>,
                    "tessera::reductions(...) must be the last argument of Loop::apply");
    }
    using Accessors = typename detail::Concat<typename detail::Group<G>::accessors...>::type;
    using Tags = typename detail::Concat<typename detail::Group<G>::reductions...>::type;
    using K = detail::TilePoints<D, F, Accessors, Tags>;
    std::vector<detail::FieldStorage*> reads, writes, in_place;
    std::vector<detail::AccessRule> rules;
    const std::string owner = "loop '" + name_ + "'";
    (collect(groups, reads, writes, in_place, rules, owner), ...);
    typename K::Args prototype{{}, {f, {}}};
    detail::set_rules(prototype, rules);
    const std::vector<detail::ReduceOp> ops = ops_of(Tags{});
    auto pending =
        detail::apply_loop(name_, K::kind("loop", detail::Access::ReadWrite), reads, writes,
                           in_place, box_, detail::ArgBlock::of(prototype), ops, false);
    if constexpr (has_reductions)
      return Reduction<detail::Length<Tags>::value>(std::make_shared<std::tuple<G...>>(groups...),
                                                    std::move(pending));
    else
      (void)pending;
  }

 private:
  template <class... Tags>
  static std::vector<detail::ReduceOp> ops_of(detail::TypeList<Tags...>) {
    return {detail::op_of<Tags>()...};
  }

  template <class Gr>
  static void collect(const Gr& group, std::vector<detail::FieldStorage*>& reads,
                      std::vector<detail::FieldStorage*>& writes,
                      std::vector<detail::FieldStorage*>& in_place,
                      std::vector<detail::AccessRule>& rules, const std::string& owner) {
    if constexpr (!detail::is_reductions<Gr>) {
      std::apply(
          [&](const auto&... fld) {
            (add(detail::FieldOf<std::decay_t<decltype(fld)>>::get(fld), detail::Group<Gr>::reads,
                 reads, writes, rules, owner),
             ...);
          },
          group.fields);
      if constexpr (detail::Group<Gr>::in_place)
        std::apply([&](const auto&... fld) { (in_place.push_back(&fld.storage()), ...); },
                   group.fields);
    }
  }

  template <class Field>
  static void add(const Field& field, bool read, std::vector<detail::FieldStorage*>& reads,
                  std::vector<detail::FieldStorage*>& writes,
                  std::vector<detail::AccessRule>& rules, const std::string& owner) {
    static_assert(Field::dims == D, "every field of a Loop<D> must be a Field<T, D>");
    if (read) {
      reads.push_back(&field.storage());
      rules.push_back(detail::access_rule(owner, field.storage(), 0, D, false, false));
    } else {
      writes.push_back(&field.storage());
    }
  }

  std::string name_;
  detail::LoopBox box_;
};

}  // namespace tessera
