#include "partition/tiling.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace tessera::partition {

std::int64_t clamped_tile(std::int64_t extent, std::int64_t tile) { return std::min(tile, extent); }

std::int64_t tile_count_along(std::int64_t extent, std::int64_t tile) {
  tile = clamped_tile(extent, tile);
  return (extent - 1) / tile + 1;  // not (extent + tile - 1) / tile, which overflows near 2^63
}

int tiles_along(std::int64_t extent, std::int64_t tile) {
  return static_cast<int>(tile_count_along(extent, tile));
}

std::int64_t thinnest_tile(std::int64_t extent, std::int64_t tile) {
  tile = clamped_tile(extent, tile);
  return std::min(tile, extent - (tile_count_along(extent, tile) - 1) * tile);
}

std::string cuts_error(std::int64_t extent, const Cuts& cuts) {
  std::int64_t previous = 0;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    const std::int64_t c = cuts[k];
    if (c <= previous || c >= extent)
      return "cut " + std::to_string(k) + " at " + std::to_string(c) +
             (c >= extent ? " is not inside the extent of " + std::to_string(extent)
                          : " does not follow the previous tile start " + std::to_string(previous));
    previous = c;
  }
  return {};
}

std::int64_t uniform_tile_of(std::int64_t extent, const Cuts& cuts) {
  if (cuts.empty()) return extent;
  const std::int64_t tile = cuts.front();
  for (std::size_t k = 0; k < cuts.size(); ++k)
    if (cuts[k] != static_cast<std::int64_t>(k + 1) * tile) return 0;
  return extent - cuts.back() <= tile ? tile : 0;
}

std::vector<std::int64_t> tile_starts(std::int64_t extent, std::int64_t tile, const Cuts& cuts) {
  std::vector<std::int64_t> starts{0};
  if (!cuts.empty()) {
    starts.insert(starts.end(), cuts.begin(), cuts.end());
    return starts;
  }
  tile = clamped_tile(extent, tile);
  for (std::int64_t s = tile; s < extent; s += tile) starts.push_back(s);
  return starts;
}

std::int64_t largest_tile(std::int64_t extent, std::int64_t tile, const Cuts& cuts) {
  if (cuts.empty()) return clamped_tile(extent, tile);
  std::int64_t largest = extent - cuts.back(), previous = 0;
  for (std::int64_t c : cuts) largest = std::max(largest, c - previous), previous = c;
  return largest;
}

std::int64_t thinnest_tile(std::int64_t extent, std::int64_t tile, const Cuts& cuts) {
  if (cuts.empty()) return thinnest_tile(extent, tile);
  std::int64_t thinnest = extent - cuts.back(), previous = 0;
  for (std::int64_t c : cuts) thinnest = std::min(thinnest, c - previous), previous = c;
  return thinnest;
}

std::int64_t tile_count_along(std::int64_t extent, std::int64_t tile, const Cuts& cuts) {
  return cuts.empty() ? tile_count_along(extent, tile) : static_cast<std::int64_t>(cuts.size()) + 1;
}

Tiling::Tiling(Extent3 extent, Extent3 tile, std::array<bool, 3> periodic)
    : Tiling(extent,
             {tile_starts(extent[0], tile[0], {}), tile_starts(extent[1], tile[1], {}),
              tile_starts(extent[2], tile[2], {})},
             periodic) {}

Tiling::Tiling(Extent3 extent, std::array<std::vector<std::int64_t>, 3> starts,
               std::array<bool, 3> periodic)
    : extent_(extent), starts_(std::move(starts)), periodic_(periodic) {
  for (int a = 0; a < 3; ++a) counts_[a] = static_cast<int>(starts_[a].size());
  auto along = [&](int a, int c) {  // origin and extent of the c-th tile along axis a
    const auto& s = starts_[static_cast<std::size_t>(a)];
    const std::int64_t lo = s[static_cast<std::size_t>(c)];
    const std::int64_t hi = c + 1 < counts_[a] ? s[static_cast<std::size_t>(c) + 1] : extent_[a];
    return std::make_pair(lo, hi - lo);
  };
  for (int z = 0; z < counts_[2]; ++z)
    for (int y = 0; y < counts_[1]; ++y)
      for (int x = 0; x < counts_[0]; ++x) {
        Tile t;
        t.id = static_cast<int>(tiles_.size());
        t.coord = {x, y, z};
        for (int a = 0; a < 3; ++a) std::tie(t.origin[a], t.extent[a]) = along(a, t.coord[a]);
        tiles_.push_back(t);
      }
}

