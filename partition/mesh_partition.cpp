#include "partition/mesh_partition.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#ifdef TESSERA_HAVE_METIS
#include <metis.h>
#endif

#include "tessera/detail/mesh_codes.hpp"

namespace tessera::partition {

namespace codes = detail::mesh_codes;

bool have_metis() {
#ifdef TESSERA_HAVE_METIS
  return true;
#else
  return false;
#endif
}

namespace {

// The primary set's adjacency: two elements are neighbours when one element of another set
// maps to both (cells sharing an edge), else when both map to one element (cells sharing a
// node). CSR, no self loops, each neighbour once.
void adjacency(const std::vector<std::int64_t>& sizes, const std::vector<MeshMap>& maps,
               int primary, std::vector<std::int64_t>& start, std::vector<std::int32_t>& adj) {
  const std::int64_t n = sizes[static_cast<std::size_t>(primary)];
  std::vector<std::vector<std::int32_t>> nb(static_cast<std::size_t>(n));
  bool through_others = false;
  for (const MeshMap& m : maps) {
    if (m.to != primary || m.from == primary || m.arity < 2) continue;
    through_others = true;
    for (std::int64_t e = 0; e < sizes[static_cast<std::size_t>(m.from)]; ++e)
      for (int i = 0; i < m.arity; ++i)
        for (int j = 0; j < m.arity; ++j)
          if (i != j)
            nb[static_cast<std::size_t>(m.indices[e * m.arity + i])].push_back(
                m.indices[e * m.arity + j]);
  }
  if (!through_others)
    for (const MeshMap& m : maps) {
      if (m.from != primary || m.to == primary) continue;
      std::vector<std::vector<std::int32_t>> users(
          static_cast<std::size_t>(sizes[static_cast<std::size_t>(m.to)]));
      for (std::int64_t e = 0; e < n; ++e)
        for (int i = 0; i < m.arity; ++i)
          users[static_cast<std::size_t>(m.indices[e * m.arity + i])].push_back(
              static_cast<std::int32_t>(e));
      for (const auto& u : users)
        for (std::int32_t a : u)
          for (std::int32_t b : u)
            if (a != b) nb[static_cast<std::size_t>(a)].push_back(b);
    }
  start.assign(static_cast<std::size_t>(n + 1), 0);
  adj.clear();
  for (std::int64_t e = 0; e < n; ++e) {
    auto& v = nb[static_cast<std::size_t>(e)];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    v.erase(std::remove(v.begin(), v.end(), static_cast<std::int32_t>(e)), v.end());
    adj.insert(adj.end(), v.begin(), v.end());
    start[static_cast<std::size_t>(e + 1)] = static_cast<std::int64_t>(adj.size());
  }
}

std::vector<std::int32_t> cut_primary(const std::vector<std::int64_t>& sizes,
                                      const std::vector<MeshMap>& maps, int primary, int tiles,
                                      MeshMethod method) {
  const std::int64_t n = sizes[static_cast<std::size_t>(primary)];
  std::vector<std::int32_t> tile(static_cast<std::size_t>(n), 0);
  if (tiles == 1) return tile;
  if (method == MeshMethod::Block) {
    for (std::int64_t e = 0; e < n; ++e)
      tile[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(e * tiles / n);
    return tile;
  }
#ifdef TESSERA_HAVE_METIS
  std::vector<std::int64_t> start;
  std::vector<std::int32_t> adj;
  adjacency(sizes, maps, primary, start, adj);
  std::vector<idx_t> xadj(start.begin(), start.end()), adjncy(adj.begin(), adj.end());
  std::vector<idx_t> part(static_cast<std::size_t>(n), 0);
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = tiles, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same tiles on every run and every rank
  options[METIS_OPTION_NUMBERING] = 0;
  const int status = METIS_PartGraphKway(
      &nvtxs, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(), nullptr, nullptr,
      nullptr, &nparts, nullptr, nullptr, options, &objval, part.data());
  if (status != METIS_OK)
    throw std::invalid_argument("METIS failed to partition (status " + std::to_string(status) +
                                ")");
  for (std::int64_t e = 0; e < n; ++e)
    tile[static_cast<std::size_t>(e)] =
        static_cast<std::int32_t>(part[static_cast<std::size_t>(e)]);
  return tile;
#else
  (void)maps;
  throw std::invalid_argument("this Tessera was built without METIS");
#endif
}

// Fills owned lists and local numbers from the per-element tiles.
void number_owned(SetTiles& s, int tiles) {
  s.owned.assign(static_cast<std::size_t>(tiles), {});
  s.local.assign(s.tile.size(), 0);
  for (std::size_t e = 0; e < s.tile.size(); ++e) {
    auto& own = s.owned[static_cast<std::size_t>(s.tile[e])];
    s.local[e] = static_cast<std::int32_t>(own.size());
    own.push_back(static_cast<std::int32_t>(e));
  }
  s.partitioned = true;
}

// Tiles the sets not yet tiled, in rounds, from sets already tiled: first through maps out of
// the untiled set (owner compute: an edge goes with its first cell), then through maps into it.
void induce_untiled_sets(MeshPartition& p, const std::vector<std::int64_t>& sizes,
                         const std::vector<MeshMap>& maps) {
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      if (p.sets[s].partitioned) continue;
      const MeshMap* out = nullptr;
      const MeshMap* in = nullptr;
      for (const MeshMap& m : maps) {
        if (static_cast<std::size_t>(m.from) == s &&
            p.sets[static_cast<std::size_t>(m.to)].partitioned && out == nullptr)
          out = &m;
        if (static_cast<std::size_t>(m.to) == s &&
            p.sets[static_cast<std::size_t>(m.from)].partitioned && in == nullptr)
          in = &m;
      }
      if (out == nullptr && in == nullptr) continue;
      SetTiles& st = p.sets[s];
      st.tile.assign(static_cast<std::size_t>(sizes[s]), -1);
      if (out != nullptr) {
        const auto& to = p.sets[static_cast<std::size_t>(out->to)].tile;
        for (std::int64_t e = 0; e < sizes[s]; ++e)
          st.tile[static_cast<std::size_t>(e)] =
              to[static_cast<std::size_t>(out->indices[e * out->arity])];
      } else {
        const auto& from = p.sets[static_cast<std::size_t>(in->from)].tile;
        for (std::int64_t e = 0; e < sizes[static_cast<std::size_t>(in->from)]; ++e)
          for (int i = 0; i < in->arity; ++i) {
            std::int32_t& t = st.tile[static_cast<std::size_t>(in->indices[e * in->arity + i])];
            if (t < 0) t = from[static_cast<std::size_t>(e)];
          }
        for (std::int32_t& t : st.tile)
          if (t < 0) t = 0;
      }
      number_owned(st, p.tiles);
      progress = true;
    }
  }
}

// The tiles each tile exchanges with, through any set: sorted, once each.
std::vector<std::vector<std::int32_t>> neighbour_tiles(const MeshPartition& p) {
  std::vector<std::vector<std::int32_t>> neighbours(static_cast<std::size_t>(p.tiles));
  for (const SetTiles& st : p.sets) {
    if (!st.partitioned) continue;
    for (int t = 0; t < p.tiles; ++t)
      for (std::int32_t u : st.sources[static_cast<std::size_t>(t)]) {
        neighbours[static_cast<std::size_t>(t)].push_back(u);
        neighbours[static_cast<std::size_t>(u)].push_back(t);
      }
  }
  for (auto& nb : neighbours) {
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
  }
  return neighbours;
}

}  // namespace

