// CPU implementations of the mesh halo and increment kinds (tasks/mesh_kinds.cpp). Elements
// are moved as bytes (a dat's `dim` values); combining adds or assigns values of type T.
#pragma once

#include <cstdint>

namespace tessera::kernels {

/// The argument block of the mesh copy and combine kernels.
struct MeshCopyArgs {
  std::int64_t element_bytes;  // gather, import: bytes per element (dim values)
  std::int64_t dim;            // combine: values per element
  std::int64_t targets;        // combine: targets in the plan (the CUDA launch needs it)
  std::int32_t buffers;        // the task's buffer count
};

// halo-gather: buffer 0 a tile's own elements, buffer 1 the export indices of every consumer
// concatenated, buffers 2.. one export buffer per consumer (their sizes split the indices).
void mesh_gather_cpu(void** buffers, void* arg);
// halo-import: buffer 0 a tile's import halo, buffers 1.. the export buffers it is made of.
void mesh_import_cpu(void** buffers, void* arg);
// inc-combine / write-back: buffer 0 a tile's own elements, buffer 1 its combine plan,
// buffers 2.. its sources' slot buffers; adds (or, Assign, copies) the slots in plan order.
template <class T, bool Assign>
void mesh_combine_cpu(void** buffers, void* arg);

}  // namespace tessera::kernels
