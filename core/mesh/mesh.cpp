// Mesh objects: sets, maps, dats and globals, partition_mesh (partition/ cuts the sets, this
// registers the tiles), dat gathers and the globals' reductions (increments exact, min and max
// in element order). One loop's tasks are core/mesh/loop.cpp's.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/runtime/comm.hpp"
#include "core/mesh/mesh_impl.hpp"
#include "partition/autotile.hpp"
#include "tessera/detail/exact_sum.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

bool reverse_increments = false;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// Registers a host array the tasks of `tile` read (a map in local numbers, a plan): the
// memory is the owner's; other ranks register a placeholder StarPU-MPI knows the owner of.
tasks::Handle register_ints(MeshStorage& mesh, std::vector<std::int32_t>& data, int tile) {
  if (data.empty()) data.push_back(0);  // StarPU vectors are never empty
  return mesh.context->engine->data().register_vector(mesh.mine(tile) ? data.data() : nullptr,
                                                      data.size(), sizeof(std::int32_t),
                                                      mesh.owner[at(tile)]);
}

}  // namespace

void reverse_increment_order_for_testing(bool reverse) { reverse_increments = reverse; }

// ---- sets and maps -----------------------------------------------------------------------

std::shared_ptr<SetStorage> make_set(std::int64_t size, std::string name) {
  if (name.empty()) throw Error("a mesh set needs a name, such as \"cells\"");
  if (size < 1 || size > 2147483647)
    throw Error("set '" + name + "' has size " + std::to_string(size) +
                "; a set holds 1 to 2147483647 elements");
  auto s = std::make_shared<SetStorage>();
  s->size = size;
  s->name = std::move(name);
  return s;
}

std::int64_t set_size(const SetStorage& s) { return s.size; }
const std::string& set_name(const SetStorage& s) { return s.name; }
int set_tiles(const SetStorage& s) { return s.mesh ? s.mesh->tiles() : 0; }

std::shared_ptr<MapStorage> make_map(const std::shared_ptr<SetStorage>& from,
                                     const std::shared_ptr<SetStorage>& to, int arity,
                                     std::vector<std::int32_t> indices, std::string name) {
  if (name.empty()) throw Error("a mesh map needs a name, such as \"pedge\"");
  const std::string what = "map '" + name + "' (from '" + from->name + "' to '" + to->name + "')";
  if (arity < 1)
    throw Error(what + " has arity " + std::to_string(arity) +
                "; give at least 1 target per element");
  if (static_cast<std::int64_t>(indices.size()) != from->size * arity)
    throw Error(what + " has " + std::to_string(indices.size()) + " indices but needs " +
                std::to_string(from->size * arity) + " (" + std::to_string(from->size) +
                " elements of '" + from->name + "' x arity " + std::to_string(arity) +
                "), element-major");
  for (std::size_t k = 0; k < indices.size(); ++k)
    if (indices[k] < 0 || indices[k] >= to->size)
      throw Error(what + ": entry " + std::to_string(k) + " (element " +
                  std::to_string(k / at(arity)) + ", index " + std::to_string(k % at(arity)) +
                  ") is " + std::to_string(indices[k]) + " but set '" + to->name + "' has " +
                  std::to_string(to->size) + " elements; indices must lie in [0, " +
                  std::to_string(to->size) + ") (0-based, as in OP2's C API)");
  for (const auto* s : {from.get(), to.get()})
    if (s->mesh)
      throw Error(what + " is declared after partition_mesh cut set '" + s->name +
                  "'; declare every map before partitioning (they decide the tiles and halos)");
  auto m = std::make_shared<MapStorage>();
  m->from = from;
  m->to = to;
  m->arity = arity;
  m->indices = std::move(indices);
  m->name = std::move(name);
  from->maps.push_back(m);
  if (to != from) to->maps.push_back(m);
  return m;
}

// ---- the partition -----------------------------------------------------------------------

Context& MeshStorage::live(const std::string& what) const {
  if (released)
    throw Error(what +
                " belongs to a mesh whose tessera::Runtime has ended; partition and use "
                "meshes only while the Runtime is alive");
  return *context;
}