MeshPartition partition_mesh(const std::vector<std::int64_t>& sizes,
                             const std::vector<MeshMap>& maps, int primary, int tiles,
                             MeshMethod method) {
  MeshPartition p;
  p.tiles = tiles;
  p.sets.assign(sizes.size(), {});
  p.sets[static_cast<std::size_t>(primary)].tile = cut_primary(sizes, maps, primary, tiles, method);
  number_owned(p.sets[static_cast<std::size_t>(primary)], tiles);
  induce_untiled_sets(p, sizes, maps);
  // Import halos: what each tile's elements reach through any map, outside the tile.
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    SetTiles& st = p.sets[s];
    if (!st.partitioned) continue;
    st.halo.assign(static_cast<std::size_t>(tiles), {});
    for (const MeshMap& m : maps) {
      if (static_cast<std::size_t>(m.to) != s) continue;
      const SetTiles& from = p.sets[static_cast<std::size_t>(m.from)];
      for (int t = 0; t < tiles; ++t)
        for (std::int32_t e : from.owned[static_cast<std::size_t>(t)])
          for (int i = 0; i < m.arity; ++i) {
            const std::int32_t c = m.indices[static_cast<std::int64_t>(e) * m.arity + i];
            if (st.tile[static_cast<std::size_t>(c)] != t)
              st.halo[static_cast<std::size_t>(t)].push_back(c);
          }
    }
    st.sources.assign(static_cast<std::size_t>(tiles), {});
    st.consumers.assign(static_cast<std::size_t>(tiles), {});
    st.exports.assign(static_cast<std::size_t>(tiles), {});
    for (int t = 0; t < tiles; ++t) {
      auto& h = st.halo[static_cast<std::size_t>(t)];
      auto key = [&](std::int32_t c) {
        return std::make_pair(st.tile[static_cast<std::size_t>(c)], c);
      };
      std::sort(h.begin(), h.end(),
                [&](std::int32_t a, std::int32_t b) { return key(a) < key(b); });
      h.erase(std::unique(h.begin(), h.end()), h.end());
      for (std::int32_t c : h) {
        const std::int32_t u = st.tile[static_cast<std::size_t>(c)];
        auto& src = st.sources[static_cast<std::size_t>(t)];
        if (src.empty() || src.back() != u) {
          src.push_back(u);
          st.consumers[static_cast<std::size_t>(u)].push_back(t);
          st.exports[static_cast<std::size_t>(u)].emplace_back();
        }
        st.exports[static_cast<std::size_t>(u)].back().push_back(
            st.local[static_cast<std::size_t>(c)]);
      }
    }
  }
  // Consumers were appended in ascending t for each u, so exports[u][k] matches consumers[u][k].
  // Maps in local numbers.
  p.map_local.assign(maps.size(), {});
  for (std::size_t mi = 0; mi < maps.size(); ++mi) {
    const MeshMap& m = maps[mi];
    const SetTiles& from = p.sets[static_cast<std::size_t>(m.from)];
    const SetTiles& to = p.sets[static_cast<std::size_t>(m.to)];
    if (!from.partitioned || !to.partitioned) continue;
    p.map_local[mi].assign(static_cast<std::size_t>(tiles), {});
    for (int t = 0; t < tiles; ++t) {
      const auto& h = to.halo[static_cast<std::size_t>(t)];
      const auto own = static_cast<std::int32_t>(to.owned[static_cast<std::size_t>(t)].size());
      auto& out = p.map_local[mi][static_cast<std::size_t>(t)];
      out.reserve(from.owned[static_cast<std::size_t>(t)].size() *
                  static_cast<std::size_t>(m.arity));
      for (std::int32_t e : from.owned[static_cast<std::size_t>(t)])
        for (int i = 0; i < m.arity; ++i) {
          const std::int32_t c = m.indices[static_cast<std::int64_t>(e) * m.arity + i];
          const std::int32_t u = to.tile[static_cast<std::size_t>(c)];
          if (u == t) {
            out.push_back(to.local[static_cast<std::size_t>(c)]);
          } else {
            const auto at =
                std::lower_bound(h.begin(), h.end(), c, [&](std::int32_t a, std::int32_t b) {
                  return std::make_pair(to.tile[static_cast<std::size_t>(a)], a) <
                         std::make_pair(to.tile[static_cast<std::size_t>(b)], b);
                });
            out.push_back(own + static_cast<std::int32_t>(at - h.begin()));
          }
        }
    }
  }
  p.neighbours = neighbour_tiles(p);
  return p;
}

