// CPU implementation of the region-copy kernels (halo-pack and boundary tasks).
#pragma once

namespace tessera::kernels {
// StarPU CPU entry: `arg` is a RegionCopyList, buffers are the task's slots.
template <class Word>
void region_copy_cpu(void** buffers, void* arg);
}  // namespace tessera::kernels
