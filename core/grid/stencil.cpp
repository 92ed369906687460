// One step of a stencil: checks, ghost-layer exchange of the inputs (but centre-only ones),
// interior tasks.
#include <algorithm>
#include <string>

#include "core/grid/checks.hpp"
#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"
#include "core/grid/slab_pipeline.hpp"
#include "core/grid/tile_tasks.hpp"
#include "tasks/halo.hpp"
#include "tessera/stencil.hpp"

namespace tessera::detail {

void apply_stencil(const std::string& name, int radius, bool box, const TaskKind& kind,
                   const std::vector<FieldStorage*>& inputs, const std::vector<bool>& centre_only,
                   const std::vector<FieldStorage*>& outputs, std::size_t in_place,
                   const ArgBlock& args) {
  check_stencil_fields(name, radius, inputs, outputs, centre_only);
  check_vertex_mirror(name, radius, inputs, centre_only);
  for (const FieldStorage* f : inputs) slabs::check_holds_values(*f, "an input of apply");
  for (std::size_t k = outputs.size() - in_place; k < outputs.size(); ++k)
    slabs::check_holds_values(*outputs[k], "an in-out of apply");
  Context& rt = inputs.front()->context();
  std::vector<FieldStorage*> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  const std::string types = type_names(all);
  TileTaskCall call{&rt.engine->codelets().get(name, types, kind), inputs, outputs, args};
  // The interior tasks copy the inputs' ghost layers in and pack the outputs' faces, up to
  // HaloWork::kMax fields each way (beyond: the exchange tasks of their own).
  const auto exchanged = std::count(centre_only.begin(), centre_only.end(), false);
  const bool in_tasks =
      exchanged <= tasks::HaloWork::kMax && outputs.size() <= tasks::HaloWork::kMax;
  // Centre-only inputs are read at the point only: their ghost layers are never needed.
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (centre_only[k]) continue;
    if (!in_tasks) {
      inputs[k]->exchange(name, radius, box);
    } else if (const HaloSet* set = inputs[k]->exchange_in_tasks(name, radius, box)) {
      call.fills.push_back({static_cast<int>(k), set, false, slabs::ghost_planes_left(*inputs[k])});
    }
  }
  // On a streamed grid a time block's scratch was dropped after its visits: written again (its
  // constant ghosts, which makes it StarPU's again) before a step reads or writes it. Only that:
  // where ghost planes were left behind, the fills above carry the constant ghosts.
  if (all.front()->grid().stream_depth > 0)
    call.before_tile = [&all, &name, radius, box](int t) {
      for (FieldStorage* f : all) slabs::refill_ghosts(*f, name, radius, box, t, false);
    };
  const std::vector<HaloSet*> packed = add_packs(call, outputs, inputs.size(), in_tasks);
  add_halo_work(call, name, types, kind);
  call.step = rt.steps++;
  submit_tile_tasks(call);
  for (std::size_t j = 0; j < outputs.size(); ++j) outputs[j]->written(packed[j]);
  for (const HaloCopies& h : call.fills)
    inputs[static_cast<std::size_t>(h.field)]->count_received(*h.set);
}

void set_mirror_faces(BlockSpan& span, const FieldStorage& u) {
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const Boundary::Kind k =
          u.faces().face[static_cast<std::size_t>(a)][static_cast<std::size_t>(side)].kind;
      span.mirror[a][side] = a >= u.grid().dims                   ? 0
                             : k == Boundary::Kind::Neumann       ? 1
                             : k == Boundary::Kind::NeumannVertex ? 2
                                                                  : 0;
    }
}

