// Choosing a grid's tiles from the machine: how many tiles, of what extents, along which axes,
// and with CUDA workers the split of the grid into a GPU part and a CPU part. Pure code: the
// library (core/grid/grid.cpp) describes the machine, the tests describe modelled ones.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "partition/tiling.hpp"

namespace tessera::partition {

// One GPU as the planner sees it: its memory and its link to main memory (#48 adds the links
// between GPUs).
struct Gpu {
  double memory_bytes = 0;          // what StarPU may use of it (STARPU_LIMIT_CUDA_MEM); 0: unknown
  double bus_bytes_per_second = 0;  // main memory <-> this GPU, one way; 0: unknown
  double peer_bytes_per_second = 0;  // this GPU -> its neighbour GPU, one way; 0: unknown
};

// What a point of the grid planned holds in its fields (tessera::PointData), as the GPUs' memory
// and the bus see it: every field's bytes, and the stencil's field's (its next, scratch within a
// streamed visit, holds as much; a face moves a plane of it). Unsaid: three doubles (a field,
// its next, one more input).
struct PointBytes {
  double all = 24;
  double field = 8;
};

// What the chooser knows of the machine. A time of 0 is unknown: the defaults below are used.
struct Machine {
  int ranks = 1;  // the workers below are every rank's
  int cpu_workers = 1;
  int cuda_workers = 0;
  double cpu_point_seconds = 0;    // one point of one step on one CPU worker
  bool cpu_point_assumed = false;  // cpu_point_seconds is kCpuPointSeconds, not a model's
  double gpu_point_seconds = 0;    // one point of one step on one CUDA worker
  double task_seconds = 0;         // what a task costs beyond its points (submission,
                                   // dependencies, scheduling)
  double split_seconds = 0;        // what a CPU/GPU split adds to every step (below)
  // One interaction of an all-pairs task (tessera::Pairs) on one CPU worker and on one CUDA
  // worker, from calibrated models of both (0: unknown; Planner::pairs).
  double cpu_pair_seconds = 0, gpu_pair_seconds = 0;
  // The GPUs of one rank (one per CUDA worker; every rank's alike, the figures agreed over
  // the ranks): what bounds the tiles placed on them (plan_gpu_memory).
  std::vector<Gpu> gpus;
  // The grid planned: what a point of it holds (Planner::for_points sets it per grid).
  PointBytes point;
  // The memory every GPU has at least (0: some GPU's is unknown, or no GPU).
  double gpu_memory_bytes() const;
  // The slowest GPU's bus to main memory, bytes per second one way (0: unknown).
  double gpu_bus_bytes_per_second() const;
  // The slowest link between neighbouring GPUs, bytes per second one way (0: unknown).
  double gpu_peer_bytes_per_second() const;
  // With CUDA workers: a hand-set share of the split axis's planes for the GPU part (the
  // CPU part tiled as the chooser would); < 0: the chooser places the split.
  double gpu_share = -1;
  // A streamed slab crosses the bus without its ghost planes, which its visit writes on the GPU
  // (tasks::Travel: StarPU 1.4 and later); false: they cross with it.
  bool ghost_planes_stay = false;
  // A streamed slab packs ahead the face its next visitor on the same GPU reads, which then
  // stays there (slabs::pack_ahead: fused exchanges); false: every face crosses the bus.
  bool faces_packed_ahead = false;
  // A streamed slab's visit reads the faces of the slab visited after it straight from that
  // slab's tile, which is on the GPU already for its own visit (slabs::pack_ahead: fused
  // exchanges): no face between the two crosses the bus, and the GPU holds a third slab's
  // fields; false: that face is packed after the later slab's visit and crosses both ways.
  bool faces_read_from_next_slab = false;
  // Where faces are read from the next slab: the slabs a visit reads are prefetched while the
  // visit before it computes (tasks::Placement::prefetch), so that the bus works during the
  // compute; the GPU then holds a fourth slab's kept fields. On several GPUs too: the faces
  // between GPUs are fetched as soon as they are packed and dropped once read, so that they do
  // not push the next slabs out (docs/notebook/simulation.md, 2026-12-07).
  bool visits_prefetched = false;
};

// Assumed when unknown: a memory-bound stencil point on one core of a current CPU, a GPU 20
// times a core (a GPU step is bandwidth-bound: HBM against a core's share of DRAM), a task
// of a dozen handles as measured here (docs/performance.md).
inline constexpr double kCpuPointSeconds = 2.5e-9;
inline constexpr double kGpuSpeedup = 20;
inline constexpr double kTaskSeconds = 15e-6;
// What a split of the grid between CPU and CUDA workers adds to each step beyond its parts'
// work: the faces crossing the bus both ways (a transfer's latency each), the pack tasks on
// both sides, and the GPU part's next step waiting for the CPU part's faces: as measured on
// a real H100 node (docs/scheduling.md, "What a split costs"), more than a thin CPU part gains
// when a GPU step is short.
inline constexpr double kSplitSeconds = 3e-4;
// What all-pairs work pays for each source tile its target tile reads from another memory (a
// CPU part's tile read on a GPU, a GPU's on the cores or another GPU), every step: its fields
// copied, each a transfer its worker's driver issues and waits on as on a task's launch
// (kTaskSeconds), for an assumed four fields (N-body's positions and mass). StarPU's
// simulation of the H100 node (docs/simulation.md, issue 48 (d)): 61 us a CPU tile on the GPU,
// even with the copies made as soon as the tiles are written.
inline constexpr double kSourceCopySeconds = 4 * kTaskSeconds;
// The threads of the CUDA pair kernel (tessera::Pairs) that keep a GPU busy: about half of an
// H100's or H200's resident threads (132 multiprocessors of 2048), as pairs.hpp's launch aims
// for; a task of fewer runs that share of a full GPU's rate (Planner::pairs).
inline constexpr double kPairFillThreads = 131072;
// The thinnest tile the chooser makes along an axis it cuts: thinner tiles copy more ghost
// layers per point than they compute, and leave temporal blocking no depth.
inline constexpr std::int64_t kMinThickness = 8;

struct TileChoice {
  std::array<Cuts, 3> cuts;  // per axis, where it is cut (empty: not cut)
  // The GPU part streamed through the GPUs' memory (plan_gpu_memory): its steps per visit of a
  // slab (0: resident, every slab stays on its GPU).
  int stream_depth = 0;
  // false: the GPU part does not fit the GPUs' memory even streamed (the run is refused).
  bool gpu_fits = true;
  // With CUDA workers: the axis of the split, and where the CPU part starts along it (the
  // tiles before it form the GPU part); -1 without a split.
  int split_axis = -1;
  std::int64_t split = -1;
  int gpu_tiles = 0, cpu_tiles = 0;
  double step_seconds = 0;  // one step of the grid, as the model predicts it
  // With a split: one step of each part, as the model predicts it.
  double gpu_step_seconds = 0, cpu_step_seconds = 0;
  std::string summary;  // what was chosen and why, in words
};

// Where a GPU part that takes the whole grid runs best: the axis its slabs are cut along (one
// of the chooser's free axes, the slowest first) and how many of the CUDA workers take a slab,
// each layout priced GPU-only by plan_gpu_memory (its compute, its bus where it streams, the
// faces between GPUs where it does not). Faces between GPUs cost a plane a step each way, so a
// grid thin along its slowest axis is cut along another (heat3d 2048x2048x64: planes of 2048 x
// 64 points, not 2048 x 2048), and a grid whose faces would cost more than its GPUs gain runs
// on fewer of them (ties go to the slowest axis, then the most GPUs). Another axis is taken only
// where it predicts a step kLayoutGain shorter than the slowest axis's best. The GPU count
// changes on one rank only (on several, each rank's GPUs take its blocks); a hand-set share
// keeps the slowest axis on every GPU.
inline constexpr double kLayoutGain = 0.05;
struct GpuLayout {
  int axis = -1;
  int gpus = 0;
  double step_seconds = -1;          // the layout's predicted GPU-only step
  double default_step_seconds = -1;  // the slowest axis on every GPU's (-1: impossible)
};
GpuLayout cheapest_gpu_layout(const Extent3& extent, int dims, const Extent3& fixed,
                              const Machine& machine);

// Tiles for a grid of `extent` points (`dims` axes) on `machine`. `fixed[a]` > 0 keeps axis a
// cut uniformly in tiles of that extent; the free axes are cut by the chooser, the slowest
// first (z slabs, then y: long contiguous rows, the fewest ghost points). CPU workers only:
// the tile count whose predicted step is shortest, a step being ceil(tiles / workers) rounds
// of a tile's points and ghost copies plus a task's cost, and 0.15 of a tile of imbalance.
// With CUDA workers: the slowest free axis is split where the GPU part and the CPU part take
// one step in the same time (by their speeds), the GPU part in one tile per CUDA worker, the
// CPU part in tiles chosen as above for the CPU workers (each taking about a GPU step, or a
// fraction of it), both cut alike along the other axes (a lattice).
TileChoice choose_tiles(const Extent3& extent, int dims, const Extent3& fixed,
                        const Machine& machine);
// The tiles choose_tiles gives a grid that runs on the GPUs alone, every axis free: the cheapest
// layout's slabs (streamed where the grid does not fit), and the layout in the summary where it
// is not the slowest axis on every GPU. No tiles (split_axis -1) without CUDA workers.
TileChoice gpu_tiles(const Extent3& extent, int dims, const Machine& machine);

// Where the tiles of a lattice the library did not cut (`cuts` per axis: a user's --tile, an
// application's own tiling) run with CUDA workers: the planner's choice between all on the
// CUDA workers, all on the CPU workers, and a split at a tile start of the slowest axis cut
// into several tiles (the GPU part below it). A part's step is whole rounds of its workers
// over its tiles (a tile's points and a task's cost each), a split's the longer part plus
// Machine::split_seconds. `speeds_known`: the per-point times come from calibrated models of
// both classes; without them the GPU part takes every tile (a GPU runs a memory-bound step
// tens of times faster than a core, and a split's fixed costs are certain while its gain is
// not), and the summary says how to let the planner weigh a split.
struct LatticePlacement {
  int split_axis = -1;
  std::int64_t split = -1;       // tiles starting below it run on CUDA workers
  double gpu_only_seconds = 0;   // predicted step, every tile on the CUDA workers
  double cpu_only_seconds = 0;   // predicted step, every tile on the CPU workers
  double split_seconds = -1;     // predicted step of the best split (-1: no split possible)
  std::int64_t best_split = -1;  // where that split is
  std::string summary;           // the choice and the alternatives' predicted steps, in words
  // The tiles to make (Planner::given): the cuts given, or with the GPU part's tiles merged.
  std::array<Cuts, 3> cuts;
  bool merged = false;
  int stream_depth = 0;  // merged slabs streamed through the GPUs' memory: steps a visit
};
LatticePlacement place_lattice(const Extent3& extent, int dims, const std::array<Cuts, 3>& cuts,
                               const Machine& machine, bool speeds_known);

// The axis a split of given tiles (`cuts` per axis) moves along: the slowest axis cut into
// several tiles (a split moves whole slabs of tiles), else the slowest axis.
int split_axis_of(const std::array<Cuts, 3>& cuts, int dims);

// The tiles of `extent` with the GPU part [0, split) along `axis` (one slab per CUDA worker)
// and the CPU part [split, extent) tiled for the CPU workers, as choose_tiles lays them out
// (a rebalance: the split moved, the CPU part tiled again). `split` == extent: GPU part only.
TileChoice split_tiles(const Extent3& extent, int dims, const Extent3& fixed,
                       const Machine& machine, int axis, std::int64_t split);

// Where to move a CPU/GPU split of an axis of `extent` planes, now at `split` (GPU part below
// it), given the measured seconds per step of each part: to the plane where both parts, at the
// speeds measured (planes per second), take the same time. `split` itself while the two times
// differ by at most `threshold` of the longer (a move costs a re-tiling: Field::retile), or a
// part measured 0 or less (no sample yet). With `cpu_slabs` > 0, the CPU part is that many
// slabs along the axis (fewer where it has fewer planes), its time that of its thickest slab
// (the measured one, a mean over its workers, scaled from the mean slab): the split near the
// balance whose longer part is shortest (whole planes per slab: 983 planes on 63 slabs take
// as long as 1008).
std::int64_t rebalanced_split(std::int64_t extent, std::int64_t split, double gpu_seconds,
                              double cpu_seconds, double threshold, int cpu_slabs = 0);

// What a part takes per step now, from its per-step times over a measured window (oldest
// first): the median of the window's later half. A slowdown that began inside the window counts
// once it covers that half; one step with a one-off cost (a move's first steps, which fill the
// new tiles' halos) does not. 0 for no steps.
double recent_step_seconds(std::vector<double> per_step);

// A rebalance decided from measured per-step times of the two parts of a split grid (the
// mean over the busy workers of each class): the split moved by rebalanced_split (`cpu_slabs`:
// the CPU part's slabs along the axis, which the new tiling keeps) and the CPU part tiled
// again (split_tiles, with per-point times from the measurements), where the two times differ
// by more than `threshold` and the step time the move gains over `steps_left` steps exceeds
// `move_seconds` (what moving the fields costs: Field::retile takes the GPU part to main
// memory and the new one back). `move` false: keep the tiling (`why` says why).
struct Rebalance {
  bool move = false;
  TileChoice tiles;         // the new tiling, where move
  double gain_seconds = 0;  // predicted gain per step
  std::string why;
};
Rebalance plan_rebalance(const Extent3& extent, int dims, int axis, std::int64_t split,
                         const Machine& machine, double gpu_seconds, double cpu_seconds,
                         double threshold, long steps_left, double move_seconds, int cpu_slabs = 0);

// Tiles for a mesh of `elements` primary elements (Airfoil's cells) on `workers` workers (every
// rank's) and `ranks` ranks: whole rounds of the workers, as many rounds (up to
// kMostMeshRounds) as keep each tile at least kMinMeshTile elements, one tile per worker
// below that; never more tiles than elements nor fewer than ranks. A mesh loop's tile task
// waits on its neighbours' previous phase and pays a task's cost per loop, which small tiles
// do not earn back (docs/scheduling.md, "Measured").
inline constexpr std::int64_t kMinMeshTile = 65536;
inline constexpr int kMostMeshRounds = 4;
int choose_mesh_tiles(std::int64_t elements, int workers, int ranks);

// "850 us", "1.20 ms": a step's time as the lines say it.
std::string seconds_text(double seconds);
// "predicted step: GPU-only 1.20 ms, CPU-only 9.50 ms, split at z 300: 1.10 ms": the
// alternatives' predicted steps (cpu_only < 0: impossible; split_step < 0: no split), for the
// lines a user reads.
std::string predicted_steps_text(double gpu_only, double cpu_only, int axis, std::int64_t split,
                                 double split_step);

// `extent` cut into `n` tiles whose extents differ by at most one point (the thicker first): the
// cut positions (empty for n <= 1).
Cuts even_cuts(std::int64_t extent, int n);

}  // namespace tessera::partition
