// Stencils: the user writes one point update; Tessera runs it on every tile, on CPU workers
// through Kokkos and, when this file is compiled by nvcc, on CUDA workers too.
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/access.hpp"
#include "tessera/box.hpp"
#include "tessera/detail/tile_points.hpp"
#include "tessera/detail/time_block.hpp"
#include "tessera/field.hpp"

namespace tessera {

enum class Shape {
  Star,  ///< reads neighbours along the axes only (e.g. the 7-point Laplacian)
  Box    ///< reads every neighbour within the radius, diagonals included (e.g. Life)
};

/// An input read at the point only (tessera::centre(r)): never exchanged, any halo (0 too).
template <class Field>
struct CentreOnly {
  Field field;
};
template <class Field>
CentreOnly<Field> centre(const Field& f) {
  return {f};
}

template <class... Fields>
struct Inputs {
  std::tuple<Fields...> fields;
};
template <class... Fields>
struct Outputs {
  std::tuple<Fields...> fields;
};
template <class... Fields>
struct InOuts {
  std::tuple<Fields...> fields;
};
/// Fields a stencil or loop reads: tessera::in(u, source, tessera::centre(r)).
template <class... Fields>
Inputs<Fields...> in(const Fields&... f) {
  return {{f...}};
}
/// Fields a stencil or loop writes: tessera::out(u_next).
template <class... Fields>
Outputs<Fields...> out(const Fields&... f) {
  return {{f...}};
}
/// Fields a stencil or loop reads and writes at the point (in place): tessera::inout(e, r).
template <class... Fields>
InOuts<Fields...> inout(const Fields&... f) {
  return {{f...}};
}

namespace detail {

template <class Field>
struct FieldOf {
  using type = Field;
  static constexpr bool centre_only = false;
  static const Field& get(const Field& f) { return f; }
};
template <class Field>
struct FieldOf<CentreOnly<Field>> {
  using type = Field;
  static constexpr bool centre_only = true;
  static const Field& get(const CentreOnly<Field>& c) { return c.field; }
};
template <class Field>
using ValueOf = typename FieldOf<Field>::type::value_type;

// The interior task kind of a stencil for functor F: In<I>... then Out<O>... then InOut<IO>....
template <int D, class F, class InList, class OutList, class InOutList = TypeList<>>
struct Interior;
template <int D, class F, class... I, class... O, class... IO>
struct Interior<D, F, TypeList<I...>, TypeList<O...>, TypeList<IO...>>
    : TilePoints<D, F, TypeList<In<I>..., Out<O>..., InOut<IO>...>, TypeList<>> {
  // Outputs are read-write although only their interior is written: their ghost layers hold
  // Dirichlet constants written once (constant-ghosts), and write-only access would let the
  // runtime hand a task a fresh or stale copy of the tile on another memory node (a GPU),
  // losing them. On one memory node it costs nothing. In-place fields are read-write anyway.
  static TaskKind kind(const char* name = "interior") {
    return TilePoints<D, F, TypeList<In<I>..., Out<O>..., InOut<IO>...>, TypeList<>>::kind(
        name, Access::ReadWrite);
  }
};

/// A stencil's functor restricted to a box of grid points, [lo, hi): f at the points inside,
/// nothing outside, where the written fields keep their values (an Interior task's outputs are
/// read-write, so every memory node holds them whole).
template <int D, class F>
struct InBox {
  F f;
  std::int64_t lo[D], hi[D];
  template <class... A>
  TESSERA_HD void operator()(const Index<D>& i, const A&... a) const {
    for (int d = 0; d < D; ++d)
      if (i[d] < lo[d] || i[d] >= hi[d]) return;
    f(i, a...);
  }
};

/// Writes one access rule per input into an argument block (checking mode; else nothing).
template <class Args>
void set_rules(Args& args, const std::vector<AccessRule>& rules) {
  if constexpr (!std::is_same_v<decltype(args.f.rules), NoAccessRules>)
    for (std::size_t k = 0; k < rules.size(); ++k) args.f.rules.rule[k] = rules[k];
}

void check_stencil_radius(const std::string& name, int radius);
/// Throws unless 0 <= lo <= hi <= the grid's extent along each of its `dims` axes, naming the
/// stencil, the box, the extent and the fix.
void check_apply_box(const std::string& name, const GridSpec& grid, const std::int64_t* lo,
                     const std::int64_t* hi, int dims);

/// Submits one step of a stencil (library): checks the fields, brings the inputs' ghost layers
/// up to date, then one `kind` task per tile with `args` (reads the inputs' tiles, writes the
/// outputs'). Returns without waiting.
/// `centre_only[k]`: input k is read at the point only (never exchanged, any halo). The last
/// `in_place` outputs are read at the point too (InOut).
void apply_stencil(const std::string& name, int radius, bool box, const TaskKind& kind,
                   const std::vector<FieldStorage*>& inputs, const std::vector<bool>& centre_only,
                   const std::vector<FieldStorage*>& outputs, std::size_t in_place,
                   const ArgBlock& args);

/// Throws unless `steps` >= 0, `depth` >= 1, u, the extra inputs, next and the in-place fields
/// `state` are distinct fields on one grid (so periodic along the same axes) with ghost layers
/// of at least depth x radius, tiles at least that thick, u and next with Dirichlet, periodic
/// or mirror faces (Neumann, NeumannVertex: the same on both; the extra inputs' ghosts do not
/// change and the in-place fields are read at the point only: any faces), and at most
/// tasks::HaloWork::kMax fields exchanged per block (u and `state`).
void check_time_block(const std::string& name, int radius, const FieldStorage& u,
                      const FieldStorage& next, const std::vector<FieldStorage*>& extras,
                      const std::vector<FieldStorage*>& state, long steps, int depth);

/// What a temporal block costs on one tile, for choosing its depth: one point of one step of
/// its kernel on a worker, and what each block task costs beyond its points (its submission,
/// its dependencies on the neighbour tiles' blocks, the wait for the slowest of them). 0:
/// unknown.
struct BlockCosts {
  double point_seconds = 0;
  double block_seconds = 0;
};
/// The costs of stencil `stencil`'s blocks on `grid`'s tiles: a point's from the calibrated
/// models of its tile tasks on a CPU worker where they hold a tile of about this size
/// (tasks::model_point_cost; the mean over the ranks, where every rank's models have one),
/// else the tile chooser's assumed memory-bound point (partition/autotile.hpp); a block task's
/// own cost is the chooser's assumed task of a dozen handles (StarPU's models time a task's
/// body, not its submission and dependencies). The assumed costs without a live Runtime.
/// Collective.
BlockCosts block_costs(const std::string& stencil, const GridSpec& grid);
/// The redundant-work limit: a block recomputes at most this share more points than its steps.
inline constexpr double kRedundantWorkLimit = 0.125;
/// Deeper than kMaxAutoDepth only for a predicted step shorter by more than this share: less is
/// within the models' error, and deeper blocks cost deeper ghost layers. The model's block cost
/// (partition::kTaskSeconds) leaves out the wait for the neighbours' faces at each block, so it
/// predicts less than depth brings where the blocks are short (docs/scheduling.md, "The point
/// loops").
inline constexpr double kDeeperGain = 0.02;

/// The depth of a block on a grid's tiles (Stencil::auto_depth): of 1..`most` steps, tiles at
/// least depth x radius thick, recomputing at most kRedundantWorkLimit more points; among
/// those, the deepest up to kMaxAutoDepth, and deeper only with `costs` known, where a block's
/// own cost dominates its points' (small tiles): the depth whose step, its points and those
/// recomputed plus 1/depth of a block's cost, is shortest (by more than kDeeperGain).
int deepest_block_for_tiles(int radius, const GridSpec& grid, int most,
                            const BlockCosts& costs = {});
/// The same for these fields, also within their halos (1 when u's or next's faces rule blocking
/// out, or when the fields are not on one grid).
int deepest_time_block(int radius, const FieldStorage& u, const FieldStorage& next,
                       const std::vector<FieldStorage*>& extras,
                       const std::vector<FieldStorage*>& state, int most,
                       const BlockCosts& costs = {});

/// Submits one temporal block (library): checks, one exchange of u's and the in-place fields'
/// ghost layers `depth` x `radius` deep (box-shaped when depth > 1: several steps of a star
/// reach the corners), then one `kind` task per tile that advances `steps` (<= depth) steps,
/// reading the tiles of the extra inputs (exchanged as deep, once while they are not written)
/// and reading and writing those of u, next and `state`. Returns without waiting; the caller
/// swaps u and next when `steps` is odd.
void apply_time_block(const std::string& name, int radius, bool box, const TaskKind& kind,
                      FieldStorage& u, FieldStorage& next, const std::vector<FieldStorage*>& extras,
                      const std::vector<FieldStorage*>& state, long steps, int depth,
                      const ArgBlock& args);

/// The mirror faces of u (Neumann, NeumannVertex) a block refreshes after each step.
void set_mirror_faces(BlockSpan& span, const FieldStorage& u);

/// The box where a functor's interior fast path runs: the points at least `radius` from every
/// non-periodic face of `grid` (every point along a periodic axis).
InnerBox inner_box(const GridSpec& grid, int radius);
template <class Payload>
void set_inner_box(Payload& p, const GridSpec& grid, int radius) {
  if constexpr (std::is_same_v<decltype(p.inner), InnerBox>) p.inner = inner_box(grid, radius);
}

/// The access rule of one input (checking mode).
AccessRule access_rule(const std::string& owner, const FieldStorage& field, int radius, int dims,
                       bool box, bool centre_only);

}  // namespace detail

/// advance(f, u, next, steps, tessera::kAutoDepth): Tessera picks the steps per exchange,
/// Stencil::auto_depth().
inline constexpr int kAutoDepth = 0;
/// The deepest block kAutoDepth picks where a block's own cost does not dominate its tile's
/// points; fields created with halos of kMaxAutoDepth x radius (and tiles that thick) allow it.
inline constexpr int kMaxAutoDepth = 4;
/// The deepest block kAutoDepth picks at all: beyond kMaxAutoDepth only on tiles whose points
/// cost little next to a block task (Stencil::auto_depth).
inline constexpr int kDeepestAutoDepth = 16;

/// A stencil: a name (used in task names and performance-model symbols), a shape and a radius.
/// Its point functor is written once and called as f(index, In<T>..., Out<T>..., InOut<T>...):
///   struct Heat {
///     double alpha;
///     TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u,
///                                tessera::Out<double> next) const {
///       next = u() + alpha * (u(1,0,0) + u(-1,0,0) + u(0,1,0) + u(0,-1,0) + u(0,0,1)
///                             + u(0,0,-1) - 6 * u());
///     }
///   };
///   tessera::Stencil<3> heat("heat3d", tessera::Shape::Star, 1);
///   heat.apply(Heat{0.1}, tessera::in(u), tessera::out(next));   // asynchronous
template <int D>
class Stencil {
 public:
  Stencil(std::string name, Shape shape, int radius)
      : name_(detail::check_name("stencil", name)), shape_(shape), radius_(radius) {
    detail::check_stencil_radius(name_, radius_);
  }

