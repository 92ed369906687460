// Field storage: the tiles of a field (distribution, memory, handles), its ghost-layer
// exchange (halo plans from partition/, halo-pack/boundary/constant-ghosts tasks through the
// engine), and host access (fill, gather, single points, per-tile results).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/grid/checks.hpp"
#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"
#include "core/grid/slab_pipeline.hpp"
#include "tasks/halo.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

// Visits the rows of a tile's interior in order: (element offset in the tile buffer, global
// element index of the row's first point, points in the row).
template <class Visit>
void interior_rows(const TileGeometry& g, const GridSpec& grid, Visit visit) {
  for (std::int64_t z = 0; z < g.extent[2]; ++z)
    for (std::int64_t y = 0; y < g.extent[1]; ++y)
      visit(g.offset0 + y * g.stride_y + z * g.stride_z,
            g.origin[0] + grid.extent[0] * (g.origin[1] + y + grid.extent[1] * (g.origin[2] + z)),
            g.extent[0]);
}

// A tile's buffer: its points, `halo` ghost layers on each axis of the grid, every row's first
// point at the start of a cache line (partition::TileLayout; DataRegistry aligns the buffer).
partition::TileLayout tile_layout(const partition::Tile& t, int halo, int dims,
                                  std::size_t element_size) {
  return {t.extent, {halo, halo, dims == 3 ? halo : 0}, partition::line_elements(element_size)};
}

TileGeometry geometry_in(const partition::TileLayout& layout, const partition::Tile& t) {
  return {t.origin, t.extent, layout.offset(0, 0, 0), layout.stride(1), layout.stride(2)};
}

std::string grid_text(const std::array<int, 3>& g, int dims) {
  std::string s = std::to_string(g[0]) + " x " + std::to_string(g[1]);
  return dims == 3 ? s + " x " + std::to_string(g[2]) : s;
}

// The distribution of a field's tiles over the ranks: --rank-grid if given, else the rank
// grid that cuts the fewest points. Every rank computes the same, so no message is needed.
partition::Distribution distribute(const partition::Tiling& tiling, const Context& rt, int dims,
                                   const std::string& name) {
  const int ranks = rt.ranks;
  const std::array<int, 3>& tiles = tiling.tiles_per_axis();
  if (ranks > tiling.size())
    throw Error("field '" + name + "' has " + std::to_string(tiling.size()) +
                " tiles but the run has " + std::to_string(ranks) +
                " ranks; every rank needs a tile: use smaller tiles or fewer ranks");
  std::array<int, 3> grid{0, 0, 0};
  const std::vector<int>& forced = rt.options.rank_grid;
  if (!forced.empty()) {
    if (static_cast<int>(forced.size()) != dims &&
        !(dims == 2 && forced.size() == 3 && forced[2] == 1))
      throw Error("--rank-grid has " + std::to_string(forced.size()) + " values but field '" +
                  name + "' is " + std::to_string(dims) + "-D; give one rank count per axis");
    grid = {forced[0], forced[1], forced.size() == 3 ? forced[2] : 1};
    if (grid[0] * grid[1] * grid[2] != ranks)
      throw Error("--rank-grid " + grid_text(grid, dims) + " makes " +
                  std::to_string(grid[0] * grid[1] * grid[2]) + " ranks but the run has " +
                  std::to_string(ranks) + "; make the product equal the number of ranks");
    for (int a = 0; a < 3; ++a)
      if (grid[a] > tiles[a])
        throw Error("--rank-grid puts " + std::to_string(grid[a]) + " ranks along " + axis_name(a) +
                    " but field '" + name + "' has " + std::to_string(tiles[a]) + " tiles there; " +
                    "give each rank at least one tile per axis");
  } else {
    grid = partition::choose_rank_grid(tiling, ranks);
    if (grid[0] == 0)
      throw Error("the " + std::to_string(tiling.size()) + " tiles of field '" + name + "' (" +
                  grid_text(tiles, dims) + ") cannot be split into " + std::to_string(ranks) +
                  " blocks (a rank count per axis, at most one rank per tile); " +
                  "change the rank count or the tiles, or give --rank-grid");
  }
  return partition::distribute(tiling, grid);
}

}  // namespace

FieldStorage::FieldStorage(const GridSpec& grid, int halo, const FaceSpecs& faces,
                           std::size_t element_size, const char* type_name, std::string name)
    : grid_(grid), halo_(halo), element_size_(element_size), name_(std::move(name)) {
  check_field(halo, element_size, type_name, name_);
  type_ = type_name;
  faces_ = checked_faces(grid, faces, type_name);
  Context& rt = live_context("creating a Field");
  context_ = &rt;
  check_gpu_fields(rt, grid, halo, element_size, name_);
  build(rt);
}

