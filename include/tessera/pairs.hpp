// All-pairs interactions (N-body forces, potentials, kernel sums): every point of a target set
// interacts with every point of a source set. One task per (target tile, source tile) pair adds
// the source tile's contributions into the target tile's accumulators, the tasks of one target
// tile in source-tile order. Each target's sum has one order, set by the sources' positions
// and not by the tiles, the workers, the ranks, the device or its threads: the sources in
// chunks of kPairChunk positions, each chunk summed from zero source by source, the chunk sums
// added to the target's sums in chunk order. Chunks are independent, so a GPU sums many of one
// target's at once (pair_kernel); a chunk that a source tile boundary cuts is carried from one
// task to the next in carry fields (core/tiles/pairs.cpp), so tiles of any size give the bits
// of one tile.
#pragma once

#include <cstdint>
#include <memory>
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

/// The sources of a pairs sum go in chunks of this many positions (a source's position: its
/// place in the source grid's order, tile by tile, x fastest; on a one-row grid, its x). A
/// chunk is summed from zero in position order; the chunk sums are added to a target's sums in
/// chunk order. Fixed: the bits depend on it, not on the tiles or the device.
constexpr std::int64_t kPairChunk = 64;

/// Where a task's source tile lies in its grid's source order: `first`, the position of its
/// first point; `total`, the grid's sources. Set per task by submit_pairs.
struct PairRange {
  std::int64_t first = 0, total = 0;
};
/// A pairs task's payload: the user's functor and its source tile's range.
template <class F>
struct PairPayload {
  F f;
  PairRange range;
};

/// One kind of pairs task as submit_pairs takes it: the kind, its argument prototype and where
/// the PairRange lies in the block.
struct PairKind {
  TaskKind kind;
  SlotBlock args;
  std::size_t range_offset;
};
/// The carry fields of one Pairs (the library's; created on the first apply whose source tile
/// boundaries cut a chunk, for the accumulators' grid).
struct PairCarry;

/// Submits every (target tile, source tile) task (library): checks the fields (targets and
/// accumulators on one grid, sources on one grid, accumulators double, none also read), then
/// per target tile, per source tile in tile order, one task with the tile's PairRange: the
/// targets' and sources' tiles read, the accumulators' tiles read and written; `carried` (K
/// carry fields more, made in `carry`) where the tile's first or last chunk is cut by a source
/// tile boundary, `plain` elsewhere.
void submit_pairs(const std::string& name, const PairKind& plain, const PairKind& carried,
                  const std::vector<FieldStorage*>& targets,
                  const std::vector<FieldStorage*>& sources,
                  const std::vector<FieldStorage*>& accumulators,
                  std::shared_ptr<PairCarry>& carry);

#if TESSERA_CUDA_BODIES
template <class K>
void launch_pairs(const typename K::Args& a, const Pointers<K::N>& p);
#endif
/// The targets of a block of the CUDA pair kernel (along x; a warp's), and its most lanes
/// (chunks summed at once for each target, along y).
constexpr unsigned kPairTargets = 32, kPairLanes = 16;

/// The chunks of a task's source tile: chunk q (0 <= q < count) covers its local sources
/// [lo(q), hi(q)); the first starts in the previous tile where `carry_in`, the last ends in the
/// next where `carry_out` (their sums come from and go to the carry fields).
struct PairChunks {
  std::int64_t first, sources, count;
  bool carry_in, carry_out;
  TESSERA_HD static PairChunks of(const PairRange& r, std::int64_t sources) {
    PairChunks c{r.first, sources, 0, r.first % kPairChunk != 0, false};
    if (sources <= 0) return c;
    const std::int64_t end = r.first + sources;
    c.count = (end - 1) / kPairChunk - r.first / kPairChunk + 1;
    c.carry_out = end % kPairChunk != 0 && end < r.total;
    return c;
  }
  TESSERA_HD std::int64_t lo(std::int64_t q) const {
    return q == 0 ? 0 : (first / kPairChunk + q) * kPairChunk - first;
  }
  TESSERA_HD std::int64_t hi(std::int64_t q) const {
    const std::int64_t h = (first / kPairChunk + q + 1) * kPairChunk - first;
    return h < sources ? h : sources;
  }
  TESSERA_HD bool carried_in(std::int64_t q) const { return carry_in && q == 0; }
  TESSERA_HD bool carried_out(std::int64_t q) const { return carry_out && q == count - 1; }
};

