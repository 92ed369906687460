// What the library needs of StarPU to size and rebalance a CPU/GPU split: how fast each device
// class is by the calibrated models, and what moving bytes between main memory and a GPU costs
// (the parts' measured times: Submitter::take_step_busy).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tessera::tasks {

/// The emulated device's split mode (TESSERA_EMULATED_CUDA=split[:K], docs/gpu.md): the ids of
/// the CPU workers that stand in for CUDA workers (the first K). The Engine sets them once
/// StarPU started, before any task, and clears them at shutdown; empty in any other run.
void set_cuda_stand_ins(std::vector<int> workers);
/// Whether worker `id` stands in for a CUDA worker (the split mode's first K CPU workers).
bool is_cuda_stand_in(int id);
/// Whether worker `id` is of the CUDA class: a CUDA worker, or a CPU worker standing in for one.
bool is_cuda_worker(int id);
/// The ids of the workers of one class, in StarPU's order: the CUDA class (CUDA workers and
/// stand-ins) or the CPU class (the other CPU workers). Call with StarPU running.
std::vector<int> class_worker_ids(bool cuda);

/// Microseconds per byte of a stencil's tile task on a CPU worker and on a CUDA worker, from the
/// calibrated models of the model directory (StarPU's history entries, or a non-linear
/// regression where the model holds one): 0 where no model says. `source`: the model read.
struct ClassSpeeds {
  double cpu_us_per_byte = 0, cuda_us_per_byte = 0;
  std::string source;
};
/// The speeds of the largest tile task found in the tile-task models (`tessera.*.interior*.*`,
/// `tessera.*.time-block*.*`) of the model directory with entries for both classes (the models of
/// the first CPU and first CUDA worker; in the split mode the first stand-in's, where StarPU
/// keeps a model per CPU worker, and none where the two share one; without CPU workers, the
/// one-core timings the models hold from a run with cores). Call with StarPU running.
ClassSpeeds model_class_speeds();
/// Seconds per point of one step on the first CPU worker by the model `symbol` (a
/// ClassSpeeds::source): its largest history entry that records its work (points x steps); 0
/// where none does (a model written as a regression alone, as the simulation's are).
double model_cpu_point_seconds(const std::string& symbol);
/// What a damaged model or bus file is renamed to when it is moved aside before StarPU starts
/// (PATH + kDamagedSuffix + N, core/runtime's model_files): never a model to load.
inline constexpr const char* kDamagedSuffix = ".damaged-";
/// A core's time a point of one step for a run without CUDA workers: of the tile-task models of
/// the model directory (not the emulated device's), the one whose largest history entry that
/// records its work is the largest tile, by that entry (as model_cpu_point_seconds reads it);
/// the first in name order among equals. 0 where no model records a core's work. `source`: the
/// model read. Call with StarPU running.
struct CorePointSeconds {
  double seconds = 0;
  std::string source;
};
CorePointSeconds model_core_point_seconds();

/// Seconds per point of one step of stencil `stencil` on one CPU worker, from the calibrated
/// models of its tile tasks (`tessera.<stencil>.{interior,time-block}[+halo].*`) on the first
/// CPU worker: the mean time over the work (flops: points x steps, a temporal block's
/// recomputed ghost points not counted, so a little high) of the history entry nearest
/// `tile_points` points, within a factor of 2 (a point's time depends on the caches a tile
/// fits in), points counted as the entry's bytes over the bytes a point of the model's element
/// types holds (ghost layers count as points). 0 where no model says. `source`: the model
/// read. Call with StarPU running.
struct PointCost {
  double seconds = 0;
  std::string source;
};
PointCost model_point_cost(const std::string& stencil, double tile_points);

/// Seconds of one interaction of an all-pairs task (tessera::Pairs) on a CPU worker and on a
/// CUDA worker, from the calibrated models of the model directory (`tessera.*.pairs.*`, sized
/// by their interactions: the largest task each knows; as model_class_speeds reads them): 0
/// where no model says. `source`: the model read. Call with StarPU running.
struct PairSeconds {
  double cpu = 0, cuda = 0;
  std::string source;
};
PairSeconds model_pair_seconds();

/// The latency, in seconds, of StarPU's bus model from main memory to the first CUDA worker's
/// memory (its calibrated bus sampling; 0 without CUDA workers).
double bus_latency_seconds();

/// One GPU as StarPU knows it, one per worker of the CUDA class in StarPU's order: the bytes of
/// its memory StarPU may use (STARPU_LIMIT_CUDA_MEM honoured) and its bus from main memory in
/// bytes per second, one way; 0 where unknown. An emulated stand-in has main memory, no bus:
/// its memory is STARPU_LIMIT_CUDA_MEM's where set (the tests plan GPUs of any size with it),
/// else unknown.
/// `peer_bytes_per_second`: to the next GPU (the next CUDA worker's memory; the last's: to the
/// previous one), one way, as StarPU's bus model says (direct where the GPUs talk directly,
/// else through main memory); 0 where unknown or alone.
struct GpuFigures {
  double memory_bytes = 0, bus_bytes_per_second = 0, peer_bytes_per_second = 0;
};
std::vector<GpuFigures> cuda_devices();

/// Seconds StarPU's bus model predicts for moving `bytes` from main memory to the first CUDA
/// worker's memory and back (0 without CUDA workers).
double bus_round_trip_seconds(std::size_t bytes);

}  // namespace tessera::tasks
