// The task kinds that keep ghost layers current: halo-pack, boundary, constant-ghosts.
#pragma once

#include <cstddef>

#include "partition/region_copy.hpp"
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
// scratch-ghosts: the same into a tile whose values were dropped (a streamed grid's scratch
// field, slabs::after_visit), written only: nothing of it crosses the bus.
detail::TaskKind scratch_ghosts_kind(std::size_t element_size);

/// The exchange folded into the tasks that read and write the tiles: a tile task of `kind`
/// ("interior", "time-block", "loop", a mesh loop) that first copies its neighbours' face
/// buffers into a tile's ghost layers (what a boundary or halo-import task does) and, after its
/// kernel, copies a written tile's faces into that tile's face buffers (what a halo-pack or
/// halo-gather task does). A streamed time block also packs, before anything else, the face its
/// tile's next visitor on the same GPU reads from what the tile held before the block (`ahead`:
/// slabs::pack_ahead). One task per tile and step instead of three. Its argument block is a
/// HaloWork, then at kHaloWorkSize the kernel's own block; its buffers are the kernel's, then the
/// face buffers of the copies.
struct HaloWork {
  struct Copies {
    // The copy kernel's argument block: a partition::RegionCopyList (region copies) or a
    // kernels::MeshCopyArgs (a mesh halo import or export gather). Slot 0: the tile (or
    // halo), slots 1..count: face (or export index and export) buffers.
    const void* args;
    bool empty;                  // nothing to copy: skipped
    int tile;                    // the tile's buffer in the task
    int first;                   // the first face buffer's
    int count;                   // at most partition::RegionCopyList::kMax
    detail::KernelFn cpu, cuda;  // the copy kernel (region copy of the element size, mesh import)
  };
  static constexpr int kMax = 4;  // fields filled, and fields packed, per task
  int aheads = 0, fills = 0, packs = 0;
  Copies ahead[kMax], fill[kMax], pack[kMax];
  detail::KernelFn cpu, cuda;  // the kernel
};
/// Where the kernel's own argument block starts after a HaloWork: a whole number of cache
/// lines, so the kernel's block keeps the alignment the whole block has.
constexpr std::size_t kHaloWorkSize = (sizeof(HaloWork) + 63) / 64 * 64;
/// A task's argument block, malloc'ed (the engine frees it): a copy of the kernel's `size`-byte
/// `prototype`, after a HaloWork whose kernel entries are `kernel_cpu` and `kernel_cuda` (no
/// copies yet) when `halo` (then `*work` points to it), alone otherwise. `*bytes`: its size.
unsigned char* new_task_arg(const void* prototype, std::size_t size, bool halo,
                            detail::KernelFn kernel_cpu, detail::KernelFn kernel_cuda,
                            HaloWork** work, std::size_t* bytes);
/// `kind` with its exchange copies ("<kind>+halo"): the HaloWork entries of both backends.
detail::TaskKind with_halo_work(const detail::TaskKind& kind);
/// Whether `kind` is one with_halo_work made.
bool is_halo_work(const detail::TaskKind& kind);
/// The region copies for elements of `element_size` bytes, on the CPU and (null without CUDA
/// kernels) on CUDA workers.
void region_copies(std::size_t element_size, detail::KernelFn& cpu, detail::KernelFn& cuda);

}  // namespace tessera::tasks
