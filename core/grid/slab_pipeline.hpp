// The slab pipeline: how a field's tiles stream through the GPUs' memory on a grid whose GPU part
// does not fit it (GridSpec::stream_depth > 0, the planner's plan_gpu_memory), in one unit. A
// time block visits each GPU's slabs in turn (every other block in reverse:
// TileTaskCall::turns); after a visit a slab is kept (written back while the bus is idle) or
// dropped (a scratch), each GPU's last slab staying for the next block's first; the faces a
// visit's next visitor on the same GPU reads are packed ahead into the GPU's two rings; ghost
// planes may stay on the GPU while the planes travel. Its state per field: SlabState
// (FieldStorage::Impl::slabs). The submitter's side (visits in order, prefetched:
// tasks::Placement::Visit) and its depths (partition::kVisitsAhead, kVisitsPrefetched) are
// tasks/'s and partition/'s.
#pragma once

#include <string>
#include <vector>

#include "partition/region_copy.hpp"
#include "tessera/detail/field_storage.hpp"

namespace tessera::detail {

struct HaloSet;

// A field's streamed state.
struct SlabState {
  std::vector<char> discarded;     // per tile: dropped by after_visit, not refilled
  bool ghost_planes_left = false;  // leave_ghost_planes
  bool kept_since_wait = false;    // after_visit(true) since the last wait_all
};

namespace slabs {

/// Before the first block that uses `f` as its scratch (a time block's next): drops its tiles on
/// the CUDA workers, as after_visit(false) (their values are written before they are read; their
/// constant ghost layers are refilled before each visit).
void start_scratch(FieldStorage& f);
/// After the tasks of one visit of `f`'s tiles were submitted: the tiles this rank runs on CUDA
/// workers are kept (written back while the bus is idle, first to leave the GPU) or, `keep`
/// false, discarded (scratch: nothing written back or read again; refill_ghosts restores their
/// constant ghost layers before the next visit). The first discard after kept visits waits for
/// every task (Engine::wait_all, collective). `turn`, after a block whose next one visits the
/// tiles in the other order (1: this one visited them in order, -1: in reverse; 0: none): the
/// tile each GPU visited last stays in its memory as it is, kept or not, for its next visit, the
/// next block's first there.
void after_visit(FieldStorage& f, bool keep, int turn = 0);
/// Submits the constant (Dirichlet) ghost layers of `width` of tile `tile` if after_visit
/// discarded it or, `left_too`, its ghost planes were left behind (a time block's next, which it
/// reads at the faces and does not fill), just before the tile's next visit
/// (tasks::Placement::Visit::Opens: it allocates a scratch on the GPU, or brings the tile there).
/// A discarded tile is StarPU's to read again afterwards, and holds the constant ghosts of every
/// planned halo set, not only this one's (its new buffer held none).
void refill_ghosts(FieldStorage& f, const std::string& stencil, int width, bool box, int tile,
                   bool left_too = true);
/// For a task `task` that writes every point of tile `tile` (a loop's output over the whole
/// grid): where after_visit discarded the tile, a write-only task makes it StarPU's again without
/// reading it, then every planned halo set's constant ghosts are written (its new buffer holds
/// none, and the task packs the tile's faces with their ghost columns).
void restore_dropped(FieldStorage& f, const std::string& task, int tile);
/// `leave` true: the copies of `f`'s tiles between memories leave their ghost planes behind
/// (tasks::Travel), for a time block's fields, whose visits write every ghost point they read
/// (the block's fills, constants included: exchange_in_tasks then fills every time;
/// refill_ghosts for its next). Waits for the tasks submitted before (which may read them) the
/// first time. Not where a boundary function's tasks or exchange() write ghosts (fused exchanges
/// off), nor on StarPU 1.3. `leave` false (exchange() does it): whole tiles again.
void leave_ghost_planes(FieldStorage& f, bool leave);
bool ghost_planes_left(const FieldStorage& f);
/// For a time block that fills `set` and packs into its spares: plans, once, the tiles that pack
/// ahead, from the values their block starts from, the face only their next visitor on the same
/// GPU reads (HaloTile::ahead), into one of two buffers their GPU keeps (HaloSet::rings), so that
/// it never crosses the bus (the visits follow one another: it is read as soon as packed).
/// Returns `set` where some tile does (null: none, `set` null or `f` not streamed).
HaloSet* pack_ahead(FieldStorage& f, HaloSet* set);
/// Plans both passes of a streamed set (each tile's faces packed ahead, read from the next slab,
/// left out), once a set, and gives each GPU its two ring buffers.
void plan_ahead(const FieldStorage& f, HaloSet& set);
/// Once the tasks of a streamed block that packs into `set`'s spares are submitted: the faces
/// packed ahead went to the rings, not to the set's buffers, and an exchange other than such a
/// block packs every face again. Whether this rank's tiles packed any or not: every rank then
/// submits the same halo-pack tasks (StarPU-MPI's sends follow every rank's tasks).
void written_ahead(HaloSet* set);
/// Where visits are prefetched, after a call that read `set`'s faces between two of this rank's
/// GPUs: they are dropped (their values are dead), freeing their memory for the slabs.
void drop_faces_between_gpus(const FieldStorage& f, const HaloSet& set);
/// Throws tessera::Error where a tile of `f`, on any rank, holds no values (a streamed time
/// block's scratch, dropped after its visit: after_visit), naming `use`, what reads it.
/// Collective.
void check_holds_values(const FieldStorage& f, const char* use);
/// The message for `use` of `field`'s dropped values.
std::string no_values(const char* use, const std::string& field);

}  // namespace slabs
}  // namespace tessera::detail
