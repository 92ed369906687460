// Sizing an application's own host arrays (a mesh, the bodies) before allocating them, so that
// too large a problem is refused with the figure rather than by std::bad_alloc (or
// vector::_M_default_append) after minutes of filling memory. Fields are sized by the library.
#pragma once

#include <cstdio>
#include <string>

#include <tessera/detail/memory.hpp>
#include <tessera/error.hpp>

namespace apps {

// "15.4 GB", "1440 GB": a byte count as a person reads it.
inline std::string gigabytes(double bytes) {
  char text[48];
  std::snprintf(text, sizeof(text), bytes < 1e11 ? "%.1f GB" : "%.0f GB", bytes / 1e9);
  return text;
}

// Throws unless `bytes` fit in the memory this process may still allocate. `what` names the
// problem as typed (e.g. "--size 10000000000 (bodies)"), `fix` what fits instead.
inline void require_memory(const std::string& what, double bytes, const std::string& fix) {
  const double available = tessera::detail::available_memory_bytes();
  if (bytes <= available) return;
  throw tessera::Error(what + " needs about " + gigabytes(bytes) + " of host memory, and " +
                       gigabytes(available) + " is available to this process; " + fix);
}

}  // namespace apps
