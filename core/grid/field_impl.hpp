// What a field's storage holds beyond its public face (include/tessera/detail/field_storage.hpp):
// the tiling and distribution (partition/), the tiles' handles and memory and the halo buffers
// (tasks/). For the library's own files.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "partition/tiling.hpp"
#include "tasks/codelets.hpp"
#include "tasks/data.hpp"
#include "tessera/detail/field_storage.hpp"

namespace tessera::detail {

// The halo buffers and copy plans for one (stencil radius, shape) used on a field.
struct HaloSet {
  std::vector<partition::TileHaloPlan> plans;
  std::vector<std::vector<tasks::Handle>> buffers;  // [tile][k]: towards plans[tile].pack_dirs[k]
  std::vector<std::vector<tasks::Handle>> sources;  // [tile]: the buffers its boundary task reads
  // Constant (Dirichlet) ghost regions, split off plans[tile].ghosts: their values never
  // change and nothing else writes ghost layers, so they are written once, not every step.
  std::vector<partition::RegionCopyList> constants;
  // Per tile, one task per face whose boundary function gives some of its ghost regions: the
  // face's function and the task's argument block (its functor and the regions), kept for
  // every exchange.
  struct FunctionTask {
    tasks::Codelet* codelet;  // the function's, resolved with the plan (a name clash throws first)
    std::vector<unsigned char> args;
  };
  std::vector<std::vector<FunctionTask>> functions;
  long version = -1;  // field version the ghost layers reflect
  long packed = -1;   // field version the face buffers hold (packed by halo-pack tasks or by
                      // the tasks that wrote the field)
  // A second set of face buffers, for tasks that read one field's faces and pack its new ones
  // in one call (temporal blocks): they pack into these, which then become `buffers` (and
  // their `sources`), so a tile never overwrites faces a neighbour of the same call has still
  // to read. Empty until such a call.
  std::vector<std::vector<tasks::Handle>> spare_buffers, spare_sources;
};

struct FieldStorage::Impl {
  partition::Tiling tiling;
  partition::Distribution distribution;
  int rank = 0;                           // this process's rank
  std::vector<bool> rank_edge;            // per tile: a neighbour belongs to another rank
  std::vector<tasks::Handle> handles;     // per tile
  std::vector<void*> memory;              // per tile: host memory, null for other ranks' tiles
  std::vector<std::size_t> memory_bytes;  // per tile: its size (freed with it)
  std::vector<bool> pinned;               // per tile: allocated pinned (not by a retile)
  std::map<std::pair<int, bool>, HaloSet> halos;  // by (width, box)
  const char* tag_name = nullptr;                 // the field's name, interned for task tags
  bool released = false;
};

// Calls work(0 .. n-1) on up to the machine's hardware threads, each index once; returns when
// all have run. For host-side copies between steps (a retile's new tiles), while StarPU's
// workers have nothing to run.
template <class Work>
void for_each_on_threads(std::size_t n, const Work& work) {
  std::atomic<std::size_t> next{0};
  auto run = [&] {
    for (std::size_t k = next++; k < n; k = next++) work(k);
  };
  const std::size_t threads =
      std::min<std::size_t>(n, std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < threads; ++k) pool.emplace_back(run);
  run();
  for (std::thread& t : pool) t.join();
}

}  // namespace tessera::detail
