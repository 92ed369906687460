#include <starpu.h>

#include <cstring>
#include <map>

#include "core/field_registry.hpp"
#include "core/runtime_state.hpp"
#include "partition/tiling.hpp"
#include "tasks/halo.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/error.hpp"

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
  std::map<std::pair<int, bool>, HaloSet> halos;
  bool released = false;
};

FieldStorage::FieldStorage(const GridSpec& grid, int halo,
                           const std::array<std::array<FaceSpec, 2>, 3>& faces,
                           std::size_t element_size, std::string type_name, std::string name)
    : grid_(grid), halo_(halo), element_size_(element_size), type_(std::move(type_name)),
      name_(std::move(name)), faces_(faces) {
  Runtime::State& rt = runtime_state("creating a Field");
  impl_ = std::make_unique<Impl>(Impl{partition::Tiling(grid.extent, grid.tile, grid.periodic), {}});
  for (int t = 0; t < impl_->tiling.size(); ++t) {
    const std::int64_t bytes = static_cast<std::int64_t>(element_size_) * geometry(t).stride_z *
                               (geometry(t).extent[2] + 2 * (grid_.dims == 3 ? halo_ : 0));
    void* mem = nullptr;
    // Pinned when CUDA workers exist, so transfers are asynchronous.
    if (starpu_malloc(&mem, static_cast<std::size_t>(bytes)) != 0 || mem == nullptr)
      throw Error("out of memory allocating " + std::to_string(bytes) + " bytes for tile " +
                  std::to_string(t) + " of field '" + name_ + "'; use a smaller grid");
    std::memset(mem, 0, static_cast<std::size_t>(bytes));
    memory_.push_back(mem);
    starpu_data_handle_t h = nullptr;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(mem),
                                static_cast<std::uint32_t>(bytes / element_size_), element_size_);
    handles_.push_back(h);
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
  for (void* m : memory_) starpu_free(m);
  rt.fields.erase(this);
}

int FieldStorage::tiles() const { return impl_->tiling.size(); }

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
    for (const auto& plan : set.plans) {
      std::vector<Handle> bufs;
      for (std::int64_t size : plan.pack_sizes) {
        starpu_data_handle_t h = nullptr;
        starpu_vector_data_register(&h, -1, 0, static_cast<std::uint32_t>(size), element_size_);
        bufs.push_back(h);
      }
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
               stencil + ":constant-ghosts tile=" + std::to_string(t) + " " + name_);
    }
  }
  Codelet& pack = codelet(stencil, type_, tasks::halo_pack_kind(element_size_));
  Codelet& boundary = codelet(stencil, type_, tasks::boundary_kind(element_size_));
  const std::string suffix = " " + name_ + " step=" + std::to_string(runtime_state("exchange").steps);
  for (int t = 0; t < tiles(); ++t) {
    auto& plan = set.plans[static_cast<std::size_t>(t)];
    if (plan.packs.count > 0)
      submit(pack, {handle(t)}, set.buffers[static_cast<std::size_t>(t)], &plan.packs,
             sizeof(plan.packs), false, stencil + ":halo-pack tile=" + std::to_string(t) + suffix);
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
             stencil + ":boundary tile=" + std::to_string(t) + suffix);
  }
  set.version = version_;
}

void* FieldStorage::acquire(int tile, bool write) {
  starpu_data_acquire(handle(tile), write ? STARPU_RW : STARPU_R);
  return memory_[static_cast<std::size_t>(tile)];
}

void FieldStorage::release(int tile) { starpu_data_release(handle(tile)); }

}  // namespace tessera::detail
