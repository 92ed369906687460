// All-pairs interactions (N-body forces, potentials, kernel sums): every point of a target set
// interacts with every point of a source set. One task per (target tile, source tile) pair adds
// the source tile's contributions into the target tile's accumulators; the tasks of one target
// tile run in source-tile order (they update the same tiles), so every target's sum is folded
// in one fixed order, source by source: the bits do not depend on the schedule, the workers or
// the ranks, and equal those of the plain serial double loop.
#pragma once

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/stencil.hpp"
#include "tessera/task.hpp"

namespace tessera {

/// The running sums of one target point: acc[k] is accumulator field k's value, loaded before
/// the first source of a tile and stored after the last.
template <int K>
struct Acc {
  double v[K];
  TESSERA_HD double& operator[](int k) { return v[k]; }
  TESSERA_HD double operator[](int k) const { return v[k]; }
};

template <class... Fields>
struct Targets {
  std::tuple<Fields...> fields;
};
template <class... Fields>
struct Sources {
  std::tuple<Fields...> fields;
};
template <class... Fields>
struct Accumulators {
  std::tuple<Fields...> fields;
};
/// Fields read at the target point: tessera::targets(x, y, z).
template <class... Fields>
Targets<Fields...> targets(const Fields&... f) {
  return {{f...}};
}
/// Fields read at the source point: tessera::sources(x, y, z, m).
template <class... Fields>
Sources<Fields...> sources(const Fields&... f) {
  return {{f...}};
}
/// Field<double, D>s the interactions add into, at the target point: tessera::accumulate(ax, ay,
/// az).
template <class... Fields>
Accumulators<Fields...> accumulate(const Fields&... f) {
  return {{f...}};
}

namespace detail {

/// Submits every (target tile, source tile) task (library): checks the fields (targets and
/// accumulators on one grid, sources on one grid, accumulators double, none also read), then
/// per target tile, per source tile in tile order, one `kind` task: the targets' and sources'
/// tiles read, the accumulators' tiles read and written.
void submit_pairs(const std::string& name, const TaskKind& kind,
                  const std::vector<FieldStorage*>& targets,
                  const std::vector<FieldStorage*>& sources,
                  const std::vector<FieldStorage*>& accumulators, const SlotBlock& args);

#if TESSERA_CUDA_BODIES
template <class K>
void launch_targets(const typename K::Args& a, const Pointers<K::N>& p);
#endif
/// The largest block of the CUDA pair kernel; its chunk of sources sizes the shared stage.
constexpr unsigned kPairThreads = 128;

/// The task of one (target tile, source tile) pair. Slots: targets, sources, accumulators;
/// p[k] points at interior point (0, 0, 0) of slot k's tile.
template <int D, class F, class TargetList, class SourceList, int K>
struct PairTiles;
template <int D, class F, class... TT, class... ST, int K>
struct PairTiles<D, F, TypeList<TT...>, TypeList<ST...>, K> {
  static constexpr int kT = static_cast<int>(sizeof...(TT));
  static constexpr int kS = static_cast<int>(sizeof...(ST));
  static constexpr int N = kT + kS + K;
  using Args = SlotArgs<F, N>;

  TESSERA_HD static std::int64_t at(const TileSlot& s, std::int64_t x, std::int64_t y,
                                    std::int64_t z) {
    return x + y * s.sy + z * s.sz;
  }
  template <class T>
  TESSERA_HD static In<T> input(const void* base, const TileSlot& s, std::int64_t off) {
    return In<T>{static_cast<const T*>(base) + off, s.sy, s.sz};
  }
  TESSERA_HD static double& accumulator(const Args& a, void* const* p, int k, std::int64_t x,
                                        std::int64_t y, std::int64_t z) {
    return static_cast<double*>(p[kT + kS + k])[at(a.slot[kT + kS + k], x, y, z)];
  }

