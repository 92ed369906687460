// What StarPU's performance models know about the codelets this run has used: one entry per
// codelet x architecture x footprint (tile size), with its sample count. A model is calibrated
// once each entry has calibration_minimum() samples; until then a model-based scheduler (dmda)
// places those tasks without a prediction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {
class Runtime;
}

namespace tessera::perfmodels {

struct Entry {
  std::string codelet;  ///< e.g. "heat3d:interior" (model file tessera.heat3d.interior.double)
  std::string arch;     ///< StarPU's arch name, e.g. "cpu0_impl0 (Comb0)"
  std::uint32_t footprint = 0;
  std::size_t bytes = 0;  ///< data size of the tasks with this footprint
  unsigned samples = 0;
  double mean_us = 0, stddev_us = 0;
};

struct Coverage {
  unsigned minimum = 10;       ///< samples needed per entry
  std::vector<Entry> entries;  ///< per codelet and architecture, the footprints this run used
  /// "codelet footprint F on arch": used by this run, able to run here, with no sample at all.
  std::vector<std::string> missing;
  /// Every codelet x architecture has entries, each with at least `minimum` samples.
  bool complete() const;
  /// How many entries still need samples (missing pairs count as one).
  std::size_t short_entries() const;
};

/// Samples StarPU requires before it trusts an entry: STARPU_CALIBRATE_MINIMUM, default 10.
unsigned calibration_minimum();

/// The models of every codelet the live runtime has submitted tasks to, for each architecture
/// of its workers, restricted to the footprints (tile shapes) of the tasks submitted: entries
/// other configurations left in the model directory are not listed. Call between rt.wait() and the
/// next submission (StarPU updates them while tasks end).
Coverage coverage(const Runtime& rt);

/// A fixed-width table of `c`: codelet, arch, footprint, bytes, samples, mean, stddev, status.
std::string table(const Coverage& c);

}  // namespace tessera::perfmodels