namespace {
// A list of targets, each with its entries, as the kernels read it: the count, the targets,
// their starts in the entries (count + 1), the entries.
std::vector<std::int32_t> gather_list(const std::vector<std::int32_t>& targets,
                                      const std::vector<std::int32_t>& starts,
                                      const std::vector<std::int32_t>& entries) {
  std::vector<std::int32_t> out;
  out.reserve(1 + targets.size() + starts.size() + entries.size());
  out.push_back(static_cast<std::int32_t>(targets.size()));
  out.insert(out.end(), targets.begin(), targets.end());
  out.insert(out.end(), starts.begin(), starts.end());
  out.insert(out.end(), entries.begin(), entries.end());
  return out;
}

// The device variant of an increment plan: local slots in (element, index) order, gathered per
// target.
void add_device_variant(IncrementPlan& plan, const SetTiles& to, const MeshMap& m, unsigned mask) {
  const auto tiles = static_cast<int>(plan.codes.size());
  plan.device_codes = plan.codes;
  plan.local_slots.assign(static_cast<std::size_t>(tiles), 0);
  plan.local_gather.assign(static_cast<std::size_t>(tiles), {});
  for (int t = 0; t < tiles; ++t) {
    auto& code = plan.device_codes[static_cast<std::size_t>(t)];
    std::vector<std::vector<std::int32_t>> slots_of(to.owned[static_cast<std::size_t>(t)].size());
    std::int32_t next = 0;
    for (std::size_t k = 0; k < code.size(); ++k) {
      if (!((mask >> (k % static_cast<std::size_t>(m.arity))) & 1u) || code[k] < 0) continue;
      slots_of[static_cast<std::size_t>(code[k])].push_back(next);
      code[k] = next++;
    }
    plan.local_slots[static_cast<std::size_t>(t)] = next;
    std::vector<std::int32_t> targets, starts{0}, entries;
    for (std::size_t c = 0; c < slots_of.size(); ++c) {
      if (slots_of[c].empty()) continue;
      targets.push_back(static_cast<std::int32_t>(c));
      entries.insert(entries.end(), slots_of[c].begin(), slots_of[c].end());
      starts.push_back(static_cast<std::int32_t>(entries.size()));
    }
    plan.local_gather[static_cast<std::size_t>(t)] = gather_list(targets, starts, entries);
  }
}

}  // namespace

