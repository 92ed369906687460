// CUDA implementations of the mesh halo and increment kinds; the same buffers and arguments as
// kernels/cpu/mesh.hpp.
#pragma once

namespace tessera::kernels {

void mesh_gather_cuda(void** buffers, void* arg);
void mesh_import_cuda(void** buffers, void* arg);
template <class T, bool Assign>
void mesh_combine_cuda(void** buffers, void* arg);

}  // namespace tessera::kernels
