// Stencils: the user writes one point update; Tessera runs it on every tile, on CPU workers
// through Kokkos and, when this file is compiled by nvcc, on CUDA workers too.
#pragma once

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/detail/kernel_launch.hpp"
#include "tessera/field.hpp"

namespace tessera {

enum class Shape {
  Star,  ///< reads neighbours along the axes only (e.g. the 7-point Laplacian)
  Box    ///< reads every neighbour within the radius, diagonals included (e.g. Life)
};

/// Read access to an input field, centred on the current point: u(dx, dy[, dz]) is the value
/// at that offset, which must lie within the stencil's radius (and shape).
template <class T>
struct In {
  const T* p;
  std::int64_t sy, sz;
  TESSERA_HD T operator()(int dx = 0, int dy = 0, int dz = 0) const {
    return p[dx + dy * sy + dz * sz];
  }
};

/// Write access to an output field at the current point: out = value.
template <class T>
struct Out {
  T* p;
  TESSERA_HD const Out& operator=(T v) const {
    *p = v;
    return *this;
  }
};

template <class... Fields>
struct Inputs {
  std::tuple<Fields...> fields;
};
template <class... Fields>
struct Outputs {
  std::tuple<Fields...> fields;
};
/// Fields a stencil reads: tessera::in(u, source).
template <class... Fields>
Inputs<Fields...> in(const Fields&... f) {
  return {{f...}};
}
/// Fields a stencil writes: tessera::out(u_next).
template <class... Fields>
Outputs<Fields...> out(const Fields&... f) {
  return {{f...}};
}

namespace detail {

template <class... T>
struct TypeList {};

template <int D, class F, class InList, class OutList>
struct Interior;

// The interior task of a stencil: the user's functor at every point of a tile. Its argument
// block is the tile's frame (one entry per field: inputs, then outputs) and the functor.
template <int D, class F, class... I, class... O>
struct Interior<D, F, TypeList<I...>, TypeList<O...>> {
  static constexpr int kIn = sizeof...(I);
  static constexpr int kFields = kIn + static_cast<int>(sizeof...(O));
  using Args = TileArgs<F, kFields>;

  // The one place the user's functor is called, by both backends.
  TESSERA_HD static void point(const Args& a, void* const* base, std::int64_t x, std::int64_t y,
                               std::int64_t z) {
    call(a, base, x, y, z, std::index_sequence_for<I...>{}, std::index_sequence_for<O...>{});
  }

  template <std::size_t... Is, std::size_t... Os>
  TESSERA_HD static void call(const Args& a, void* const* base, std::int64_t x, std::int64_t y,
                              std::int64_t z, std::index_sequence<Is...>,
                              std::index_sequence<Os...>) {
    const TileFrame<kFields>& t = a.frame;
    Index<D> idx;
    idx[0] = t.origin(0) + x;
    idx[1] = t.origin(1) + y;
    if constexpr (D == 3) idx[2] = t.origin(2) + z;
    a.f(idx,
        In<I>{static_cast<const I*>(base[Is]) + t.offset0(Is) + x + y * t.sy(Is) + z * t.sz(Is),
              t.sy(Is), t.sz(Is)}...,
        Out<O>{static_cast<O*>(base[kIn + Os]) + t.offset0(kIn + Os) + x +
               y * t.sy(kIn + Os) + z * t.sz(kIn + Os)}...);
  }

  static void cpu(void** buffers, void* arg) {
    const Args a = *static_cast<const Args*>(arg);  // a local copy: no aliasing with outputs
    void* base[kFields];
    for (int k = 0; k < kFields; ++k) base[k] = buffer_data(buffers, k);
    parallel_rows(a.frame.extent(1), a.frame.extent(2), [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t x = 0; x < a.frame.extent(0); ++x) point(a, base, x, y, z);
    });
  }

#if defined(__CUDACC__)
  static void cuda(void** buffers, void* arg) {
    Pointers<kFields> base;
    for (int k = 0; k < kFields; ++k) base.p[k] = buffer_data(buffers, k);
    launch_points<Interior>(*static_cast<const Args*>(arg), base);
  }
#endif

  static TaskKind kind() {
#if defined(__CUDACC__)
    return {"interior", Access::Read, Access::Write, &cpu, &cuda};
#else
    return {"interior", Access::Read, Access::Write, &cpu, nullptr};
#endif
  }
};

std::string check_stencil_name(const std::string& name);
void check_stencil_radius(const std::string& name, int radius);

/// Submits one step of a stencil (library): checks the fields, brings the inputs' ghost layers
/// up to date, then one `kind` task per tile with `args` (reads the inputs' tiles, writes the
/// outputs'). Returns without waiting.
void apply_stencil(const std::string& name, int radius, bool box, const TaskKind& kind,
                   const std::vector<FieldStorage*>& inputs,
                   const std::vector<FieldStorage*>& outputs, const ArgBlock& args);

}  // namespace detail

/// A stencil: a name (used in task names and performance-model symbols), a shape and a radius.
/// Its point functor is written once and called as f(index, In<T>..., Out<T>...):
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
      : name_(detail::check_stencil_name(name)), shape_(shape), radius_(radius) {
    detail::check_stencil_radius(name_, radius_);
  }

  const std::string& name() const { return name_; }
  Shape shape() const { return shape_; }
  int radius() const { return radius_; }

  /// Submits one step: ghost layers of every input are brought up to date (halo-pack and
  /// boundary tasks), then one interior task per tile applies f. Returns without waiting.
  template <class F, class... InF, class... OutF>
  void apply(const F& f, const Inputs<InF...>& inputs, const Outputs<OutF...>& outputs) const {
    static_assert(sizeof...(InF) >= 1 && sizeof...(OutF) >= 1,
                  "a stencil reads at least one field and writes at least one");
    static_assert(((InF::dims == D) && ...) && ((OutF::dims == D) && ...),
                  "every field of a Stencil<D> must be a Field<T, D>");
    static_assert(std::is_trivially_copyable_v<F>,
                  "the point functor is copied to every task and to the GPU: make it trivially "
                  "copyable (plain data members, no std::vector or references)");
    using K = detail::Interior<D, F, detail::TypeList<typename InF::value_type...>,
                               detail::TypeList<typename OutF::value_type...>>;
    std::vector<detail::FieldStorage*> ins, outs;
    std::apply([&](const auto&... fld) { (ins.push_back(&fld.storage()), ...); }, inputs.fields);
    std::apply([&](const auto&... fld) { (outs.push_back(&fld.storage()), ...); },
               outputs.fields);
    const typename K::Args prototype{{}, f};
    detail::apply_stencil(name_, radius_, shape_ == Shape::Box, K::kind(), ins, outs,
                          detail::ArgBlock::of(prototype));
  }

 private:
  std::string name_;
  Shape shape_;
  int radius_;
};

}  // namespace tessera
