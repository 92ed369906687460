// Grid hierarchies: fields on a coarser grid of the same domain (half the points per axis), and
// the inter-grid operators between two levels as tasks: restriction (fine -> coarse) and
// prolongation (coarse -> fine). Coarse point c coincides with fine point 2c + 1 (NPB MG's
// vertex-centred hierarchy): restriction reads the 27 fine points around 2c + 1, prolongation
// of fine point f reads coarse points around f / 2 (rounded down). Each destination tile's task
// reads exactly the source tiles holding those points (with their ghost layers, brought up to
// date first, so periodic faces wrap across levels).
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/stencil.hpp"
#include "tessera/task.hpp"

namespace tessera {

/// The next coarser grid: half the points per axis (every extent must be even), the same
/// periodicity, tiles of half the extent while they stay at least `min_tile` points thick, else
/// of the fine tile's extent (at most the coarse extent).
///   tessera::Grid<3> g1 = tessera::coarser(g0);
template <int D>
Grid<D> coarser(const Grid<D>& fine, std::int64_t min_tile = 2) {
  Index<D> extent, tile;
  for (int a = 0; a < D; ++a) {
    if (fine.extent()[a] % 2 != 0 || fine.extent()[a] < 2)
      throw Error("tessera::coarser: the grid has " + std::to_string(fine.extent()[a]) +
                  " points along " + axis_name(a) + "; a coarser level halves every extent, so " +
                  "give even extents (powers of two for a full hierarchy)");
    extent[a] = fine.extent()[a] / 2;
    const std::int64_t half = fine.tile()[a] / 2;
    tile[a] = std::min(half >= min_tile ? half : fine.tile()[a], extent[a]);
  }
  return Grid<D>(extent, tile, fine.periodic());
}

/// The sums of a 27-point neighbourhood by coefficient class: the centre, the 6 face
/// neighbours, the 12 edge neighbours and the 8 corners (each added in a fixed order: z, then
/// y, then x from low to high), for stencils with one coefficient per class.
struct Box27 {
  double centre, faces, edges, corners;
};
template <class T>
TESSERA_HD Box27 box27(const In<T>& u) {
  Box27 s{static_cast<double>(u()), 0.0, 0.0, 0.0};
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int far = (dx != 0) + (dy != 0) + (dz != 0);
        const double v = static_cast<double>(u(dx, dy, dz));
        if (far == 1) s.faces += v;
        if (far == 2) s.edges += v;
        if (far == 3) s.corners += v;
      }
  return s;
}