  /// Target point (x, y, z) of the target tile: load its sums, let `sources` call add(sx, sy,
  /// sz, source inputs...) for each source in order, store the sums. The one place the user's
  /// functor is called; the CPU body reads the sources in place, the CUDA body from shared
  /// memory (target_kernel).
  template <class Sources, std::size_t... I>
  TESSERA_HD static void target_sums(const Args& a, void* const* p, std::int64_t x, std::int64_t y,
                                     std::int64_t z, std::index_sequence<I...>,
                                     const Sources& sources) {
    const TileSlot& t = a.slot[kT + kS];  // the first accumulator's tile: the target tile
    Index<D> i;
    i[0] = t.origin[0] + x;
    i[1] = t.origin[1] + y;
    if constexpr (D == 3) i[2] = t.origin[2] + z;
    Acc<K> acc;
    for (int k = 0; k < K; ++k) acc[k] = accumulator(a, p, k, x, y, z);
    const std::int64_t toff[kT + 1] = {at(a.slot[I], x, y, z)..., 0};
    (void)toff;
    const TileSlot& src = a.slot[kT];
    sources([&](std::int64_t sx, std::int64_t sy, std::int64_t sz, const auto&... s) {
      Index<D> j;
      j[0] = src.origin[0] + sx;
      j[1] = src.origin[1] + sy;
      if constexpr (D == 3) j[2] = src.origin[2] + sz;
      a.payload(i, j, input<TT>(p[I], a.slot[I], toff[I])..., s..., acc);
    });
    for (int k = 0; k < K; ++k) accumulator(a, p, k, x, y, z) = acc[k];
  }
  template <class Sources>
  TESSERA_HD static void target_sums(const Args& a, void* const* p, std::int64_t x, std::int64_t y,
                                     std::int64_t z, const Sources& sources) {
    target_sums(a, p, x, y, z, std::index_sequence_for<TT...>{}, sources);
  }
  /// The CPU's target point: every source of the source tile in order (x fastest), in place.
  template <std::size_t... J>
  static void point(const Args& a, void* const* p, std::int64_t x, std::int64_t y, std::int64_t z,
                    std::index_sequence<J...>) {
    const TileSlot& src = a.slot[kT];
    target_sums(a, p, x, y, z, [&](auto&& add) {
      for (std::int64_t sz = 0; sz < src.extent[2]; ++sz)
        for (std::int64_t sy = 0; sy < src.extent[1]; ++sy)
          for (std::int64_t sx = 0; sx < src.extent[0]; ++sx)
            add(sx, sy, sz,
                input<ST>(p[kT + J], a.slot[kT + J], at(a.slot[kT + J], sx, sy, sz))...);
    });
  }
  static void point(const Args& a, void* const* p, std::int64_t x, std::int64_t y, std::int64_t z) {
    point(a, p, x, y, z, std::index_sequence_for<ST...>{});
  }

  // The shared-memory stage of the CUDA body: per source field, kPairThreads values (each slot
  // rounded up to 8 bytes), field after field.
  static constexpr std::size_t slot_bytes(std::size_t size) { return (size + 7) / 8 * 8; }
  static constexpr std::size_t kStageBytes = kPairThreads * (slot_bytes(sizeof(ST)) + ... + 0);
  static_assert(((alignof(ST) <= 8) && ...), "pair sources of alignment above 8 bytes");
  static_assert(kStageBytes <= 32 * 1024, "pair sources too large for the shared-memory stage");
  template <std::size_t J>
  TESSERA_HD static std::size_t stage_offset() {
    constexpr std::size_t sizes[] = {slot_bytes(sizeof(ST))..., 0};
    std::size_t offset = 0;
    for (std::size_t m = 0; m < J; ++m) offset += kPairThreads * sizes[m];
    return offset;
  }
  template <std::size_t J>
  using SourceType = std::tuple_element_t<J, std::tuple<ST...>>;
  /// Staged source l of field J, as the functor reads it.
  template <std::size_t J>
  TESSERA_HD static In<SourceType<J>> staged(const unsigned char* stage, unsigned l) {
    const auto* values = reinterpret_cast<const SourceType<J>*>(stage + stage_offset<J>());
    return In<SourceType<J>>{values + l, 0, 0};
  }
  /// Copies source point `l` (in source-tile order) of every source field into slot `lane` of
  /// the stage.
  TESSERA_HD static void load_source(const Args& a, void* const* p, unsigned char* stage,
                                     std::int64_t l, unsigned lane) {
    load_source(a, p, stage, l, lane, std::index_sequence_for<ST...>{});
  }
  template <std::size_t... J>
  TESSERA_HD static void load_source(const Args& a, void* const* p, unsigned char* stage,
                                     std::int64_t l, unsigned lane, std::index_sequence<J...>) {
    const TileSlot& src = a.slot[kT];
    const std::int64_t sx = l % src.extent[0], sy = l / src.extent[0] % src.extent[1],
                       sz = l / (src.extent[0] * src.extent[1]);
    ((reinterpret_cast<SourceType<J>*>(stage + stage_offset<J>())[lane] =
          static_cast<const SourceType<J>*>(p[kT + J])[at(a.slot[kT + J], sx, sy, sz)]),
     ...);
  }

