// All-pairs interactions (include/tessera/pairs.hpp): checks, then per target tile one task per
// source tile, in tile order. The tasks of one target tile update the same accumulator tiles, so
// the runtime runs them in that order on the tile's owner: each target's sums are folded source
// by source in one order, whatever the schedule, the workers or the ranks.
#include <algorithm>
#include <array>

#include "core/grid/checks.hpp"
#include "core/grid/field_impl.hpp"
#include "tessera/error.hpp"
#include "tessera/pairs.hpp"

namespace tessera::detail {

namespace {

void one_grid(const std::string& name, const char* what, const std::vector<FieldStorage*>& fields,
              const FieldStorage& first) {
  for (const FieldStorage* f : fields)
    if (!(f->grid() == first.grid()))
      throw Error("pairs '" + name + "': " + what + " field '" + f->name() +
                  "' is on a different grid (extent, tile or periodicity) than field '" +
                  first.name() + "'; create them on one Grid");
}

void check_pairs(const std::string& name, const std::vector<FieldStorage*>& targets,
                 const std::vector<FieldStorage*>& sources,
                 const std::vector<FieldStorage*>& accumulators) {
  one_grid(name, "target", targets, *accumulators.front());
  one_grid(name, "accumulator", accumulators, *accumulators.front());
  one_grid(name, "source", sources, *sources.front());
  for (std::size_t i = 0; i < accumulators.size(); ++i) {
    const FieldStorage* a = accumulators[i];
    for (const auto* list : {&targets, &sources})
      if (std::find(list->begin(), list->end(), a) != list->end())
        throw Error("pairs '" + name + "': field '" + a->name() +
                    "' is both read (targets or sources) and accumulated into; accumulate into "
                    "a field of its own");
    for (std::size_t j = 0; j < i; ++j)
      if (accumulators[j] == a)
        throw Error("pairs '" + name + "': accumulator '" + a->name() +
                    "' is given twice; give each accumulator once");
  }
}

}  // namespace

void submit_pairs(const std::string& name, const TaskKind& kind,
                  const std::vector<FieldStorage*>& targets,
                  const std::vector<FieldStorage*>& sources,
                  const std::vector<FieldStorage*>& accumulators, const SlotBlock& args) {
  check_pairs(name, targets, sources, accumulators);
  const int target_tiles = accumulators.front()->tiles(), source_tiles = sources.front()->tiles();
  std::vector<TileRef> refs;
  const auto points = [](const FieldStorage& f, int t) {
    const TileGeometry g = f.geometry(t);
    return static_cast<double>(g.extent[0]) * static_cast<double>(g.extent[1]) *
           static_cast<double>(g.extent[2]);
  };
  // The memory a tile lives in: its device class, its GPU, its rank. Target tile t's tasks read
  // source tile s from another memory where the two differ.
  const auto memory_of = [](const FieldStorage& f, int tile) {
    const tasks::Placement p = placement_of(f, tile);
    return std::array<int, 3>{static_cast<int>(p.device), p.unit, f.owner(tile)};
  };
  std::vector<std::array<int, 3>> source_memory;
  for (int s = 0; s < source_tiles; ++s) source_memory.push_back(memory_of(*sources.front(), s));
  std::vector<TileRef> early;
  for (int t = 0; t < target_tiles; ++t) {
    const std::array<int, 3> target_memory = memory_of(*accumulators.front(), t);
    for (int s = 0; s < source_tiles; ++s) {
      refs.clear();
      early.clear();
      for (FieldStorage* f : targets) refs.push_back({f, t, Mode::Read});
      for (FieldStorage* f : sources) refs.push_back({f, s, Mode::Read});
      if (source_memory[static_cast<std::size_t>(s)] != target_memory)
        for (FieldStorage* f : sources) early.push_back({f, s, Mode::Read});
      for (FieldStorage* f : accumulators) refs.push_back({f, t, Mode::Update});
      // Its work, the interactions it sums: the size its model is priced by (tiles of
      // different extents, as the planner cuts for all-pairs work, cost their product).
      // A task waits for the one before it (the same accumulators) longer than for its
      // sources: those written elsewhere (another GPU's or the CPU's tiles) are copied to its
      // worker as soon as they are written, not one after another as the chain reaches them.
      submit_tiles(name, kind, refs, args,
                   points(*accumulators.front(), t) * points(*sources.front(), s), early);
    }
  }
}

}  // namespace tessera::detail
