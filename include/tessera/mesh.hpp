// Unstructured meshes, OP2-style: sets of elements, maps between sets, data on sets (dats),
// global values, and parallel loops over a set whose kernel, written once, sees a pointer per
// argument. Tessera cuts the sets into tiles (partition_mesh) and runs one task per tile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/detail/mesh_loop.hpp"

namespace tessera {

/// How a loop argument is used (OP2's access descriptors). Dats: Read, Write, ReadWrite, and
/// through a map Inc too; globals: Read, Inc (a sum), Min, Max.
enum class Access { Read, Write, ReadWrite, Inc, Min, Max };

/// How partition_mesh cuts the primary set.
enum class Partitioner {
  Metis,  ///< METIS k-way on the elements' adjacency through the maps (needs METIS)
  Block   ///< contiguous ranges of elements, in element order
};

namespace detail {
struct SetStorage;
struct MapStorage;
struct DatStorage;
struct GlobalStorage;
std::shared_ptr<SetStorage> make_set(std::int64_t size, std::string name);
std::int64_t set_size(const SetStorage& s);
const std::string& set_name(const SetStorage& s);
int set_tiles(const SetStorage& s);
std::shared_ptr<MapStorage> make_map(const std::shared_ptr<SetStorage>& from,
                                     const std::shared_ptr<SetStorage>& to, int arity,
                                     std::vector<std::int32_t> indices, std::string name);
std::shared_ptr<DatStorage> make_dat(const std::shared_ptr<SetStorage>& set, int dim,
                                     std::size_t element_size, const char* type_name,
                                     const void* values, std::size_t count, std::string name);
void gather_dat(const DatStorage& d, void* out);
std::shared_ptr<GlobalStorage> make_global(std::size_t element_size, const char* type_name,
                                           const void* values, int dim, std::string name);
void set_global(GlobalStorage& g, const void* values, int dim);
void global_values(GlobalStorage& g, void* out);
void partition_mesh(const std::shared_ptr<SetStorage>& primary, int tiles, Partitioner method);

/// One loop argument as the library takes it.
struct LoopArg {
  DatStorage* dat = nullptr;
  MapStorage* map = nullptr;  // null: direct
  int index = -1;
  GlobalStorage* global = nullptr;
  int dim = 0;
  tessera::Access access = tessera::Access::Read;
  const char* type_name = nullptr;
};

/// Submits one loop (library): checks every argument, refreshes the import halos the loop
/// reads, one `kind` task per tile with `block`, then the tasks that add the increments to
/// other tiles' elements. Returns without waiting.
void run_loop(const std::string& name, SetStorage& set, const std::vector<LoopArg>& args,
              const TaskKind& kind, const LoopBlock& block);

template <class T>
constexpr const char* mesh_type_name() {
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  return nullptr;
}
}  // namespace detail

/// A set of mesh elements (nodes, edges, cells, ...): a size and a name.
class Set {
 public:
  Set(std::int64_t size, std::string name) : s_(detail::make_set(size, std::move(name))) {}
  std::int64_t size() const { return detail::set_size(*s_); }
  const std::string& name() const { return detail::set_name(*s_); }
  /// Tiles the set is cut into; 0 before partition_mesh.
  int tiles() const { return detail::set_tiles(*s_); }
  const std::shared_ptr<detail::SetStorage>& storage() const { return s_; }

 private:
  std::shared_ptr<detail::SetStorage> s_;
};

/// `arity` elements of `to` per element of `from`: indices[e * arity + i], each in
/// [0, to.size()). Declare every map before partition_mesh.
///   tessera::Map pedge(edges, nodes, 2, edge_nodes, "pedge");
class Map {
 public:
  Map(const Set& from, const Set& to, int arity, std::vector<std::int32_t> indices,
      std::string name)
      : m_(detail::make_map(from.storage(), to.storage(), arity, std::move(indices),
                            std::move(name))) {}
  detail::MapStorage& storage() const { return *m_; }

 private:
  std::shared_ptr<detail::MapStorage> m_;
};

/// `dim` values of type T (double, float or std::int32_t) per element of a set, element-major
/// (values[e * dim + k]), as OP2 lays them out.
///   tessera::Dat<double> q(cells, 4, initial, "q");
template <class T>
class Dat {
  static_assert(detail::mesh_type_name<T>() != nullptr,
                "tessera::Dat<T>: T must be double, float or std::int32_t");

 public:
  Dat(const Set& set, int dim, const std::vector<T>& values, std::string name)
      : d_(detail::make_dat(set.storage(), dim, sizeof(T), detail::mesh_type_name<T>(),
                            values.data(), values.size(), std::move(name))) {}
  /// Zeros.
  Dat(const Set& set, int dim, std::string name)
      : Dat(set, dim, std::vector<T>(static_cast<std::size_t>(set.size() * (dim > 0 ? dim : 0))),
            std::move(name)) {}
  int dim() const { return dim_of(); }
  /// Every element's values in element order, on every rank; waits for the tasks that write
  /// them. Collective under MPI.
  std::vector<T> gather() const {
    std::vector<T> out(static_cast<std::size_t>(set_size_of() * dim_of()));
    detail::gather_dat(*d_, out.data());
    return out;
  }
  detail::DatStorage& storage() const { return *d_; }

 private:
  int dim_of() const;
  std::int64_t set_size_of() const;
  std::shared_ptr<detail::DatStorage> d_;
};

/// A global value of `dim` elements of T: read by loops, or reduced by them (Inc, Min, Max).
/// A reduction starts from the current value: set() it first (e.g. to 0 for a sum).
///   tessera::Global<double> rms("rms", 0.0);
template <class T>
class Global {
  static_assert(detail::mesh_type_name<T>() != nullptr,
                "tessera::Global<T>: T must be double, float or std::int32_t");

