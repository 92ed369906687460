// A flat byte encoding of RankTrace records, so that ranks can send their records to rank 0
// (core/runtime/recording.cpp moves the bytes; nothing here knows MPI).
#pragma once

#include <string>
#include <vector>

#include "tessera/trace.hpp"

namespace tessera::trace {

/// Appends `r`'s bytes to `out`.
void encode(const RankTrace& r, std::string& out);
/// Every record of a concatenation of encodings, in order.
std::vector<RankTrace> decode(const unsigned char* bytes, std::size_t size);

}  // namespace tessera::trace
