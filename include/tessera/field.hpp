// A field: one value of type T per grid point, stored tile by tile with ghost layers.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/boundary.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/grid.hpp"

namespace tessera {

namespace detail {

template <class T>
const char* element_name() {
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  return nullptr;
}

template <class T>
std::uint64_t element_bits(T v) {
  // Unsupported types wider than 8 bytes are refused by the library; never copy past `bits`.
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T) < sizeof(bits) ? sizeof(T) : sizeof(bits));
  return bits;
}

template <int D>
GridSpec grid_spec(const Grid<D>& g) {
  GridSpec s;
  s.dims = D;
  for (int a = 0; a < D; ++a) {
    s.extent[a] = g.extent()[a];
    s.tile[a] = g.tile()[a];
    s.cuts[a] = g.cuts()[a];
    s.periodic[a] = g.periodic()[a];
  }
  s.split_axis = g.split_axis();
  s.split = g.split();
  s.stream_depth = g.stream_depth();
  s.point_bytes = g.point_data().bytes;
  s.field_bytes = g.point_data().field_bytes;
  s.chosen = !g.chosen().empty();
  return s;
}

// The boundary conditions as the library takes them: per face its kind and, for Dirichlet, the
// value converted to T (as bytes) and whether T holds it exactly. The library checks them.
template <class T, int D>
FaceSpecs face_specs(const Boundaries<D>& bc) {
  FaceSpecs out;
  out.defaulted = bc.defaulted;
  for (int a = 0; a < D; ++a)
    for (int s = 0; s < 2; ++s) {
      const Boundary& b = bc.face[a][s];
      FaceSpec& f = out.face[a][s];
      f.kind = b.kind;
      f.value = b.value;
      f.function = b.function;
      if (b.kind == Boundary::Kind::Dirichlet) {
        const T v = static_cast<T>(b.value);
        f.exact = static_cast<double>(v) == b.value;
        f.constant_bits = element_bits(v);
      }
    }
  return out;
}

}  // namespace detail

/// Values of type T (double, float, std::int32_t or std::uint8_t) on a Grid<D>, with `halo`
/// ghost layers per side and a boundary condition per face. Copies share the same data.
///   tessera::Field<double, 3> u(grid, 1, tessera::Boundaries<3>::all(Boundary::dirichlet(0)));
///   u.fill([](tessera::Index<3> p) { return p[0] == 0 ? 1.0 : 0.0; });
template <class T, int D>
class Field {
  static_assert(std::is_trivially_copyable_v<T>,
                "tessera::Field<T>: T must be trivially copyable (it is moved as bytes)");

 public:
  using value_type = T;
  static constexpr int dims = D;

  Field(const Grid<D>& grid, int halo, const Boundaries<D>& bc = {}, std::string name = "field")
      : grid_(std::make_shared<Grid<D>>(grid)),
        storage_(std::make_shared<detail::FieldStorage>(
            detail::grid_spec(grid), halo, detail::face_specs<T>(bc), sizeof(T),
            detail::element_name<T>(), std::move(name))) {}

  const Grid<D>& grid() const { return *grid_; }
  int halo() const { return storage_->halo(); }
  const std::string& name() const { return storage_->name(); }
  detail::FieldStorage& storage() const { return *storage_; }

  /// Sets every interior point to f(global index). Runs on the host, tile by tile (on each
  /// rank, the tiles it owns). In a simulated run (Runtime::simulated) there are no values to
  /// set: it only marks the field written.
  template <class F>
  void fill(F f) {
    for (int t = 0; t < storage_->tiles() && !storage_->simulated(); ++t) {
      if (!storage_->mine(t)) continue;
      const detail::TileGeometry g = storage_->geometry(t);
      T* p = static_cast<T*>(storage_->acquire(t, true));
      for_each_point(g, [&](std::int64_t off, const Index<D>& idx) { p[off] = f(idx); });
      storage_->release(t);
    }
    storage_->written();
  }

  /// The interior as one array in global order (x fastest), on every rank. Waits for pending
  /// writes. In a distributed run it is an explicit gather: call it on every rank. Zeros in a
  /// simulated run (Runtime::simulated), as at().
  std::vector<T> gather() const {
    std::vector<T> out(static_cast<std::size_t>(grid_->points()));
    storage_->gather(out.data());
    return out;
  }

  /// One value (for tests and small checks; waits for pending writes). Collective in a
  /// distributed run: its owner sends it to every rank.
  T at(Index<D> idx) const {
    detail::Extent3 point{0, 0, 0};
    for (int a = 0; a < D; ++a) point[static_cast<std::size_t>(a)] = idx[a];
    T v;
    storage_->read_point(point, &v);
    return v;
  }

  /// Moves the field onto another tiling of its grid (the same extent and periodicity: e.g. a
  /// Grid::cut with a CPU/GPU split moved, at a step boundary), every value unchanged: waits
  /// for the tasks that write it and registers the new tiles. Fields read or written together
  /// (u and next) must move together. Collective in a distributed run.
  void retile(const Grid<D>& grid) {
    storage_->retile(detail::grid_spec(grid));
    *grid_ = grid;
  }

  /// Exchanges the data of two fields on the same grid (double buffering).
  void swap(Field& other) {
    detail::check_swap(*storage_, *other.storage_);
    std::swap(storage_, other.storage_);
  }

 private:
  template <class Visit>
  static void for_each_point(const detail::TileGeometry& g, Visit visit) {
    for (std::int64_t z = 0; z < g.extent[2]; ++z)
      for (std::int64_t y = 0; y < g.extent[1]; ++y)
        for (std::int64_t x = 0; x < g.extent[0]; ++x) {
          Index<D> idx;
          idx[0] = g.origin[0] + x;
          idx[1] = g.origin[1] + y;
          if constexpr (D == 3) idx[2] = g.origin[2] + z;
          visit(g.offset0 + x + y * g.stride_y + z * g.stride_z, idx);
        }
  }

  std::shared_ptr<Grid<D>> grid_;  // shared by copies, as the storage: retile moves both
  std::shared_ptr<detail::FieldStorage> storage_;
};

template <class T, int D>
void swap(Field<T, D>& a, Field<T, D>& b) {
  a.swap(b);
}

}  // namespace tessera
