// Inter-grid operators (include/tessera/levels.hpp): the checks, the ghost layers of the source
// level, and which source tiles each destination tile's points are anchored in.
#include <algorithm>

#include "core/grid/checks.hpp"
#include "tessera/error.hpp"
#include "tessera/levels.hpp"

namespace tessera::detail {

namespace {

// The destination points along one axis, [lo, hi), whose anchors lie in [so, so + se).
std::pair<std::int64_t, std::int64_t> anchored(std::int64_t so, std::int64_t se, bool restrict) {
  if (restrict) return {so / 2, (so + se) / 2};
  return {2 * so, 2 * (so + se)};
}

}  // namespace

std::vector<std::pair<int, int>> level_tiles(const std::string& name, FieldStorage& source,
                                             FieldStorage& destination, bool restrict) {
  FieldStorage& fine = restrict ? source : destination;
  FieldStorage& coarse = restrict ? destination : source;
  const GridSpec &f = fine.grid(), &c = coarse.grid();
  const std::string what = std::string(restrict ? "restriction '" : "prolongation '") + name + "'";
  if (f.dims != c.dims)
    throw Error(what + ": fields '" + fine.name() + "' and '" + coarse.name() +
                "' have different dimensions; give two levels of one hierarchy");
  for (int a = 0; a < f.dims; ++a) {
    if (f.extent[a] != 2 * c.extent[a])
      throw Error(what + ": fine field '" + fine.name() + "' has " + std::to_string(f.extent[a]) +
                  " points along " + axis_name(a) + " and coarse field '" + coarse.name() + "' " +
                  std::to_string(c.extent[a]) +
                  "; the coarse level has half the fine points per "
                  "axis: create it on tessera::coarser(fine grid)");
    if (f.periodic[a] != c.periodic[a])
      throw Error(what + ": fields '" + fine.name() + "' and '" + coarse.name() +
                  "' differ in periodicity along " + axis_name(a) +
                  "; both levels cover the same "
                  "domain: give them the same periodic flags");
  }
  if (source.halo() < 1)
    throw Error(what + " reads the neighbours of its anchor points in field '" + source.name() +
                "', which has halo width 0; create it with a halo >= 1");
  source.exchange(name, 1, true);
  std::vector<std::pair<int, int>> pairs;
  for (int d = 0; d < destination.tiles(); ++d) {
    const TileGeometry dg = destination.geometry(d);
    for (int s = 0; s < source.tiles(); ++s) {
      const TileGeometry sg = source.geometry(s);
      bool meets = true;
      for (int a = 0; a < f.dims; ++a) {
        const auto [lo, hi] = anchored(sg.origin[a], sg.extent[a], restrict);
        meets = meets && std::max(lo, dg.origin[a]) < std::min(hi, dg.origin[a] + dg.extent[a]);
      }
      if (meets) pairs.emplace_back(d, s);
    }
  }
  return pairs;
}

}  // namespace tessera::detail