IncrementPlan plan_increments(const MeshPartition& p, const MeshMap& m, unsigned mask,
                              bool reverse) {
  const SetTiles& from = p.sets[static_cast<std::size_t>(m.from)];
  const SetTiles& to = p.sets[static_cast<std::size_t>(m.to)];
  const int tiles = p.tiles;
  const auto nfrom = static_cast<std::int64_t>(from.tile.size());
  const auto nto = static_cast<std::int64_t>(to.tile.size());
  const auto in_mask = [&](int i) { return (mask >> i) & 1u; };
  // Contributors of each target, in (global element, index) order, and whether they all lie
  // in the target's own tile.
  std::vector<std::int64_t> start(static_cast<std::size_t>(nto + 1), 0);
  for (std::int64_t e = 0; e < nfrom; ++e)
    for (int i = 0; i < m.arity; ++i)
      if (in_mask(i)) ++start[static_cast<std::size_t>(m.indices[e * m.arity + i]) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::int64_t> contributor(static_cast<std::size_t>(start.back()));
  std::vector<char> shared(static_cast<std::size_t>(nto), 0);
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::int64_t e = 0; e < nfrom; ++e)
      for (int i = 0; i < m.arity; ++i) {
        if (!in_mask(i)) continue;
        const std::int32_t c = m.indices[e * m.arity + i];
        contributor[static_cast<std::size_t>(fill[static_cast<std::size_t>(c)]++)] =
            e * m.arity + i;
        if (from.tile[static_cast<std::size_t>(e)] != to.tile[static_cast<std::size_t>(c)])
          shared[static_cast<std::size_t>(c)] = 1;
      }
  }
  // A target reached from other tiles takes every contribution through a slot, its own
  // tile's too, so that all of them are added in one place in the fixed order.
  IncrementPlan plan;
  plan.codes.assign(static_cast<std::size_t>(tiles), {});
  plan.dests.assign(static_cast<std::size_t>(tiles), {});
  plan.slot_counts.assign(static_cast<std::size_t>(tiles), {});
  std::vector<std::int32_t> slot_of(static_cast<std::size_t>(nfrom * m.arity),
                                    0);  // offset in its buffer
  for (int t = 0; t < tiles; ++t) {
    const auto& own = from.owned[static_cast<std::size_t>(t)];
    auto& dests = plan.dests[static_cast<std::size_t>(t)];
    for (std::int32_t e : own)
      for (int i = 0; i < m.arity; ++i) {
        const std::int32_t c = m.indices[static_cast<std::int64_t>(e) * m.arity + i];
        if (in_mask(i) && shared[static_cast<std::size_t>(c)])
          dests.push_back(to.tile[static_cast<std::size_t>(c)]);
      }
    std::sort(dests.begin(), dests.end());
    dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
    if (static_cast<std::int64_t>(dests.size()) > codes::kMaxBuffers)
      throw std::invalid_argument("tile " + std::to_string(t) + " increments elements of " +
                                  std::to_string(dests.size()) + " other tiles");
    auto& counts = plan.slot_counts[static_cast<std::size_t>(t)];
    counts.assign(dests.size(), 0);
    auto& code = plan.codes[static_cast<std::size_t>(t)];
    code.assign(own.size() * static_cast<std::size_t>(m.arity), 0);
    for (std::size_t l = 0; l < own.size(); ++l) {
      const std::int64_t e = own[l];
      for (int i = 0; i < m.arity; ++i) {
        if (!in_mask(i)) continue;
        const std::int32_t c = m.indices[e * m.arity + i];
        std::int32_t& out =
            code[l * static_cast<std::size_t>(m.arity) + static_cast<std::size_t>(i)];
        if (!shared[static_cast<std::size_t>(c)]) {
          out = to.local[static_cast<std::size_t>(c)];
          continue;
        }
        const auto k = static_cast<std::int32_t>(
            std::lower_bound(dests.begin(), dests.end(), to.tile[static_cast<std::size_t>(c)]) -
            dests.begin());
        const std::int64_t off = counts[static_cast<std::size_t>(k)]++;
        if (off > codes::kMaxOffset)
          throw std::invalid_argument("tile " + std::to_string(t) + " has more than " +
                                      std::to_string(codes::kMaxOffset) +
                                      " increment slots for one tile");
        out = codes::slot(k, static_cast<std::int32_t>(off));
        slot_of[static_cast<std::size_t>(e * m.arity + i)] = static_cast<std::int32_t>(off);
      }
    }
  }
  add_device_variant(plan, to, m, mask);
  plan.sources.assign(static_cast<std::size_t>(tiles), {});
  plan.source_buffer.assign(static_cast<std::size_t>(tiles), {});
  for (int t = 0; t < tiles; ++t)
    for (std::size_t k = 0; k < plan.dests[static_cast<std::size_t>(t)].size(); ++k) {
      const std::int32_t u = plan.dests[static_cast<std::size_t>(t)][k];
      plan.sources[static_cast<std::size_t>(u)].push_back(t);
      plan.source_buffer[static_cast<std::size_t>(u)].push_back(static_cast<std::int32_t>(k));
    }
  plan.combine.assign(static_cast<std::size_t>(tiles), {});
  for (int u = 0; u < tiles; ++u) {
    const auto& sources = plan.sources[static_cast<std::size_t>(u)];
    std::vector<std::int32_t> targets, starts{0}, entries;
    for (std::int32_t c : to.owned[static_cast<std::size_t>(u)]) {
      if (!shared[static_cast<std::size_t>(c)]) continue;
      targets.push_back(to.local[static_cast<std::size_t>(c)]);
      const std::size_t first = entries.size();
      for (std::int64_t q = start[static_cast<std::size_t>(c)];
           q < start[static_cast<std::size_t>(c) + 1]; ++q) {
        const std::int64_t slot = contributor[static_cast<std::size_t>(q)];
        const std::int32_t t = from.tile[static_cast<std::size_t>(slot / m.arity)];
        const auto j = static_cast<std::int32_t>(
            std::lower_bound(sources.begin(), sources.end(), t) - sources.begin());
        entries.push_back(codes::slot(j, slot_of[static_cast<std::size_t>(slot)]));
      }
      if (reverse)
        std::reverse(entries.begin() + static_cast<std::ptrdiff_t>(first), entries.end());
      starts.push_back(static_cast<std::int32_t>(entries.size()));
    }
    plan.combine[static_cast<std::size_t>(u)] = gather_list(targets, starts, entries);
  }
  return plan;
}

