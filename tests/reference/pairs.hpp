// The order of tessera::Pairs' sums, written out: a target's sources in chunks of 64 positions
// (chunk c: positions [64 c, 64 c + 64) of the sources' order), each chunk summed from zero
// term by term, the chunk sums added to the target's running sums in chunk order.
#pragma once

#include <array>
#include <cstdint>

namespace reference {

constexpr std::int64_t kPairChunk = 64;  // tessera::detail::kPairChunk

// `sums` plus every source's term: add(j, chunk) adds the term of the source at position j to
// `chunk` (K running chunk sums), j = 0 .. sources - 1 in order.
template <std::size_t K, class Add>
void pair_sums(std::array<double, K>& sums, std::int64_t sources, const Add& add) {
  for (std::int64_t c = 0; c < sources; c += kPairChunk) {
    std::array<double, K> chunk{};
    for (std::int64_t j = c; j < sources && j < c + kPairChunk; ++j) add(j, chunk);
    for (std::size_t k = 0; k < K; ++k) sums[k] += chunk[k];
  }
}

}  // namespace reference
