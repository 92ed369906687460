#include "tasks/tag.hpp"

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

}  // namespace tessera::tasks