  template <class Ptrs>
  static void pointers(void** buffers, const Args& a, Ptrs& p) {
    for (int k = 0; k < N; ++k) {
      const std::size_t element = k < kT + kS ? element_size(k) : sizeof(double);
      p[k] = static_cast<unsigned char*>(buffer_data(buffers, static_cast<int>(a.slot[k].buffer))) +
             element * static_cast<std::size_t>(a.slot[k].offset0);
    }
  }
  static std::size_t element_size(int k) {
    constexpr std::size_t sizes[] = {sizeof(TT)..., sizeof(ST)..., 0};
    return sizes[k];
  }

  static void cpu(void** buffers, void* arg) {
    const Args a = *static_cast<const Args*>(arg);
    void* p[N];
    pointers(buffers, a, p);
    const TileSlot& t = a.slot[kT + kS];
    parallel_rows(t.extent[1], t.extent[2], [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t x = 0; x < t.extent[0]; ++x) point(a, p, x, y, z);
    });
  }
#if TESSERA_CUDA_BODIES
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    Pointers<N> p;
    pointers(buffers, a, p.p);
    launch_targets<PairTiles>(a, p);
  }
#endif
  static TaskKind kind() {
#if TESSERA_CUDA_BODIES
    return {"pairs", Access::Read, Access::ReadWrite, &cpu, &cuda};
#else
    return {"pairs", Access::Read, Access::ReadWrite, &cpu, nullptr};
#endif
  }
};

#if TESSERA_CUDA_BODIES
// The standard tiled all-pairs scheme (GPU Gems 3, ch. 31): one thread per target point; the
// block loads a chunk of blockDim.x consecutive sources (source-tile order, x fastest) into
// shared memory, every thread adds the whole chunk to its sums, then the next chunk. Each
// source is read from device memory once per block instead of once per thread, and each
// target still adds the sources one by one in the CPU's order, so the sums keep the CPU's
// bits. Sources are read at j only (s(); staged, a source has no neighbours to offset to).
// Threads past the tile's end load and wait with the others (__syncthreads needs them all).
template <class K, std::size_t... J>
__device__ void add_staged(const typename K::Args& a, void* const* p, const unsigned char* stage,
                           std::int64_t x, std::int64_t y, std::int64_t z, std::int64_t first,
                           unsigned count, std::index_sequence<J...>) {
  const TileSlot& src = a.slot[K::kT];
  // The source point of `first`, then advanced one by one (no division per source).
  std::int64_t sx = first % src.extent[0], sy = first / src.extent[0] % src.extent[1],
               sz = first / (src.extent[0] * src.extent[1]);
  K::target_sums(a, p, x, y, z, [&](auto&& add) {
    for (unsigned l = 0; l < count; ++l) {
      add(sx, sy, sz, K::template staged<J>(stage, l)...);
      if (++sx == src.extent[0]) {
        sx = 0;
        if (++sy == src.extent[1]) {
          sy = 0;
          ++sz;
        }
      }
    }
  });
}
template <class K, std::size_t... J>
__global__ void target_kernel(typename K::Args a, Pointers<K::N> p, std::int64_t y0,
                              std::int64_t z0) {
  __shared__ double words[K::kStageBytes / 8];  // 8-byte aligned, as the slots are
  auto* stage = reinterpret_cast<unsigned char*>(words);
  const auto& t = a.slot[K::kT + K::kS];
  const TileSlot& src = a.slot[K::kT];
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t y = y0 + blockIdx.y, z = z0 + blockIdx.z;
  const std::int64_t sources = src.extent[0] * src.extent[1] * src.extent[2];
  for (std::int64_t first = 0; first < sources; first += blockDim.x) {
    const unsigned count = static_cast<unsigned>(
        sources - first < std::int64_t(blockDim.x) ? sources - first : blockDim.x);
    __syncthreads();  // the previous chunk is no longer read
    if (threadIdx.x < count) K::load_source(a, p.p, stage, first + threadIdx.x, threadIdx.x);
    __syncthreads();
    if (x < t.extent[0])
      add_staged<K>(a, p.p, stage, x, y, z, first, count, std::index_sequence<J...>{});
  }
}
template <class K, std::size_t... J>
void launch_targets(const typename K::Args& a, const Pointers<K::N>& p, std::index_sequence<J...>) {
  const auto& t = a.slot[K::kT + K::kS];
  if (t.extent[0] <= 0 || t.extent[1] <= 0 || t.extent[2] <= 0) return;
  LaunchTile tile;
  for (int axis = 0; axis < 3; ++axis) {
    tile.origin[axis] = t.origin[axis];
    tile.extent[axis] = t.extent[axis];
  }
  // Each target's sum is one sequential chain, so the targets are all the parallelism there is:
  // smaller blocks spread a small tile over more multiprocessors (an H100 has 132; a block
  // uses one).
  unsigned threads = kPairThreads;
  while (threads > 32 && (t.extent[0] + threads - 1) / threads * t.extent[1] * t.extent[2] < 132)
    threads /= 2;
  const auto gx = static_cast<unsigned>((t.extent[0] + threads - 1) / threads);
  in_pieces(t.extent[1], t.extent[2],
            [&](std::int64_t y0, std::int64_t z0, unsigned gy, unsigned gz) {
              launch("target_kernel", &target_kernel<K, J...>, dim3(gx, gy, gz), dim3(threads),
                     static_cast<cudaStream_t>(cuda_stream()), tile, a, p, y0, z0);
            });
}
template <class K>
void launch_targets(const typename K::Args& a, const Pointers<K::N>& p) {
  launch_targets<K>(a, p, std::make_index_sequence<K::kS>{});
}
#endif

}  // namespace detail

