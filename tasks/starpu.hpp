// Private to tasks/ and perfmodels/: the StarPU headers, and the full definitions of the types
// the rest of the library holds only as opaque names (Codelet, Handle).
#pragma once

#include <starpu.h>
#ifdef TESSERA_WITH_MPI
#include <starpu_mpi.h>
#endif

#include <algorithm>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "tasks/codelets.hpp"
#include "tasks/data.hpp"

namespace tessera::tasks {

struct Codelet {
  std::string symbol;  // perfmodel symbol: tessera.<stencil>.<kind>.<types>
  std::string stencil, kind;
  std::string name;  // "<stencil>:<kind>", StarPU's codelet name
  starpu_perfmodel model;
  starpu_codelet cl;
  detail::KernelFn entry = nullptr;  // CodeletRegistry::cpu_entry of its kind (one name, one body)
  starpu_data_access_mode modes[2];  // of the first group of buffers, and of the rest
  long submitted = 0;                // tasks submitted: perfmodels::coverage skips unused ones
  // In simulation, a time block's model size is the bytes it streams (Placement::streamed_bytes,
  // carried as its flops): tasks/codelets.cpp.
  bool sized_by_streamed_bytes = false;
  // Data footprints (tile shapes) of the tasks submitted: the model entries this run uses,
  // which calibration must fill and the uncalibrated-model message looks at once each.
  std::set<std::uint32_t> footprints;
  // The memory node of each buffer (cl.dyn_nodes) once a task has more buffers than cl.nodes
  // holds (STARPU_NMAXBUFS), as a mesh loop's can: see fit_nodes.
  std::deque<std::vector<int>> wide_nodes;
};

/// Makes `c.cl` describe the memory node of `buffers` buffers. StarPU 1.4 reads the codelet's
/// node of every buffer of a task (STARPU_CODELET_GET_NODE) to tell a handle given twice from
/// two accesses; past cl.nodes' STARPU_NMAXBUFS entries it read the codelet's next fields,
/// which change as tasks run (per_worker_stats), so a handle a task wrote through two of its
/// buffers was at times taken twice by that task, which then waited for itself: Airfoil's
/// hang on 1.4 (issue #39). The nodes stay cl.nodes' default (no specific node); an array
/// outgrown is kept, as tasks submitted with it may still be read.
inline void fit_nodes(Codelet& c, std::size_t buffers) {
  if (buffers <= STARPU_NMAXBUFS) return;
  if (!c.wide_nodes.empty() && c.wide_nodes.back().size() >= buffers) return;
  const std::size_t had = c.wide_nodes.empty() ? STARPU_NMAXBUFS : c.wide_nodes.back().size();
  c.wide_nodes.emplace_back(std::max(buffers, 2 * had), c.cl.nodes[0]);
  c.cl.dyn_nodes = c.wide_nodes.back().data();
}

inline starpu_data_access_mode mode_of(detail::Access a) {
  switch (a) {
    case detail::Access::Read: return STARPU_R;
    case detail::Access::Write: return STARPU_W;
    case detail::Access::ReadWrite: return STARPU_RW;
  }
  return STARPU_R;
}

inline starpu_data_handle_t raw(Handle h) { return reinterpret_cast<starpu_data_handle_t>(h); }
inline Handle opaque(starpu_data_handle_t h) { return reinterpret_cast<Handle>(h); }

}  // namespace tessera::tasks
