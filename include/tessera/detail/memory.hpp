// The memory figure the library sizes fields by, for programs that size their own host arrays
// before allocating them (the applications' meshes and bodies: apps/common/memory.hpp).
#pragma once

namespace tessera::detail {

/// Bytes this process may still allocate: the least of the system's available memory (shared
/// by the ranks of this node), the cgroup's limit and the address-space limit (ulimit -v).
/// Defined with the grid checks (core/grid/checks.cpp), which use it for fields.
double available_memory_bytes();

}  // namespace tessera::detail
