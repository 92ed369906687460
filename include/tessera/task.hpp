// User tasks on tiles: the escape hatch for work that is not a stencil or a loop (an FFT along a
// tile's axis, a transpose between two tilings, a solver on one tile). The user names the tiles
// a task reads and writes and gives a CPU body (and, optionally, a CUDA body); Tessera submits
// it like its own tasks, so the runtime orders it by its data, places it on a worker and, under
// mpirun, runs it on the rank that owns what it writes, moving the tiles it reads there.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/detail/cuda_launch.hpp"  // TESSERA_CUDA_BODIES
#include "tessera/detail/task.hpp"
#include "tessera/field.hpp"

namespace tessera {

/// How a task uses a tile. Write: every interior point is written, nothing is read (the tile's
/// old contents, ghost layers included, need not reach the task); Update: read and written.
enum class Mode { Read, Write, Update };

/// One tile of a field as a task body sees it: `data` points at interior point (0, 0, 0) of the
/// tile; `v(x, y[, z])` is the point at those tile-local coordinates (ghost layers at -1, ...,
/// -halo and extent, ..., extent + halo - 1). Points are x fastest: `&v(0, y, z)` starts a
/// contiguous row of extent[0] values.
template <class T, int D>
struct TileView {
  T* data;
  Index<D> origin;      ///< the global index of interior point (0, 0, 0)
  Index<D> extent;      ///< interior points per axis
  std::int64_t sy, sz;  ///< element strides of y and z
  TESSERA_HD T& operator()(std::int64_t x, std::int64_t y, std::int64_t z = 0) const {
    return data[x + y * sy + z * sz];
  }
  TESSERA_HD std::int64_t points() const {
    std::int64_t n = 1;
    for (int a = 0; a < D; ++a) n *= extent[a];
    return n;
  }
};

/// The CPU workers that run one task together, as its body sees them: a body whose cpu takes
/// a `const Team&` first may run on several workers at once (under the `peager` scheduler,
/// which forms teams of CPU workers; others give it one worker), each calling cpu with its own
/// rank. It splits its loops by rank and calls sync() between steps that read what others
/// wrote: every member reaches sync() before any goes on.
struct Team {
  int rank = 0;
  int size = 1;
  int* barrier = nullptr;  // two words of the task's argument block (library)
  void sync() const;
  /// [begin, end) of this member's share of n items (contiguous, in rank order).
  std::int64_t begin(std::int64_t n) const { return n * rank / size; }
  std::int64_t end(std::int64_t n) const { return n * (rank + 1) / size; }
};

/// A tile a task uses: field, tile number (Grid numbering, x fastest); the mode is part of the
/// type, so that the body's view of a read tile is const.
template <class T, int D, Mode M>
struct TileUse {
  Field<T, D> field;
  int tile;
};
/// The task reads tile `t` of `f`: the body gets a TileView<const T, D>.
template <class T, int D>
TileUse<T, D, Mode::Read> read_tile(const Field<T, D>& f, int t) {
  return {f, t};
}
/// The task writes every interior point of tile `t` of `f` without reading it (TileView<T, D>).
template <class T, int D>
TileUse<T, D, Mode::Write> write_tile(const Field<T, D>& f, int t) {
  return {f, t};
}
/// The task reads and writes tile `t` of `f` (TileView<T, D>).
template <class T, int D>
TileUse<T, D, Mode::Update> update_tile(const Field<T, D>& f, int t) {
  return {f, t};
}

/// Where tile `t` of a grid lies and which rank owns it (`tile_of(u, 3).owner == rt.rank()`
/// says whether this process holds its data).
template <int D>
struct TileInfo {
  Index<D> origin, extent;
  int owner;
};
template <class T, int D>
TileInfo<D> tile_of(const Field<T, D>& f, int t);

namespace detail {

/// Per tile a task uses: which of the task's buffers holds it and where its interior lies.
/// Written by the library at submission (one task's buffers hold each tile once).
struct TileSlot {
  std::int64_t buffer;
  std::int64_t origin[3], extent[3];
  std::int64_t offset0, sy, sz;
};

/// The argument block of a user task: one slot per tile argument, then the payload, then the
/// words of its team's barrier (Team::sync; zero at submission).
template <class P, int N>
struct SlotArgs {
  TileSlot slot[N];
  P payload;
  int barrier[2] = {0, 0};
};

/// A tile a task uses, as the library takes it.
struct TileRef {
  FieldStorage* field;
  int tile;
  Mode mode;
};

/// The argument blocks of one submission: a prototype whose slots the library fills.
struct SlotBlock {
  const void* prototype;
  std::size_t size;
  std::size_t slots_offset;
  int slots;