namespace {
// The tile of `old` with the box of `tile` of `now`, or -1.
int same_tile(const partition::Tiling& old, const partition::Tiling& now, int tile) {
  const partition::Tile& t = now.tile(tile);
  const int o = old.tile_at(t.origin);
  const partition::Tile& u = old.tile(o);
  return u.origin == t.origin && u.extent == t.extent ? o : -1;
}
}  // namespace

void FieldStorage::build(Context& rt, Impl* reuse) {
  const GridSpec& grid = grid_;
  // Sizes and memory before anything is built: a tile count in the millions would otherwise
  // spend minutes registering handles and then fail inside StarPU. Available memory differs
  // between ranks, so they agree on the outcome.
  double other_tiles = 0;  // the run's other fields, whose bookkeeping the check sets aside
  for (const FieldStorage* f : rt.fields)
    if (f != this && f->impl_) other_tiles += f->tiles();
  comm::agree([&] {
    check_field_memory(grid, halo_, element_size_, name_, rt.ranks, rt.simulated, other_tiles);
  });
  std::array<std::vector<std::int64_t>, 3> starts;
  for (int a = 0; a < 3; ++a)
    starts[a] = partition::tile_starts(grid.extent[a], grid.tile[a], grid.cuts[a]);
  partition::Tiling tiling_of_grid(grid.extent, std::move(starts), grid.periodic);
  partition::Distribution distribution = distribute(tiling_of_grid, rt, grid.dims, name_);
  impl_ = std::make_unique<Impl>(Impl{std::move(tiling_of_grid), std::move(distribution), rt.rank});
  tasks::Engine& engine = *rt.engine;
  impl_->tag_name = engine.intern(name_);
  const partition::Tiling& tiling = impl_->tiling;
  impl_->tiles = std::vector<FieldTile>(static_cast<std::size_t>(tiling.size()));
  for (int t = 0; t < tiling.size(); ++t) {
    bool edge = false;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int n = tiling.neighbour(t, {dx, dy, dz});
          edge = edge || (n >= 0 && owner(n) != owner(t));
        }
    impl_->tile(t).rank_edge = edge;
    // Tiles a retile makes are not pinned (tasks::DataRegistry::allocate): pinning costs more
    // than it gains for the one transfer such a tile makes.
    impl_->tile(t).pinned = reuse == nullptr;
  }
  // Where each tile runs: the plan's (partition/), from the grid's split and stream depth.
  std::vector<bool> mine_tiles(impl_->tiles.size());
  for (int t = 0; t < tiling.size(); ++t) mine_tiles[static_cast<std::size_t>(t)] = mine(t);
  impl_->plan = partition::place_tiles(
      tiling, {grid_.split_axis, grid_.split, grid_.stream_depth, grid_.chosen}, mine_tiles,
      engine.cuda_workers());
  auto layout_bytes = [&](int t) {
    return static_cast<std::int64_t>(element_size_) *
           tile_layout(tiling.tile(t), halo_, grid_.dims, element_size_).size();
  };
  // The tiles a GPU streams share one buffer size, the largest's: StarPU gives a visit the
  // device buffer a leaving slab frees only where their vectors are as long (its allocation
  // cache matches on the footprint); another size frees one (cudaFree: the whole device waits)
  // and allocates. heat3d 1024^3 through 4 GiB on an H200, 10 slabs of 79 planes and 3 of 78: the
  // visits where the size changed waited 34-65 ms for their data, the others 23-27 (simulated:
  // the same at each change, docs/gpu.md "On a GPU node").
  std::int64_t streamed_bytes = 0;
  if (grid_.stream_depth > 0)
    for (int t = 0; t < tiling.size(); ++t)
      if (device_class(t) == DeviceClass::Cuda)
        streamed_bytes = std::max(streamed_bytes, layout_bytes(t));
  auto tile_bytes = [&](int t) {
    return streamed_bytes > 0 && device_class(t) == DeviceClass::Cuda ? streamed_bytes
                                                                      : layout_bytes(t);
  };
  // Whether a tile spans the grid along every axis but the outermost: then its points' planes
  // are one range of its buffer, which a visit can move without its ghost planes (tasks::Travel);
  // slabs along another axis (streamed along y) move whole.
  const auto whole_below_outermost = [&](const partition::Tile& tile) {
    for (int a = 0; a + 1 < grid_.dims; ++a)
      if (tile.extent[a] != grid_.extent[a]) return false;
    return true;
  };
  // Only this rank's tiles get memory; the others are placeholders StarPU-MPI knows the
  // owner of, which no task on this rank reads (only their face buffers travel). Allocated
  // first, and agreed on, so that a rank out of memory stops every rank before any handle is
  // registered (registration order gives StarPU-MPI its tags).
  if (reuse != nullptr)
    for (int t = 0; t < tiling.size(); ++t) {
      const int o = same_tile(reuse->tiling, tiling, t);
      if (o >= 0 && mine(t) && reuse->tile(o).memory != nullptr)
        impl_->tile(t).take(reuse->tile(o));
    }
  comm::agree([&] {
    for (int t = 0; t < tiling.size(); ++t) {
      FieldTile& tile = impl_->tile(t);
      if (!mine(t) || tile.handle != nullptr) continue;
      void* mem =
          tasks::DataRegistry::allocate(static_cast<std::size_t>(tile_bytes(t)), tile.pinned);
      if (mem == nullptr) {
        for (FieldTile& u : impl_->tiles) u.free();
        throw Error("out of memory allocating " + std::to_string(tile_bytes(t)) +
                    " bytes for tile " + std::to_string(t) + " of field '" + name_ +
                    "'; use a smaller grid or more ranks");
      }
      // Simulated memory is folded (tasks/data.hpp): nothing to clear, and no time to spend on
      // it. A retile's new tiles are cleared where they are filled (retile_in_place).
      if (!rt.simulated && reuse == nullptr)
        std::memset(mem, 0, static_cast<std::size_t>(tile_bytes(t)));
      tile.memory = mem;
      tile.bytes = static_cast<std::size_t>(tile_bytes(t));
    }
  });
  for (int t = 0; t < tiling.size(); ++t) {
    FieldTile& tile = impl_->tile(t);
    if (tile.handle != nullptr) continue;  // taken over from the tiling before
    const std::size_t elements = static_cast<std::size_t>(tile_bytes(t)) / element_size_;
    if (streamed_bytes > 0 && device_class(t) == DeviceClass::Cuda &&
        tasks::DataRegistry::moves_planes_only() && whole_below_outermost(tiling.tile(t))) {
      const auto [first, count] =
          tile_layout(tiling.tile(t), halo_, grid_.dims, element_size_).planes(grid_.dims);
      tile.travel = std::make_unique<tasks::Travel>();
      tile.travel->first = static_cast<std::size_t>(first) * element_size_;
      tile.travel->bytes = static_cast<std::size_t>(count) * element_size_;
    }
    tile.handle = engine.data().register_vector(tile.memory, elements, element_size_, owner(t),
                                                tile.travel.get());
    tile.data = &engine.data();
  }
  rt.fields.insert(this);
}