IncrementState& MeshStorage::increments_of(MapStorage& map, unsigned mask) {
  auto [it, fresh] = increments.try_emplace({map.number, mask});
  IncrementState& s = it->second;
  if (!fresh) return s;
  partition::MeshMap pm{map.from->number, map.to->number, map.arity, map.indices.data()};
  s.plan = partition::plan_increments(part, pm, mask, reverse_increments);
  for (int t = 0; t < tiles(); ++t) {
    const bool elements = !part.sets[at(map.from->number)].owned[at(t)].empty();
    s.codes.push_back(elements ? register_ints(*this, s.plan.codes[at(t)], t) : nullptr);
  }
  for (int u = 0; u < tiles(); ++u)
    s.combine.push_back(
        s.plan.sources[at(u)].empty() ? nullptr : register_ints(*this, s.plan.combine[at(u)], u));
  for (int t = 0; t < tiles(); ++t) {
    const bool elements = s.codes[at(t)] != nullptr;
    s.device_codes.push_back(elements ? register_ints(*this, s.plan.device_codes[at(t)], t)
                                      : nullptr);
    s.local_gather.push_back(elements ? register_ints(*this, s.plan.local_gather[at(t)], t)
                                      : nullptr);
  }
  return s;
}

void MeshStorage::release_handles() {
  if (released) return;
  released = true;
  tasks::DataRegistry& data = context->engine->data();
  for (auto& per_tile : map_handles)
    for (tasks::Handle h : per_tile) data.unregister(h);
  for (auto& per_tile : export_handles)
    for (tasks::Handle h : per_tile)
      if (h != nullptr) data.unregister(h);
  for (auto& [key, s] : increments) {
    for (tasks::Handle h : s.codes)
      if (h != nullptr) data.unregister(h);
    for (const auto* handles : {&s.combine, &s.device_codes, &s.local_gather})
      for (tasks::Handle h : *handles)
        if (h != nullptr) data.unregister(h);
  }
  context->handle_owners.erase(this);
  // Sets hold their mesh and the mesh holds the sets (through maps too): let go of them last,
  // since dropping the last set may free this mesh.
  const auto keep_sets = std::move(sets);
  const auto keep_maps = std::move(maps);
}

MeshStorage::~MeshStorage() { release_handles(); }

void partition_mesh(const std::shared_ptr<SetStorage>& primary, int tiles, Partitioner method) {
  Context& rt = live_context("tessera::partition_mesh");
  if (primary->mesh)
    throw Error("set '" + primary->name +
                "' is already partitioned (with the sets its maps reach); "
                "call partition_mesh once per mesh");
  // The sets and maps connected to the primary set.
  auto mesh = std::make_shared<MeshStorage>();
  mesh->context = &rt;
  std::vector<SetStorage*> todo{primary.get()};
  mesh->sets.push_back(primary);
  primary->number = 0;
  for (std::size_t next = 0; next < todo.size(); ++next)
    for (const auto& weak : todo[next]->maps) {
      std::shared_ptr<MapStorage> m = weak.lock();
      if (!m || m->number >= 0) continue;
      m->number = static_cast<int>(mesh->maps.size());
      mesh->maps.push_back(m);
      for (const auto& s : {m->from, m->to})
        if (s->number < 0) {
          if (s->mesh)
            throw Error("set '" + s->name + "' is already partitioned with another mesh");
          s->number = static_cast<int>(mesh->sets.size());
          mesh->sets.push_back(s);
          todo.push_back(s.get());
        }
    }
  const auto undo = [&] {
    for (auto& s : mesh->sets) s->number = -1;
    for (auto& m : mesh->maps) m->number = -1;
  };
  if (tiles == 0) {  // the library chooses, from every rank's workers (the same on each rank)
    // The workers that run the tiles, as the run's planner places them.
    std::string placed;
    const int workers = rt.planner.mesh_workers(&placed);
    tiles = partition::choose_mesh_tiles(primary->size, workers, rt.ranks);
    announce(rt, "tessera: tiles of set '" + primary->name + "' (" + std::to_string(primary->size) +
                     " elements): " + std::to_string(tiles) + " for " + std::to_string(workers) +
                     " workers (at least " + std::to_string(partition::kMinMeshTile) +
                     " elements a tile, up to " + std::to_string(partition::kMostMeshRounds) +
                     " per worker)" + placed);
  }
  if (tiles < 1 || tiles > primary->size || tiles < rt.ranks) {
    undo();
    throw Error("partition_mesh(" + primary->name + ", " + std::to_string(tiles) +
                "): the tile count must lie in [" + std::to_string(rt.ranks) + ", " +
                std::to_string(primary->size) +
                "] (at least one tile per rank, at most one per element of '" + primary->name +
                "'), or 0 for the library's choice");
  }
  if (method == Partitioner::Metis && !partition::have_metis()) {
    undo();
    throw Error("partition_mesh(" + primary->name +
                ", ..., Partitioner::Metis): this Tessera was built without "
                "METIS; install libmetis-dev and rebuild, or use Partitioner::Block");
  }
  std::vector<std::int64_t> sizes;
  for (const auto& s : mesh->sets) sizes.push_back(s->size);
  std::vector<partition::MeshMap> maps;
  for (const auto& m : mesh->maps)
    maps.push_back({m->from->number, m->to->number, m->arity, m->indices.data()});
  try {
    mesh->part = partition::partition_mesh(
        sizes, maps, 0, tiles,
        method == Partitioner::Metis ? partition::MeshMethod::Metis : partition::MeshMethod::Block);
  } catch (const std::invalid_argument& e) {
    undo();
    throw Error("partition_mesh(" + primary->name + ", " + std::to_string(tiles) +
                "): " + e.what());
  }
  // Tiles go to ranks in blocks: tile t to rank t * ranks / tiles.
  for (int t = 0; t < tiles; ++t)
    mesh->owner.push_back(static_cast<int>(static_cast<std::int64_t>(t) * rt.ranks / tiles));
  for (int t = 0; t < tiles; ++t) {
    char edge = 0;
    for (std::int32_t u : mesh->part.neighbours[at(t)])
      edge |= mesh->owner[at(u)] != mesh->owner[at(t)] ? 1 : 0;
    mesh->rank_edge.push_back(edge);
  }
  for (std::size_t m = 0; m < mesh->maps.size(); ++m) {
    mesh->map_handles.emplace_back();
    auto& local = mesh->part.map_local[m];
    for (int t = 0; t < tiles; ++t)
      mesh->map_handles.back().push_back(register_ints(*mesh, local[at(t)], t));
  }
  for (std::size_t s = 0; s < mesh->sets.size(); ++s) {
    const partition::SetTiles& st = mesh->part.sets[s];
    mesh->export_index.emplace_back(at(tiles));
    mesh->export_handles.emplace_back(at(tiles), nullptr);
    for (int u = 0; u < tiles; ++u) {
      if (st.consumers[at(u)].empty()) continue;
      auto& idx = mesh->export_index.back()[at(u)];
      for (const auto& list : st.exports[at(u)]) idx.insert(idx.end(), list.begin(), list.end());
      mesh->export_handles.back()[at(u)] = register_ints(*mesh, idx, u);
    }
  }
  rt.handle_owners.insert(mesh.get());
  for (auto& s : mesh->sets) s->mesh = mesh;
  for (auto& s : mesh->sets)
    for (DatStorage* d : s->dats) d->materialize(*mesh);
}

