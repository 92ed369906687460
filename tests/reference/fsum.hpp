// The oracle for exact sums: Shewchuk's exact summation as CPython's math.fsum computes it (a
// list of non-overlapping partials, grown with TwoSum, then rounded once with the half-way
// correction), an algorithm independent of the library's superaccumulator. Finite values whose
// partial sums stay finite; inf and nan as IEEE addition gives them.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

namespace reference {

inline double fsum(const std::vector<double>& values) {
  std::vector<double> p;  // partials, increasing magnitude, non-overlapping
  double special = 0.0;   // the IEEE sum of the infinities and nans
  bool any_special = false, all_neg_zero = true;
  for (double x : values) {
    if (!(x == 0.0 && std::signbit(x))) all_neg_zero = false;
    if (!std::isfinite(x)) {
      special = any_special ? special + x : x;
      any_special = true;
      continue;
    }
    std::size_t i = 0;
    for (double y : p) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) p[i++] = lo;
      x = hi;
    }
    p.resize(i);
    p.push_back(x);
  }
  if (any_special) return special;
  if (p.empty()) return values.empty() || !all_neg_zero ? 0.0 : -0.0;
  // Sum from the top while exact; then the half-way correction of math.fsum.
  std::size_t n = p.size();
  double hi = p[--n], lo = 0.0;
  while (n > 0) {
    const double x = hi, y = p[--n];
    hi = x + y;
    const double yr = hi - x;
    lo = y - yr;
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
    const double y = lo * 2.0, x = hi + y, yr = x - hi;
    if (y == yr) hi = x;
  }
  if (hi == 0.0) return all_neg_zero ? -0.0 : 0.0;
  return hi;
}

}  // namespace reference
