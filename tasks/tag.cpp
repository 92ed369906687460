#include "tasks/tag.hpp"

#include "tasks/starpu.hpp"
#include "tessera/trace.hpp"

namespace tessera::tasks {

std::string name_of(const TaskTag& tag) {
  trace::TaskEvent e;
  e.stencil = tag.stencil;
  e.kind = tag.kind;
  e.field = tag.field != nullptr ? tag.field : "";
  e.tile = tag.tile;
  e.step = static_cast<int>(tag.step);
  return trace::task_name(e);
}

const char* stencil_of(const Codelet& c) { return c.stencil.c_str(); }

}  // namespace tessera::tasks