// ---- dats --------------------------------------------------------------------------------

std::shared_ptr<DatStorage> make_dat(const std::shared_ptr<SetStorage>& set, int dim,
                                     std::size_t element_size, const char* type_name,
                                     const void* values, std::size_t count, std::string name) {
  if (name.empty()) throw Error("a dat needs a name, such as \"q\"");
  if (dim < 1)
    throw Error("dat '" + name + "' has dim " + std::to_string(dim) +
                "; give at least 1 value per element");
  if (static_cast<std::int64_t>(count) != set->size * dim)
    throw Error("dat '" + name + "' has " + std::to_string(count) + " values but set '" +
                set->name + "' needs " + std::to_string(set->size * dim) + " (" +
                std::to_string(set->size) + " elements x dim " + std::to_string(dim) +
                "), element-major");
  auto d = std::make_shared<DatStorage>();
  d->set = set;
  d->dim = dim;
  d->element_size = element_size;
  d->type = type_name;
  d->name = std::move(name);
  const auto* v = static_cast<const unsigned char*>(values);
  d->initial.assign(v, v + count * element_size);
  set->dats.insert(d.get());
  if (set->mesh) d->materialize(*set->mesh);
  return d;
}

void DatStorage::materialize(MeshStorage& mesh) {
  Context& rt = mesh.live("dat '" + name + "'");
  tasks::DataRegistry& data = rt.engine->data();
  tag_name = rt.engine->intern(name);
  const partition::SetTiles& st = mesh.part.sets[at(set->number)];
  for (int t = 0; t < mesh.tiles(); ++t) {
    const auto& own = st.owned[at(t)];
    const std::size_t n = std::max<std::size_t>(1, own.size());
    void* mem = nullptr;
    if (mesh.mine(t)) {
      mem = tasks::DataRegistry::allocate(n * bytes());
      if (mem == nullptr)
        throw Error("out of memory allocating " + std::to_string(n * bytes()) + " bytes for tile " +
                    std::to_string(t) + " of dat '" + name + "'; use a smaller mesh");
      std::memset(mem, 0, n * bytes());
      for (std::size_t l = 0; l < own.size(); ++l)
        std::memcpy(static_cast<unsigned char*>(mem) + l * bytes(),
                    initial.data() + at(own[l]) * bytes(), bytes());
    }
    memory.push_back(mem);
    memory_bytes.push_back(n * bytes());
    owned.push_back(data.register_vector(mem, n, bytes(), mesh.owner[at(t)]));
  }
  std::vector<unsigned char>().swap(initial);
  context = &rt;
  rt.handle_owners.insert(this);
}

