// Private to tasks/ and perfmodels/: the StarPU headers, and the full definitions of the types
// the rest of the library holds only as opaque names (Codelet, Handle).
#pragma once

#include <starpu.h>
#ifdef TESSERA_WITH_MPI
#include <starpu_mpi.h>
#endif

#include <cstdint>
#include <set>
#include <string>

#include "tasks/codelets.hpp"
#include "tasks/data.hpp"

namespace tessera::tasks {

struct Codelet {
  std::string symbol;  // perfmodel symbol: tessera.<stencil>.<kind>.<types>
  std::string stencil, kind;
  std::string name;  // "<stencil>:<kind>", StarPU's codelet name
  starpu_perfmodel model;
  starpu_codelet cl;
  starpu_data_access_mode modes[2];  // of the first group of buffers, and of the rest
  long submitted = 0;                // tasks submitted: perfmodels::coverage skips unused ones
  // Data footprints (tile shapes) of the tasks submitted: the model entries this run uses,
  // which calibration must fill and the uncalibrated-model message looks at once each.
  std::set<std::uint32_t> footprints;
};

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
