// What the mesh objects of include/tessera/mesh.hpp hold: sets and maps (plain data until a
// mesh is partitioned), the partition and its handles (maps in local numbers, export indices,
// increment plans), dats' tiles, halos and slot buffers, and globals' pending reductions.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/context.hpp"
#include "kernels/cpu/mesh.hpp"
#include "partition/mesh_partition.hpp"
#include "partition/plan.hpp"
#include "tasks/data.hpp"
#include "tessera/mesh.hpp"

namespace tessera::detail {

struct MeshStorage;

struct SetStorage {
  std::int64_t size = 0;
  std::string name;
  std::vector<std::weak_ptr<MapStorage>> maps;  // maps from or to this set
  std::set<DatStorage*> dats;                   // alive
  std::shared_ptr<MeshStorage> mesh;            // once partitioned
  int number = -1;                              // its place in the mesh's sets
};

struct MapStorage {
  std::shared_ptr<SetStorage> from, to;
  int arity = 1;
  std::vector<std::int32_t> indices;
  std::string name;
  int number = -1;                            // its place in the mesh's maps
  std::map<unsigned, std::string> conflicts;  // by index mask: first_conflict, computed once
};

// The increments one loop makes through a map at some indices: the plan and its handles.
struct IncrementState {
  partition::IncrementPlan plan;
  std::vector<tasks::Handle> codes;                       // [t], null for tiles without elements
  std::vector<tasks::Handle> combine;                     // [u], null for tiles without sources
  std::vector<tasks::Handle> device_codes, local_gather;  // [t], for CUDA implementations
};

struct MeshStorage : HandleOwner {
  Context* context = nullptr;
  std::vector<std::shared_ptr<SetStorage>> sets;
  std::vector<std::shared_ptr<MapStorage>> maps;
  partition::MeshPartition part;
  std::vector<int> owner;       // per tile: its rank
  std::vector<char> rank_edge;  // per tile: exchanges with a tile of another rank
  std::vector<std::vector<tasks::Handle>> map_handles;               // [map][tile]
  std::vector<std::vector<std::vector<std::int32_t>>> export_index;  // [set][tile]
  std::vector<std::vector<tasks::Handle>> export_handles;         // [set][tile], null: no consumers
  std::map<std::pair<int, unsigned>, IncrementState> increments;  // by (map, index mask)
  bool released = false;

  int tiles() const { return part.tiles; }
  bool mine(int t) const { return owner[static_cast<std::size_t>(t)] == context->rank; }
  /// The device the run's planner places tile `t` on (tasks::Placement::device): a class, every
  /// task of the tile there; Any (the scheduler's choice) where this rank has no CUDA workers.
  partition::Device device(int t) const {
    return {context->engine->cuda_workers() > 0 ? context->planner.mesh_class(t, tiles())
                                                : DeviceClass::Any};
  }
  /// The runtime, or an Error naming `what` once it has ended.
  Context& live(const std::string& what) const;
  IncrementState& increments_of(MapStorage& map, unsigned mask);
  void release_handles() override;
  ~MeshStorage();
};

struct DatStorage : HandleOwner {
  std::shared_ptr<SetStorage> set;
  int dim = 1;
  std::size_t element_size = 0;
  std::string type, name;
  std::vector<unsigned char> initial;  // the values until the set is partitioned
  Context* context = nullptr;          // once materialized
  bool released = false;
  const char* tag_name = nullptr;
  std::vector<void*> memory;              // [tile]: this rank's tiles' host memory
  std::vector<std::size_t> memory_bytes;  // [tile]: its size (freed with it)
  std::vector<tasks::Handle> owned;       // [tile]
  std::vector<tasks::Handle> halo;        // [tile], null: empty halo (made at the first exchange)
  std::vector<std::vector<tasks::Handle>> exports;  // [u][k]: to consumers[u][k]
  std::vector<kernels::MeshCopyArgs> import_args;   // [t]: the import of halo[t] inside a loop task
  std::vector<kernels::MeshCopyArgs>
      gather_args;  // [u]: the gather into exports[u] inside a loop task
  std::map<std::pair<int, unsigned>, std::vector<std::vector<tasks::Handle>>> slots;  // [t][k]
  std::map<std::pair<int, unsigned>, std::vector<tasks::Handle>> local_slots;  // [t], CUDA only
  long version = 0, halo_version = -1;
  long exports_version =
      -1;  // the version the export buffers hold (gathered by its writer's tasks)

  std::size_t bytes() const { return element_size * static_cast<std::size_t>(dim); }
  bool materialized() const { return context != nullptr; }
  /// Registers the tiles (the set is partitioned), filled from `initial`.
  void materialize(MeshStorage& mesh);
  void release_handles() override;
  ~DatStorage();
};

struct PendingReduction {
  std::shared_ptr<SetStorage> set;
  tessera::Access access = tessera::Access::Inc;
  std::vector<tasks::Handle> contributions;  // [t], null for tiles without elements
};

struct GlobalStorage : HandleOwner {
  std::size_t element_size = 0;
  std::string type, name;
  int dim = 1;
  std::vector<unsigned char> value;
  std::vector<PendingReduction> pending;  // loops reducing into it, in submission order
  Context* context = nullptr;             // once a loop reduced into it
  bool released = false;
  /// Forgets the pending reductions without waiting (set() replaces their result).
  void drop_pending();
  void release_handles() override;
  ~GlobalStorage();
};

/// Every check of one loop, before anything is submitted (core/mesh/mesh_checks.cpp).
void check_loop(const std::string& name, const SetStorage& set, const std::vector<LoopArg>& args);
/// Testing only: makes new increment plans add shared targets' slots in reverse order, so that
/// a test can see that the order is what keeps results equal to the serial loop.
void reverse_increment_order_for_testing(bool reverse);

}  // namespace tessera::detail