void FieldStorage::retile(const GridSpec& grid) {
  Context& rt = context();
  check_retile(grid_, grid, name_);
  if (grid == grid_) return;
  if (rt.ranks == 1) return retile_in_place(grid);
  // Every value, on every rank (the new tiles may belong to other ranks than the old ones);
  // waits for the tasks that write the field.
  std::vector<unsigned char> values;
  if (!rt.simulated)
    values.resize(static_cast<std::size_t>(grid_.extent[0] * grid_.extent[1] * grid_.extent[2]) *
                  element_size_);
  gather(values.data());
  release_handles();  // waits for the tasks that still read the old tiles or their faces
  grid_ = grid;
  build(rt);
  ++version_;  // no ghost layer of the new tiles is current: the next exchange makes them
  if (rt.simulated) return;
  for (int t = 0; t < tiles(); ++t) {
    if (!mine(t)) continue;
    auto* p = static_cast<unsigned char*>(acquire(t, true));
    interior_rows(geometry(t), grid_, [&](std::int64_t off, std::int64_t global, std::int64_t n) {
      std::memcpy(p + off * element_size_, values.data() + global * element_size_,
                  static_cast<std::size_t>(n) * element_size_);
    });
    release(t);
  }
}

// One rank: the tiles whose box does not change keep their memory and handle, so their data
// stays where it is (a GPU part's slabs in GPU memory); only the new tiles are filled, from the
// old tiles they overlap, and only the old tiles that go are brought to main memory.
void FieldStorage::retile_in_place(const GridSpec& grid) {
  Context& rt = context();
  tasks::DataRegistry& data = rt.engine->data();
  std::unique_ptr<Impl> old = std::move(impl_);
  for (auto& [key, set] : old->halos)  // face buffers: the next exchange plans them again
    set.release_buffers();
  grid_ = grid;
  build(rt, old.get());
  ++version_;  // no ghost layer of the new tiles is current: the next exchange makes them
  auto geometry_of = [&](const partition::Tiling& tiling, int tile) {
    const partition::Tile& t = tiling.tile(tile);
    return geometry_in(tile_layout(t, halo_, grid_.dims, element_size_), t);
  };
  // Each new tile (not taken over) with the old tiles it overlaps (their boxes differ).
  struct Fill {
    int tile;
    std::vector<int> from;
  };
  std::vector<Fill> fills;
  std::vector<bool> read(old->tiles.size(), false);
  const partition::Tiling& now = impl_->tiling;
  auto overlap = [](const TileGeometry& g, const TileGeometry& h, Extent3& lo, Extent3& hi) {
    bool any = true;
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::max(g.origin[a], h.origin[a]);
      hi[a] = std::min(g.origin[a] + g.extent[a], h.origin[a] + h.extent[a]);
      any = any && lo[a] < hi[a];
    }
    return any;
  };
  for (int t = 0; t < now.size(); ++t) {
    const int same = same_tile(old->tiling, now, t);
    if (same >= 0 && old->tile(same).handle == nullptr) continue;  // taken over
    Fill f{t, {}};
    Extent3 lo, hi;
    for (int o = 0; o < old->tiling.size(); ++o)
      if (overlap(geometry(t), geometry_of(old->tiling, o), lo, hi)) {
        f.from.push_back(o);
        read[static_cast<std::size_t>(o)] = true;
      }
    fills.push_back(std::move(f));
  }
  // Held while threads fill them: the new tiles written, the old ones read.
  std::vector<unsigned char*> dst(fills.size());
  for (std::size_t k = 0; k < fills.size(); ++k)
    dst[k] = static_cast<unsigned char*>(acquire(fills[k].tile, true));
  for (std::size_t o = 0; o < read.size(); ++o)
    if (read[o]) data.acquire(old->tiles[o].handle, false);
  // Cleared (ghost layers included: the next exchange writes them) and the interior copied from
  // the old tiles, a tile per thread at a time: a move re-cuts the whole CPU part of every
  // field, which one core alone clears and copies at a fraction of the node's memory speed
  // (figures: docs/scheduling.md, "Moving the split").
  auto fill = [&](std::size_t k) {
    const TileGeometry g = geometry(fills[k].tile);
    std::memset(dst[k], 0, impl_->tile(fills[k].tile).bytes);
    for (int o : fills[k].from) {
      const TileGeometry h = geometry_of(old->tiling, o);
      Extent3 lo, hi;
      overlap(g, h, lo, hi);
      const auto* src = static_cast<const unsigned char*>(old->tile(o).memory);
      for (std::int64_t z = lo[2]; z < hi[2]; ++z)
        for (std::int64_t y = lo[1]; y < hi[1]; ++y) {
          const std::int64_t to = g.offset0 + (lo[0] - g.origin[0]) +
                                  (y - g.origin[1]) * g.stride_y + (z - g.origin[2]) * g.stride_z;
          const std::int64_t from = h.offset0 + (lo[0] - h.origin[0]) +
                                    (y - h.origin[1]) * h.stride_y + (z - h.origin[2]) * h.stride_z;
          std::memcpy(dst[k] + to * element_size_, src + from * element_size_,
                      static_cast<std::size_t>(hi[0] - lo[0]) * element_size_);
        }
    }
  };
  if (!rt.simulated) for_each_on_threads(fills.size(), fill);  // simulated memory is folded
  for (std::size_t o = 0; o < read.size(); ++o)
    if (read[o]) data.release(old->tiles[o].handle);
  for (const Fill& f : fills) release(f.tile);
  old.reset();  // the old tiles not taken over unregistered and freed, then the old plans
}