std::int64_t Tiling::thinnest(int axis) const {
  const auto& s = starts_[static_cast<std::size_t>(axis)];
  std::int64_t thinnest = extent_[axis] - s.back();
  for (std::size_t k = 1; k < s.size(); ++k) thinnest = std::min(thinnest, s[k] - s[k - 1]);
  return thinnest;
}

int Tiling::tile_at(const Extent3& p) const {
  int id = 0;
  for (int a = 2; a >= 0; --a) {
    const auto& s = starts_[static_cast<std::size_t>(a)];
    const auto c = std::upper_bound(s.begin(), s.end(), p[a]) - s.begin() - 1;
    id = id * counts_[a] + static_cast<int>(c);
  }
  return id;
}

int Tiling::neighbour(int id, Dir3 dir) const {
  std::array<int, 3> c = tile(id).coord;
  for (int a = 0; a < 3; ++a) {
    c[a] += dir[a];
    if (c[a] < 0 || c[a] >= counts_[a]) {
      if (!periodic_[a]) return -1;
      c[a] = (c[a] + counts_[a]) % counts_[a];
    }
  }
  return c[0] + counts_[0] * (c[1] + counts_[1] * c[2]);
}

std::int64_t TileLayout::stride(int axis) const {
  if (axis == 0) return 1;
  const std::int64_t row = n[0] + 2 * halo[0];
  std::int64_t s = (row + line - 1) / line * line;
  for (int a = 1; a < axis; ++a) s *= n[a] + 2 * halo[a];
  return s;
}

std::int64_t TileLayout::lead() const { return (line - halo[0] % line) % line; }

std::int64_t TileLayout::size() const { return lead() + stride(3); }

std::int64_t TileLayout::offset(std::int64_t x, std::int64_t y, std::int64_t z) const {
  return lead() + (x + halo[0]) + (y + halo[1]) * stride(1) + (z + halo[2]) * stride(2);
}

std::pair<std::int64_t, std::int64_t> TileLayout::planes(int dims) const {
  const int a = dims == 3 ? 2 : 1;
  return {lead() + halo[a] * stride(a), n[a] * stride(a)};
}

std::int64_t line_elements(std::size_t element_size) {
  const bool divides =
      element_size > 0 && element_size <= kCacheLineBytes && kCacheLineBytes % element_size == 0;
  return divides ? static_cast<std::int64_t>(kCacheLineBytes / element_size) : 1;
}

namespace {

std::vector<Dir3> directions(bool box, int dims) {
  std::vector<Dir3> out;
  const int zr = dims == 3 ? 1 : 0;
  for (int z = -zr; z <= zr; ++z)
    for (int y = -1; y <= 1; ++y)
      for (int x = -1; x <= 1; ++x) {
        int nonzero = (x != 0) + (y != 0) + (z != 0);
        if (nonzero == 0 || (!box && nonzero > 1)) continue;
        out.push_back({x, y, z});
      }
  return out;
}

// The points of a tile that the neighbour at `dir` reads: `width` layers on the axes where
// dir is non-zero, the whole extent elsewhere.
Extent3 face_dims(const Extent3& n, const Dir3& dir, int width) {
  Extent3 m{};
  for (int a = 0; a < 3; ++a) m[a] = dir[a] == 0 ? n[a] : width;
  return m;
}

void dense_strides(const Extent3& m, std::int64_t (&s)[3]) {
  s[0] = 1;
  s[1] = m[0];
  s[2] = m[0] * m[1];
}

Dir3 negate(Dir3 d) { return {-d[0], -d[1], -d[2]}; }

// The packs of each tile: a dense face buffer towards every direction some tile reads.
void add_packs(std::vector<TileHaloPlan>& plans, const Tiling& tiling,
               const std::vector<Dir3>& dirs, const std::vector<std::vector<bool>>& needed,
               const Extent3& halo, int width, std::int64_t line) {
  for (int id = 0; id < tiling.size(); ++id) {
    const Tile& t = tiling.tile(id);
    const TileLayout layout{t.extent, halo, line};
    TileHaloPlan& plan = plans[static_cast<std::size_t>(id)];
    for (std::size_t k = 0; k < dirs.size(); ++k) {
      if (!needed[static_cast<std::size_t>(id)][k]) continue;
      const Dir3& e = dirs[k];
      const Extent3 m = face_dims(t.extent, e, width);
      RegionCopy r;
      r.src_slot = 0;
      r.dst_slot = 1 + static_cast<int>(plan.pack_dirs.size());
      Extent3 lo{};
      for (int a = 0; a < 3; ++a) {
        r.dims[a] = m[a];
        lo[a] = e[a] > 0 ? t.extent[a] - width : 0;
        r.src_stride[a] = layout.stride(a);
      }
      r.src_start = layout.offset(lo[0], lo[1], lo[2]);
      dense_strides(m, r.dst_stride);
      plan.pack_dirs.push_back(e);
      plan.pack_sizes.push_back(m[0] * m[1] * m[2]);
      plan.packs.region[plan.packs.count++] = r;
    }
  }
}

}  // namespace