std::string first_conflict(const MeshMap& m, std::int64_t from_size, unsigned mask) {
  std::vector<std::int64_t> first;  // per target: first (element * arity + index) reaching it, + 1
  for (std::int64_t e = 0; e < from_size; ++e)
    for (int i = 0; i < m.arity; ++i) {
      if (!((mask >> i) & 1u)) continue;
      const std::int32_t c = m.indices[e * m.arity + i];
      if (static_cast<std::size_t>(c) >= first.size())
        first.resize(static_cast<std::size_t>(c) + 1, 0);
      std::int64_t& f = first[static_cast<std::size_t>(c)];
      if (f != 0)
        return "element " + std::to_string((f - 1) / m.arity) + " (index " +
               std::to_string((f - 1) % m.arity) + ") and element " + std::to_string(e) +
               " (index " + std::to_string(i) + ") both reach target " + std::to_string(c);
      f = e * m.arity + i + 1;
    }
  return {};
}

std::vector<std::int32_t> colour_elements(std::int64_t n, const std::vector<ElementTargets>& maps) {
  std::vector<std::int32_t> colour(static_cast<std::size_t>(n), -1);
  // Per target, the colours of the current block of 64 already used by elements reaching it.
  std::vector<std::vector<std::uint64_t>> used(maps.size());
  for (int base = 0;; base += 64) {
    for (std::size_t k = 0; k < maps.size(); ++k)
      used[k].assign(static_cast<std::size_t>(maps[k].targets), 0);
    bool left = false;
    for (std::int64_t e = 0; e < n; ++e) {
      if (colour[static_cast<std::size_t>(e)] >= 0) continue;  // coloured in an earlier block
      std::uint64_t taken = 0;
      for (std::size_t k = 0; k < maps.size(); ++k)
        for (int i = 0; i < maps[k].arity; ++i)
          taken |= used[k][static_cast<std::size_t>(maps[k].indices[e * maps[k].arity + i])];
      if (taken == ~0ull) {
        left = true;
        continue;
      }
      int c = 0;
      while ((taken >> c) & 1ull) ++c;
      colour[static_cast<std::size_t>(e)] = base + c;
      for (std::size_t k = 0; k < maps.size(); ++k)
        for (int i = 0; i < maps[k].arity; ++i)
          used[k][static_cast<std::size_t>(maps[k].indices[e * maps[k].arity + i])] |= 1ull << c;
    }
    if (!left) break;
  }
  return colour;
}

}  // namespace tessera::partition