void FieldTile::free() {
  if (handle != nullptr) data->unregister(handle);
  if (memory != nullptr) tasks::DataRegistry::deallocate(memory, bytes, pinned);
  handle = nullptr;
  memory = nullptr;
  travel.reset();  // after the handle: its last copy home read it
}

void FieldTile::take(FieldTile& from) {
  data = from.data;
  handle = std::exchange(from.handle, nullptr);
  memory = std::exchange(from.memory, nullptr);
  travel = std::move(from.travel);
  bytes = from.bytes;
  pinned = from.pinned;
}

void HaloSet::release_buffers() {
  for (HaloTile& t : tiles) {
    for (const auto* buffers : {&t.buffers, &t.spare_buffers})
      for (tasks::Handle h : *buffers) data->unregister_scratch(h);
    t.buffers.clear();
    t.spare_buffers.clear();
    t.sources.clear();
    t.spare_sources.clear();
  }
  for (const auto& [unit, ring] : rings)
    for (tasks::Handle h : ring) data->unregister_scratch(h);
  rings.clear();
}

FieldStorage::~FieldStorage() { release_handles(); }

Context& FieldStorage::context() const {
  if (impl_->released)
    throw Error("field '" + name_ +
                "' outlived its tessera::Runtime; create fields after the "
                "Runtime and use them only while it is alive");
  return *context_;
}