namespace detail {

/// The (destination tile, source tile) pairs of one inter-grid operator, grouped by destination,
/// checked (library): extents halved per axis, the same periodicity, the source's halo >= 1;
/// brings the source's ghost layers up to date (Box, radius 1). `restrict`: destination coarse,
/// else fine.
std::vector<std::pair<int, int>> level_tiles(const std::string& name, FieldStorage& source,
                                             FieldStorage& destination, bool restrict);

// The CUDA body of a LevelBlock: a thread per destination point (LevelBlock::point).
#if TESSERA_CUDA_BODIES
template <class Block, class Src, class Dst>
__global__ void level_kernel(Block b, Src src, Dst dst, std::int64_t x0, std::int64_t nx,
                             std::int64_t y0, std::int64_t z0) {
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (x < nx) b.point(src, dst, x0 + x, y0 + blockIdx.y, z0 + blockIdx.z);
}
#endif

/// The task body of one (destination tile, source tile) pair: every destination point whose
/// anchor (restriction: 2c + 1; prolongation: f / 2 rounded down) lies in the source tile's
/// interior, with the source read around the anchor.
template <int D, class F, class T, bool Restrict>
struct LevelBlock {
  F f;
  // The destination box [lo, hi) (tile-local) of the points anchored in the source tile.
  static void bounds(const TileView<const T, D>& src, const TileView<T, D>& dst, std::int64_t* lo,
                     std::int64_t* hi) {
    for (int a = 0; a < 3; ++a) lo[a] = 0, hi[a] = 1;
    for (int a = 0; a < D; ++a) {
      const std::int64_t so = src.origin[a], se = src.extent[a], d0 = dst.origin[a];
      // Destination points (global) whose anchor is in [so, so + se): restriction
      // so <= 2c + 1 <= so + se - 1, prolongation so <= p / 2 <= so + se - 1 (so >= 0).
      const std::int64_t first = Restrict ? so / 2 : 2 * so;
      const std::int64_t last = Restrict ? (so + se) / 2 - 1 : 2 * (so + se) - 1;
      lo[a] = std::max(first, d0) - d0;
      hi[a] = std::min(last + 1, d0 + dst.extent[a]) - d0;
    }
  }
  void cpu(TileView<const T, D> src, TileView<T, D> dst) const {
    std::int64_t lo[3], hi[3];
    bounds(src, dst, lo, hi);
    if (lo[0] >= hi[0]) return;
    // Per row: the anchors along y and z and the row pointers hoisted, x by a pointer step (the
    // inner loop as plain as a stencil's, so that it vectorises).
    const std::int64_t d0 = dst.origin[0], s0 = src.origin[0];
    for (std::int64_t z = lo[2]; z < hi[2]; ++z)
      for (std::int64_t y = lo[1]; y < hi[1]; ++y) {
        Index<D> p;
        std::int64_t anchor[3] = {0, 0, 0};
        const std::int64_t local[3] = {0, y, z};
        for (int a = 1; a < D; ++a) {
          p[a] = dst.origin[a] + local[a];
          anchor[a] = (Restrict ? 2 * p[a] + 1 : p[a] / 2) - src.origin[a];
        }
        const T* from = &src(0, anchor[1], anchor[2]);  // global x: s0
        T* to = &dst(0, y, z);                          // global x: d0
        if constexpr (Restrict) {
          for (std::int64_t x = d0 + lo[0]; x < d0 + hi[0]; ++x) {
            p[0] = x;
            f(p, In<T>{from + (2 * x + 1 - s0), src.sy, src.sz}, Out<T>{to + (x - d0)});
          }
        } else {
          // Even and odd fine x apart, and the row's y and z parities, each known at compile
          // time (a functor's branches on the parities fold away): anchor q, fine point
          // 2q + parity.
          const int py = D > 1 ? static_cast<int>(p[D > 1 ? 1 : 0] & 1) : 0;
          const int pz = D > 2 ? static_cast<int>(p[D > 2 ? 2 : 0] & 1) : 0;
          switch (py + 2 * pz) {
            case 0: rows<0, 0>(p, from, to, s0, d0, lo[0], hi[0], src); break;
            case 1: rows<1, 0>(p, from, to, s0, d0, lo[0], hi[0], src); break;
            case 2: rows<0, 1>(p, from, to, s0, d0, lo[0], hi[0], src); break;
            default: rows<1, 1>(p, from, to, s0, d0, lo[0], hi[0], src); break;
          }
        }
      }
  }
#if TESSERA_CUDA_BODIES
  // The CUDA body: a thread per destination point of the box, each calling the functor as the
  // CPU's loops do (the same p, the same source point), so the same bits.
  void cuda(void* stream, TileView<const T, D> src, TileView<T, D> dst) const {
    std::int64_t lo[3], hi[3];
    bounds(src, dst, lo, hi);
    const std::int64_t nx = hi[0] - lo[0], ny = hi[1] - lo[1], nz = hi[2] - lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return;
    LaunchTile tile;
    for (int a = 0; a < 3; ++a) {
      tile.origin[a] = a < D ? dst.origin[a] + lo[a] : 0;
      tile.extent[a] = hi[a] - lo[a];
    }
    const auto gx = static_cast<unsigned>((nx + 127) / 128);
    in_pieces(ny, nz, [&](std::int64_t y0, std::int64_t z0, unsigned gy, unsigned gz) {
      launch("level_kernel", &level_kernel<LevelBlock, TileView<const T, D>, TileView<T, D>>,
             dim3(gx, gy, gz), dim3(128), static_cast<cudaStream_t>(stream), tile, *this, src, dst,
             lo[0], nx, lo[1] + y0, lo[2] + z0);
    });
  }
  TESSERA_HD void point(const TileView<const T, D>& src, const TileView<T, D>& dst, std::int64_t x,
                        std::int64_t y, std::int64_t z) const {
    Index<D> p;
    std::int64_t anchor[3] = {0, 0, 0};
    const std::int64_t local[3] = {x, y, z};
    for (int a = 0; a < D; ++a) {
      p[a] = dst.origin[a] + local[a];
      anchor[a] = (Restrict ? 2 * p[a] + 1 : p[a] / 2) - src.origin[a];
    }
    const T* from = &src(anchor[0], anchor[1], anchor[2]);
    if constexpr (Restrict)
      f(p, In<T>{from, src.sy, src.sz}, Out<T>{&dst(x, y, z)});
    else
      f(p, In<T>{from, src.sy, src.sz}, InOut<T>{&dst(x, y, z)});
  }
#endif
  // One row of fine points of y parity Py and z parity Pz (p[1], p[2] rewritten as
  // 2 (p / 2) + parity, the same values), the even x then the odd x.
  template <int Py, int Pz>
  void rows(Index<D> p, const T* from, T* to, std::int64_t s0, std::int64_t d0, std::int64_t lo,
            std::int64_t hi, const TileView<const T, D>& src) const {
    if constexpr (D > 1) p[1] = 2 * (p[1] / 2) + Py;
    if constexpr (D > 2) p[2] = 2 * (p[2] / 2) + Pz;
    row<0>(p, from, to, s0, d0, lo, hi, src);
    row<1>(p, from, to, s0, d0, lo, hi, src);
  }
  template <int Parity>
  void row(Index<D> p, const T* from, T* to, std::int64_t s0, std::int64_t d0, std::int64_t lo,
           std::int64_t hi, const TileView<const T, D>& src) const {
    for (std::int64_t q = (d0 + lo - Parity + 1) / 2; 2 * q + Parity < d0 + hi; ++q) {
      p[0] = 2 * q + Parity;
      f(p, In<T>{from + (q - s0), src.sy, src.sz}, InOut<T>{to + (2 * q + Parity - d0)});
    }
  }
};

/// One destination tile's task over up to kLevelSources source tiles: the LevelBlock of each
/// (every destination point is anchored in one source tile, so the order does not matter).
template <int D, class F, class T, bool Restrict>
struct LevelGather {
  F f;
  template <class... S>
  void cpu(TileView<T, D> dst, S... src) const {
    (LevelBlock<D, F, T, Restrict>{f}.cpu(src, dst), ...);
  }
#if TESSERA_CUDA_BODIES
  template <class... S>
  void cuda(void* stream, TileView<T, D> dst, S... src) const {
    (LevelBlock<D, F, T, Restrict>{f}.cuda(stream, src, dst), ...);
  }
#endif
};
constexpr int kLevelSources = 8;

template <int D, class F, class T, bool Restrict, std::size_t... I>
void submit_gather(const Task& task, const F& f, const Field<T, D>& source,
                   const Field<T, D>& destination, int d, const int* s, std::index_sequence<I...>) {
  task.submit(LevelGather<D, F, T, Restrict>{f}, update_tile(destination, d),
              read_tile(source, s[I])...);
}

// The task of destination tile d over its m sources s[0..m): the instantiation for N + 1 == m.
template <bool Restrict, int D, class F, class T, std::size_t... N>
void submit_sources(const Task& task, const F& f, const Field<T, D>& source,
                    const Field<T, D>& destination, int d, const int* s, int m,
                    std::index_sequence<N...>) {
  ((N + 1 == static_cast<std::size_t>(m)
        ? submit_gather<D, F, T, Restrict>(task, f, source, destination, d, s,
                                           std::make_index_sequence<N + 1>{})
        : void()),
   ...);
}

/// One task per destination tile and (up to kLevelSources) source tiles its points are
/// anchored in (level_tiles' pairs come grouped by destination).
template <bool Restrict, int D, class F, class T>
void submit_level_tasks(const Task& task, const F& f, const Field<T, D>& source,
                        const Field<T, D>& destination) {
  const auto pairs = level_tiles(task.name(), source.storage(), destination.storage(), Restrict);
  for (std::size_t i = 0; i < pairs.size();) {
    const int d = pairs[i].first;
    int s[kLevelSources];
    int m = 0;
    while (i < pairs.size() && pairs[i].first == d && m < kLevelSources) s[m++] = pairs[i++].second;
    submit_sources<Restrict>(task, f, source, destination, d, s, m,
                             std::make_index_sequence<kLevelSources>{});
  }
}

}  // namespace detail