/// The task of one (target tile, source tile) pair. Slots: targets, sources, accumulators,
/// then (Carry) one carry field per accumulator on the target tile; p[k] points at interior
/// point (0, 0, 0) of slot k's tile.
template <int D, class F, class TargetList, class SourceList, int K, bool Carry>
struct PairTiles;
template <int D, class F, class... TT, class... ST, int K, bool Carry>
struct PairTiles<D, F, TypeList<TT...>, TypeList<ST...>, K, Carry> {
  static constexpr int kT = static_cast<int>(sizeof...(TT));
  static constexpr int kS = static_cast<int>(sizeof...(ST));
  static constexpr int kK = K;
  static constexpr int N = kT + kS + (Carry ? 2 : 1) * K;
  using Args = SlotArgs<PairPayload<F>, N>;

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
  /// Carry field k at target (x, y, z): the sum so far of the chunk cut by the tile boundary.
  TESSERA_HD static double& carry(const Args& a, void* const* p, int k, std::int64_t x,
                                  std::int64_t y, std::int64_t z) {
    const int slot = Carry ? kT + kS + K + k : kT + kS + k;  // no carry slots: never called
    return static_cast<double*>(p[slot])[at(a.slot[slot], x, y, z)];
  }
  TESSERA_HD static PairChunks chunks(const Args& a) {
    const TileSlot& s = a.slot[kT];
    return PairChunks::of(a.payload.range, s.extent[0] * s.extent[1] * s.extent[2]);
  }
  /// Chunk q's sum at target (x, y, z) from `part` (zero, or the carried sum): the user's
  /// functor for local sources [lo, hi) in order. The one place the functor is called.
  TESSERA_HD static void chunk_sum(const Args& a, void* const* p, std::int64_t x, std::int64_t y,
                                   std::int64_t z, std::int64_t lo, std::int64_t hi, Acc<K>& part) {
    chunk_sum(a, p, x, y, z, lo, hi, part, std::index_sequence_for<TT...>{},
              std::index_sequence_for<ST...>{});
  }
  template <std::size_t... I, std::size_t... J>
  TESSERA_HD static void chunk_sum(const Args& a, void* const* p, std::int64_t x, std::int64_t y,
                                   std::int64_t z, std::int64_t lo, std::int64_t hi, Acc<K>& part,
                                   std::index_sequence<I...>, std::index_sequence<J...>) {
    const TileSlot& t = a.slot[kT + kS];  // the first accumulator's tile: the target tile
    const TileSlot& src = a.slot[kT];
    Index<D> i, j;
    i[0] = t.origin[0] + x;
    i[1] = t.origin[1] + y;
    if constexpr (D == 3) i[2] = t.origin[2] + z;
    const std::int64_t toff[kT + 1] = {at(a.slot[I], x, y, z)..., 0};
    (void)toff;
    // The source of `lo`, then advanced one by one (no division per source).
    const std::int64_t ex = src.extent[0], ey = src.extent[1];
    std::int64_t sx = lo % ex, sy = lo / ex % ey, sz = lo / (ex * ey);
    for (std::int64_t l = lo; l < hi; ++l) {
      j[0] = src.origin[0] + sx;
      j[1] = src.origin[1] + sy;
      if constexpr (D == 3) j[2] = src.origin[2] + sz;
      a.payload.f(i, j, input<TT>(p[I], a.slot[I], toff[I])...,
                  input<ST>(p[kT + J], a.slot[kT + J], at(a.slot[kT + J], sx, sy, sz))..., part);
      if (++sx == ex) {
        sx = 0;
        if (++sy == ey) {
          sy = 0;
          ++sz;
        }
      }
    }
  }
  /// Chunk q's starting sums: the carried ones for a chunk begun in the previous tile, else 0.
  TESSERA_HD static void start(const Args& a, void* const* p, const PairChunks& c, std::int64_t q,
                               std::int64_t x, std::int64_t y, std::int64_t z, Acc<K>& part) {
    for (int k = 0; k < K; ++k) part[k] = c.carried_in(q) ? carry(a, p, k, x, y, z) : 0.0;
  }

