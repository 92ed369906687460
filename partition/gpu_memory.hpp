// What a GPU part of a grid asks of the GPUs' memory, and how it runs when it does not fit:
// resident (every slab stays on its GPU), or streamed (slabs visit the GPU one after another,
// several steps a visit, the next slab arriving and the last leaving while one is computed).
// Pure code: the planner (partition/autotile.cpp) prices with it, the tests give it machines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partition/autotile.hpp"

namespace tessera::partition {

// The bytes of a point of `point` (Machine::point) but the stencil's next, which is scratch
// within a streamed visit, never moves and is dropped when the visit ends (tasks/ invalidates it
// after each visit and refills its constant ghost layers): what a visit uploads, and what the
// slab leaving the GPU still holds. A visit writes back only the stencil's field
// (PointBytes::field), so a grid with inputs beyond its field and next (jacobi2d's f) loads the
// upload more than the write-back.
inline double kept_bytes_per_point(const PointBytes& point) { return point.all - point.field; }
// A visit's faces: the two its neighbours packed on their last visit come in, the two it packs
// go out (the next pass reads them), a point of the stencil's field each (PointBytes::field);
// what a GPU holds of them during a visit. Where the face a slab's next visitor reads is packed
// ahead (Machine::faces_packed_ahead) it stays on the GPU: about two cross a visit; where the
// face of the slab after it is read from that slab's tile too (Machine::
// faces_read_from_next_slab), only the faces towards other GPUs cross, and a GPU holds at least
// one visit's four, on several GPUs its two rings and three per neighbouring GPU
// (plan_gpu_memory).
inline constexpr int kFaceCrossings = 4;
// What the slabs may hold of a GPU's memory: the rest for StarPU's own allocations, the face
// buffers and what other grids keep there.
inline constexpr double kUsableMemoryShare = 0.85;
// The slab pipeline's depths, as the submitter runs streamed visits (tasks::Submitter::
// chain_visit) and the planner sizes a GPU's memory for them (plan_gpu_memory): one definition.
// Visits of streamed tiles a CUDA worker may have ready beyond the one it runs: one, so that a
// GPU holds the slab it computes and the last one leaving, and the slabs can be thicker.
inline constexpr int kVisitsAhead = 1;
// How many visits before a streamed visit on its CUDA worker its inputs are prefetched: two, once
// the visit before the one before it ends, so that they arrive while the visit before it
// computes (the GPU then holds the slab computed, the one it reads the face of, the next one
// arriving and the last one leaving: Machine::visits_prefetched).
inline constexpr int kVisitsPrefetched = 2;
// Slabs a GPU holds at once when streaming: the one computed (every field) and the last one
// leaving (kept_bytes_per_point; its result written back while the next arrives). The visits run
// one after another (kVisitsAhead): a streamed part waits on the bus, so a third slab to
// overlap the compute costs more (thinner slabs: more ghost planes and faces over the bus) than
// it saves, except where no face crosses between a GPU's slabs and visits are prefetched
// (Machine::visits_prefetched). The simulated figures behind it: docs/notebook/code-notes.md.
inline constexpr int kSlabsInFlight = 1 + kVisitsAhead;
// The deepest temporal block a streamed part is given (each step of a visit saves a crossing of
// the bus; ghost layers deepen with it).
inline constexpr int kDeepestStreamDepth = 16;
// The share of the bus's rate, each way, a streamed part's transfers reach on its busier way:
// each visit's transfers follow one another, each with its latency. A visit's upload and the
// last one's write-back cross at once, but the next visit's upload waits for memory, so a step
// is the busier way's time and then the compute's (one visit after another). Fitted in the
// simulation to heat3d 1024^3 on a 4 GiB GPU; checked on jacobi2d and on an H200 (the figures:
// docs/notebook/code-notes.md).
inline constexpr double kStreamedBusShare = 0.95;
// Resident on several GPUs, a slab whose faces take long to cross between GPUs is cut into
// two edges of kEdgePlanes planes and the rest: the edges run first (priority), and their faces
// cross while the rest computes. A cut costs ghost planes recomputed on its two new sides (about
// half the depth each, at the apps' automatic depth of up to kAssumedDepth) and a task each;
// taken where the step gains kEdgeGain of itself.
inline constexpr std::int64_t kEdgePlanes = 16;
inline constexpr int kAssumedDepth = 4;
inline constexpr double kEdgeGain = 0.02;
// Assumed where StarPU's bus model says nothing: a PCIe 5 x16 link one way.
inline constexpr double kAssumedBusBytesPerSecond = 50e9;

// What a temporal block of `depth` steps computes on a slab of `thickness` planes between two
// neighbours beyond its own points, as a share of them: step j widens its window by depth - 1 - j
// planes a side (radius 1), depth - 1 planes a step over both sides.
inline double recomputed_share(int depth, double thickness) {
  return depth > 1 ? (depth - 1) / thickness : 0.0;
}

struct GpuMemoryPlan {
  bool streamed = false;   // the part does not fit: its slabs visit the GPUs in turn
  bool possible = true;    // false: not even the thinnest streamed slab fits (refuse the run)
  std::int64_t slabs = 1;  // slabs of the part along its axis (at least one per GPU)
  int depth = 0;           // streamed: steps per visit
  double bus_bytes_per_step = 0;     // streamed: what crosses the bus each step, every GPU
  double fields_bytes_per_step = 0;  // of which the fields' points (the least any plan moves)
  double bus_seconds = 0;            // streamed: those bytes at the bus's rate, per GPU
  double compute_seconds = 0;        // the part's points (and recomputed ghosts), per GPU
  double exchange_seconds = 0;       // resident on several GPUs: their faces, GPU to GPU
  std::int64_t edge_planes = 0;      // > 0: each slab cut into edges of this many planes and
                                     // the rest, the edges first, their faces crossing while
                                     // the rest computes (kEdgePlanes)
  double step_seconds = 0;           // the part's predicted step: the longer of the two, tasks
  double needed_bytes = 0;           // resident: the part per GPU; impossible: the thinnest slabs
  double available_bytes = 0;        // what the slabs may hold of a GPU (kUsableMemoryShare)
  std::string why;                   // in words, for the placement line (empty: resident)
};

// The GPU part of `planes` planes of `plane_points` points each (along the split axis) on
// `machine`'s GPUs (one slab per GPU at least), at `gpu_point_seconds` a point of a step and
// `task_seconds` a task, `across` tiles a plane (the other axes' cuts). Resident where a GPU's
// share fits its memory (or the memory is unknown); else streamed in slabs of which
// kSlabsInFlight fit (and those a visit reads and prefetches, above), at the depth up to
// `deepest` whose step (the bus's time, then the compute's: one visit after another; the longer
// of the two where visits are prefetched) is shortest. `plane_extents`: a tile's plane along the
// other axes, whose streamed slabs then hold and move the ghost points across them too (empty:
// the points alone, as a plane of unknown shape).
// What a step's faces between neighbouring GPUs cost each GPU that holds a slab of a part of
// `plane_points` points a plane: a face each way to each neighbour, a step's planes of it (a
// block of d steps moves d planes once), over the slowest link between neighbours (StarPU's bus
// model; the bus where unknown): direct (a link faster than the bus), the faces in and out at
// once; through main memory, each face twice in turn and a GPU's faces one after another on its
// bus. Not overlapped: a slab's block task fills its ghosts first and packs its
// faces last (one task a slab). 0 on one GPU.
double gpu_exchange_seconds(double plane_points, const Machine& machine);

GpuMemoryPlan plan_gpu_memory(double plane_points, std::int64_t planes, const Machine& machine,
                              double gpu_point_seconds, double task_seconds, int across,
                              int deepest = kDeepestStreamDepth,
                              const std::vector<double>& plane_extents = {});

}  // namespace tessera::partition
