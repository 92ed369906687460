// The identity of a task, typed: it travels with the task from submission to the recorder.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::tasks {

/// What a task is: typed, travels with the task, and becomes a name (trace::task_name) only
/// where one is asked for (a trace, StarPU's FxT traces, an error message).
struct TaskTag {
  const char* stencil = "";     ///< the stencil, loop or "reduce": set from the codelet
  const char* kind = "";        ///< the task kind: set from the codelet
  const char* field = nullptr;  ///< the field of a halo or reduction task (an interned name)
  int tile = -1;
  long step = -1;
  int rank = 0;  ///< the rank that runs it: the owner of its tile
  /// Its place in submission order, set by the Submitter (every rank counts every task of a
  /// multi-rank run, so the same on every rank).
  std::uint64_t seq = 0;
  /// Buffers its placement copies ahead (tasks::Placement::fetch_early), set by the Submitter.
  int early_copies = 0;
};
std::string name_of(const TaskTag& tag);

struct Codelet;
/// The stencil (or loop, or "reduce") of a codelet's tasks' tags, as an interned name.
const char* stencil_of(const Codelet& c);

}  // namespace tessera::tasks