std::vector<TileHaloPlan> plan_halos(const Tiling& tiling, const Extent3& halo,
                                     const FaceRules& rules, int width, bool box, int dims,
                                     std::int64_t line) {
  const std::vector<Dir3> dirs = directions(box, dims);
  std::vector<TileHaloPlan> plans(static_cast<std::size_t>(tiling.size()));
  // needed[tile][k]: whether the buffer of `tile` towards dirs[k] is read by someone.
  std::vector<std::vector<bool>> needed(plans.size(), std::vector<bool>(dirs.size(), false));

  for (int id = 0; id < tiling.size(); ++id) {
    const Tile& t = tiling.tile(id);
    const TileLayout layout{t.extent, halo, line};
    TileHaloPlan& plan = plans[static_cast<std::size_t>(id)];
    for (const Dir3& d : dirs) {
      RegionCopy r;
      r.dst_slot = 0;
      Extent3 lo{};
      Dir3 mapped{};
      int constant_axis = -1, function_axis = -1, function_side = 0;
      std::int64_t base[3] = {0, 0, 0};
      int sign[3] = {1, 1, 1};
      for (int a = 0; a < 3; ++a) {
        r.dims[a] = d[a] == 0 ? t.extent[a] : width;
        lo[a] = d[a] < 0 ? -width : (d[a] > 0 ? t.extent[a] : 0);
        if (d[a] == 0) continue;
        Dir3 along{};
        along[a] = d[a];
        const int side = d[a] < 0 ? 0 : 1;
        // A neighbour tile (across the wrap on a periodic axis) supplies the ghosts; else the
        // face's boundary condition does.
        const int across = tiling.neighbour(id, along);
        if (across == id && t.extent[a] >= width) {
          // The tile spans this periodic axis, so it is its own neighbour across the wrap: the
          // ghosts are its own points on the other side, read where they are (one copy, no face
          // buffer to pack, hand over and read: life's 1024^2 slabs had 8 face buffers a tile,
          // two of them their own x faces and four corners of the y faces; now they read 2).
          base[a] = d[a] < 0 ? t.extent[a] - width : 0;
          continue;
        }
        const Boundary::Kind rule = across >= 0 ? Boundary::Kind::Periodic : rules.rule[a][side];
        if (rule == Boundary::Kind::Periodic) {
          mapped[a] = d[a];
        } else if (rule == Boundary::Kind::Neumann || rule == Boundary::Kind::Function) {
          // ghost -w+i mirrors to w-1-i; ghost n+i mirrors to n-1-i
          base[a] = d[a] < 0 ? width - 1 : t.extent[a] - 1;
          sign[a] = -1;
          if (rule == Boundary::Kind::Function && function_axis < 0) {
            function_axis = a;
            function_side = side;
          }
        } else if (rule == Boundary::Kind::NeumannVertex) {
          // about the first point: ghost -w+i mirrors to w-i; ghost n+i mirrors to n-2-i
          base[a] = d[a] < 0 ? width : t.extent[a] - 2;
          sign[a] = -1;
        } else if (constant_axis < 0) {
          constant_axis = a;
          r.constant_bits = rules.constant_bits[a][side];
        }
      }
      r.dst_start = layout.offset(lo[0], lo[1], lo[2]);
      for (int a = 0; a < 3; ++a) r.dst_stride[a] = layout.stride(a);
      if (constant_axis >= 0) {
        r.src_slot = -1;
      } else if (mapped == Dir3{0, 0, 0}) {
        r.src_slot = 0;
        r.src_start = layout.offset(base[0], base[1], base[2]);
        for (int a = 0; a < 3; ++a) r.src_stride[a] = sign[a] * layout.stride(a);
      } else {
        const int source = tiling.neighbour(id, mapped);
        const Dir3 e = negate(mapped);
        auto key = std::make_pair(source, e);
        auto it = std::find(plan.sources.begin(), plan.sources.end(), key);
        if (it == plan.sources.end()) it = plan.sources.insert(plan.sources.end(), key);
        r.src_slot = 1 + static_cast<int>(it - plan.sources.begin());
        needed[static_cast<std::size_t>(source)]
              [static_cast<std::size_t>(std::find(dirs.begin(), dirs.end(), e) - dirs.begin())] =
                  true;
        std::int64_t s[3];
        dense_strides(face_dims(tiling.tile(source).extent, e, width), s);
        r.src_start = base[0] * s[0] + base[1] * s[1] + base[2] * s[2];
        for (int a = 0; a < 3; ++a) r.src_stride[a] = sign[a] * s[a];
      }
      plan.ghosts.region[plan.ghosts.count++] = r;
      if (constant_axis < 0 && function_axis >= 0) {
        TileHaloPlan::FunctionGhosts g{function_axis, function_side, {}};
        for (int a = 0; a < 3; ++a) {
          g.region.dims[a] = r.dims[a];
          g.region.stride[a] = layout.stride(a);
          g.region.origin[a] = t.origin[a] + lo[a];
        }
        g.region.start = r.dst_start;
        plan.functions.push_back(g);
      }
    }
  }

  add_packs(plans, tiling, dirs, needed, halo, width, line);
  return plans;
}

