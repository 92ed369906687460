// The placement planner: one object per run that decides, for every tiling (tiles the library
// chooses, tiles a user or an application gave, a mesh's tiles), which run on the CUDA workers
// and which on the CPU workers, and whether a split may move (rebalancing). Every rule of a
// CPU/GPU split lives here: the chooser's split, a hand-set --gpu-fraction, the placement of
// given tiles and the rebalancing decision. Pure code: the runtime (core/runtime) makes it
// from the machine it started on; the tests make it from modelled machines.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "partition/autotile.hpp"
#include "tessera/detail/device_class.hpp"

namespace tessera::partition {

// A device class, as a tile's tasks are pinned to it (tasks::Placement::device).
using DeviceClass = tessera::detail::DeviceClass;

class Planner {
 public:
  // One CPU worker, no CUDA workers (a Context before its runtime starts).
  Planner() = default;
  // `speeds_known`: `machine`'s per-point times come from calibrated models of both classes
  // (without them the planner weighs no CPU part against the GPU for tiles it did not cut).
  Planner(const Machine& machine, bool speeds_known);

  const Machine& machine() const { return machine_; }
  // This planner for a grid a point of which holds `point` in its fields (tessera::PointData):
  // what its GPU part is priced with in the GPUs' memory and over the bus.
  Planner for_points(const PointBytes& point) const;
  // With CUDA workers every tiling gets a placement; without, none.
  bool places() const { return machine_.cuda_workers > 0; }
  // A hand-set share of the GPU (--gpu-fraction): a fixed split, never moved.
  bool hand_set() const { return machine_.gpu_share >= 0; }

  // Tiles the library chooses for `extent` (`fixed[a]` > 0 keeps axis a in tiles of that
  // extent): choose_tiles, the split where both parts take the shortest step, or at the
  // hand-set share of the planes. On several ranks whole classes (whole_classes), each
  // class's part tiled as split_tiles lays it out.
  TileChoice automatic(const Extent3& extent, int dims, const Extent3& fixed) const;

  // Tiles given (`cuts` per axis): without CUDA workers none (split_axis -1); with a hand-set
  // share, the tile start of the slowest cut axis nearest that share of its planes (the GPU
  // part below it); else place_lattice's choice between GPU-only, CPU-only and a split. On
  // several ranks GPU-only or CPU-only (whole_classes). With `may_merge` (tiles given as an
  // extent, not cut positions), the tiles placed on the CUDA workers are merged on one rank
  // (merge_gpu_part: all of them into the library's GPU tiles, beside a CPU part one slab per
  // CUDA worker); `cuts` of the result are the tiles to make.
  LatticePlacement given(const Extent3& extent, int dims, const std::array<Cuts, 3>& cuts,
                         bool may_merge = true) const;

  // Tiles for all-pairs work on `extent` (every point interacts with every point: a tile's
  // tasks, one per source tile, run in order on its accumulators, so a tile's step is its
  // points x all points x an interaction's time), cut along the slowest axis longer than a
  // point. Without CUDA workers, one tile per CPU worker (one chain each). With CUDA workers
  // and the pair speeds of both classes (Machine::cpu_pair_seconds, gpu_pair_seconds: a full
  // GPU's), the shortest predicted step of: GPU-only (at most one tile per CUDA worker, fewer
  // where a GPU's share of the targets would not fill it: kPairFillThreads), CPU-only, and a
  // split at the plane where the GPU part's tiles and the CPU part's tiles (one per CPU worker,
  // thin enough to keep pace) take the same time, plus the split's fixed cost; without them,
  // GPU-only. A hand-set share puts the split at that share of the planes.
  TileChoice pairs(const Extent3& extent, int dims) const;