void DatStorage::release_handles() {
  if (released || !materialized()) return;
  released = true;
  tasks::DataRegistry& data = context->engine->data();
  for (tasks::Handle h : halo)
    if (h != nullptr) data.unregister_scratch(h);
  for (auto& per_tile : exports)
    for (tasks::Handle h : per_tile) data.unregister_scratch(h);
  for (auto& [key, per_tile] : slots)
    for (auto& buffers : per_tile)
      for (tasks::Handle h : buffers) data.unregister_scratch(h);
  for (auto& [key, per_tile] : local_slots)
    for (tasks::Handle h : per_tile) data.unregister_scratch(h);
  for (tasks::Handle h : owned) data.unregister(h);
  for (std::size_t t = 0; t < memory.size(); ++t)
    if (memory[t] != nullptr) tasks::DataRegistry::deallocate(memory[t], memory_bytes[t]);
  context->handle_owners.erase(this);
}

DatStorage::~DatStorage() {
  release_handles();
  set->dats.erase(this);
}

int dat_dim(const DatStorage& d) { return d.dim; }
std::int64_t dat_set_size(const DatStorage& d) { return d.set->size; }

void gather_dat(const DatStorage& d, void* out) {
  auto* dst = static_cast<unsigned char*>(out);
  if (!d.materialized()) {
    std::memcpy(dst, d.initial.data(), d.initial.size());
    return;
  }
  MeshStorage& mesh = *d.set->mesh;
  Context& rt = mesh.live("dat '" + d.name + "'");
  if (d.released)
    throw Error("dat '" + d.name +
                "' outlived its tessera::Runtime; gather dats while the Runtime is alive");
  const partition::SetTiles& st = mesh.part.sets[at(d.set->number)];
  const std::size_t bytes = d.bytes();
  if (rt.simulated) {  // no values exist: wait for the writers, give zeros (as Field::gather)
    for (int t = 0; t < mesh.tiles(); ++t)
      if (mesh.mine(t))
        rt.engine->data().acquire(d.owned[at(t)], false), rt.engine->data().release(d.owned[at(t)]);
    std::memset(dst, 0, static_cast<std::size_t>(d.set->size) * bytes);
    return;
  }
  comm::share_owned(
      mesh.tiles(), [&](int t) { return mesh.owner[at(t)]; },
      [&](int t, std::vector<unsigned char>& packed) {
        rt.engine->data().acquire(d.owned[at(t)], false);
        const auto* p = static_cast<const unsigned char*>(d.memory[at(t)]);
        packed.insert(packed.end(), p, p + st.owned[at(t)].size() * bytes);
        rt.engine->data().release(d.owned[at(t)]);
      },
      [&](int t, const unsigned char* from) {
        for (std::int32_t e : st.owned[at(t)]) {
          std::memcpy(dst + at(e) * bytes, from, bytes);
          from += bytes;
        }
        return from;
      });
}

// ---- globals -----------------------------------------------------------------------------

std::shared_ptr<GlobalStorage> make_global(std::size_t element_size, const char* type_name,
                                           const void* values, int dim, std::string name) {
  if (name.empty()) throw Error("a global needs a name, such as \"rms\"");
  if (dim < 1) throw Error("global '" + name + "' has no values; give at least one");
  auto g = std::make_shared<GlobalStorage>();
  g->element_size = element_size;
  g->type = type_name;
  g->name = std::move(name);
  g->dim = dim;
  const auto* v = static_cast<const unsigned char*>(values);
  g->value.assign(v, v + element_size * static_cast<std::size_t>(dim));
  return g;
}

void GlobalStorage::drop_pending() {
  if (context == nullptr || released) return;
  for (PendingReduction& p : pending)
    for (tasks::Handle h : p.contributions)
      if (h != nullptr) context->engine->data().unregister_later(h);
  pending.clear();
}

