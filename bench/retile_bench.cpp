// bench_retile: the host side of a rebalance move (tessera::Balance, docs/scheduling.md, "Moving
// the split"). jacobi2d's three float fields on a split grid (the GPU part below --from, the
// CPU part in --slabs slabs) re-tiled to the split at --to, as a move re-cuts them, in --reps
// rounds (fresh fields each round); printed with what Balance predicts the move costs (the
// bus, nothing without CUDA workers, and the re-tiling at the rate its probe measured).
//   bench_retile --size 16384 --from 14530 --to 15313 --slabs 63 --reps 3
#include <chrono>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "tessera/balance.hpp"
#include "tessera/tessera.hpp"

namespace {

// The split at `split` with the CPU part above it in `slabs` even slabs; the GPU part keeps
// the tile below `keep` (a move keeps the old GPU part whole).
tessera::Grid<2> split_grid(std::int64_t n, std::int64_t keep, std::int64_t split, int slabs) {
  std::vector<std::int64_t> cuts;
  if (keep < split) cuts.push_back(keep);
  for (int k = 0; k < slabs; ++k) cuts.push_back(split + (n - split) * k / slabs);
  return tessera::Grid<2>::cut({n, n}, {{{}, cuts}}, {}, 1, split);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bench_retile: the host side of a rebalance move"};
  tessera::Options runtime;
  tessera::add_options(cli, runtime);
  long n = 16384, from = 14530, to = 15313, reps = 3;
  int slabs = 63;
  cli.add_option("--size", n, "grid side (n x n floats, three fields)");
  cli.add_option("--from", from, "the split before the move");
  cli.add_option("--to", to, "the split after it (above --from)");
  cli.add_option("--slabs", slabs, "the CPU part's slabs");
  cli.add_option("--reps", reps, "rounds");
  CLI11_PARSE(cli, argc, argv);
  if (!(0 < from && from < to && to + slabs <= n && slabs > 0)) {
    std::fprintf(stderr, "bench_retile: give 0 < --from < --to <= --size - --slabs\n");
    return 2;
  }
  tessera::Runtime rt(runtime);
  const tessera::Grid<2> before = split_grid(n, from, from, slabs);
  const tessera::Grid<2> after = split_grid(n, from, to, slabs);
  const double bytes = 3.0 * sizeof(float) * static_cast<double>(n) * static_cast<double>(n);
  const double made = bytes * static_cast<double>(n - from) / static_cast<double>(n);
  for (long r = 0; r < reps; ++r) {
    tessera::Field<float, 2> u(before, 1, {}, "u"), next(before, 1, {}, "next"),
        f(before, 1, {}, "f");
    // What Balance would weigh: a CPU part twice as slow as the GPU part, many steps left.
    const tessera::detail::Rebalanced plan = tessera::detail::plan_rebalance(
        tessera::detail::grid_spec(u.grid()), 1e-3, 2e-3, 0.05, 1000000, bytes);
    const auto start = std::chrono::steady_clock::now();
    for (auto* field : {&u, &next, &f}) field->retile(after);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("retile n=%ld split %ld -> %ld slabs=%d new_tiles_MB=%.0f seconds=%.4f plan: %s\n",
                n, from, to, slabs, made / 1e6, took.count(), plan.line.c_str());
  }
  return 0;
}
