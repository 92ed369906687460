// Mesh loops: sets, maps, dats and globals, partition_mesh (partition/ cuts the sets, this
// registers the tiles), and one loop's tasks: import halos (halo-gather, halo-import), one loop
// task per tile, the tasks that bring increments home (inc-combine, write-back), and the
// globals' reductions (increments exact, min and max in element order).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/runtime/comm.hpp"
#include "core/mesh/mesh_impl.hpp"
#include "partition/autotile.hpp"
#include "kernels/cpu/mesh.hpp"
#include "tasks/halo.hpp"
#include "tasks/mesh_kinds.hpp"
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
    const auto workers =
        static_cast<int>(comm::sum(rt.engine->cpu_workers() + rt.engine->cuda_workers()));
    tiles = partition::choose_mesh_tiles(primary->size, workers, rt.ranks);
    announce(rt, "tessera: tiles of set '" + primary->name + "' (" + std::to_string(primary->size) +
                     " elements): " + std::to_string(tiles) + " for " + std::to_string(workers) +
                     " workers (at least " + std::to_string(partition::kMinMeshTile) +
                     " elements a tile, up to " + std::to_string(partition::kMostMeshRounds) +
                     " per worker)");
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

// ---- loops -------------------------------------------------------------------------------

namespace {

// The buffers of one task, each handle once, its mode the union of the modes asked for.
struct TaskBuffers {
  std::vector<tasks::Handle> handles;
  std::vector<detail::Access> modes;
  std::int64_t add(tasks::Handle h, detail::Access mode) {
    for (std::size_t i = 0; i < handles.size(); ++i)
      if (handles[i] == h) {
        if (modes[i] != mode) modes[i] = detail::Access::ReadWrite;
        return static_cast<std::int64_t>(i);
      }
    handles.push_back(h);
    modes.push_back(mode);
    return static_cast<std::int64_t>(handles.size() - 1);
  }
};

tasks::TaskTag tag_of(const MeshStorage& mesh, int tile, long step, const char* field) {
  tasks::TaskTag tag;
  tag.field = field;
  tag.tile = tile;
  tag.step = step;
  tag.rank = mesh.owner[at(tile)];
  return tag;
}

kernels::MeshCopyArgs* copy_args(std::int64_t element_bytes, std::int64_t dim, std::size_t buffers,
                                 std::int64_t targets = 0) {
  auto* a = static_cast<kernels::MeshCopyArgs*>(std::malloc(sizeof(kernels::MeshCopyArgs)));
  *a = {element_bytes, dim, targets, static_cast<std::int32_t>(buffers)};
  return a;
}

// The handles of `d`'s import halo: each tile gathers what its consumers need into one export
// buffer per consumer, and each tile imports its halo from its sources' buffers. Only those
// elements move (between memory nodes and ranks).
void register_halo(MeshStorage& mesh, DatStorage& d) {
  tasks::Engine& engine = *mesh.context->engine;
  const partition::SetTiles& st = mesh.part.sets[at(d.set->number)];
  const int n = mesh.tiles();
  if (d.exports.empty()) {
    for (int t = 0; t < n; ++t) {
      const std::size_t size = st.halo[at(t)].size();
      d.halo.push_back(
          size == 0 ? nullptr
                    : engine.data().register_vector(nullptr, size, d.bytes(), mesh.owner[at(t)]));
      d.import_args.push_back({static_cast<std::int64_t>(d.bytes()), d.dim, 0,
                               static_cast<std::int32_t>(1 + st.sources[at(t)].size())});
    }
    for (int u = 0; u < n; ++u) {
      d.exports.emplace_back();
      for (const auto& list : st.exports[at(u)])
        d.exports.back().push_back(
            engine.data().register_vector(nullptr, list.size(), d.bytes(), mesh.owner[at(u)]));
      d.gather_args.push_back({static_cast<std::int64_t>(d.bytes()), d.dim, 0,
                               static_cast<std::int32_t>(2 + d.exports.back().size())});
    }
  }
}

// The export buffers tile t's halo is imported from, in the order the import concatenates them.
std::vector<tasks::Handle> import_sources(const MeshStorage& mesh, const DatStorage& d, int t) {
  const partition::SetTiles& st = mesh.part.sets[at(d.set->number)];
  std::vector<tasks::Handle> sources;
  for (std::int32_t u : st.sources[at(t)]) {
    const auto& consumers = st.consumers[at(u)];
    const auto k = std::lower_bound(consumers.begin(), consumers.end(), t) - consumers.begin();
    sources.push_back(d.exports[at(u)][static_cast<std::size_t>(k)]);
  }
  return sources;
}

// Brings the import halo of `d` up to date: the gathers, then an import task per tile with a
// halo, but those of the tiles in `imported_by_loop` (their loop task imports it itself).
void exchange(MeshStorage& mesh, DatStorage& d, const std::string& loop, long step,
              const std::vector<bool>& imported_by_loop = {}) {
  if (d.halo_version == d.version) return;
  tasks::Engine& engine = *mesh.context->engine;
  const int n = mesh.tiles();
  register_halo(mesh, d);
  tasks::Codelet& gather = engine.codelets().get(loop, d.type, tasks::halo_gather_kind());
  tasks::Codelet& import = engine.codelets().get(loop, d.type, tasks::halo_import_kind());
  // The copies' argument blocks are the dat's own (register_halo), as inside the loop tasks.
  for (int u = 0; u < n; ++u) {
    if (d.exports[at(u)].empty() || d.exports_version == d.version)
      continue;  // its writer gathered them
    engine.submitter().submit(
        gather, {d.owned[at(u)], mesh.export_handles[at(d.set->number)][at(u)]}, d.exports[at(u)],
        &d.gather_args[at(u)], sizeof(kernels::MeshCopyArgs), false,
        tag_of(mesh, u, step, d.tag_name), {n, mesh.rank_edge[at(u)]});
  }
  for (int t = 0; t < n; ++t) {
    if (d.halo[at(t)] == nullptr || (!imported_by_loop.empty() && imported_by_loop[at(t)]))
      continue;
    const std::vector<tasks::Handle> sources = import_sources(mesh, d, t);
    engine.submitter().submit(import, {d.halo[at(t)]}, sources, &d.import_args[at(t)],
                              sizeof(kernels::MeshCopyArgs), false,
                              tag_of(mesh, t, step, d.tag_name), {n, 0});
  }
  d.halo_version = d.version;
}

bool writes(tessera::Access a) {
  return a == tessera::Access::Write || a == tessera::Access::ReadWrite ||
         a == tessera::Access::Inc;
}

detail::Access task_mode(tessera::Access a) {
  if (a == tessera::Access::Read) return detail::Access::Read;
  if (a == tessera::Access::Write) return detail::Access::Write;
  return detail::Access::ReadWrite;
}

ArgAccess arg_access(tessera::Access a) { return static_cast<ArgAccess>(static_cast<int>(a)); }

// The indices at which a loop writes `d` through `m`.
unsigned written_mask(const std::vector<LoopArg>& args, const DatStorage* d, const MapStorage* m) {
  unsigned mask = 0;
  for (const LoopArg& a : args)
    if (a.dat == d && a.map == m && writes(a.access)) mask |= 1u << a.index;
  return mask;
}

}  // namespace

