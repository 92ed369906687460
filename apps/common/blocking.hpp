// --steps-per-exchange, for the applications and benchmarks whose step is one single-field
// stencil advanced with tessera::Stencil::advance (temporal blocking).
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include <CLI/CLI.hpp>
#include <tessera/stencil.hpp>

#include "apps/common/option_checks.hpp"

namespace apps {

// N steps per halo exchange, or auto (the default, also 0): tessera::kAutoDepth, the deepest
// block up to tessera::kMaxAutoDepth that the tiles allow (Stencil::auto_depth: deeper on
// thick tiles of few points). The result is the same for any value.
inline CLI::Option* add_steps_per_exchange(CLI::App& cli, int& depth) {
  return cli
      .add_option("--steps-per-exchange", depth,
                  "temporal blocking: advance N steps per halo exchange, in one task per tile "
                  "(ghost layers N deep, tiles at least N thick; the same result for any N); "
                  "auto (default): the deepest of 1 to " +
                      std::to_string(tessera::kMaxAutoDepth) + " the tiles allow (up to " +
                      std::to_string(tessera::kDeepestAutoDepth) + " on thick tiles of few points)")
      ->transform(CLI::Transformer(std::map<std::string, std::string>{{"auto", "0"}}))
      ->check(whole_in(0, 4096))
      ->default_str("auto");
}

// The steps per exchange for --steps-per-exchange `option` (auto: the stencil's choice for the
// grid's tiles), which is also the ghost-layer width a radius-1 stencil's fields need.
template <int D>
int steps_per_exchange(const tessera::Stencil<D>& stencil, const tessera::Grid<D>& grid,
                       int option) {
  return option == tessera::kAutoDepth ? stencil.auto_depth(grid) : option;
}

// Says (unless quiet, on rank 0) how many steps each halo exchange covers, and who chose it.
inline void print_depth(const char* app, int depth, bool chosen_by_tessera, bool quiet, int rank) {
  if (quiet || rank != 0) return;
  if (chosen_by_tessera)
    std::printf(
        "%s: %d step(s) per halo exchange (auto: the deepest the tiles allow, up to %d, "
        "%d on thick tiles of few points)\n",
        app, depth, tessera::kMaxAutoDepth, tessera::kDeepestAutoDepth);
  else
    std::printf("%s: %d step(s) per halo exchange (--steps-per-exchange)\n", app, depth);
}

}  // namespace apps