void FieldStorage::release_handles() {
  if (impl_->released) return;
  impl_->released = true;
  for (auto& [key, set] : impl_->halos) set.release_buffers();
  for (FieldTile& tile : impl_->tiles) tile.free();
  context_->fields.erase(this);
}

int FieldStorage::tiles() const { return impl_->tiling.size(); }

std::size_t FieldStorage::tile_bytes(int tile) const { return impl_->tile(tile).bytes; }

int FieldStorage::owner(int tile) const {
  return impl_->distribution.owner[static_cast<std::size_t>(tile)];
}

bool FieldStorage::mine(int tile) const { return owner(tile) == impl_->rank; }

bool FieldStorage::on_rank_edge(int tile) const { return impl_->tile(tile).rank_edge; }

const std::array<int, 3>& FieldStorage::rank_grid() const { return impl_->distribution.rank_grid; }

TileGeometry FieldStorage::geometry(int tile) const {
  const partition::Tile& t = impl_->tiling.tile(tile);
  return geometry_in(tile_layout(t, halo_, grid_.dims, element_size_), t);
}

int FieldStorage::tile_at(const Extent3& p) const { return impl_->tiling.tile_at(p); }

std::int64_t FieldStorage::thinnest_tile(int axis) const { return impl_->tiling.thinnest(axis); }

DeviceClass FieldStorage::device_class(int tile) const { return impl_->plan.device(tile).kind; }

// Counts the face buffers StarPU-MPI posted receives for in this exchange: those in its
// receive cache now. Writing a buffer (the owner's next halo-pack) drops it from every rank's
// cache, so each exchange counts its own messages only.
void FieldStorage::count_received(const HaloSet& set) {
  const FieldStorage& f = *this;
  Context& rt = f.context();
  if (!rt.engine->distributed()) return;
  for (int t = 0; t < f.tiles(); ++t) {
    if (f.mine(t)) continue;
    const HaloTile& tile = set.tile(t);
    for (std::size_t k = 0; k < tile.plan.pack_sizes.size(); ++k)
      if (rt.engine->data().received(tile.buffers[k])) {
        ++rt.received.messages;
        rt.received.bytes += tile.plan.pack_sizes[k] * static_cast<std::int64_t>(f.element_size());
      }
  }
}

// The boundary-function tasks of one tile: per face with Function ghost regions in `plan`, the
// face's function and its argument block (the function's prototype with the regions written
// in at offset 0).
static std::vector<HaloTile::FunctionTask> function_tasks(const partition::TileHaloPlan& plan,
                                                          const FaceSpecs& faces,
                                                          tasks::CodeletRegistry& codelets,
                                                          const std::string& type) {
  std::vector<HaloTile::FunctionTask> out;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      FunctionGhostList list;
      for (const auto& g : plan.functions)
        if (g.axis == a && g.side == s) list.region[list.count++] = g.region;
      if (list.count == 0) continue;
      const BoundaryFunction* fn = faces.face[a][s].function.get();
      HaloTile::FunctionTask task{&codelets.get(fn->name, type, fn->kind), fn->prototype};
      std::memcpy(task.args.data(), &list, sizeof(list));
      out.push_back(std::move(task));
    }
  return out;
}

tasks::TaskTag exchange_tag(const FieldStorage& f, int tile, long step) {
  tasks::TaskTag g;
  g.field = f.impl().tag_name;
  g.tile = tile;
  g.step = step;
  g.rank = f.owner(tile);
  return g;
}

// Per tile, one face buffer per direction of its plan, on the tile's owner: the set's
// buffers, or its spares.
static void add_face_buffers(const FieldStorage& f, HaloSet& set, bool spare) {
  set.data = &f.context().engine->data();
  for (int t = 0; t < f.tiles(); ++t) {
    HaloTile& tile = set.tile(t);
    for (std::int64_t size : tile.plan.pack_sizes)
      (spare ? tile.spare_buffers : tile.buffers)
          .push_back(set.data->register_face(static_cast<std::size_t>(size), f.element_size(),
                                             f.owner(t)));
  }
}