 public:
  Global(std::string name, const std::vector<T>& values)
      : g_(detail::make_global(sizeof(T), detail::mesh_type_name<T>(), values.data(),
                               static_cast<int>(values.size()), std::move(name))),
        dim_(static_cast<int>(values.size())) {}
  Global(std::string name, T value) : Global(std::move(name), std::vector<T>{value}) {}
  int dim() const { return dim_; }
  void set(const std::vector<T>& values) {
    detail::set_global(*g_, values.data(), static_cast<int>(values.size()));
  }
  void set(T value) { set(std::vector<T>{value}); }
  /// The value after every loop submitted so far that reduces into it (waits for them).
  /// Collective under MPI: call it on every rank.
  std::vector<T> values() const {
    std::vector<T> out(static_cast<std::size_t>(dim_));
    detail::global_values(*g_, out.data());
    return out;
  }
  T value(int i = 0) const { return values().at(static_cast<std::size_t>(i)); }
  detail::GlobalStorage& storage() const { return *g_; }

 private:
  std::shared_ptr<detail::GlobalStorage> g_;
  int dim_;
};

/// A loop argument: a dat or (IsGlobal) a global, how the kernel uses it, and the dimension
/// the kernel expects (checked against the dat's or global's).
template <class T, bool IsGlobal = false>
struct Arg {
  detail::LoopArg a;
  using type = T;
};

/// The loop set's own dat: arg(q, 4, Access::Read).
template <class T>
Arg<T> arg(const Dat<T>& d, int dim, Access access) {
  return {{&d.storage(), nullptr, -1, nullptr, dim, access, detail::mesh_type_name<T>()}};
}
/// A dat reached through a map at one index: arg(res, pecell, 0, 4, Access::Inc).
template <class T>
Arg<T> arg(const Dat<T>& d, const Map& map, int index, int dim, Access access) {
  return {{&d.storage(), &map.storage(), index, nullptr, dim, access, detail::mesh_type_name<T>()}};
}
/// A global: arg(rms, 1, Access::Inc).
template <class T>
Arg<T, true> arg(const Global<T>& g, int dim, Access access) {
  return {{nullptr, nullptr, -1, &g.storage(), dim, access, detail::mesh_type_name<T>()}};
}

/// Cuts `primary` into `tiles` tiles, and every set connected to it through maps with it
/// (owner compute: an edge goes with its first cell's tile, a node with its first cell's).
/// `tiles` 0: the library chooses from the workers of every rank and the set's size (whole
/// rounds of the workers, tiles of at least 65,536 elements where the set has that many; the
/// choice is printed after the configuration line).
/// Needs a live Runtime; every map must be declared before. Each tile's elements keep their
/// global order.
inline void partition_mesh(const Set& primary, int tiles, Partitioner method = Partitioner::Metis) {
  detail::partition_mesh(primary.storage(), tiles, method);
}

/// Runs `kernel` on every element of `set`, one task per tile, the kernel seeing a pointer
/// per argument (T* for Arg<T>) to the element's data:
///   struct SaveSoln {
///     TESSERA_HD void operator()(const double* q, double* qold) const {
///       for (int n = 0; n < 4; ++n) qold[n] = q[n];
///     }
///   };
///   tessera::par_loop(SaveSoln{}, "save_soln", cells, tessera::arg(q, 4, tessera::Access::Read),
///                     tessera::arg(qold, 4, tessera::Access::Write));
/// `name` names the tasks (trace, report) and performance models. Returns without waiting.
template <class F, class... T, bool... G>
void par_loop(const F& kernel, const std::string& name, const Set& set, const Arg<T, G>&... args) {
  static_assert(sizeof...(T) >= 1, "a loop takes at least one argument");
  static_assert(
      std::is_trivially_copyable_v<F>,
      "the kernel is copied to every task: make it trivially copyable (plain data members)");
  using K = detail::MeshLoop<F, std::conditional_t<G, detail::GlobalValue<T>, T>...>;
  const typename K::Args prototype{{}, kernel};
  const std::vector<detail::LoopArg> described{args.a...};
  detail::run_loop(name, *set.storage(), described, K::kind(), detail::LoopBlock::of(prototype));
}

namespace detail {
void show_partitions(const DatStorage& positions, const MapStorage* corners);
}  // namespace detail
/// For the run report (--report): draws the mesh's partitions, each element of `corners`'s
/// source set as the polygon through its targets' positions (x, y: the first two values of
/// each element of `positions`), coloured by the worker that ran most of its tile's tasks,
/// with the borders between ranks. Call it after partition_mesh, on every rank (collective
/// under MPI); without --report it does nothing.
///   tessera::show_partitions(x, pcell);  // cells as the quadrilaterals of their nodes
inline void show_partitions(const Dat<double>& positions, const Map& corners) {
  detail::show_partitions(positions.storage(), &corners.storage());
}
/// The same with each element of `positions`'s own set drawn as a dot at its position.
inline void show_partitions(const Dat<double>& positions) {
  detail::show_partitions(positions.storage(), nullptr);
}

namespace detail {
int dat_dim(const DatStorage& d);
std::int64_t dat_set_size(const DatStorage& d);
}  // namespace detail
template <class T>
int Dat<T>::dim_of() const {
  return detail::dat_dim(*d_);
}
template <class T>
std::int64_t Dat<T>::set_size_of() const {
  return detail::dat_set_size(*d_);
}

}  // namespace tessera
