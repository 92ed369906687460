// The runtime context: what a live Runtime holds, in parts with one job each, and the state
// each feature above this room keeps for the Runtime's life (Context::state). Fields capture it
// when they are created, and every library call reaches it through them; the one process-wide
// pointer (to the live context) serves only to create fields.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <typeindex>
#include <typeinfo>

#include "core/runtime/recording.hpp"
#include "core/runtime/watchdog.hpp"
#include "partition/planner.hpp"
#include "tasks/engine.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

class FieldStorage;

/// A library object that holds data handles outside fields (mesh dats, maps, globals): the
/// Runtime releases the ones still alive when it ends first.
struct HandleOwner {
  virtual void release_handles() = 0;

 protected:
  ~HandleOwner() = default;
};

struct Context {
  Options options;
  int rank = 0, ranks = 1;
  std::string scheduler;                  // as resolved against STARPU_SCHED
  std::string configuration;              // the line printed at start-up
  Recording recording;                    // --trace / --report paths, written at shutdown
  std::unique_ptr<tasks::Engine> engine;  // StarPU: codelets, data, submission, recorder
  std::unique_ptr<Watchdog> watchdog;     // --watchdog: null when off
  // Which tiles run on which device class, for every tiling of this run, and whether a split
  // may move; `planner_speeds` says where its speeds came from (its lines end with it).
  partition::Planner planner;
  std::string planner_speeds, planner_pair_speeds;
  std::set<FieldStorage*> fields;        // alive; released if the Runtime ends first
  std::set<HandleOwner*> handle_owners;  // the same for mesh objects
  long steps = 0;                        // stencil applications submitted: the step of task tags
  long streamed_blocks = 0;  // time blocks on a streamed grid submitted: odd ones turn (reverse)
  Traffic received;          // face buffers this rank's tasks received (counted at submission)
  int uncaught = 0;          // exceptions in flight when the Runtime was made (to see unwinding)
  bool finished = false;     // Runtime::finish() has written the outputs
  /// StarPU's SimGrid mode (docs/simulation.md): tasks do not run, so data hold no values;
  /// host-side reads and writes of field data are skipped and reductions give NaN.
  bool simulated = false;

  /// The state of one feature for this Runtime, made on first use: a struct the feature
  /// defines in its own room (core/grid/balance.cpp's retile rate, core/io/checkpoint.cpp's
  /// folders), which this room cannot include. Usage: `c.state<RetileRate>().seconds_per_byte`.
  template <class State>
  State& state() {
    std::shared_ptr<void>& s = states_[std::type_index(typeid(State))];
    if (!s) s = std::make_shared<State>();
    return *static_cast<State*>(s.get());
  }

 private:
  std::map<std::type_index, std::shared_ptr<void>> states_;  // by the feature's type
};

/// The live runtime's context; throws tessera::Error naming `what` when none is alive.
Context& live_context(const char* what);
/// The live runtime's context, or null when none is alive.
Context* live_context_or_null();
/// Says a choice the library made for the user (tiles it chose): printed once after the
/// configuration line (rank 0, unless quiet) and appended to the configuration, which the trace
/// and the report carry.
void announce(Context& c, const std::string& line);
/// Throws tessera::Error in a simulated run: `what` (a file of field values) has no values.
void refuse_in_simulation(const Context& c, const char* what);

}  // namespace tessera::detail