// Per tile, the face buffers (the set's or its spares) its ghost copies read.
static void add_sources(HaloSet& set, bool spare) {
  for (HaloTile& tile : set.tiles)
    for (const auto& [from, dir] : tile.plan.sources) {
      const HaloTile& owner = set.tile(from);
      std::size_t k = 0;
      while (owner.plan.pack_dirs[k] != dir) ++k;
      (spare ? tile.spare_sources : tile.sources)
          .push_back((spare ? owner.spare_buffers : owner.buffers)[k]);
    }
}

void FieldStorage::fill_constant_ghosts(const std::string& stencil, int width, bool box) {
  HaloSet& set = impl_->halos[{width, box}];
  if (!set.tiles.empty() && !set.constants_stale) return;
  tasks::Engine& engine = *context().engine;
  const int n = tiles();
  if (set.tiles.empty()) {
    const Extent3 halo{halo_, halo_, grid_.dims == 3 ? halo_ : 0};
    partition::FaceRules rules;
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s < 2; ++s) {
        rules.rule[a][s] = faces_.face[a][s].kind;
        rules.constant_bits[a][s] = faces_.face[a][s].constant_bits;
      }
    std::vector<partition::TileHaloPlan> plans =
        partition::plan_halos(impl_->tiling, halo, rules, width, box, grid_.dims,
                              partition::line_elements(element_size_));
    set.tiles = std::vector<HaloTile>(plans.size());
    for (std::size_t t = 0; t < plans.size(); ++t) set.tiles[t].plan = std::move(plans[t]);
    add_face_buffers(*this, set, false);
    add_sources(set, false);
    for (HaloTile& tile : set.tiles) {
      partition::TileHaloPlan& plan = tile.plan;
      tile.all_ghosts = plan.ghosts;
      partition::RegionCopyList copies;
      for (int r = 0; r < plan.ghosts.count; ++r) {
        partition::RegionCopyList& to =
            plan.ghosts.region[r].src_slot < 0 ? tile.constants : copies;
        to.region[to.count++] = plan.ghosts.region[r];
      }
      plan.ghosts = copies;
      tile.functions = function_tasks(plan, faces_, engine.codelets(), type_);
    }
  }
  set.constants_stale = false;
  tasks::Codelet& fill =
      engine.codelets().get(stencil, type_, tasks::constant_ghosts_kind(element_size_));
  for (int t = 0; t < n; ++t) {
    auto& constants = set.tile(t).constants;
    // A dropped tile's: before its visit. Where a tile's ghost planes stay on its GPU, the
    // visits' fills write its constant ghosts before anything reads them (and they are written
    // here again once its planes travel: leave_ghost_planes): a task here would take the slab
    // over the bus and back for nothing.
    if (constants.count > 0 && !impl_->dropped(t) && !impl_->planes_left(t))
      engine.submitter().submit(fill, {impl_->tile(t).handle}, {}, &constants, sizeof(constants),
                                false, exchange_tag(*this, t, -1), placement_of(*this, t));
  }
}

tasks::Placement placement_of(const FieldStorage& f, int tile, int priority) {
  const partition::Plan& plan = f.impl().plan;
  const partition::Device& device = plan.device(tile);
  const bool cuda = device.kind == DeviceClass::Cuda;
  tasks::Placement place;
  place.priority = std::max(priority, cuda && plan.edge(tile) ? 1 : 0);
  place.device = device;
  if (plan.streamed() && cuda) place.visit = tasks::Placement::Visit::Runs;
  return place;
}

bool on_another_gpu(const FieldStorage& f, int tile, int from) {
  return f.mine(from) && f.impl().plan.on_other_gpus(tile, from);
}

bool faces_cross(const FieldStorage& f, int tile) {
  // A GPU's own tiles' faces stay in its memory. Beside the CPU part of a split (one GPU) the
  // simulated node gained nothing from fetching them early (heat3d's hand-set shares 0 to 2 %
  // slower, docs/notebook/sim-history.md): only faces from another GPU or rank.
  return f.impl().plan.edge(tile) || f.impl().tile(tile).rank_edge;
}

