// One step of a stencil: checks, ghost-layer exchange of the inputs (but centre-only ones),
// interior tasks.
#include "core/checks.hpp"
#include "core/context.hpp"
#include "core/tile_tasks.hpp"
#include "tessera/stencil.hpp"

namespace tessera::detail {

void apply_stencil(const std::string& name, int radius, bool box, const TaskKind& kind,
                   const std::vector<FieldStorage*>& inputs, const std::vector<bool>& centre_only,
                   const std::vector<FieldStorage*>& outputs, const ArgBlock& args) {
  check_stencil_fields(name, radius, inputs, outputs, centre_only);
  check_vertex_mirror(name, radius, inputs, centre_only);
  Context& rt = inputs.front()->context();
  // Centre-only inputs are read at the point only: their ghost layers are never needed.
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!centre_only[k]) inputs[k]->exchange(name, radius, box);
  std::vector<FieldStorage*> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  TileTaskCall call{&rt.engine->codelets().get(name, type_names(all), kind), inputs, outputs, args};
  call.step = rt.steps++;
  submit_tile_tasks(call);
  for (FieldStorage* s : outputs) s->written();
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
                      long steps, int depth, const ArgBlock& args) {
  check_time_block(name, radius, u, next, extras, steps, depth);
  Context& rt = u.context();
  // Deep layers, box-shaped once a block has two steps: a star's second step reads what its
  // first computed at the diagonal neighbours. One width per call, however short the block,
  // so the last, shorter block reuses the same halo buffers.
  const int width = depth * radius;
  const bool deep_box = box || depth > 1;
  u.exchange(name, width, deep_box);
  // The extra inputs: exchanged once as deep, then skipped while nothing writes them.
  for (FieldStorage* e : extras) e->exchange(name, width, deep_box);
  // Steps 1, 3, ... read next at the faces: its Dirichlet ghosts must hold their values too.
  next.fill_constant_ghosts(name, width, deep_box);
  std::vector<FieldStorage*> all = extras;
  all.push_back(&u);
  all.push_back(&next);
  TileTaskCall call{&rt.engine->codelets().get(name, type_names(all), kind), extras, {&u, &next},
                    args};
  call.step = rt.steps;
  rt.steps += steps;
  submit_tile_tasks(call);
  u.written();
  next.written();
}

}  // namespace tessera::detail