  /// The CPU's target point: chunk by chunk, the same sums in the same order as pair_kernel.
  static void point(const Args& a, void* const* p, const PairChunks& c, std::int64_t x,
                    std::int64_t y, std::int64_t z) {
    Acc<K> acc, part;
    for (int k = 0; k < K; ++k) acc[k] = accumulator(a, p, k, x, y, z);
    for (std::int64_t q = 0; q < c.count; ++q) {
      start(a, p, c, q, x, y, z, part);
      chunk_sum(a, p, x, y, z, c.lo(q), c.hi(q), part);
      for (int k = 0; k < K; ++k) {
        if (c.carried_out(q))
          carry(a, p, k, x, y, z) = part[k];
        else
          acc[k] += part[k];
      }
    }
    for (int k = 0; k < K; ++k) accumulator(a, p, k, x, y, z) = acc[k];
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
    const PairChunks c = chunks(a);
    parallel_rows(t.extent[1], t.extent[2], [&](std::int64_t y, std::int64_t z) {
      for (std::int64_t x = 0; x < t.extent[0]; ++x) point(a, p, c, x, y, z);
    });
  }
#if TESSERA_CUDA_BODIES
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    Pointers<N> p;
    pointers(buffers, a, p.p);
    launch_pairs<PairTiles>(a, p);
  }
#endif
  static TaskKind kind() {
#if TESSERA_CUDA_BODIES
    return {"pairs", Access::Read, Access::ReadWrite, &cpu, &cuda};
#else
    return {"pairs", Access::Read, Access::ReadWrite, &cpu, nullptr};
#endif
  }
  static PairKind pair_kind(const Args& prototype) {
    const auto* base = reinterpret_cast<const unsigned char*>(&prototype);
    const auto* range = reinterpret_cast<const unsigned char*>(&prototype.payload.range);
    return {kind(), SlotBlock::of(prototype), static_cast<std::size_t>(range - base)};
  }

  /// The lanes of the CUDA kernel for this accumulator count: a power of two at most
  /// kPairLanes, the block's chunk sums (kPairTargets x lanes x K doubles) within 12 KiB.
  static constexpr unsigned most_lanes() {
    unsigned lanes = kPairLanes;
    while (lanes > 1 && kPairTargets * lanes * K * sizeof(double) > 12 * 1024) lanes /= 2;
    return lanes;
  }
  static constexpr unsigned kMostLanes = most_lanes();
  static_assert(kPairTargets * K * sizeof(double) <= 12 * 1024,
                "pairs with more than 48 accumulators: split them over several Pairs");
};

#if TESSERA_CUDA_BODIES
// The CUDA pair kernel. A block is kPairTargets targets (x, a warp) by `lanes` lanes (y): in
// round r, lane l sums chunk r * lanes + l of every target of the block, each from zero (or
// its carried sum) source by source; then, per target, lane k % lanes adds the round's chunk
// sums of accumulator k to its running sum in chunk order (or keeps the last as the carry).
// The order is the CPU's (PairTiles::point) whatever `lanes` is, so the lanes are chosen to
// fill the GPU: a tile of few targets sums many chunks of each at once (the split of a
// target's sources across threads of GPU Gems 3, ch. 31, with a fixed combining order). The 32
// threads of a warp read the same source at once (one broadcast load); the functor reads the
// sources in place.
template <class K>
__global__ void pair_kernel(typename K::Args a, Pointers<K::N> p, std::int64_t y0,
                            std::int64_t z0) {
  __shared__ double sums[kPairTargets * K::kMostLanes * K::kK];  // [lane][target][k]
  const auto& t = a.slot[K::kT + K::kS];
  const unsigned lanes = blockDim.y, lane = threadIdx.y, target = threadIdx.x;
  const std::int64_t x = blockIdx.x * std::int64_t(kPairTargets) + target;
  const std::int64_t y = y0 + blockIdx.y, z = z0 + blockIdx.z;
  const bool live = x < t.extent[0];
  const PairChunks c = K::chunks(a);
  double acc[K::kK];
  for (unsigned k = lane; k < unsigned(K::kK); k += lanes)
    acc[k] = live ? K::accumulator(a, p.p, int(k), x, y, z) : 0.0;
  for (std::int64_t round = 0; round < c.count; round += lanes) {
    const std::int64_t q = round + lane;
    Acc<K::kK> part;
    for (int k = 0; k < K::kK; ++k) part[k] = 0.0;
    if (live && q < c.count) {
      K::start(a, p.p, c, q, x, y, z, part);
      K::chunk_sum(a, p.p, x, y, z, c.lo(q), c.hi(q), part);
    }
    __syncthreads();  // the previous round's sums are no longer read
    for (int k = 0; k < K::kK; ++k) sums[(lane * kPairTargets + target) * K::kK + k] = part[k];
    __syncthreads();
    if (!live) continue;
    for (unsigned k = lane; k < unsigned(K::kK); k += lanes)
      for (unsigned l = 0; l < lanes && round + l < c.count; ++l) {
        const double s = sums[(l * kPairTargets + target) * K::kK + k];
        if (c.carried_out(round + l))
          K::carry(a, p.p, int(k), x, y, z) = s;
        else
          acc[k] += s;
      }
  }
  if (live)
    for (unsigned k = lane; k < unsigned(K::kK); k += lanes)
      K::accumulator(a, p.p, int(k), x, y, z) = acc[k];
}
/// The lanes for a tile of `targets` targets in `blocks` blocks and `chunks` chunks: doubled
/// while the launch has under 2^17 threads (about half of an H100's or H200's resident threads)
/// and a target has chunks to give them, up to `most`.
inline unsigned pair_lanes(std::int64_t blocks, std::int64_t chunks, unsigned most) {
  unsigned lanes = 1;
  while (lanes < most && lanes < chunks && blocks * kPairTargets * lanes < (std::int64_t(1) << 17))
    lanes *= 2;
  return lanes;
}
template <class K>
void launch_pairs(const typename K::Args& a, const Pointers<K::N>& p) {
  const auto& t = a.slot[K::kT + K::kS];
  if (t.extent[0] <= 0 || t.extent[1] <= 0 || t.extent[2] <= 0) return;
  LaunchTile tile;
  for (int axis = 0; axis < 3; ++axis) {
    tile.origin[axis] = t.origin[axis];
    tile.extent[axis] = t.extent[axis];
  }
  const std::int64_t gx = (t.extent[0] + kPairTargets - 1) / kPairTargets;
  const unsigned lanes =
      pair_lanes(gx * t.extent[1] * t.extent[2], K::chunks(a).count, K::kMostLanes);
  in_pieces(t.extent[1], t.extent[2],
            [&](std::int64_t y0, std::int64_t z0, unsigned gy, unsigned gz) {
              launch("pair_kernel", &pair_kernel<K>, dim3(unsigned(gx), gy, gz),
                     dim3(kPairTargets, lanes), static_cast<cudaStream_t>(cuda_stream()), tile, a,
                     p, y0, z0);
            });
}
#endif

}  // namespace detail