  template <class P, int N>
  static SlotBlock of(const SlotArgs<P, N>& proto) {
    const auto* base = reinterpret_cast<const unsigned char*>(&proto);
    const auto* s = reinterpret_cast<const unsigned char*>(&proto.slot[0]);
    return {&proto, sizeof(proto), static_cast<std::size_t>(s - base), N};
  }
};

/// Submits one task (library): checks the tiles (in range, at least one written, none written
/// twice or both read and written, written tiles of one owner), fills the slots, reads first
/// then written tiles, and marks the written fields written. `kind.rest` is replaced by Write
/// when every written tile is Mode::Write, else ReadWrite. Returns without waiting.
void submit_user_task(const std::string& name, TaskKind kind, const std::vector<TileRef>& tiles,
                      const SlotBlock& args);
/// The same with the kind as given (its modes: read tiles `first`, written tiles `rest`).
/// `work`: what the task computes, kept as its flops (its model's size where the kind is sized
/// by it: an all-pairs task's interactions); 0: none. `fetch_early`: read tiles in another
/// memory than the task's, copied to its worker's as soon as they are written (the task waits
/// for more than them: tasks::Placement::fetch_early).
void submit_tiles(const std::string& name, const TaskKind& kind, const std::vector<TileRef>& tiles,
                  const SlotBlock& args, double work = 0,
                  const std::vector<TileRef>& fetch_early = {});
/// The origin, extent and owner of tile `t` of `f` (checked).
void tile_info(const FieldStorage& f, int t, std::int64_t* origin, std::int64_t* extent,
               int* owner);

template <class U>
struct ViewOf;
template <class T, int D, Mode M>
struct ViewOf<TileUse<T, D, M>> {
  using type = std::conditional_t<M == Mode::Read, TileView<const T, D>, TileView<T, D>>;
  static TileRef ref(const TileUse<T, D, M>& u) { return {&u.field.storage(), u.tile, M}; }
};

template <class V>
struct ViewTraits;
template <class T, int D>
struct ViewTraits<TileView<T, D>> {
  using element = T;
  static constexpr int dims = D;
};

// A view of slot `s`'s tile in the task's buffers (on the memory node the task runs on).
template <class V>
V view_of(void** buffers, const TileSlot& s) {
  using T = typename ViewTraits<V>::element;
  constexpr int D = ViewTraits<V>::dims;
  V v;
  v.data = static_cast<T*>(buffer_data(buffers, static_cast<int>(s.buffer))) + s.offset0;
  for (int a = 0; a < D; ++a) {
    v.origin[a] = s.origin[a];
    v.extent[a] = s.extent[a];
  }
  v.sy = s.sy;
  v.sz = s.sz;
  return v;
}

template <class... V>
struct ViewList {};
// Whether Body has cuda(stream, views...) for these views (a template member counts).
template <class Body, class Views, class = void>
struct HasCuda : std::false_type {};
template <class Body, class... V>
struct HasCuda<Body, ViewList<V...>,
               std::void_t<decltype(std::declval<const Body&>().cuda(
                   std::declval<void*>(), std::declval<V>()...))>> : std::true_type {};

// Whether Body's cpu takes a Team first (a task that may run on several workers).
template <class Body, class Views, class = void>
struct TakesTeam : std::false_type {};
template <class Body, class... V>
struct TakesTeam<Body, ViewList<V...>,
                 std::void_t<decltype(std::declval<const Body&>().cpu(
                     std::declval<const Team&>(), std::declval<V>()...))>> : std::true_type {};

/// The task kind of a body over views V...: its CPU entry calls body.cpu(views...), its CUDA
/// entry (nvcc or the emulated device, and the body has one) body.cuda(stream, views...).
template <class Body, class... V>
struct UserTask {
  static constexpr int N = static_cast<int>(sizeof...(V));
  using Args = SlotArgs<Body, N>;

