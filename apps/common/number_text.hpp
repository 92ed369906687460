// Numbers in messages, as a person reads them.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace apps {

// `v` with the fewest significant digits that read back as `v`: a value just outside a range
// must not be shown rounded into it (0.16666666666666669 as "0.166667" beside a limit of 1/6).
inline std::string exact_text(double v) {
  char text[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v || std::isnan(v)) break;
  }
  return text;
}

}  // namespace apps