/// Restriction from a fine level to the next coarser one: for every coarse point c,
///   f(Index<D> c, In<T> fine, Out<T> coarse)
/// with `fine` centred on fine point 2c + 1 (offsets -1..1 per axis: the 27 points around it).
/// One task per coarse tile, reading the fine tiles holding its points' centres (up to 8 per
/// task); the fine field's ghost layers (halo >= 1) are brought up to date first. CPU workers,
/// and CUDA workers where the caller is compiled by nvcc or for the emulated device (a
/// TESSERA_HD functor).
///   struct Project { void operator()(Index<3>, In<double> r, Out<double> s) const { s = 0.5 * r()
///   + ...; } }; tessera::Restriction<3> rprj3("rprj3"); rprj3.apply(Project{}, r_fine, r_coarse);
template <int D>
class Restriction {
 public:
  explicit Restriction(std::string name) : task_(std::move(name)) {}
  template <class F, class T>
  void apply(const F& f, const Field<T, D>& fine, const Field<T, D>& coarse) const {
    static_assert(std::is_trivially_copyable_v<F>, "the point functor must be trivially copyable");
    detail::submit_level_tasks<true>(task_, f, fine, coarse);
  }

 private:
  Task task_;
};

/// Prolongation from a coarse level to the next finer one: for every fine point f,
///   f(Index<D> p, In<T> coarse, InOut<T> fine)
/// with `coarse` centred on coarse point p / 2 (per axis, rounded down; an odd p coincides with
/// it, an even p lies between it and offset -1). Add to `fine` (fine = fine + ...) or set it.
/// One task per fine tile, reading the coarse tiles holding its anchors (up to 8 per task); the
/// coarse field's ghost layers (halo >= 1) are brought up to date first. CPU workers,
/// and CUDA workers where the caller is compiled by nvcc or for the emulated device (a
/// TESSERA_HD functor).
template <int D>
class Prolongation {
 public:
  explicit Prolongation(std::string name) : task_(std::move(name)) {}
  template <class F, class T>
  void apply(const F& f, const Field<T, D>& coarse, const Field<T, D>& fine) const {
    static_assert(std::is_trivially_copyable_v<F>, "the point functor must be trivially copyable");
    detail::submit_level_tasks<false>(task_, f, coarse, fine);
  }

 private:
  Task task_;
};

}  // namespace tessera
