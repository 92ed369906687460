// CUDA implementation of the region-copy kernels (halo-pack and boundary tasks).
#pragma once

namespace tessera::kernels {
// StarPU CUDA entry (asynchronous on the worker's stream): `arg` is a RegionCopyList.
template <class Word>
void region_copy_cuda(void** buffers, void* arg);
}  // namespace tessera::kernels
