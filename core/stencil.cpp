// One step of a stencil: checks, ghost-layer exchange of the inputs, interior tasks.
#include "core/checks.hpp"
#include "core/context.hpp"
#include "core/tile_tasks.hpp"
#include "tessera/stencil.hpp"

namespace tessera::detail {

void apply_stencil(const std::string& name, int radius, bool box, const TaskKind& kind,
                   const std::vector<FieldStorage*>& inputs,
                   const std::vector<FieldStorage*>& outputs, const ArgBlock& args) {
  check_stencil_fields(name, radius, inputs, outputs);
  Context& rt = inputs.front()->context();
  for (FieldStorage* s : inputs) s->exchange(name, radius, box);
  std::vector<FieldStorage*> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  TileTaskCall call{&rt.engine->codelets().get(name, type_names(all), kind), inputs, outputs, args};
  call.step = rt.steps++;
  submit_tile_tasks(call);
  for (FieldStorage* s : outputs) s->written();
}

}  // namespace tessera::detail
