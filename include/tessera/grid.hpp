// A structured grid cut into tiles: the domain every field and stencil lives on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/error.hpp"  // Grid throws tessera::Error
#include "tessera/index.hpp"

namespace tessera {

/// What a point of a grid costs a step, for tiles the library chooses: a stencil's point reads
/// a few neighbours (the default); an all-pairs point (tessera::Pairs) reads every point, so a
/// tile's chain of tasks grows with the grid, and a CPU part needs tiles thin enough to keep
/// pace with the GPU's (docs/scheduling.md, "All-pairs work").
enum class PointWork { Stencil, AllPairs };

/// What a point of a grid's fields holds, for the planner that places its tiles on GPUs whose
/// memory the grid may not fit: the slabs that stream through a GPU are sized, and the bus
/// priced, by it (docs/gpu.md, "Grids larger than a GPU"). `of<T...>()`: a field of each type,
/// the stencil's own first (jacobi2d's u, next and f: `PointData::of<float, float, float>()`).
/// Unsaid: three doubles. A field made beyond it on a streamed grid is refused (it would not
/// fit the slabs).
struct PointData {
  std::size_t bytes = 3 * sizeof(double);    // a point of every field
  std::size_t field_bytes = sizeof(double);  // a point of the stencil's own field
  template <class Field, class... Others>
  static constexpr PointData of() {
    return {(sizeof(Field) + ... + sizeof(Others)), sizeof(Field)};
  }
};

namespace detail {
/// The tiling of a grid, by partition/'s rules (library): per axis the largest tile extent, the
/// number of tiles and, where the tiles differ in extent, the cut positions (the first index of
/// every tile but the first; empty on an axis cut uniformly, the last tile at most the others);
/// axes from `dims` on are 1. `chosen`: what the library chose, for tiles it chose; with CUDA
/// workers, the tiles before `split` along `split_axis` form the GPU part (-1: none). Throws
/// tessera::Error on a non-positive extent, a negative tile or cuts that are not increasing
/// positions inside the extent.
struct Lattice {
  Extent3 tile{1, 1, 1};
  std::array<int, 3> tiles{1, 1, 1};
  std::array<std::vector<std::int64_t>, 3> cuts;
  std::string chosen;
  int split_axis = -1;
  std::int64_t split = -1;
  int stream_depth = 0;  // the GPU part streamed through the GPUs' memory: steps a visit
};
/// Uniform tiles of `tile` points; a tile of 0 along an axis: the library chooses the tiles
/// along it from the live runtime's workers (throws without a live runtime; collective in a
/// distributed run).
Lattice tile_lattice(const Extent3& extent, const Extent3& tile, int dims,
                     PointWork work = PointWork::Stencil, const PointData& points = {});
/// Tiles cut at `cuts` along each axis (an empty list: one tile along it). A list that is a
/// uniform lattice is stored as one (same tiles, same numbering, same Grid). With `split_axis`
/// >= 0, the split between CUDA and CPU workers at `split` (a tile start along that axis, or
/// its extent).
Lattice cut_lattice(const Extent3& extent, const std::array<std::vector<std::int64_t>, 3>& cuts,
                    int dims, int split_axis = -1, std::int64_t split = -1,
                    const PointData& points = {});
}  // namespace detail

/// Global extent, its tiling and per-axis periodicity.
///   tessera::Grid<3> grid({256, 256, 256}, {256, 256, 32});  // tiles of 256x256x32 (the last
///                                                            // tile of an axis may be smaller)
///   tessera::Grid<3> grid({256, 256, 256});         // tiles chosen by the library (needs a
///                                                   // live Runtime: its workers; collective);
///                                                   // periodic: Grid<3>(n, {0, 0, 0}, {...})
///   auto grid = tessera::Grid<3>::cut({64, 64, 64}, {{{}, {}, {24, 48, 52, 56, 60}}});
///                                                   // z cut at 24, 48, ...: tiles 24, 24, 4...
/// A tile extent of 0 along an axis leaves that axis to the library.
template <int D>
class Grid {
  static_assert(D == 2 || D == 3, "tessera::Grid<D>: D must be 2 or 3");

 public:
  /// Per axis, the positions where the grid is cut into tiles: the first index of every tile
  /// but the first, increasing (an empty list: one tile along that axis).
  using Cuts = std::array<std::vector<std::int64_t>, D>;

