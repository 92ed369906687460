// The task kinds that keep mesh dats' import halos current and bring increments home:
// halo-gather, halo-import, inc-combine and write-back (kernels/cpu/mesh.cpp).
#pragma once

#include <string>

#include "tessera/detail/task.hpp"

namespace tessera::tasks {

// halo-gather: reads a tile's elements and its export indices (first buffers), writes one
// export buffer per consumer tile (the rest).
detail::TaskKind halo_gather_kind();
// halo-import: writes a tile's import halo (first buffer) from its sources' export buffers.
detail::TaskKind halo_import_kind();
// inc-combine (add) or write-back (assign): updates a tile's elements (first buffer) from its
// combine plan and its sources' slot buffers (the rest). `type` is "double", "float", "int32".
detail::TaskKind combine_kind(const std::string& type, bool assign);

}  // namespace tessera::tasks