void check_apply_box(const std::string& name, const GridSpec& grid, const std::int64_t* lo,
                     const std::int64_t* hi, int dims) {
  std::string box = "(", ext = "(";
  bool inside = true;
  for (int a = 0; a < dims; ++a) {
    const std::int64_t n = grid.extent[static_cast<std::size_t>(a)];
    inside = inside && lo[a] >= 0 && lo[a] <= hi[a] && hi[a] <= n;
    box += (a > 0 ? ", " : "") + std::to_string(lo[a]) + ".." + std::to_string(hi[a]);
    ext += (a > 0 ? ", " : "") + std::to_string(n);
  }
  if (!inside)
    throw Error("stencil '" + name + "': apply on the box " + box +
                ") (lo inclusive, hi exclusive), which is not within the grid of extent " + ext +
                "); every lo must be >= 0 and <= its hi, every hi <= the extent; give a box "
                "inside the grid, e.g. tessera::Box<" +
                std::to_string(dims) + ">::whole(grid).inset(radius) for the interior");
}

InnerBox inner_box(const GridSpec& grid, int radius) {
  InnerBox box;
  for (int a = 0; a < 3; ++a) {
    const bool whole = a >= grid.dims || grid.periodic[static_cast<std::size_t>(a)];
    box.lo[a] = whole ? 0 : radius;
    box.hi[a] = whole ? grid.extent[static_cast<std::size_t>(a)]
                      : grid.extent[static_cast<std::size_t>(a)] - radius;
  }
  return box;
}

AccessRule access_rule(const std::string& owner, const FieldStorage& field, int radius, int dims,
                       bool box, bool centre_only) {
  AccessRule r{};
  copy_name(r.owner, owner);
  copy_name(r.field, field.name());
  r.radius = radius;
  r.dims = dims;
  r.box = box;
  r.centre_only = centre_only;
  return r;
}

}  // namespace tessera::detail