  const std::string& name() const { return name_; }
  Shape shape() const { return shape_; }
  int radius() const { return radius_; }

  /// Submits one step: ghost layers of every input (but centre-only ones) are brought up to
  /// date (halo-pack and boundary tasks), then one interior task per tile applies f. Returns
  /// without waiting.
  template <class F, class... InF, class... OutF>
  void apply(const F& f, const Inputs<InF...>& inputs, const Outputs<OutF...>& outputs) const {
    apply(f, inputs, outputs, InOuts<>{});
  }

  /// The same with fields updated in place, read and written at the point only (never
  /// exchanged for this stencil, any halo), e.g. the state of a point's ODE beside a diffusion:
  ///   f(Index<2>, In<double> e, Out<double> e_next, InOut<double> r)
  ///   cardiac.apply(f, tessera::in(e), tessera::out(e_next), tessera::inout(r));
  /// One field fewer than in(centre(r)) with out(r_next) and a swap: less memory traffic per step.
  template <class F, class... InF, class... OutF, class... InOutF>
  void apply(const F& f, const Inputs<InF...>& inputs, const Outputs<OutF...>& outputs,
             const InOuts<InOutF...>& inouts) const {
    submit("interior", f, inputs, outputs, inouts);
  }

  /// One step on the points of `box` only (global indices, lo inclusive, hi exclusive, within
  /// the grid): f runs at those points, and every point outside keeps the value its written
  /// fields had. The inputs are exchanged as for apply(f, ...). The interior (the points whose
  /// neighbourhood lies inside a grid without periodic axes):
  /// tessera::Box<D>::whole(grid).inset(stencil.radius()).
  ///   heat.apply(tessera::Box<3>::whole(grid).inset(1), Heat{0.1}, tessera::in(u),
  ///              tessera::out(next));
  /// Its tasks are of kind "box" (their own performance model). A box outside the grid is an
  /// error before any task.
  template <class F, class... InF, class... OutF>
  void apply(const Box<D>& box, const F& f, const Inputs<InF...>& inputs,
             const Outputs<OutF...>& outputs) const {
    apply(box, f, inputs, outputs, InOuts<>{});
  }
  /// The same with fields updated in place (tessera::inout): an accumulating output is
  /// apply(box, f, tessera::in(u), tessera::out(), tessera::inout(acc)).
  template <class F, class... InF, class... OutF, class... InOutF>
  void apply(const Box<D>& box, const F& f, const Inputs<InF...>& inputs,
             const Outputs<OutF...>& outputs, const InOuts<InOutF...>& inouts) const {
    static_assert(sizeof...(InF) >= 1, "a stencil reads at least one field");
    detail::InBox<D, F> in_box{f, {}, {}};
    for (int a = 0; a < D; ++a) {
      in_box.lo[a] = box.lo[a];
      in_box.hi[a] = box.hi[a];
    }
    const auto& first = std::get<0>(inputs.fields);
    detail::check_apply_box(
        name_, detail::FieldOf<std::decay_t<decltype(first)>>::get(first).storage().grid(),
        in_box.lo, in_box.hi, D);
    submit("box", in_box, inputs, outputs, inouts);
  }

