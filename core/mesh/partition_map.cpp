// The run report's partition map of a mesh (tessera::show_partitions): where each element of
// a partitioned set lies, taken from a dat of positions, and the tile it belongs to.
#include <numeric>

#include "core/mesh/mesh_impl.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

void show_partitions(const DatStorage& positions, const MapStorage* corners) {
  const std::string what = "tessera::show_partitions(" + positions.name +
                           (corners != nullptr ? ", " + corners->name : std::string()) + ")";
  if (positions.dim < 2)
    throw Error(what + ": dat '" + positions.name + "' has dim " + std::to_string(positions.dim) +
                "; positions need 2 or 3 values per element (x, y[, z])");
  if (corners != nullptr && corners->to != positions.set)
    throw Error(what + ": map '" + corners->name + "' goes to set '" + corners->to->name +
                "' but dat '" + positions.name + "' is on set '" + positions.set->name +
                "'; give the map from the elements drawn to the set of their positions");
  const SetStorage& drawn = corners != nullptr ? *corners->from : *positions.set;
  if (!drawn.mesh)
    throw Error(what + ": set '" + drawn.name +
                "' is not partitioned yet; call show_partitions after partition_mesh");
  MeshStorage& mesh = *drawn.mesh;
  Context& rt = mesh.live(what);
  // Nothing to draw without a report; no positions exist in a simulated run.
  if (!rt.recording.maps_tiles() || rt.simulated) return;
  const auto dim = static_cast<std::size_t>(positions.dim);
  std::vector<double> values(static_cast<std::size_t>(positions.set->size) * dim);
  gather_dat(positions, values.data());  // collective under MPI, as every caller is
  trace::PartitionMap m;
  m.set = drawn.name;
  m.owner = mesh.owner;
  m.tile.assign(static_cast<std::size_t>(drawn.size), -1);
  const partition::SetTiles& st = mesh.part.sets[static_cast<std::size_t>(drawn.number)];
  for (std::size_t t = 0; t < st.owned.size(); ++t)
    for (std::int32_t e : st.owned[t]) m.tile[static_cast<std::size_t>(e)] = static_cast<int>(t);
  if (corners != nullptr) {
    m.corners = corners->arity;
    m.corner = corners->indices;
  } else {
    m.corner.resize(m.tile.size());
    std::iota(m.corner.begin(), m.corner.end(), 0);
  }
  m.xy.reserve(values.size() / dim * 2);
  for (std::size_t p = 0; p < values.size(); p += dim) {
    m.xy.push_back(values[p]);
    m.xy.push_back(values[p + 1]);
  }
  rt.recording.map_partitions(&mesh, std::move(m));
}

}  // namespace tessera::detail