void run_loop(const std::string& name, SetStorage& set, const std::vector<LoopArg>& args,
              const TaskKind& kind, const LoopBlock& block) {
  check_loop(name, set, args);
  MeshStorage& mesh = *set.mesh;
  Context& rt = mesh.live("loop '" + name + "' over set '" + set.name + "'");
  tasks::Engine& engine = *rt.engine;
  const int tiles = mesh.tiles();
  const long step = rt.steps++;
  std::string types;
  for (const LoopArg& a : args) types += (types.empty() ? "" : "-") + std::string(a.type_name);
  tasks::Codelet& codelet = engine.codelets().get(name, types, kind);
  if (rt.recording.maps_tiles()) rt.recording.map_loop(&mesh, name);  // the partition map's loops

  // Globals read: their value now, after the loops already reducing into them.
  std::vector<std::vector<unsigned char>> global_value(args.size());
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].global != nullptr && args[i].access == tessera::Access::Read) {
      global_value[i].resize(args[i].global->value.size());
      global_values(*args[i].global, global_value[i].data());
    }
  // Import halos of the dats read (or written in part) through maps: their handles now, their
  // tasks once every task of the loop is known to be valid.
  for (const LoopArg& a : args)
    if (a.map != nullptr && a.access != tessera::Access::Inc) register_halo(mesh, *a.dat);
  // Increments and writes through maps: the plan and slot buffers of each (dat, map).
  struct Written {
    DatStorage* dat;
    MapStorage* map;
    unsigned mask;
    IncrementState* plan;
    std::vector<std::vector<tasks::Handle>>* slots;
    std::vector<tasks::Handle>* local_slots;  // CUDA implementations only
    bool assign;
  };
  const bool device = kind.cuda != nullptr;
  std::vector<Written> written;
  for (const LoopArg& a : args) {
    if (a.map == nullptr || !writes(a.access)) continue;
    if (std::any_of(written.begin(), written.end(),
                    [&](const Written& w) { return w.dat == a.dat && w.map == a.map; }))
      continue;
    const unsigned mask = written_mask(args, a.dat, a.map);
    IncrementState& plan = mesh.increments_of(*a.map, mask);
    auto& slots = a.dat->slots[{a.map->number, mask}];
    if (slots.empty())
      for (int t = 0; t < tiles; ++t) {
        slots.emplace_back();
        for (std::int64_t count : plan.plan.slot_counts[at(t)])
          slots.back().push_back(engine.data().register_vector(
              nullptr, static_cast<std::size_t>(count), a.dat->bytes(), mesh.owner[at(t)]));
      }
    std::vector<tasks::Handle>* local = nullptr;
    if (device && a.access == tessera::Access::Inc) {
      local = &a.dat->local_slots[{a.map->number, mask}];
      if (local->empty())
        for (int t = 0; t < tiles; ++t)
          local->push_back(engine.data().register_vector(
              nullptr,
              static_cast<std::size_t>(std::max<std::int64_t>(1, plan.plan.local_slots[at(t)])),
              a.dat->bytes(), mesh.owner[at(t)]));
    }
    written.push_back({a.dat, a.map, mask, &plan, &slots, local, a.access != tessera::Access::Inc});
  }
  // Global reductions: one contribution per element, per tile.
  std::vector<PendingReduction> reductions(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const LoopArg& a = args[i];
    if (a.global == nullptr || a.access == tessera::Access::Read) continue;
    reductions[i].access = a.access;
    reductions[i].set = mesh.sets[at(set.number)];
    for (int t = 0; t < tiles; ++t) {
      const std::size_t n = mesh.part.sets[at(set.number)].owned[at(t)].size();
      reductions[i].contributions.push_back(
          n == 0 ? nullptr
                 : engine.data().register_vector(
                       nullptr, n, a.global->element_size * static_cast<std::size_t>(a.dim),
                       mesh.owner[at(t)]));
    }
  }

  // A limit found while the tasks are prepared: nothing submitted yet, nothing left registered.
  const auto fail = [&](const std::string& message) {
    for (PendingReduction& r : reductions)
      for (tasks::Handle h : r.contributions)
        if (h != nullptr) engine.data().unregister_scratch(h);
    throw Error(message);
  };
  const partition::SetTiles& loop_set = mesh.part.sets[at(set.number)];
  // The dats read through maps whose halos are not current. With the exchange inside the tasks
  // (the default), each loop task imports its tile's halos before its kernel (a HaloWork fill
  // per dat), instead of an import task per tile and dat before the loop: one link less in the
  // chain from the writer's gathers to this loop. That takes a loop task on every tile with a
  // halo (a tile without one would keep a stale halo) and few enough dats and sources per task;
  // else the import tasks of their own.
  std::vector<DatStorage*> imported;
  for (const LoopArg& a : args)
    if (a.map != nullptr && a.access != tessera::Access::Inc &&
        a.dat->halo_version != a.dat->version &&
        std::find(imported.begin(), imported.end(), a.dat) == imported.end())
      imported.push_back(a.dat);
  bool import_in_tasks =
      rt.options.fused_exchange && !imported.empty() && imported.size() <= tasks::HaloWork::kMax;
  for (DatStorage* d : imported)
    for (int t = 0; t < tiles && import_in_tasks; ++t)
      if (d->halo[at(t)] != nullptr &&
          (loop_set.owned[at(t)].empty() ||
           mesh.part.sets[at(d->set->number)].sources[at(t)].size() >
               static_cast<std::size_t>(partition::RegionCopyList::kMax)))
        import_in_tasks = false;
  const TaskKind import = tasks::halo_import_kind();
  struct TileTask {
    int tile;
    TaskBuffers buffers;
    std::vector<std::int64_t> frame;
    std::vector<tasks::HaloWork::Copies> fills, packs;
  };
  std::vector<TileTask> tasks_of_loop;
  for (int t = 0; t < tiles; ++t) {
    const auto n = static_cast<std::int64_t>(loop_set.owned[at(t)].size());
    if (n == 0) continue;
    tasks_of_loop.push_back({t, {}, {}});
    TaskBuffers& b = tasks_of_loop.back().buffers;
    std::vector<std::int64_t> frame(2 + args.size() * ArgWords::kCount, 0);
    frame[0] = n;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const LoopArg& a = args[i];
      std::int64_t* w = frame.data() + 2 + i * ArgWords::kCount;
      w[ArgWords::kDim] = a.dim;
      w[ArgWords::kAccess] = static_cast<std::int64_t>(arg_access(a.access));
      if (a.global != nullptr) {
        if (a.access == tessera::Access::Read) {
          w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::GlobalRead);
          std::memcpy(w + ArgWords::kValue, global_value[i].data(), global_value[i].size());
        } else {
          w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::GlobalReduce);
          w[ArgWords::kOwned] = b.add(reductions[i].contributions[at(t)], detail::Access::Write);
        }
        continue;
      }
      DatStorage& d = *a.dat;
      if (a.map == nullptr) {
        w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::Direct);
        w[ArgWords::kOwned] = b.add(d.owned[at(t)], task_mode(a.access));
        continue;
      }
      const partition::SetTiles& target = mesh.part.sets[at(d.set->number)];
      w[ArgWords::kArity] = a.map->arity;
      w[ArgWords::kIndex] = a.index;
      w[ArgWords::kOwnedCount] = static_cast<std::int64_t>(target.owned[at(t)].size());
      w[ArgWords::kMap] = b.add(mesh.map_handles[at(a.map->number)][at(t)], detail::Access::Read);
      if (a.access != tessera::Access::Inc && d.halo[at(t)] != nullptr)
        w[ArgWords::kHalo] = b.add(d.halo[at(t)], detail::Access::Read);
      if (!writes(a.access)) {
        w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::IndirectRead);
        w[ArgWords::kOwned] = b.add(d.owned[at(t)], detail::Access::Read);
        continue;
      }
      const Written& wr = *std::find_if(written.begin(), written.end(), [&](const Written& x) {
        return x.dat == &d && x.map == a.map;
      });
      w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::IndirectWritten);
      // In-place updates touch some of the tile's elements only: the rest must stay.
      w[ArgWords::kOwned] = b.add(d.owned[at(t)], detail::Access::ReadWrite);
      w[ArgWords::kCodes] = b.add(wr.plan->codes[at(t)], detail::Access::Read);
      if (wr.local_slots != nullptr) {
        w[ArgWords::kDeviceCodes] = b.add(wr.plan->device_codes[at(t)], detail::Access::Read);
        w[ArgWords::kLocalSlots] = b.add((*wr.local_slots)[at(t)], detail::Access::Write);
        w[ArgWords::kLocalGather] = b.add(wr.plan->local_gather[at(t)], detail::Access::Read);
        w[ArgWords::kLocalTargets] = wr.plan->plan.local_gather[at(t)][0];
      }
      const auto& slots = (*wr.slots)[at(t)];
      w[ArgWords::kSlotFirst] = static_cast<std::int64_t>(b.handles.size());
      w[ArgWords::kSlotCount] = static_cast<std::int64_t>(slots.size());
      for (std::size_t k = 0; k < slots.size(); ++k) {
        // Appended in order, so that slot buffer k is buffer kSlotFirst + k.
        b.handles.push_back(slots[k]);
        b.modes.push_back(detail::Access::Write);
      }
    }
    frame[1] = static_cast<std::int64_t>(b.handles.size());
    // The halo imports, their source export buffers after the kernel's buffers.
    for (DatStorage* d : imported) {
      if (!import_in_tasks || d->halo[at(t)] == nullptr) continue;
      const std::vector<tasks::Handle> sources = import_sources(mesh, *d, t);
      tasks::HaloWork::Copies c{};
      c.args = &d->import_args[at(t)];
      c.empty = sources.empty();
      // Write only, though the kernel reads it: the import writes every element first (so
      // StarPU need not bring the old values, and a halo never written before may be used).
      c.tile = static_cast<int>(b.add(d->halo[at(t)], detail::Access::Write));
      b.modes[static_cast<std::size_t>(c.tile)] = detail::Access::Write;
      c.first = static_cast<int>(b.handles.size());
      c.count = static_cast<int>(sources.size());
      c.cpu = import.cpu;
      c.cuda = import.cuda;  // the halo-import kind's kernels
      b.handles.insert(b.handles.end(), sources.begin(), sources.end());
      b.modes.resize(b.handles.size(), detail::Access::Read);
      tasks_of_loop.back().fills.push_back(c);
    }
    if (device && b.handles.size() > static_cast<std::size_t>(mesh_codes::kMaxDeviceBuffers))
      fail("loop '" + name + "': the task of tile " + std::to_string(t) + " has " +
           std::to_string(b.handles.size()) + " buffers but a CUDA implementation takes at most " +
           std::to_string(mesh_codes::kMaxDeviceBuffers) +
           "; use fewer tiles (fewer neighbours per tile)");
    tasks_of_loop.back().frame = std::move(frame);
  }
  // The dats this loop writes directly whose export buffers exist (a later loop read them
  // through a map before): with the exchange inside the tasks, each loop task gathers its
  // tile's export buffers after its kernel (a HaloWork pack), instead of a gather task per tile
  // before the next loop that reads them: one task and one link of the chain less per tile.
  // Not for a dat the loop also reads or writes through a map (a neighbour's task could gather
  // before this one imports, or the combine tasks finish the values after the loop), nor where
  // a tile with exports has no loop task, nor beyond the copies' or a CUDA task's limits.
  std::vector<DatStorage*> packed;
  for (const LoopArg& a : rt.options.fused_exchange ? args : std::vector<LoopArg>{}) {
    DatStorage* d = a.dat;
    if (d == nullptr || a.map != nullptr || !writes(a.access) || d->exports.empty() ||
        std::find(packed.begin(), packed.end(), d) != packed.end() ||
        std::any_of(args.begin(), args.end(),
                    [&](const LoopArg& b) { return b.dat == d && b.map != nullptr; }))
      continue;
    bool fits = packed.size() < static_cast<std::size_t>(tasks::HaloWork::kMax);
    std::vector<bool> has_task(static_cast<std::size_t>(tiles), false);
    for (const TileTask& task : tasks_of_loop) {
      has_task[at(task.tile)] = true;
      const std::size_t copies = 1 + d->exports[at(task.tile)].size();
      if (copies > static_cast<std::size_t>(partition::RegionCopyList::kMax) ||
          (device && task.buffers.handles.size() + copies >
                         static_cast<std::size_t>(mesh_codes::kMaxDeviceBuffers)))
        fits = false;
    }
    for (int u = 0; u < tiles; ++u)
      if (!d->exports[at(u)].empty() && !has_task[at(u)]) fits = false;
    if (!fits) continue;
    packed.push_back(d);
    const TaskKind gather = tasks::halo_gather_kind();
    for (TileTask& task : tasks_of_loop) {
      const auto& exports = d->exports[at(task.tile)];
      if (exports.empty()) continue;
      TaskBuffers& b = task.buffers;
      tasks::HaloWork::Copies c{};
      c.args = &d->gather_args[at(task.tile)];
      c.empty = false;
      c.tile = static_cast<int>(b.add(d->owned[at(task.tile)], task_mode(a.access)));
      // The export index, then the buffers: appended as they are (add merges equal handles).
      c.first = static_cast<int>(b.handles.size());
      c.count = static_cast<int>(1 + exports.size());
      c.cpu = gather.cpu;
      c.cuda = gather.cuda;
      b.handles.push_back(mesh.export_handles[at(d->set->number)][at(task.tile)]);
      b.modes.push_back(detail::Access::Read);
      b.handles.insert(b.handles.end(), exports.begin(), exports.end());
      b.modes.resize(b.handles.size(), detail::Access::Write);
      task.packs.push_back(c);
    }
  }
  for (const Written& wr : written)
    for (int u = 0; u < tiles; ++u)
      if (tasks::combine_kind(wr.dat->type, wr.assign).cuda != nullptr &&
          wr.plan->plan.sources[at(u)].size() + 2 >
              static_cast<std::size_t>(mesh_codes::kMaxDeviceBuffers))
        fail("loop '" + name + "': tile " + std::to_string(u) + " of dat '" + wr.dat->name +
             "' takes increments from " + std::to_string(wr.plan->plan.sources[at(u)].size()) +
             " tiles, more than CUDA combine tasks take; "
             "use fewer tiles");
  const std::vector<bool> imported_by_loop(import_in_tasks ? static_cast<std::size_t>(tiles) : 0,
                                           true);
  for (const LoopArg& a : args)
    if (a.map != nullptr && a.access != tessera::Access::Inc)
      exchange(mesh, *a.dat, name, step, imported_by_loop);
  tasks::Codelet* with_copies =
      import_in_tasks || !packed.empty()
          ? &engine.codelets().get(name, types, tasks::with_halo_work(kind))
          : nullptr;
  for (TileTask& task : tasks_of_loop) {
    const bool copies = !task.fills.empty() || !task.packs.empty();
    tasks::HaloWork* work = nullptr;
    std::size_t bytes = 0;
    unsigned char* arg = tasks::new_task_arg(block.prototype, block.size, copies, kind.cpu,
                                             kind.cuda, &work, &bytes);
    std::memcpy(arg + (bytes - block.size) + block.frame_offset, task.frame.data(),
                task.frame.size() * sizeof(std::int64_t));
    for (const tasks::HaloWork::Copies& c : task.fills) work->fill[work->fills++] = c;
    for (const tasks::HaloWork::Copies& c : task.packs) work->pack[work->packs++] = c;
    engine.submitter().submit_with_modes(
        copies ? *with_copies : codelet, task.buffers.handles, task.buffers.modes, arg, bytes, true,
        tag_of(mesh, task.tile, step, nullptr), {tiles, mesh.rank_edge[at(task.tile)]});
  }
  // The owners add (or copy) the slots of shared targets, in the plan's fixed order.
  for (const Written& wr : written) {
    tasks::Codelet& combine =
        engine.codelets().get(name, wr.dat->type, tasks::combine_kind(wr.dat->type, wr.assign));
    const partition::IncrementPlan& plan = wr.plan->plan;
    for (int u = 0; u < tiles; ++u) {
      if (plan.sources[at(u)].empty()) continue;
      std::vector<tasks::Handle> rest{wr.plan->combine[at(u)]};
      for (std::size_t j = 0; j < plan.sources[at(u)].size(); ++j)
        rest.push_back((*wr.slots)[at(plan.sources[at(u)][j])][at(plan.source_buffer[at(u)][j])]);
      engine.submitter().submit(combine, {wr.dat->owned[at(u)]}, rest,
                                copy_args(0, wr.dat->dim, 1 + rest.size(), plan.combine[at(u)][0]),
                                sizeof(kernels::MeshCopyArgs), true,
                                tag_of(mesh, u, step, wr.dat->tag_name), {tiles, 0});
    }
  }
  for (const LoopArg& a : args)
    if (a.dat != nullptr && writes(a.access)) ++a.dat->version;
  for (DatStorage* d : packed) d->exports_version = d->version;
  // Loops writing a dat twice (through two arguments) bump it twice: harmless.
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!reductions[i].contributions.empty()) {
      GlobalStorage& g = *args[i].global;
      if (g.context == nullptr) {
        g.context = &rt;
        rt.handle_owners.insert(&g);
      }
      g.pending.push_back(std::move(reductions[i]));
    }
}

}  // namespace tessera::detail