  /// The steps per exchange advance() runs with tessera::kAutoDepth: the deepest of 1 to
  /// kMaxAutoDepth (4) that these fields allow (ghost layers and tiles at least depth x radius,
  /// u and next with Dirichlet, periodic or mirror faces) and that recomputes at most an eighth
  /// more points than the steps themselves (a block also computes the ghost points its next steps
  /// read: about (depth - 1) x radius / thickness more per tiled axis), else 1. Measured on
  /// 2-D and 3-D stencils in and out of cache (docs/performance.md), 4 was the best depth or
  /// close to it: deeper blocks keep more planes in flight, and a block ends in a barrier with
  /// the neighbour tiles. Deeper, up to kDeepestAutoDepth within the same limits, only where a
  /// block task's own cost dominates its tile's points (thick tiles of few points), by the cost
  /// model of detail::deepest_block_for_tiles with a point's cost from the calibrated models
  /// (detail::block_costs). Collective in a multi-rank run, and the same on every rank; the
  /// result is bitwise the same for any depth.
  template <class T, class... Also, class... State>
  int auto_depth(const Field<T, D>& u, const Field<T, D>& next, const Inputs<Also...>& also = {},
                 const InOuts<State...>& state = {}) const {
    return detail::deepest_time_block(radius_, u.storage(), next.storage(), storages(also),
                                      storages(state), kDeepestAutoDepth,
                                      detail::block_costs(name_, u.storage().grid()));
  }