  static constexpr bool kTeam = TakesTeam<Body, ViewList<V...>>::value;
  template <std::size_t... J>
  static void run_cpu(void** buffers, Args& a, std::index_sequence<J...>) {
    if constexpr (kTeam)
      a.payload.cpu(Team{team_rank(), team_size(), a.barrier}, view_of<V>(buffers, a.slot[J])...);
    else
      a.payload.cpu(view_of<V>(buffers, a.slot[J])...);
  }
  static void cpu(void** buffers, void* arg) {
    run_cpu(buffers, *static_cast<Args*>(arg), std::index_sequence_for<V...>{});
  }
#if TESSERA_CUDA_BODIES
  template <std::size_t... J>
  static void run_cuda(void** buffers, const Args& a, std::index_sequence<J...>) {
    a.payload.cuda(cuda_stream(), view_of<V>(buffers, a.slot[J])...);
  }
  static void cuda(void** buffers, void* arg) {
    run_cuda(buffers, *static_cast<const Args*>(arg), std::index_sequence_for<V...>{});
  }
#endif
  static TaskKind kind() {
#if TESSERA_CUDA_BODIES
    if constexpr (HasCuda<Body, ViewList<V...>>::value)
      return {"task", Access::Read, Access::ReadWrite, &cpu, &cuda, false, kTeam};
#endif
    return {"task", Access::Read, Access::ReadWrite, &cpu, nullptr, false, kTeam};
  }
};

}  // namespace detail

template <class T, int D>
TileInfo<D> tile_of(const Field<T, D>& f, int t) {
  std::int64_t origin[3], extent[3];
  TileInfo<D> info;
  detail::tile_info(f.storage(), t, origin, extent, &info.owner);
  for (int a = 0; a < D; ++a) {
    info.origin[a] = origin[a];
    info.extent[a] = extent[a];
  }
  return info;
}

/// A kind of user task: a name (task names, performance models tessera.<name>.task.<types>).
/// Its body is a trivially copyable struct with
///   void cpu(TileView<...>... views) const;                 // required, runs on CPU workers
///   void cuda(void* stream, TileView<...>... views) const;  // optional: CUDA workers (its file
///                                                           // compiled by nvcc, or for the
///                                                           // emulated device: launches through
///                                                           // detail::launch, docs/gpu.md)
/// or, for a task that may run on a team of CPU workers (tessera::Team, under peager),
///   void cpu(const Team& team, TileView<...>... views) const;
/// taking one view per tile, in the order given: TileView<const T, D> for read_tile, else
/// TileView<T, D>. One body, one name.
///   struct Scale {
///     double factor;
///     void cpu(tessera::TileView<const double, 3> in, tessera::TileView<double, 3> out) const {
///       for (std::int64_t z = 0; z < in.extent[2]; ++z) ... out(x, y, z) = factor * in(x, y, z);
///     }
///   };
///   tessera::Task scale("scale");
///   for (int t = 0; t < grid.tiles(); ++t)
///     scale.submit(Scale{2.0}, tessera::read_tile(u, t), tessera::write_tile(v, t));
/// Tasks are ordered by the tiles they use, in submission order (a later reader of a tile waits
/// for its writer), and their ghost layers are left as the body leaves them: a stencil that
/// reads a written field exchanges its ghost layers first.
class Task {
 public:
  explicit Task(std::string name);
  const std::string& name() const { return name_; }

  /// Submits one task over the given tiles; returns without waiting.
  template <class Body, class... U>
  void submit(const Body& body, const U&... tiles) const {
    static_assert(sizeof...(U) >= 1,
                  "a task uses at least one tile (read_tile, write_tile, update_tile)");
    static_assert(std::is_trivially_copyable_v<Body>,
                  "the task body is copied into the task (and to the GPU): make it trivially "
                  "copyable (plain data members, pointers, no std::vector)");
    using K = detail::UserTask<Body, typename detail::ViewOf<U>::type...>;
    typename K::Args prototype{{}, body};
    detail::submit_user_task(name_, K::kind(), {detail::ViewOf<U>::ref(tiles)...},
                             detail::SlotBlock::of(prototype));
  }

 private:
  std::string name_;
};

}  // namespace tessera
