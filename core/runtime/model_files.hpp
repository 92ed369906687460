// StarPU's performance-model directory, looked at before StarPU starts: StarPU asserts (SIGABRT,
// a backtrace) on a codelet model or bus calibration file it cannot parse (garbage, binary, cut
// short, a directory in its place, a NaN or negative timing), as a crashed run, a full disk or a
// hand edit leaves them. Such files are moved aside (NAME.damaged-N, never removed or
// overwritten) so that StarPU recalibrates them, and each move is said.
#pragma once

#include <string>
#include <vector>

namespace tessera::detail::model_files {

/// Why StarPU would abort reading the codelet model file at `path`, the way its parser reads it
/// (StarPU 1.3 and 1.4: perfmodel_history.c, model version 45); empty when it would not.
std::string model_damage(const std::string& path);

/// Why StarPU would abort on, or throw away, the bus calibration file at `path` (bus/HOST.config,
/// .affinity, .latency, .bandwidth; perfmodel_bus.c); empty when it reads it.
std::string bus_damage(const std::string& path);

/// Moves aside what StarPU would abort on under the model directory `dir` (its codelets/45 files
/// of Tessera's models, tessera.*, and this host's bus files, all four of them when one is
/// damaged, so that StarPU calibrates the bus afresh). Returns one line a file moved, naming it,
/// why, where it went and what happens now; empty when all is well.
std::vector<std::string> quarantine_damaged(const std::string& dir);

}  // namespace tessera::detail::model_files