// The halo-pack tasks, unless the tasks that wrote the field packed the face buffers already.
// `ahead`: the call that reads them packs ahead (plan_ahead): a tile's face towards its next
// visitor on the same GPU (which reads it from the GPU's ring) and the one its visitor before
// reads from its tile are left out, and a tile with no other face gets no task: packed, they
// took each slab over the bus and back for nothing, and the faces, written on the GPU with no
// memory at home, were evicted into pinned host memory allocated then, one by one (a streamed
// run's first pass, docs/notebook/simulation.md). Only this rank's tiles pack ahead; the faces
// towards other ranks are packed by every rank's tasks alike.
static void submit_packs(FieldStorage& f, HaloSet& set, const std::string& stencil, long version,
                         bool ahead = false) {
  if (set.packed == version) return;
  Context& rt = f.context();
  tasks::Engine& engine = *rt.engine;
  tasks::Codelet& pack =
      engine.codelets().get(stencil, f.type_name(), tasks::halo_pack_kind(f.element_size()));
  const int n = f.tiles();
  for (int t = 0; t < n; ++t) {
    HaloTile& tile = set.tile(t);
    const bool split = ahead && tile.pass[0].split();  // either pass's (plan_ahead)
    partition::RegionCopyList& packs = split ? tile.pass[0].after_packs : tile.plan.packs;
    if (packs.count == 0) continue;
    const std::vector<tasks::Handle> buffers =
        split ? tile.pass[0].after_pack_buffers(tile.buffers) : tile.buffers;
    engine.submitter().submit(pack, {f.impl().tile(t).handle}, buffers, &packs, sizeof(packs),
                              false, exchange_tag(f, t, rt.steps),
                              placement_of(f, t, f.on_rank_edge(t) ? 1 : 0));
  }
  set.packed = version;
  // Those left out hold nothing current: an exchange that does not pack ahead packs them all.
  if (ahead) set.packed_ahead = true;
}

void FieldStorage::exchange(const std::string& stencil, int width, bool box) {
  HaloSet& set = impl_->halos[{width, box}];
  // The ghost planes the tasks below write are read by others: they travel with the tiles again,
  // and those left behind before are stale.
  const bool were_left = impl_->slabs.ghost_planes_left;
  slabs::leave_ghost_planes(*this, false);
  set.forget_packed_ahead();
  if (set.version == version_ && !were_left) return;
  fill_constant_ghosts(stencil, width, box);
  Context& rt = context();
  tasks::Engine& engine = *rt.engine;
  const int n = tiles();
  auto tag = [&](int t, long step) { return exchange_tag(*this, t, step); };
  submit_packs(*this, set, stencil, version_);
  tasks::Codelet& boundary =
      engine.codelets().get(stencil, type_, tasks::boundary_kind(element_size_));
  for (int t = 0; t < n; ++t) {
    HaloTile& tile = set.tile(t);
    if (tile.plan.ghosts.count > 0)
      engine.submitter().submit(boundary, {impl_->tile(t).handle}, tile.sources, &tile.plan.ghosts,
                                sizeof(tile.plan.ghosts), false, tag(t, rt.steps),
                                placement_of(*this, t));
  }
  // Boundary functions last: they transform the mirrored values the boundary tasks wrote.
  for (int t = 0; t < n; ++t)
    for (auto& task : set.tile(t).functions)
      engine.submitter().submit(*task.codelet, {impl_->tile(t).handle}, {}, task.args.data(),
                                task.args.size(), false, tag(t, rt.steps), placement_of(*this, t));
  set.version = version_;
  count_received(set);
}

HaloSet* FieldStorage::exchange_in_tasks(const std::string& stencil, int width, bool box,
                                         bool packs_ahead) {
  HaloSet& set = impl_->halos[{width, box}];
  if (!packs_ahead) set.forget_packed_ahead();
  // Ghost planes left behind are stale wherever a visit finds them: filled again every time.
  if (set.version == version_ && !impl_->slabs.ghost_planes_left) return nullptr;
  fill_constant_ghosts(stencil, width, box);
  bool functions = false;
  for (const HaloTile& tile : set.tiles) functions = functions || !tile.functions.empty();
  if (!context().options.fused_exchange || functions) {
    exchange(stencil, width, box);
    return nullptr;
  }
  if (packs_ahead && grid_.stream_depth > 0) slabs::plan_ahead(*this, set);
  submit_packs(*this, set, stencil, version_, packs_ahead && grid_.stream_depth > 0);
  set.version = version_;
  return &set;
}

HaloSet* FieldStorage::pack_target() {
  if (!context().options.fused_exchange) return nullptr;
  HaloSet* last = nullptr;
  for (auto& [key, set] : impl_->halos)
    if (!set.tiles.empty() &&
        (last == nullptr || set.version > last->version))  // planned: buffers too
      last = &set;
  return last;
}