  /// The same for a stencil that updates fields in place and reads no extra input.
  template <class T, class... State>
  int auto_depth(const Field<T, D>& u, const Field<T, D>& next,
                 const InOuts<State...>& state) const {
    return auto_depth(u, next, Inputs<>{}, state);
  }

  /// The same for fields on `grid` before they exist, with ghost layers as deep as needed:
  /// create them with halo auto_depth(grid) x radius, e.g.
  ///   const int depth = heat.auto_depth(grid);
  ///   tessera::Field<double, 3> u(grid, depth, bc, "u"), next(grid, depth, bc, "next");
  ///   heat.advance(Heat{0.1}, u, next, steps, depth);
  int auto_depth(const Grid<D>& grid) const {
    const detail::GridSpec spec = detail::grid_spec(grid);
    return detail::deepest_block_for_tiles(radius_, spec, kDeepestAutoDepth,
                                           detail::block_costs(name_, spec));
  }

  /// Advances `steps` steps of a one-field stencil, as
  ///   for (long s = 0; s < steps; ++s) { apply(f, in(u, also...), out(next)); swap(u, next); }
  /// would (the result ends in u, bitwise the same), but exchanges u's ghost layers once per
  /// `depth` steps and runs those steps in one task per tile (temporal blocking): each tile
  /// also computes the ghost points its next steps read, so fewer, larger halo messages and
  /// tasks, and a tile stays in cache across its steps. `also` (optional): fields the functor
  /// reads after u that the steps do not change, e.g. a source term,
  ///   jacobi.advance(Jacobi{h2}, u, next, 100, 8, tessera::in(f));   // f(i, In u, In f, Out next)
  /// `state` (optional): fields the functor updates in place at the point, after next, as
  /// apply()'s tessera::inout fields,
  ///   cardiac.advance(f, e, next, 100, 4, tessera::inout(r));
  ///   // f(i, In e, Out next, InOut r): the loop apply(f, in(e), out(next), inout(r)); swap
  /// A block updates them on the ghost points it computes too, so they are exchanged as u is.
  /// With depth > 1, every field needs ghost layers of at least depth x radius, tiles at least
  /// that thick, and u and next faces that are Dirichlet, periodic or mirrors (Neumann,
  /// NeumannVertex, the same on both: each step refreshes the ghost layers the next one reads;
  /// the `also` and `state` fields may have any faces: their ghost values beyond the grid are
  /// never read); depth 1 is the step-by-step loop itself; tessera::kAutoDepth is
  /// auto_depth(u, next, also, state).
  template <class F, class T, class... Also, class... State>
  void advance(const F& f, Field<T, D>& u, Field<T, D>& next, long steps, int depth,
               const Inputs<Also...>& also = {}, const InOuts<State...>& state = {}) const {
    static_assert(std::is_trivially_copyable_v<F>,
                  "the point functor is copied to every task and to the GPU: make it trivially "
                  "copyable (plain data members, no std::vector or references)");
    static_assert(
        ((!detail::FieldOf<Also>::centre_only && detail::FieldOf<Also>::type::dims == D) && ...),
        "advance() reads its extra inputs as it reads u: pass Field<T, D>s, not "
        "tessera::centre(...)");
    static_assert(((State::dims == D) && ...), "every field of a Stencil<D> must be a Field<T, D>");
    const std::vector<detail::FieldStorage*> extras = storages(also), in_place = storages(state);
    if (depth == kAutoDepth)
      depth = detail::deepest_time_block(radius_, u.storage(), next.storage(), extras, in_place,
                                         kDeepestAutoDepth,
                                         detail::block_costs(name_, u.storage().grid()));
    detail::check_time_block(name_, radius_, u.storage(), next.storage(), extras, in_place, steps,
                             depth);
    if (depth == 1) {  // one exchange per step: the plain steps, with their interior tasks
      for (long s = 0; s < steps; ++s) {
        apply(f, Inputs<Field<T, D>, Also...>{std::tuple_cat(std::make_tuple(u), also.fields)},
              out(next), state);
        swap(u, next);
      }
      return;
    }
    using K = detail::TimeBlock<D, F, T, detail::TypeList<typename Also::value_type...>,
                                detail::TypeList<typename State::value_type...>>;
    typename K::Args prototype{{{}, {f, {}}}, {}};
    std::vector<detail::AccessRule> rules;
    const std::string owner = "stencil '" + name_ + "'";
    rules.push_back(
        detail::access_rule(owner, u.storage(), radius_, D, shape_ == Shape::Box, false));
    for (detail::FieldStorage* e : extras)
      rules.push_back(detail::access_rule(owner, *e, radius_, D, shape_ == Shape::Box, false));
    detail::set_rules(prototype.points, rules);
    const detail::GridSpec& grid = u.storage().grid();
    detail::set_inner_box(prototype.points.f, grid, radius_);
    prototype.span.radius = radius_;
    for (int a = 0; a < 3; ++a) {
      prototype.span.extent[a] = grid.extent[a];
      prototype.span.periodic[a] = grid.periodic[a] ? 1 : 0;
    }
    detail::set_mirror_faces(prototype.span, u.storage());
    detail::ArgBlock block = detail::ArgBlock::of(prototype.points);
    block.frame_offset +=
        static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&prototype.points) -
                                 reinterpret_cast<const unsigned char*>(&prototype));
    block.prototype = &prototype;
    block.size = sizeof(prototype);
    for (long done = 0; done < steps;) {
      prototype.span.steps = std::min<long>(depth, steps - done);
      detail::apply_time_block(name_, radius_, shape_ == Shape::Box, K::kind(), u.storage(),
                               next.storage(), extras, in_place, prototype.span.steps, depth,
                               block);
      if (prototype.span.steps % 2 != 0) swap(u, next);
      done += prototype.span.steps;
    }
  }

  /// advance() with fields updated in place and no extra input.
  template <class F, class T, class... State>
  void advance(const F& f, Field<T, D>& u, Field<T, D>& next, long steps, int depth,
               const InOuts<State...>& state) const {
    advance(f, u, next, steps, depth, Inputs<>{}, state);
  }

 private:
  /// Submits one step of f, its tasks of kind `kind` (a string literal).
  template <class F, class... InF, class... OutF, class... InOutF>
  void submit(const char* kind, const F& f, const Inputs<InF...>& inputs,
              const Outputs<OutF...>& outputs, const InOuts<InOutF...>& inouts) const {
    static_assert(sizeof...(InF) >= 1 && sizeof...(OutF) + sizeof...(InOutF) >= 1,
                  "a stencil reads at least one field and writes at least one");
    static_assert(((detail::FieldOf<InF>::type::dims == D) && ...) && ((OutF::dims == D) && ...) &&
                      ((InOutF::dims == D) && ...),
                  "every field of a Stencil<D> must be a Field<T, D>");
    static_assert(std::is_trivially_copyable_v<F>,
                  "the point functor is copied to every task and to the GPU: make it trivially "
                  "copyable (plain data members, no std::vector or references)");
    using K = detail::Interior<D, F, detail::TypeList<detail::ValueOf<InF>...>,
                               detail::TypeList<typename OutF::value_type...>,
                               detail::TypeList<typename InOutF::value_type...>>;
    std::vector<detail::FieldStorage*> ins, outs;
    std::vector<bool> centre_only;
    std::vector<detail::AccessRule> rules;
    const std::string owner = "stencil '" + name_ + "'";
    std::apply(
        [&](const auto&... fld) {
          ((ins.push_back(&detail::FieldOf<std::decay_t<decltype(fld)>>::get(fld).storage()),
            centre_only.push_back(detail::FieldOf<std::decay_t<decltype(fld)>>::centre_only),
            rules.push_back(detail::access_rule(owner, *ins.back(), radius_, D,
                                                shape_ == Shape::Box, centre_only.back()))),
           ...);
        },
        inputs.fields);
    std::apply([&](const auto&... fld) { (outs.push_back(&fld.storage()), ...); }, outputs.fields);
    std::apply([&](const auto&... fld) { (outs.push_back(&fld.storage()), ...); },
               inouts.fields);  // written like the outputs, after them (the functor's order)
    typename K::Args prototype{{}, {f, {}}};
    detail::set_rules(prototype, rules);
    detail::set_inner_box(prototype.f, ins.front()->grid(), radius_);
    detail::apply_stencil(name_, radius_, shape_ == Shape::Box, K::kind(kind), ins, centre_only,
                          outs, sizeof...(InOutF), detail::ArgBlock::of(prototype));
  }

  template <template <class...> class List, class... Fields>
  static std::vector<detail::FieldStorage*> storages(const List<Fields...>& fields) {
    std::vector<detail::FieldStorage*> out;
    std::apply([&](const auto&... fld) { (out.push_back(&fld.storage()), ...); }, fields.fields);
    return out;
  }

  std::string name_;
  Shape shape_;
  int radius_;
};

}  // namespace tessera
