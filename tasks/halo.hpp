// The task kinds that keep ghost layers current: halo-pack, boundary, constant-ghosts.
#pragma once

#include <cstddef>

#include "tessera/detail/task.hpp"

namespace tessera::tasks {

// halo-pack: reads a tile (first buffer), writes its outgoing face buffers (the rest).
detail::TaskKind halo_pack_kind(std::size_t element_size);
// boundary: updates a tile's ghost layers (first buffer) from neighbours' face buffers (the
// rest) and the physical boundary conditions.
detail::TaskKind boundary_kind(std::size_t element_size);
// constant-ghosts: writes the Dirichlet ghost regions of a tile (first buffer, no others)
// once per halo shape; they never change, so boundary tasks leave them out.
detail::TaskKind constant_ghosts_kind(std::size_t element_size);

}  // namespace tessera::tasks