  // On several ranks a grid's tiles are distributed in blocks, so a split at one plane would put
  // one rank's tiles on its GPU and another's on its cores, leaving the first's cores and the
  // second's GPU idle: there the planner places whole classes, the shorter of GPU-only and
  // CPU-only (`split` of `extent` planes: a split chosen on one rank's terms; returns the
  // split, 0 or `extent`, and says why in `why`).
  std::int64_t whole_classes(std::int64_t split, std::int64_t extent, double gpu_only,
                             double cpu_only, std::string* why) const;

  // The class of a mesh's tile `tile` of `tiles`: with a hand-set share, the first
  // round(share x tiles) tiles on the CUDA workers, the others on the CPU workers; else every
  // tile on the CUDA workers (a mesh loop is memory-bound, which a GPU runs tens of times
  // faster than a core; a kind without a CUDA body stays on the CPU workers, and a split of
  // an irregular mesh pays the fixed costs of a grid's and more); Any without CUDA workers.
  DeviceClass mesh_class(int tile, int tiles) const;
  // The workers a mesh's tiles are counted for (choose_mesh_tiles: whole rounds of them): the
  // CUDA workers where they take every tile, else every worker. `why`: the placement, in words.
  int mesh_workers(std::string* why) const;

  // Why a Balance moves no split in this run ("" where it may), for the user: no CUDA workers
  // (no split but the one a Grid::cut gives), or a hand-set share.
  std::string rebalancing_off() const;

  // plan_rebalance on this machine; under a hand-set share no move, and `why` says why.
  Rebalance rebalance(const Extent3& extent, int dims, int axis, std::int64_t split,
                      double gpu_seconds, double cpu_seconds, double threshold, long steps_left,
                      double move_seconds, int cpu_slabs) const;

 private:
  // given() before merging: the split of the tiles as given.
  LatticePlacement placed(const Extent3& extent, int dims, const std::array<Cuts, 3>& cuts) const;

  // The GPU part of `p` (the tiles starting below p.split along p.split_axis) in one slab per
  // CUDA worker along that axis, on one rank: a CUDA worker runs its tiles one after another,
  // so separate tiles there add only their tasks' fixed costs and the ghost-layer copies
  // between them (heat3d 512^3 on an H100 in 16 given slabs: 0.65 of copy bandwidth against
  // 0.88 in one). Every tile on the CUDA workers: recut_for_gpus, unless a hand-set share keeps
  // the axis (then those slabs alone); a split: the other axes' cuts and the CPU part's tiles
  // stay. More slabs where one per worker would exceed what a
  // slab may hold of the GPU's memory: the slabs that stream through it (plan_gpu_memory). Rewrites
  // p.cuts (the tiles as given) where it merges and says what merged in p.summary. Tiles given
  // as cut positions (Grid::cut) are kept: an application that numbers its tiles (one per row
  // of a result, one per slab of another grid) cuts them so.
  void merge_gpu_part(const Extent3& extent, int dims, LatticePlacement* p) const;

  // Every given tile on the CUDA workers (one rank, no hand-set share): the grid re-cut as the
  // library cuts it for the GPUs alone (gpu_tiles: the cheapest axis and GPU count, streamed
  // where it does not fit), whatever axis and count the tiles were given in: tiles of 2048 x
  // 2048 x 16 of a grid thin along z, one a GPU, crossed 2048 x 2048 faces between 4 GPUs through
  // the host each step (2.53 ms a step against 0.48 in y slabs, simulated).
  void recut_for_gpus(const Extent3& extent, int dims, LatticePlacement* p) const;

  Machine machine_;
  bool speeds_known_ = false;
};

// What a CPU/GPU split adds to every step, from the bus's latency one way (StarPU's calibrated
// bus model; <= 0: unknown, kSplitSeconds): the faces crossing it both ways, two transfers each
// way, and the rest (pack tasks on both sides, the GPU part waiting for the CPU part's faces),
// kSplitSeconds less the transfers at the latency assumed when it was measured.
double split_seconds_for_bus(double bus_latency_seconds);

inline constexpr double kAssumedBusLatencySeconds = 10e-6;  // PCIe 5 x16, one way

}  // namespace tessera::partition