void GlobalStorage::release_handles() {
  if (released || context == nullptr) return;
  drop_pending();
  released = true;
  context->handle_owners.erase(this);
}

GlobalStorage::~GlobalStorage() { release_handles(); }

void set_global(GlobalStorage& g, const void* values, int dim) {
  if (dim != g.dim)
    throw Error("global '" + g.name + "' holds " + std::to_string(g.dim) +
                " values; set() was given " + std::to_string(dim));
  g.drop_pending();
  std::memcpy(g.value.data(), values, g.value.size());
}

namespace {
// The contributions of every element, in the order of the set's elements, into the value: an
// increment exactly (detail/exact_sum.hpp: the value and the contributions summed exactly and
// rounded once, to double then, for a float global, to float; int32 adds exactly as it is), a
// min or max in element order.
template <class T>
void fold(GlobalStorage& g, const PendingReduction& p,
          const std::vector<std::vector<unsigned char>>& tiles) {
  const partition::SetTiles& st = p.set->mesh->part.sets[at(p.set->number)];
  auto* value = reinterpret_cast<T*>(g.value.data());
  const bool exact = p.access == tessera::Access::Inc && !std::is_integral_v<T>;
  std::vector<ExactSum> sums(exact ? at(g.dim) : 0);
  std::vector<SumBatch> batches(sums.size());
  for (int k = 0; k < g.dim && exact; ++k) sums[at(k)].add(static_cast<double>(value[k]));
  for (std::int64_t e = 0; e < p.set->size; ++e) {
    const T* c =
        reinterpret_cast<const T*>(tiles[at(st.tile[static_cast<std::size_t>(e)])].data()) +
        static_cast<std::int64_t>(st.local[static_cast<std::size_t>(e)]) * g.dim;
    for (int k = 0; k < g.dim; ++k) {
      T& v = value[k];
      if (exact)
        batches[at(k)].add(static_cast<double>(c[k]), sums[at(k)]);
      else if (p.access == tessera::Access::Inc)
        v += c[k];
      else if (p.access == tessera::Access::Min)
        v = c[k] < v ? c[k] : v;
      else
        v = c[k] > v ? c[k] : v;
    }
  }
  for (int k = 0; k < g.dim && exact; ++k) {
    batches[at(k)].flush(sums[at(k)]);
    value[k] = static_cast<T>(sums[at(k)].round());
  }
}
}  // namespace

void global_values(GlobalStorage& g, void* out) {
  if (!g.pending.empty()) {
    if (g.released)
      throw Error("global '" + g.name +
                  "' was reduced by loops of a tessera::Runtime that has ended; read it "
                  "while the Runtime is alive");
    tasks::DataRegistry& data = g.context->engine->data();
    // Each pending loop in turn: its contributions, tile by tile on every rank, folded into
    // the value in the order of the set's elements.
    for (PendingReduction& p : g.pending) {
      const MeshStorage& mesh = *p.set->mesh;
      const partition::SetTiles& st = mesh.part.sets[at(p.set->number)];
      const std::size_t bytes = g.element_size * static_cast<std::size_t>(g.dim);
      std::vector<std::vector<unsigned char>> tiles(at(mesh.tiles()));
      comm::share_owned(
          mesh.tiles(), [&](int t) { return mesh.owner[at(t)]; },
          [&](int t, std::vector<unsigned char>& packed) {
            if (p.contributions[at(t)] == nullptr) return;
            const auto* c =
                static_cast<const unsigned char*>(data.acquire_host(p.contributions[at(t)]));
            // In simulation no task wrote them: contribute the start values instead.
            if (!g.context->simulated)
              packed.insert(packed.end(), c, c + st.owned[at(t)].size() * bytes);
            else
              packed.insert(packed.end(), st.owned[at(t)].size() * bytes, 0);
            data.release(p.contributions[at(t)]);
          },
          [&](int t, const unsigned char* from) {
            const std::size_t n = st.owned[at(t)].size() * bytes;
            tiles[at(t)].assign(from, from + n);
            return from + n;
          });
      if (g.type == "double")
        fold<double>(g, p, tiles);
      else if (g.type == "float")
        fold<float>(g, p, tiles);
      else
        fold<std::int32_t>(g, p, tiles);
      for (tasks::Handle h : p.contributions)
        if (h != nullptr) data.unregister_scratch(h);
    }
    g.pending.clear();
  }
  std::memcpy(out, g.value.data(), g.value.size());
}

}  // namespace tessera::detail