namespace tessera::detail {

void apply_time_block(const std::string& name, int radius, bool box, const TaskKind& kind,
                      FieldStorage& u, FieldStorage& next, const std::vector<FieldStorage*>& extras,
                      const std::vector<FieldStorage*>& state, long steps, int depth,
                      const ArgBlock& args) {
  check_time_block(name, radius, u, next, extras, state, steps, depth);
  slabs::check_holds_values(u, "advance's u");
  for (const FieldStorage* f : extras) slabs::check_holds_values(*f, "an input of advance");
  for (const FieldStorage* f : state) slabs::check_holds_values(*f, "an in-out of advance");
  Context& rt = u.context();
  // Deep layers, box-shaped once a block has two steps: a star's second step reads what its
  // first computed at the diagonal neighbours. One width per call, however short the block,
  // so the last, shorter block reuses the same halo buffers.
  const int width = depth * radius;
  const bool deep_box = box || depth > 1;
  std::vector<FieldStorage*> all = extras;
  all.push_back(&u);
  all.push_back(&next);
  all.insert(all.end(), state.begin(), state.end());
  const std::string types = type_names(all);
  std::vector<FieldStorage*> written{&u, &next};
  written.insert(written.end(), state.begin(), state.end());
  TileTaskCall call{&rt.engine->codelets().get(name, types, kind), extras, written, args};
  // Steps 1, 3, ... read next at the faces: its Dirichlet ghosts must hold their values too.
  // This also plans next's halo set of this (width, shape), which an odd block packs (below).
  if (u.grid().stream_depth > 0) slabs::start_scratch(next);
  next.fill_constant_ghosts(name, width, deep_box);
  if (u.grid().stream_depth > 0) {
    // A streamed grid's tiles cross the bus without their ghost planes (the blocks fill u's
    // and the state's, constants too), and its scratch is dropped after each visit: next's
    // constant ghosts are written again just before each visit.
    slabs::leave_ghost_planes(u, true);
    slabs::leave_ghost_planes(next, true);
    for (FieldStorage* f : state) slabs::leave_ghost_planes(*f, true);
    call.before_tile = [&next, &name, width, deep_box](int t) {
      slabs::refill_ghosts(next, name, width, deep_box, t);
    };
  }
  // The block tasks copy the ghost layers of u and of the in-place fields in and, the block
  // done, pack the faces of what the next block exchanges, so that no halo-pack task runs
  // between blocks. The in-place fields, and u after an even number of steps (the result then
  // ends in u), pack into their sets' spare face buffers, since this one call reads and writes
  // them (a tile packing into the buffers it read from would overwrite faces a neighbour
  // submitted after it has still to read). After an odd number of steps the result ends in
  // next, which the caller swaps into u: the tasks pack next's faces instead, into its own
  // face buffers of this (width, shape), which no task of this call reads.
  const bool ends_in_next = steps % 2 != 0;
  std::vector<FieldStorage*> exchanged{&u};
  std::vector<int> exchanged_field{static_cast<int>(extras.size())};  // in the call's fields
  for (std::size_t k = 0; k < state.size(); ++k) {
    exchanged.push_back(state[k]);
    exchanged_field.push_back(static_cast<int>(extras.size() + 2 + k));
  }
  // On a streamed grid the tiles that pack into the spares also pack ahead, from the values
  // their block starts from, the face their next visitor on the same GPU reads in this call
  // (slabs::pack_ahead): it stays on the GPU, where the faces packed after a visit cross
  // the bus twice (down, then up for the next pass).
  const bool streamed = u.grid().stream_depth > 0;
  std::vector<HaloSet*> filled, packed, ahead;
  for (std::size_t k = 0; k < exchanged.size(); ++k) {
    const bool spare = !(k == 0 && ends_in_next);
    filled.push_back(exchanged[k]->exchange_in_tasks(name, width, deep_box, streamed && spare));
    packed.push_back(spare ? exchanged[k]->pack_spare(filled.back()) : nullptr);
    ahead.push_back(streamed ? slabs::pack_ahead(*exchanged[k], packed.back()) : nullptr);
    if (filled.back() != nullptr)
      call.fills.push_back({exchanged_field[k], filled.back(), false,
                            slabs::ghost_planes_left(*exchanged[k]), ahead.back() != nullptr});
    if (packed.back() != nullptr)
      call.packs.push_back(
          {exchanged_field[k], packed.back(), true, false, ahead.back() != nullptr});
  }
  HaloSet* next_packed = nullptr;
  if (ends_in_next && rt.options.fused_exchange) {
    next_packed = &next.impl().halos.at({width, deep_box});
    call.packs.push_back({static_cast<int>(extras.size()) + 1, next_packed});
  }
  // The extra inputs: exchanged once as deep, then skipped while nothing writes them.
  for (FieldStorage* e : extras) e->exchange(name, width, deep_box);
  add_halo_work(call, name, types, kind);
  // A streamed grid's blocks turn (TileTaskCall::turns), where every set packed ahead may.
  call.turns = streamed && std::none_of(ahead.begin(), ahead.end(), [](const HaloSet* set) {
                 return set != nullptr && set->one_way;
               });
  call.reverse = call.turns && rt.streamed_blocks++ % 2 == 1;
  call.step = rt.steps;
  call.steps = steps;
  call.radius = radius;
  rt.steps += steps;
  submit_tile_tasks(call);
  // A grid streamed through the GPUs' memory: each tile's result leaves the GPU first, written
  // back while the bus is idle, and what the block left in the other field is scratch, dropped
  // unwritten (the bus then carries u in and out once a visit, next never). After an odd
  // number of steps both are kept: the caller swaps next, which then holds the result, into u.
  if (u.grid().stream_depth > 0) {
    // Where the blocks turn, each GPU's last slab stays for its next visit, the next block's
    // first there; its scratch is left too, to be written again.
    const int turn = !call.turns ? 0 : call.reverse ? -1 : 1;
    slabs::after_visit(u, true, turn);
    slabs::after_visit(next, ends_in_next, turn);
    for (FieldStorage* f : state) slabs::after_visit(*f, true, turn);
    for (FieldStorage* f : extras) slabs::after_visit(*f, true, turn);
  }
  for (std::size_t k = 0; k < exchanged.size(); ++k) {
    if (filled[k] != nullptr)
      exchanged[k]->count_received(*filled[k]);  // before the spares become the buffers
    slabs::written_ahead(streamed ? packed[k] : nullptr);
    exchanged[k]->written_spare(packed[k]);
  }
  next.written(next_packed);
}

}  // namespace tessera::detail