/// All-pairs interactions on Grid<D>s: a name (task names, performance models), and apply,
/// which for every target point i and every source point j calls
///   f(Index<D> i, Index<D> j, In<T> target..., In<S> source..., Acc<K>& acc)
/// with the targets read at i (t()), the sources at j (s()); f adds j's contribution to acc.
/// The sum's order is fixed by the sources' positions (their order: tile by tile in tile
/// order, x fastest within a tile; on a one-row grid, or one cut only along its slowest axis,
/// the grid's order, whatever its tiles): acc[k] holds the sum of the current chunk of
/// kPairChunk (64) positions, from zero, and each chunk's sum is added to accumulator k at i
/// in chunk order, as the serial loop
///   for i: a = fields at i; for each chunk: acc = 0; for j in it: f(i, j, ..., acc); a += acc
///   fields at i = a.
/// The same bits on CPU and CUDA workers, for any tiles, workers or ranks.
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
    using Targets = detail::TypeList<typename TF::value_type...>;
    using Sources = detail::TypeList<typename SF::value_type...>;
    constexpr int K = static_cast<int>(sizeof...(AF));
    using Plain = detail::PairTiles<D, F, Targets, Sources, K, false>;
    using Carried = detail::PairTiles<D, F, Targets, Sources, K, true>;
    std::vector<detail::FieldStorage*> ts, ss, as;
    std::apply([&](const auto&... fld) { (ts.push_back(&fld.storage()), ...); }, t.fields);
    std::apply([&](const auto&... fld) { (ss.push_back(&fld.storage()), ...); }, s.fields);
    std::apply([&](const auto&... fld) { (as.push_back(&fld.storage()), ...); }, acc.fields);
    const typename Plain::Args plain{{}, {f, {}}};
    const typename Carried::Args carried{{}, {f, {}}};
    detail::submit_pairs(name_, Plain::pair_kind(plain), Carried::pair_kind(carried), ts, ss, as,
                         *carry_);
  }

 private:
  std::string name_;
  // The carry fields of the chunks cut by source tile boundaries (made when first needed;
  // shared by copies, which then order their sums on them).
  std::shared_ptr<std::shared_ptr<detail::PairCarry>> carry_ =
      std::make_shared<std::shared_ptr<detail::PairCarry>>();
};

}  // namespace tessera
