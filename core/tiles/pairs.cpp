// All-pairs interactions (include/tessera/pairs.hpp): checks, then per target tile one task per
// source tile, in tile order. The tasks of one target tile update the same accumulator tiles, so
// the runtime runs them in that order on the tile's owner. Each task knows where its source
// tile starts in the sources' order (PairRange), so its chunks are the grid's; a chunk cut by a
// source tile boundary is summed on from one task to the next through the carry fields, tiles
// of the accumulators' grid that only those tasks use.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

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

struct PairCarry {
  GridSpec grid;
  std::vector<std::unique_ptr<FieldStorage>> fields;
};

namespace {

std::int64_t points(const FieldStorage& f, int t) {
  const TileGeometry g = f.geometry(t);
  return g.extent[0] * g.extent[1] * g.extent[2];
}

// The carry fields for `accumulators`, made (or remade for another grid, more accumulators or
// another Runtime) when first needed.
const std::vector<std::unique_ptr<FieldStorage>>& carry_fields(
    const std::string& name, const std::vector<FieldStorage*>& accumulators,
    std::shared_ptr<PairCarry>& carry) {
  const GridSpec& grid = accumulators.front()->grid();
  const auto usable = [&] {
    if (!carry || !(carry->grid == grid) || carry->fields.size() < accumulators.size())
      return false;
    const FieldStorage& f = *carry->fields.front();
    return !f.impl().released && &f.context() == &accumulators.front()->context();
  };
  if (!usable()) {
    carry.reset();  // waits for the tasks that use the old ones
    auto made = std::make_shared<PairCarry>();
    made->grid = grid;
    for (std::size_t k = 0; k < accumulators.size(); ++k)
      made->fields.push_back(std::make_unique<FieldStorage>(
          grid, 0, FaceSpecs{}, sizeof(double), "double", name + ".carry" + std::to_string(k)));
    carry = std::move(made);
  }
  return carry->fields;
}

}  // namespace

void submit_pairs(const std::string& name, const PairKind& plain, const PairKind& carried,
                  const std::vector<FieldStorage*>& targets,
                  const std::vector<FieldStorage*>& sources,
                  const std::vector<FieldStorage*>& accumulators,
                  std::shared_ptr<PairCarry>& carry) {
  check_pairs(name, targets, sources, accumulators);
  const int target_tiles = accumulators.front()->tiles(), source_tiles = sources.front()->tiles();
  // Each source tile's range in the sources' order, and whether a chunk crosses its ends.
  std::vector<PairRange> range(static_cast<std::size_t>(source_tiles));
  std::vector<bool> cut(range.size());
  std::int64_t total = 0;
  for (int s = 0; s < source_tiles; ++s) {
    range[static_cast<std::size_t>(s)].first = total;
    total += points(*sources.front(), s);
  }
  bool any_cut = false;
  for (int s = 0; s < source_tiles; ++s) {
    PairRange& r = range[static_cast<std::size_t>(s)];
    r.total = total;
    const PairChunks c = PairChunks::of(r, points(*sources.front(), s));
    cut[static_cast<std::size_t>(s)] = c.carry_in || c.carry_out;
    any_cut = any_cut || c.carry_in || c.carry_out;
  }
  const std::vector<std::unique_ptr<FieldStorage>>* carries =
      any_cut ? &carry_fields(name, accumulators, carry) : nullptr;
  // The memory a tile lives in: its device class, its GPU, its rank. Target tile t's tasks read
  // source tile s from another memory where the two differ.
  const auto memory_of = [](const FieldStorage& f, int tile) {
    const partition::Device d = placement_of(f, tile).device;
    return std::array<int, 3>{static_cast<int>(d.kind), d.gpu, f.owner(tile)};
  };
  std::vector<std::array<int, 3>> source_memory;
  for (int s = 0; s < source_tiles; ++s) source_memory.push_back(memory_of(*sources.front(), s));
  std::vector<TileRef> refs, early;
  std::vector<unsigned char> block;
  // The tasks with carry fields are another kernel: a codelet and a model of their own (on a
  // rank that holds none of a tile's handles the types alone would not tell them apart).
  const std::string carried_name = name + "-carried";
  for (int t = 0; t < target_tiles; ++t) {
    const std::array<int, 3> target_memory = memory_of(*accumulators.front(), t);
    for (int s = 0; s < source_tiles; ++s) {
      const std::size_t si = static_cast<std::size_t>(s);
      const PairKind& kind = cut[si] ? carried : plain;
      refs.clear();
      early.clear();
      for (FieldStorage* f : targets) refs.push_back({f, t, Mode::Read});
      for (FieldStorage* f : sources) refs.push_back({f, s, Mode::Read});
      if (source_memory[si] != target_memory)
        for (FieldStorage* f : sources) early.push_back({f, s, Mode::Read});
      for (FieldStorage* f : accumulators) refs.push_back({f, t, Mode::Update});
      if (cut[si])
        for (std::size_t k = 0; k < accumulators.size(); ++k)
          refs.push_back({(*carries)[k].get(), t, Mode::Update});
      block.assign(static_cast<const unsigned char*>(kind.args.prototype),
                   static_cast<const unsigned char*>(kind.args.prototype) + kind.args.size);
      std::memcpy(block.data() + kind.range_offset, &range[si], sizeof(PairRange));
      SlotBlock args = kind.args;
      args.prototype = block.data();
      // Its work, the interactions it sums: the size its model is priced by (tiles of
      // different extents, as the planner cuts for all-pairs work, cost their product).
      // A task waits for the one before it (the same accumulators) longer than for its
      // sources: those written elsewhere (another GPU's or the CPU's tiles) are copied to its
      // worker as soon as they are written, not one after another as the chain reaches them.
      submit_tiles(cut[si] ? carried_name : name, kind.kind, refs, args,
                   static_cast<double>(points(*accumulators.front(), t)) *
                       static_cast<double>(points(*sources.front(), s)),
                   early);
    }
  }
}

}  // namespace tessera::detail