  /// Tiles of `tile` points (the last of an axis may be smaller). With CUDA workers in a
  /// single-rank run, those the placement planner puts on them are merged, one slab per CUDA
  /// worker (a worker runs its tiles one after another: separate tiles would cost only a task
  /// each and the ghost copies between them); tiles() counts what was made. Tiles numbered
  /// as cut, whatever runs them: Grid::cut. `points`: what a point of its fields holds, where
  /// the grid may not fit the GPUs' memory (PointData).
  Grid(Index<D> extent, Index<D> tile, std::array<bool, D> periodic = {},
       const PointData& points = {})
      : extent_(extent), periodic_(periodic), points_(points) {
    detail::Extent3 t{1, 1, 1};
    for (int a = 0; a < D; ++a) t[a] = tile[a];
    set(detail::tile_lattice(extent3(), t, D, PointWork::Stencil, points));
  }
  /// Tiles chosen by the library: Grid(extent, {0, 0, 0}) (and periodic axes with it).
  explicit Grid(Index<D> extent) : Grid(extent, Index<D>{}) {}
  /// Tiles chosen by the library for work of `work`'s kind: for all-pairs work (an N-body's
  /// bodies), one tile per worker, and with CUDA workers a split where both parts' task chains
  /// take the same time.
  Grid(Index<D> extent, PointWork work, std::array<bool, D> periodic = {})
      : extent_(extent), periodic_(periodic) {
    set(detail::tile_lattice(extent3(), {0, 0, 0}, D, work));
  }
  /// Tiles of different extents: the grid cut at `cuts` along each axis. With `split_axis` >=
  /// 0, a CPU/GPU split (split()): the tiles starting before `split` along that axis run on
  /// CUDA workers, the others on CPU workers; `split` must be a tile start there (or the
  /// extent: every tile on CUDA workers). Moving it (Field::retile) rebalances a run. Without
  /// a split the run's planner places the tiles; they stay as cut (tile numbers an application
  /// relies on stay), where tiles given as an extent (Grid(extent, tile)) that the planner
  /// puts on the CUDA workers are merged in a single-rank run (chosen() says so).
  static Grid cut(Index<D> extent, const Cuts& cuts, std::array<bool, D> periodic = {},
                  int split_axis = -1, std::int64_t split = -1, const PointData& points = {}) {
    Grid g(extent, periodic, 0);
    g.points_ = points;
    std::array<std::vector<std::int64_t>, 3> c;
    for (int a = 0; a < D; ++a) c[a] = cuts[a];
    g.set(detail::cut_lattice(g.extent3(), c, D, split_axis, split, points));
    return g;
  }

  const Index<D>& extent() const { return extent_; }
  /// The tile extent per axis: the largest tile along it (where tiles differ, see cuts()).
  const Index<D>& tile() const { return tile_; }
  /// The axes cut at positions of their own (tiles of different extents): their cut
  /// positions; empty on axes cut uniformly in tiles of tile() (the last may be smaller).
  const Cuts& cuts() const { return cuts_; }
  /// Tiles along `axis`.
  int tiles_along(int axis) const { return along_[axis]; }
  /// What the library chose, for tiles it chose or merged (with CUDA workers on one rank, tiles
  /// given as an extent that it places on them are merged, one slab per CUDA worker; empty
  /// otherwise).
  const std::string& chosen() const { return chosen_; }
  /// A split between CUDA and CPU workers (with CUDA workers: tiles the library chose, or the
  /// placement planner's for tiles a user gave in a single-rank run): the tiles that start
  /// before split() along split_axis() run on CUDA workers, the others on CPU workers
  /// (split() == the extent: all on CUDA workers, 0: all on CPU workers). split_axis() is -1
  /// without one (the scheduler places every tile).
  int split_axis() const { return split_axis_; }
  std::int64_t split() const { return split_; }
  /// With CUDA workers, where the tiles on them do not fit their GPUs' memory: the steps each
  /// visit of a slab advances as they stream through it (the planner's depth, which
  /// Stencil::auto_depth gives); 0 where they stay (docs/gpu.md, "Grids larger than a GPU").
  int stream_depth() const { return stream_depth_; }
  const std::array<bool, D>& periodic() const { return periodic_; }
  /// What a point of its fields was planned to hold (PointData; a field made beyond it on a
  /// streamed grid is refused).
  const PointData& point_data() const { return points_; }
  std::int64_t points() const {
    std::int64_t p = 1;
    for (int a = 0; a < D; ++a) p *= extent_[a];
    return p;
  }
  int tiles() const { return tiles_; }
  bool operator==(const Grid& o) const {
    for (int a = 0; a < D; ++a)
      if (extent_[a] != o.extent_[a] || tile_[a] != o.tile_[a] || periodic_[a] != o.periodic_[a] ||
          cuts_[a] != o.cuts_[a])
        return false;
    return split_axis_ == o.split_axis_ && split_ == o.split_;
  }
  bool operator!=(const Grid& o) const { return !(*this == o); }
  /// "64x64x64 in tiles of 64x64x8", or with cut axes their tile extents:
  /// "64x64x64 in tiles of 64x64x(24 24 4 4 4 4)".
  std::string describe() const {
    std::string s;
    for (int a = 0; a < D; ++a) s += (a ? "x" : "") + std::to_string(extent_[a]);
    s += " in tiles of ";
    for (int a = 0; a < D; ++a) {
      s += a ? "x" : "";
      if (cuts_[a].empty()) {
        s += std::to_string(tile_[a]);
        continue;
      }
      std::int64_t previous = 0;
      s += "(";
      for (std::int64_t c : cuts_[a]) s += std::to_string(c - previous) + " ", previous = c;
      s += std::to_string(extent_[a] - previous) + ")";
    }
    return s;
  }

 private:
  Grid(Index<D> extent, std::array<bool, D> periodic, int) : extent_(extent), periodic_(periodic) {}
  detail::Extent3 extent3() const {
    detail::Extent3 e{1, 1, 1};
    for (int a = 0; a < D; ++a) e[a] = extent_[a];
    return e;
  }
  void set(const detail::Lattice& lattice) {
    tiles_ = 1;
    for (int a = 0; a < D; ++a) {
      tile_[a] = lattice.tile[a];
      along_[a] = lattice.tiles[a];
      cuts_[a] = lattice.cuts[a];
      tiles_ *= lattice.tiles[a];
    }
    chosen_ = lattice.chosen;
    split_axis_ = lattice.split_axis;
    split_ = lattice.split;
    stream_depth_ = lattice.stream_depth;
  }

  Index<D> extent_, tile_{};
  std::array<bool, D> periodic_;
  PointData points_;
  Cuts cuts_;
  std::array<int, D> along_{};
  int tiles_ = 1;
  std::string chosen_;
  int split_axis_ = -1;
  std::int64_t split_ = -1;
  int stream_depth_ = 0;
};

}  // namespace tessera
