// The checks of a mesh loop, all made before any of its tasks is submitted: each names the
// argument, the rule and the fix.
#include <cctype>

#include "core/mesh/mesh_impl.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

const char* access_name(tessera::Access a) {
  switch (a) {
    case tessera::Access::Read: return "Access::Read";
    case tessera::Access::Write: return "Access::Write";
    case tessera::Access::ReadWrite: return "Access::ReadWrite";
    case tessera::Access::Inc: return "Access::Inc";
    case tessera::Access::Min: return "Access::Min";
    case tessera::Access::Max: return "Access::Max";
  }
  return "?";
}

bool writes(tessera::Access a) {
  return a == tessera::Access::Write || a == tessera::Access::ReadWrite ||
         a == tessera::Access::Inc;
}

void check_dat_arg(const std::string& where, const SetStorage& set, const LoopArg& a) {
  const DatStorage& d = *a.dat;
  const std::string dat = "dat '" + d.name + "'";
  if (d.released)
    throw Error(where + ": " + dat +
                " outlived its tessera::Runtime; create dats after the Runtime");
  if (a.dim != d.dim)
    throw Error(where + " expects dim " + std::to_string(a.dim) + " but " + dat + " has " +
                std::to_string(d.dim) + " values per element; pass " + std::to_string(d.dim) +
                " (and let the kernel read that many)");
  if (a.access == tessera::Access::Min || a.access == tessera::Access::Max)
    throw Error(where + " uses " + dat + " with " + access_name(a.access) +
                ", which is for globals; use Access::Inc to add to a dat, or a tessera::Global to "
                "take a minimum or maximum");
  if (a.map == nullptr) {
    if (d.set.get() != &set)
      throw Error(where + ": " + dat + " lives on set '" + d.set->name +
                  "' but the loop runs over set '" + set.name + "'; reach it through a map from '" +
                  set.name + "' to '" + d.set->name + "': arg(dat, map, index, dim, access)");
    return;
  }
  const MapStorage& m = *a.map;
  if (m.from.get() != &set)
    throw Error(where + ": map '" + m.name + "' goes from set '" + m.from->name +
                "' but the loop runs over set '" + set.name + "'; use a map from '" + set.name +
                "'");
  if (m.to != d.set)
    throw Error(where + ": map '" + m.name + "' reaches set '" + m.to->name + "' but " + dat +
                " lives on set '" + d.set->name + "'; use a map to '" + d.set->name +
                "' or a dat on '" + m.to->name + "'");
  if (a.index < 0 || a.index >= m.arity)
    throw Error(where + ": index " + std::to_string(a.index) + " of map '" + m.name +
                "' is out of range: it has arity " + std::to_string(m.arity) +
                "; use an index in [0, " + std::to_string(m.arity) + ")");
  if (m.number < 0 || !d.set->mesh || d.set->mesh != set.mesh)
    throw Error(where + ": map '" + m.name + "' is not part of the partitioned mesh of set '" +
                set.name + "'; declare it before partition_mesh");
}

}  // namespace

