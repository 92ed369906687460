#include <starpu.h>
#ifdef TESSERA_WITH_MPI
#include <starpu_mpi.h>
#endif

#include <cstring>
#include <map>

#include "core/comm.hpp"
#include "core/field_registry.hpp"
#include "core/runtime_state.hpp"
#include "partition/tiling.hpp"
#include "tasks/halo.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/error.hpp"
#include "tessera/grid.hpp"

namespace tessera::detail {

// The halo buffers and copy plans for one (stencil radius, shape) used on a field.
struct HaloSet {
  std::vector<partition::TileHaloPlan> plans;
  std::vector<std::vector<Handle>> buffers;  // [tile][k]: buffer towards plans[tile].pack_dirs[k]
  // Constant (Dirichlet) ghost regions, split off plans[tile].ghosts: their values never
  // change and nothing else writes ghost layers, so they are written once, not every step.
  std::vector<kernels::RegionCopyList> constants;
  long version = -1;                         // field version the ghost layers reflect
};

struct FieldStorage::Impl {
  partition::Tiling tiling;
  partition::Distribution distribution;
  int rank = 0;                 // this process's rank
  std::vector<bool> rank_edge;  // per tile: a neighbour belongs to another rank
  std::map<std::pair<int, bool>, HaloSet> halos;
  bool released = false;
};

namespace {

std::string grid_text(const std::array<int, 3>& g, int dims) {
  std::string s = std::to_string(g[0]) + " x " + std::to_string(g[1]);
  return dims == 3 ? s + " x " + std::to_string(g[2]) : s;
}

// The distribution of a field's tiles over the ranks: --rank-grid if given, else the rank
// grid that cuts the fewest points. Every rank computes the same, so no message is needed.
partition::Distribution distribute(const partition::Tiling& tiling, const Runtime::State& rt,
                                   int dims, const std::string& name) {
  const int ranks = rt.ranks;
  const std::array<int, 3>& tiles = tiling.tiles_per_axis();
  if (ranks > tiling.size())
    throw Error("field '" + name + "' has " + std::to_string(tiling.size()) + " tiles but the run has " +
                std::to_string(ranks) + " ranks; every rank needs a tile: use smaller tiles or fewer ranks");
  std::array<int, 3> grid{0, 0, 0};
  const std::vector<int>& forced = rt.options.rank_grid;
  if (!forced.empty()) {
    if (static_cast<int>(forced.size()) != dims && !(dims == 2 && forced.size() == 3 && forced[2] == 1))
      throw Error("--rank-grid has " + std::to_string(forced.size()) + " values but field '" + name +
                  "' is " + std::to_string(dims) + "-D; give one rank count per axis");
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

FieldStorage::FieldStorage(const GridSpec& grid, int halo,
                           const std::array<std::array<FaceSpec, 2>, 3>& faces,
                           std::size_t element_size, std::string type_name, std::string name)
    : grid_(grid), halo_(halo), element_size_(element_size), type_(std::move(type_name)),
      name_(std::move(name)), faces_(faces) {
  Runtime::State& rt = runtime_state("creating a Field");
  partition::Tiling tiling_of_grid(grid.extent, grid.tile, grid.periodic);
  partition::Distribution distribution = distribute(tiling_of_grid, rt, grid.dims, name_);
  impl_ = std::make_unique<Impl>(Impl{std::move(tiling_of_grid), std::move(distribution), rt.rank, {}, {}});
  const partition::Tiling& tiling = impl_->tiling;
  for (int t = 0; t < tiling.size(); ++t) {
    bool edge = false;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int n = tiling.neighbour(t, {dx, dy, dz});
          edge = edge || (n >= 0 && owner(n) != owner(t));
        }
    impl_->rank_edge.push_back(edge);
  }
  for (int t = 0; t < tiling.size(); ++t) {
    const std::int64_t bytes = static_cast<std::int64_t>(element_size_) * geometry(t).stride_z *
                               (geometry(t).extent[2] + 2 * (grid_.dims == 3 ? halo_ : 0));
    // Only this rank's tiles get memory; the others are placeholders StarPU-MPI knows the
    // owner of, which no task on this rank reads (only their face buffers travel).
    if (!mine(t)) {
      memory_.push_back(nullptr);
      handles_.push_back(register_vector(nullptr, static_cast<std::size_t>(bytes) / element_size_,
                                         element_size_, owner(t)));
      continue;
    }
    void* mem = nullptr;
    // Pinned when CUDA workers exist, so transfers are asynchronous.
    if (starpu_malloc(&mem, static_cast<std::size_t>(bytes)) != 0 || mem == nullptr)
      throw Error("out of memory allocating " + std::to_string(bytes) + " bytes for tile " +
                  std::to_string(t) + " of field '" + name_ + "'; use a smaller grid");
    std::memset(mem, 0, static_cast<std::size_t>(bytes));
    memory_.push_back(mem);
    handles_.push_back(register_vector(mem, static_cast<std::size_t>(bytes) / element_size_,
                                       element_size_, owner(t)));
  }
  rt.fields.insert(this);
}

void release_field(FieldStorage& f) { f.release_handles(); }

FieldStorage::~FieldStorage() { release_handles(); }

void FieldStorage::release_handles() {
  if (impl_->released) return;
  impl_->released = true;
  Runtime::State& rt = runtime_state("destroying a Field");
  for (auto& [key, set] : impl_->halos)
    for (auto& tile : set.buffers)
      for (Handle h : tile) starpu_data_unregister_no_coherency(h);
  for (Handle h : handles_) starpu_data_unregister(h);
  for (void* m : memory_)
    if (m != nullptr) starpu_free(m);
  rt.fields.erase(this);
}

int FieldStorage::tiles() const { return impl_->tiling.size(); }

int FieldStorage::owner(int tile) const {
  return impl_->distribution.owner[static_cast<std::size_t>(tile)];
}

bool FieldStorage::mine(int tile) const { return owner(tile) == impl_->rank; }

bool FieldStorage::on_rank_edge(int tile) const {
  return impl_->rank_edge[static_cast<std::size_t>(tile)];
}

const std::array<int, 3>& FieldStorage::rank_grid() const {
  return impl_->distribution.rank_grid;
}

TileGeometry FieldStorage::geometry(int tile) const {
  const partition::Tile& t = impl_->tiling.tile(tile);
  const partition::TileLayout layout{t.extent, {halo_, halo_, grid_.dims == 3 ? halo_ : 0}};
  return {t.origin, t.extent, layout.offset(0, 0, 0), layout.stride(1), layout.stride(2)};
}

int FieldStorage::tile_at(const Extent3& p) const { return impl_->tiling.tile_at(p); }

std::int64_t FieldStorage::thinnest_tile(int axis) const { return impl_->tiling.thinnest(axis); }

void FieldStorage::exchange(const std::string& stencil, int width, bool box) {
  HaloSet& set = impl_->halos[{width, box}];
  if (set.version == version_) return;
  const partition::Extent3 halo{halo_, halo_, grid_.dims == 3 ? halo_ : 0};
  if (set.plans.empty()) {
    partition::FaceRules rules;
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s < 2; ++s) {
        const FaceSpec& f = faces_[a][s];
        rules.rule[a][s] = f.kind == 1 ? partition::FaceRule::Mirror
                                       : (f.kind == 0 ? partition::FaceRule::Constant
                                                      : partition::FaceRule::Neighbour);
        rules.constant_bits[a][s] = f.constant_bits;
      }
    set.plans = partition::plan_halos(impl_->tiling, halo, rules, width, box, grid_.dims);
    for (int t = 0; t < tiles(); ++t) {
      std::vector<Handle> bufs;
      for (std::int64_t size : set.plans[static_cast<std::size_t>(t)].pack_sizes)
        bufs.push_back(register_vector(nullptr, static_cast<std::size_t>(size), element_size_, owner(t)));
      set.buffers.push_back(std::move(bufs));
    }
    for (auto& plan : set.plans) {
      kernels::RegionCopyList copies, constants;
      for (int r = 0; r < plan.ghosts.count; ++r) {
        kernels::RegionCopyList& to = plan.ghosts.region[r].src_slot < 0 ? constants : copies;
        to.region[to.count++] = plan.ghosts.region[r];
      }
      plan.ghosts = copies;
      set.constants.push_back(constants);
    }
    Codelet& fill = codelet(stencil, type_, tasks::constant_ghosts_kind(element_size_));
    for (int t = 0; t < tiles(); ++t) {
      auto& constants = set.constants[static_cast<std::size_t>(t)];
      if (constants.count > 0)
        submit(fill, {handle(t)}, {}, &constants, sizeof(constants), false,
               stencil + ":constant-ghosts tile=" + std::to_string(t) + " " + name_, {t, tiles()});
    }
  }
  Codelet& pack = codelet(stencil, type_, tasks::halo_pack_kind(element_size_));
  Codelet& boundary = codelet(stencil, type_, tasks::boundary_kind(element_size_));
  const std::string suffix = " " + name_ + " step=" + std::to_string(runtime_state("exchange").steps);
  for (int t = 0; t < tiles(); ++t) {
    auto& plan = set.plans[static_cast<std::size_t>(t)];
    if (plan.packs.count > 0)
      submit(pack, {handle(t)}, set.buffers[static_cast<std::size_t>(t)], &plan.packs,
             sizeof(plan.packs), false, stencil + ":halo-pack tile=" + std::to_string(t) + suffix,
             {t, tiles(), on_rank_edge(t) ? 1 : 0});
  }
  for (int t = 0; t < tiles(); ++t) {
    auto& plan = set.plans[static_cast<std::size_t>(t)];
    std::vector<Handle> sources;
    for (const auto& [tile, dir] : plan.sources) {
      const auto& owner = set.plans[static_cast<std::size_t>(tile)];
      std::size_t k = 0;
      while (owner.pack_dirs[k] != dir) ++k;
      sources.push_back(set.buffers[static_cast<std::size_t>(tile)][k]);
    }
    if (plan.ghosts.count > 0)
      submit(boundary, {handle(t)}, sources, &plan.ghosts, sizeof(plan.ghosts), false,
             stencil + ":boundary tile=" + std::to_string(t) + suffix, {t, tiles()});
  }
  set.version = version_;
  count_received(set);
}

// Counts the face buffers StarPU-MPI posted receives for in this exchange: those in its
// receive cache now. Writing a buffer (the owner's next halo-pack) drops it from every rank's
// cache, so each exchange counts its own messages only.
void FieldStorage::count_received(const HaloSet& set) {
#ifdef TESSERA_WITH_MPI
  if (!runtime_state("exchange").distributed) return;
  Traffic& received = runtime_state("exchange").received;
  for (int t = 0; t < tiles(); ++t) {
    if (mine(t)) continue;
    const auto& plan = set.plans[static_cast<std::size_t>(t)];
    for (std::size_t k = 0; k < plan.pack_sizes.size(); ++k)
      if (starpu_mpi_cached_receive(set.buffers[static_cast<std::size_t>(t)][k]) != 0) {
        ++received.messages;
        received.bytes += plan.pack_sizes[k] * static_cast<std::int64_t>(element_size_);
      }
  }
#else
  (void)set;
#endif
}

void* FieldStorage::acquire(int tile, bool write) {
  starpu_data_acquire(handle(tile), write ? STARPU_RW : STARPU_R);
  return memory_[static_cast<std::size_t>(tile)];
}

void FieldStorage::release(int tile) { starpu_data_release(handle(tile)); }

namespace {
// Visits the rows of a tile's interior in order: (element offset in the tile buffer, global
// element index of the row's first point, points in the row).
template <class Visit>
void for_each_row(const TileGeometry& g, const GridSpec& grid, Visit visit) {
  for (std::int64_t z = 0; z < g.extent[2]; ++z)
    for (std::int64_t y = 0; y < g.extent[1]; ++y)
      visit(g.offset0 + y * g.stride_y + z * g.stride_z,
            g.origin[0] + grid.extent[0] * (g.origin[1] + y + grid.extent[1] * (g.origin[2] + z)),
            g.extent[0]);
}

// Every rank packs what it owns, tile by tile; all_gather concatenates the ranks in rank order;
// then unpack(tile, bytes) walks that concatenation, returning where the next tile starts.
template <class Pack, class Unpack>
void share_owned(const FieldStorage& f, Pack pack, Unpack unpack) {
  std::vector<unsigned char> packed;
  for (int t = 0; t < f.tiles(); ++t)
    if (f.mine(t)) pack(t, packed);
  const std::vector<unsigned char> all = comm::all_gather(packed.data(), packed.size());
  const unsigned char* next = all.data();
  for (int r = 0; r < comm::ranks(); ++r)
    for (int t = 0; t < f.tiles(); ++t)
      if (f.owner(t) == r) next = unpack(t, next);
}
}  // namespace

void FieldStorage::gather(void* out) const {
  auto* self = const_cast<FieldStorage*>(this);
  auto* dst = static_cast<unsigned char*>(out);
  share_owned(
      *this,
      [&](int t, std::vector<unsigned char>& packed) {
        const auto* p = static_cast<const unsigned char*>(self->acquire(t, false));
        for_each_row(geometry(t), grid_, [&](std::int64_t off, std::int64_t, std::int64_t n) {
          packed.insert(packed.end(), p + off * element_size_, p + (off + n) * element_size_);
        });
        self->release(t);
      },
      [&](int t, const unsigned char* from) {
        for_each_row(geometry(t), grid_, [&](std::int64_t, std::int64_t global, std::int64_t n) {
          std::memcpy(dst + global * element_size_, from, n * element_size_);
          from += n * element_size_;
        });
        return from;
      });
}

void FieldStorage::read_point(const Extent3& p, void* out) const {
  const int tile = tile_at(p);
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

std::vector<double> FieldStorage::from_owners(const std::vector<double>& per_tile) const {
  std::vector<double> out(per_tile.size());
  share_owned(
      *this,
      [&](int t, std::vector<unsigned char>& packed) {
        const auto* v = reinterpret_cast<const unsigned char*>(&per_tile[static_cast<std::size_t>(t)]);
        packed.insert(packed.end(), v, v + sizeof(double));
      },
      [&](int t, const unsigned char* from) {
        std::memcpy(&out[static_cast<std::size_t>(t)], from, sizeof(double));
        return from + sizeof(double);
      });
  return out;
}

}  // namespace tessera::detail
