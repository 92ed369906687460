// Where a tile's tasks run, as the planner places them (partition::Planner) and the submitter
// pins them (tasks::Placement): a typed class, so that a placement cannot be passed an int or
// have its fields swapped in a positional initialiser.
#pragma once

namespace tessera::detail {

/// Any: the scheduler's choice; Cpu: CPU workers only; Cuda: CUDA workers only (a kind without
/// a CUDA implementation stays on the CPU workers).
enum class DeviceClass : int { Any = 0, Cpu = 1, Cuda = 2 };

}  // namespace tessera::detail
