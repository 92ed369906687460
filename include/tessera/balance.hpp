// Online rebalancing of a CPU/GPU split (docs/scheduling.md): at step boundaries, the measured
// per-step time of the GPU part and of the CPU part; where they differ by more than a threshold
// and the move pays for itself over the steps left, the split moves (the fields re-tiled
// together, no value changed).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/field.hpp"

namespace tessera {

namespace detail {
/// The decision for a split grid from per-step seconds of its two parts: `move` and the new
/// cuts and split where it moves; `line` says what was measured and decided. Moving costs the
/// planes that change part (of the `bytes` of all the fields moved) a round trip over the bus,
/// and the tiles made again (the planes from the lower split on; on several ranks, every
/// plane) their re-tiling on the host, at the rate a short probe of the node measured.
/// Collective.
struct Rebalanced {
  bool move = false;
  std::array<std::vector<std::int64_t>, 3> cuts;
  std::int64_t split = -1;
  std::string line;
};
Rebalanced plan_rebalance(const GridSpec& grid, double gpu_seconds, double cpu_seconds,
                          double threshold, long steps_left, double bytes);
/// Whether the run's planner lets a split move (not under a hand-set --gpu-fraction).
bool rebalancing_on();
/// Tasks submitted from now on count to the step `step` begins (a step boundary of a balanced
/// run; tasks::Submitter::mark_step).
void mark_balanced_step(long step);
/// Per-step seconds of the GPU part and of the CPU part of `grid` over the steps from `marks`
/// (the window's step boundaries marked by mark_balanced_step, ascending) to `to`: per marked
/// block of steps, each class's busy time over its workers that have a tile of its part, per
/// step; the median of the window's later half (a slowdown that began in the window counts once
/// it covers that half; a step with a one-off cost, a move's first, does not); the mean over the
/// ranks. Waits for the tasks submitted. Collective.
std::array<double, 2> measured_part_seconds(const GridSpec& grid, const std::vector<long>& marks,
                                            long to);
/// Said once (unless quiet) and kept with the configuration (trace, report).
void note_balance(const std::string& line);
}  // namespace detail

/// Rebalances the fields of one split grid (a Grid the library tiled with CUDA workers present,
/// or a Grid::cut with a split); does nothing for a grid without a split.
///   tessera::Balance<3> balance(0.1);
///   balance.add(u).add(next);
///   ... after each block of steps:  balance.at_step(done, steps);
template <int D>
class Balance {
 public:
  /// Moves the split where the two parts' measured times differ by more than `threshold` of the
  /// longer; measures every `every` steps (each measurement waits for the steps submitted).
  explicit Balance(double threshold = 0.05, long every = 5)
      : threshold_(threshold), every_(every) {}

  /// Fields on the same grid, moved together (the fields a step reads and writes).
  template <class T>
  Balance& add(Field<T, D>& f) {
    if (!retile_.empty() && f.grid() != *grid_)
      throw Error("tessera::Balance: field '" + f.name() +
                  "' is on another grid than the fields added before; balance the fields of "
                  "one grid together");
    grid_ = &f.grid();
    bytes_ += static_cast<double>(sizeof(T)) * static_cast<double>(f.grid().points());
    retile_.push_back([&f](const Grid<D>& g) { f.retile(g); });
    return *this;
  }

  /// At a step boundary, `done` steps of `total` run: every `every` steps from step `every` on,
  /// measures the two parts and moves the split where it pays. Returns whether it moved.
  /// Collective.
  bool at_step(long done, long total) {
    // Nothing measured where the split may not move: a measurement waits for the steps
    // submitted.
    if (grid_ == nullptr || grid_->split_axis() < 0 || every_ <= 0 || !detail::rebalancing_on())
      return false;
    // The first `every` steps are not measured: they upload the GPU part and run the one-off
    // tasks of a run's start, which no later step repeats.
    if (last_ < 0 && done < every_) return false;
    bool moved = false;
    if (last_ >= 0 && done - last_ >= every_) {
      measured_ = detail::measured_part_seconds(detail::grid_spec(*grid_), marks_, done);
      moved = rebalance(measured_[0], measured_[1], total - done, done);
    }
    if (last_ < 0 || done - last_ >= every_) {
      last_ = done;
      marks_.clear();
    }
    // After a move's re-tiling (its tasks count to no measured step).
    marks_.push_back(done);
    detail::mark_balanced_step(done);
    return moved;
  }

  /// The same decision from given per-step seconds of the GPU part and the CPU part.
  bool rebalance(double gpu_seconds, double cpu_seconds, long steps_left, long step = -1) {
    if (grid_ == nullptr || grid_->split_axis() < 0) return false;
    const detail::Rebalanced r = detail::plan_rebalance(
        detail::grid_spec(*grid_), gpu_seconds, cpu_seconds, threshold_, steps_left, bytes_);
    const std::string at = step >= 0 ? " at step " + std::to_string(step) : "";
    if (!r.move) return false;
    typename Grid<D>::Cuts cuts;
    for (int a = 0; a < D; ++a) cuts[a] = r.cuts[a];
    const Grid<D> moved =
        Grid<D>::cut(grid_->extent(), cuts, grid_->periodic(), grid_->split_axis(), r.split);
    for (auto& retile : retile_) retile(moved);
    moves_.push_back("rebalance" + at + ": " + r.line);
    detail::note_balance("tessera: " + moves_.back());
    return true;
  }

  /// Each move, in words.
  const std::vector<std::string>& moves() const { return moves_; }
  /// The last measured per-step seconds of the GPU part and the CPU part (0 before one).
  const std::array<double, 2>& measured() const { return measured_; }

 private:
  double threshold_;
  long every_;
  long last_ = -1;                 // the first step of the window measured next
  std::vector<long> marks_;        // the window's step boundaries so far
  const Grid<D>* grid_ = nullptr;  // the first field's grid (it follows the field's retiles)
  double bytes_ = 0;
  std::vector<std::function<void(const Grid<D>&)>> retile_;
  std::vector<std::string> moves_;
  std::array<double, 2> measured_{0, 0};
};

}  // namespace tessera