HaloSet* FieldStorage::pack_spare(HaloSet* set) {
  if (set == nullptr || !context().options.fused_exchange) return nullptr;
  if (!set->spares) {
    add_face_buffers(*this, *set, true);
    add_sources(*set, true);
    set->spares = true;
  }
  return set;
}

void FieldStorage::written_spare(HaloSet* set) {
  ++version_;
  if (set == nullptr) return;
  if (grid_.stream_depth > 0 && context().planner.machine().visits_prefetched)
    slabs::drop_faces_between_gpus(*this, *set);
  for (HaloTile& tile : set->tiles) {
    std::swap(tile.buffers, tile.spare_buffers);
    std::swap(tile.sources, tile.spare_sources);
  }
  set->packed = version_;
}

void FieldStorage::written(HaloSet* packed) {
  ++version_;
  if (packed == nullptr) return;
  packed->packed = version_;
  packed->packed_ahead = false;  // every face packed
}

bool FieldStorage::simulated() const { return context().simulated; }

void* FieldStorage::acquire(int tile, bool write) {
  if (impl_->dropped(tile)) {
    if (!write)
      throw Error(slabs::no_values("a host read", name()));  // collective callers check first
    // Its dropped values are not read (StarPU would abort: "not initialized"); what the host
    // leaves in its ghost layers is not the constants' values.
    context().engine->data().acquire_to_overwrite(impl_->tile(tile).handle);
    impl_->slabs.discarded[static_cast<std::size_t>(tile)] = 0;
    impl_->mark_constants_stale();
    return impl_->tile(tile).memory;
  }
  context().engine->data().acquire(impl_->tile(tile).handle, write);
  return impl_->tile(tile).memory;
}

void FieldStorage::release(int tile) { context().engine->data().release(impl_->tile(tile).handle); }

void FieldStorage::gather(void* out) const {
  slabs::check_holds_values(*this, "gather");
  auto* self = const_cast<FieldStorage*>(this);
  if (context().simulated) {
    // No values exist: wait for the writers as a real gather would (that takes simulated
    // time), leave `out` as the caller made it (zeros).
    for (int t = 0; t < tiles(); ++t)
      if (mine(t)) self->acquire(t, false), self->release(t);
    return;
  }
  auto* dst = static_cast<unsigned char*>(out);
  comm::share_owned(
      tiles(), [this](int t) { return owner(t); },
      [&](int t, std::vector<unsigned char>& packed) {
        const auto* p = static_cast<const unsigned char*>(self->acquire(t, false));
        interior_rows(geometry(t), grid_, [&](std::int64_t off, std::int64_t, std::int64_t n) {
          packed.insert(packed.end(), p + off * element_size_, p + (off + n) * element_size_);
        });
        self->release(t);
      },
      [&](int t, const unsigned char* from) {
        interior_rows(geometry(t), grid_, [&](std::int64_t, std::int64_t global, std::int64_t n) {
          std::memcpy(dst + global * element_size_, from, n * element_size_);
          from += n * element_size_;
        });
        return from;
      });
}

void FieldStorage::read_point(const Extent3& p, void* out) const {
  check_point(grid_, p);
  slabs::check_holds_values(*this, "read_point");
  const int tile = tile_at(p);
  if (context().simulated) {  // no values exist (see gather)
    std::memset(out, 0, element_size_);
    return;
  }
  if (mine(tile)) {
    const TileGeometry g = geometry(tile);
    auto* self = const_cast<FieldStorage*>(this);
    const auto* data = static_cast<const unsigned char*>(self->acquire(tile, false));
    const std::int64_t off = g.offset0 + (p[0] - g.origin[0]) + (p[1] - g.origin[1]) * g.stride_y +
                             (p[2] - g.origin[2]) * g.stride_z;
    std::memcpy(out, data + off * element_size_, element_size_);
    self->release(tile);
  }
  comm::broadcast(out, element_size_, owner(tile));
}

std::vector<double> FieldStorage::from_owners(const std::vector<double>& per_tile,
                                              int width) const {
  std::vector<double> out(per_tile.size());
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(width);
  comm::share_owned(
      tiles(), [this](int t) { return owner(t); },
      [&](int t, std::vector<unsigned char>& packed) {
        const auto* v =
            reinterpret_cast<const unsigned char*>(&per_tile[static_cast<std::size_t>(t * width)]);
        packed.insert(packed.end(), v, v + bytes);
      },
      [&](int t, const unsigned char* from) {
        std::memcpy(&out[static_cast<std::size_t>(t * width)], from, bytes);
        return from + bytes;
      });
  return out;
}

}  // namespace tessera::detail