/// All-pairs interactions on Grid<D>s: a name (task names, performance models), and apply,
/// which for every target point i and every source point j calls
///   f(Index<D> i, Index<D> j, In<T> target..., In<S> source..., Acc<K>& acc)
/// with the targets read at i (t()), the sources at j (s()), and acc[k] the running sum of
/// accumulator k at i. Sources are visited tile by tile in tile order, and within a tile x
/// fastest: on a grid of one row, j = 0, 1, ..., n - 1, as the plain serial loop
///   for i: acc = fields at i; for j: f(i, j, ..., acc); fields at i = acc.
/// The functor is trivially copyable with a TESSERA_HD call operator (CUDA workers when the
/// file is compiled by nvcc). Accumulators are added to, not set: zero them first (a Loop).
///   struct Gravity {
///     double eps2;
///     TESSERA_HD void operator()(tessera::Index<2>, tessera::Index<2>, tessera::In<double> xi,
///                                tessera::In<double> xj, tessera::In<double> mj,
///                                tessera::Acc<1>& a) const {
///       const double d = xj() - xi();
///       const double r = 1.0 / std::sqrt(d * d + eps2);
///       a[0] += mj() * d * r * r * r;
///     }
///   };
///   tessera::Pairs<2> gravity("gravity");
///   gravity.apply(Gravity{1e-4}, tessera::targets(x), tessera::sources(x, m),
///   tessera::accumulate(ax));
template <int D>
class Pairs {
 public:
  explicit Pairs(std::string name) : name_(detail::check_name("pairs", name)) {}
  const std::string& name() const { return name_; }

  /// Submits tiles(target grid) x tiles(source grid) tasks; returns without waiting.
  template <class F, class... TF, class... SF, class... AF>
  void apply(const F& f, const Targets<TF...>& t, const Sources<SF...>& s,
             const Accumulators<AF...>& acc) const {
    static_assert(sizeof...(SF) >= 1 && sizeof...(AF) >= 1,
                  "all-pairs interactions read at least one source field and add into at least "
                  "one accumulator");
    static_assert(((TF::dims == D) && ...) && ((SF::dims == D) && ...) && ((AF::dims == D) && ...),
                  "every field of a Pairs<D> must be a Field<T, D>");
    static_assert((std::is_same_v<typename AF::value_type, double> && ...),
                  "accumulators are Field<double, D>s (sums are kept in double)");
    static_assert(std::is_trivially_copyable_v<F>,
                  "the pair functor is copied to every task and to the GPU: make it trivially "
                  "copyable (plain data members, no std::vector or references)");
    using K = detail::PairTiles<D, F, detail::TypeList<typename TF::value_type...>,
                                detail::TypeList<typename SF::value_type...>,
                                static_cast<int>(sizeof...(AF))>;
    std::vector<detail::FieldStorage*> ts, ss, as;
    std::apply([&](const auto&... fld) { (ts.push_back(&fld.storage()), ...); }, t.fields);
    std::apply([&](const auto&... fld) { (ss.push_back(&fld.storage()), ...); }, s.fields);
    std::apply([&](const auto&... fld) { (as.push_back(&fld.storage()), ...); }, acc.fields);
    typename K::Args prototype{{}, f};
    detail::submit_pairs(name_, K::kind(), ts, ss, as, detail::SlotBlock::of(prototype));
  }

 private:
  std::string name_;
};

}  // namespace tessera
