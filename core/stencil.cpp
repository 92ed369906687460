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
