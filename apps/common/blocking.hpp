// --steps-per-exchange, for the applications and benchmarks whose step is one single-field
// stencil advanced with tessera::Stencil::advance (temporal blocking).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include <CLI/CLI.hpp>
#include <tessera/error.hpp>
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
// A depth given is checked against the tiles before any field is made: ghost layers deeper than
// a tile is thick would otherwise first show as a field's absurd element count.
template <int D>
int steps_per_exchange(const tessera::Stencil<D>& stencil, const tessera::Grid<D>& grid,
                       int option) {
  if (option == tessera::kAutoDepth) return stencil.auto_depth(grid);
  const std::int64_t width = static_cast<std::int64_t>(option) * stencil.radius();
  for (int a = 0; a < D; ++a) {
    // The thinnest tile along the axis: the last one where the extent is not a multiple.
    const std::int64_t tile = std::min(grid.tile()[a], grid.extent()[a]);
    if (tile <= 0) continue;  // nothing known to compare with: the library's own check decides
    const std::int64_t last =
        grid.cuts()[a].empty() && grid.extent()[a] % tile != 0 ? grid.extent()[a] % tile : tile;
    const std::int64_t thinnest = std::min(tile, last);
    if (width > thinnest)
      throw tessera::Error(
          "--steps-per-exchange " + std::to_string(option) + " makes ghost layers " +
          std::to_string(width) + " deep (steps per exchange x the stencil's radius " +
          std::to_string(stencil.radius()) + "), but a tile is only " + std::to_string(thinnest) +
          " point(s) thick along axis " + "xyz"[a] +
          "; a tile must be at least as thick as its ghost layers: give --steps-per-exchange " +
          std::to_string(std::max<std::int64_t>(1, thinnest / stencil.radius())) +
          " or less, auto, or thicker tiles (--tile)");
  }
  return option;
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