RegionCopy read_from_tile(const RegionCopy& ghost, const RegionCopy& pack) {
  // The face buffer is dense (pack.dst_stride, axis 0 fastest): the ghost region's first
  // element there is a point of the face, each of its steps a step of the face's axes.
  RegionCopy r = ghost;
  std::int64_t rest = ghost.src_start;
  r.src_start = pack.src_start;
  for (int a = 2; a >= 0; --a) {
    const std::int64_t face_stride = pack.dst_stride[a];
    const std::int64_t at = rest / face_stride;
    rest -= at * face_stride;
    r.src_start += at * pack.src_stride[a];
    r.src_stride[a] = ghost.src_stride[a] / face_stride * pack.src_stride[a];
  }
  return r;
}

std::int64_t cut_points(const Tiling& tiling, const std::array<int, 3>& rank_grid) {
  const Extent3& n = tiling.extent();
  std::int64_t total = 0;
  for (int a = 0; a < 3; ++a) {
    const int cuts = rank_grid[a] - 1 + (tiling.periodic(a) && rank_grid[a] > 1 ? 1 : 0);
    total += cuts * n[(a + 1) % 3] * n[(a + 2) % 3];
  }
  return total;
}

std::array<int, 3> choose_rank_grid(const Tiling& tiling, int ranks) {
  const std::array<int, 3>& tiles = tiling.tiles_per_axis();
  std::array<int, 3> best{0, 0, 0};
  std::int64_t best_cut = -1;
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px != 0 || px > tiles[0]) continue;
    for (int py = 1; py <= ranks / px; ++py) {
      if ((ranks / px) % py != 0 || py > tiles[1]) continue;
      const int pz = ranks / px / py;
      if (pz > tiles[2]) continue;
      const std::int64_t cut = cut_points(tiling, {px, py, pz});
      if (best_cut < 0 || cut < best_cut) {
        best = {px, py, pz};
        best_cut = cut;
      }
    }
  }
  return best;
}

Distribution distribute(const Tiling& tiling, const std::array<int, 3>& rank_grid) {
  Distribution d;
  d.rank_grid = rank_grid;
  const std::array<int, 3>& tiles = tiling.tiles_per_axis();
  for (int id = 0; id < tiling.size(); ++id) {
    const auto& c = tiling.tile(id).coord;
    int block[3];
    for (int a = 0; a < 3; ++a)
      block[a] = static_cast<int>(static_cast<std::int64_t>(c[a]) * rank_grid[a] / tiles[a]);
    d.owner.push_back(block[0] + rank_grid[0] * (block[1] + rank_grid[1] * block[2]));
  }
  return d;
}

}  // namespace tessera::partition