void check_loop(const std::string& name, const SetStorage& set, const std::vector<LoopArg>& args) {
  if (name.empty())
    throw Error("loop name is empty; give a name such as \"res_calc\" (it names tasks and models)");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      throw Error("loop name '" + name +
                  "' may contain only letters, digits, '_' and '-' (it names perfmodel files)");
  if (!set.mesh)
    throw Error("loop '" + name + "' runs over set '" + set.name +
                "', which is not partitioned; call "
                "tessera::partition_mesh(set, tiles) on it or on a set its maps connect it to, "
                "after declaring "
                "the maps and before the loops");
  set.mesh->live("loop '" + name + "' over set '" + set.name + "'");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const LoopArg& a = args[i];
    const std::string where = "argument " + std::to_string(i + 1) + " of loop '" + name + "'";
    if (a.global != nullptr) {
      const GlobalStorage& g = *a.global;
      if (a.access == tessera::Access::Write || a.access == tessera::Access::ReadWrite)
        throw Error(
            where + " uses global '" + g.name + "' with " + access_name(a.access) +
            "; a global is read (Access::Read) or reduced (Access::Inc, Access::Min, Access::Max): "
            "tiles run in any order, so a written global would have no single value");
      if (a.dim != g.dim)
        throw Error(where + " expects dim " + std::to_string(a.dim) + " but global '" + g.name +
                    "' holds " + std::to_string(g.dim) + " values; pass " + std::to_string(g.dim));
      if (a.access == tessera::Access::Read &&
          g.value.size() > static_cast<std::size_t>(ArgWords::kValueBytes))
        throw Error(where + " reads global '" + g.name + "' of " + std::to_string(g.value.size()) +
                    " bytes; a loop reads globals of at most " +
                    std::to_string(ArgWords::kValueBytes) +
                    " bytes: pass larger constants in the kernel's own members");
      continue;
    }
    check_dat_arg(where, set, a);
  }
  // Across arguments: a dat written by one argument is touched by no other, except increments
  // or writes through the same map at different indices (both cells of an edge).
  for (std::size_t i = 0; i < args.size(); ++i)
    for (std::size_t j = i + 1; j < args.size(); ++j) {
      const LoopArg& a = args[i];
      const LoopArg& b = args[j];
      const std::string pair = "arguments " + std::to_string(i + 1) + " and " +
                               std::to_string(j + 1) + " of loop '" + name + "'";
      if (a.global != nullptr && a.global == b.global &&
          (a.access != tessera::Access::Read || b.access != tessera::Access::Read))
        throw Error(pair + " both use global '" + a.global->name + "' (" + access_name(a.access) +
                    ", " + access_name(b.access) +
                    "); pass a reduced global once, and read it in another loop");
      if (a.dat == nullptr || a.dat != b.dat || (!writes(a.access) && !writes(b.access))) continue;
      // Through one map, all increments or all writes: one combine task brings them home.
      const bool same_path =
          a.map != nullptr && a.map == b.map && writes(a.access) && writes(b.access) &&
          (a.access == tessera::Access::Inc) == (b.access == tessera::Access::Inc);
      if (same_path && a.index != b.index) continue;
      if (same_path)
        throw Error(pair + " both write dat '" + a.dat->name + "' through map '" + a.map->name +
                    "' at index " + std::to_string(a.index) + "; pass each (map, index) once");
      if (writes(a.access) && writes(b.access))
        throw Error(pair + " both write dat '" + a.dat->name + "' (" + access_name(a.access) +
                    ", " + access_name(b.access) +
                    "); a loop writes a dat either directly or through one map with one kind "
                    "of access (all Inc, or all Write/ReadWrite), since its updates are ordered "
                    "per map: split the loop");
      throw Error(pair + " use dat '" + a.dat->name + "' with " + access_name(a.access) + " and " +
                  access_name(b.access) +
                  "; a loop that writes a dat may not also read it through another argument (it "
                  "would see some "
                  "updates and not others): split the loop, or copy the dat first");
    }
  // Writes through a map must reach each target once: otherwise which write wins would depend
  // on the order, and only an increment combines them.
  for (const LoopArg& a : args) {
    if (a.map == nullptr ||
        (a.access != tessera::Access::Write && a.access != tessera::Access::ReadWrite))
      continue;
    unsigned mask = 0;
    for (const LoopArg& b : args)
      if (b.dat == a.dat && b.map == a.map) mask |= 1u << b.index;
    MapStorage& m = *a.map;
    auto found = m.conflicts.find(mask);
    if (found == m.conflicts.end()) {
      const partition::MeshMap pm{0, 0, m.arity, m.indices.data()};
      found = m.conflicts.emplace(mask, partition::first_conflict(pm, m.from->size, mask)).first;
    }
    if (!found->second.empty())
      throw Error("loop '" + name + "' writes dat '" + a.dat->name + "' through map '" + m.name +
                  "' with " + access_name(a.access) + ", but " + found->second + " (of set '" +
                  m.to->name +
                  "'): conflicting writes; use Access::Inc to add the contributions, "
                  "or a map that reaches each element once");
  }
}

}  // namespace tessera::detail
