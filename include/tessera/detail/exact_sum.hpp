// Exact sums of doubles: the sum of any values, in any order and any grouping, rounded once to
// the nearest double (ties to even). Two parts, as in ExBLAS (Collange, Defour, Graillat,
// Iakymchuk 2015):
//  - ExactSum, a fixed-point superaccumulator covering the whole double range: every finite
//    double is an integer multiple of 2^-1074 below 2^1024, held in 32-bit digits of 64-bit
//    words, so adding a value or merging two accumulators is integer additions, which are
//    exact and commutative (on a GPU: atomic integer adds from any number of threads);
//  - SumFront, a two-term floating-point expansion (TwoSum) in registers in front of it: a
//    value costs a few flops and goes to the superaccumulator only when the expansion cannot
//    hold the sum exactly (dynamic range beyond about 2^100 between the sum and a value,
//    overflow, inf, nan), and the expansion itself when the front is flushed (per row).
// IEEE special values: a nan, or both +inf and -inf, give nan; otherwise an infinity gives that
// infinity, whatever the finite values (as IEEE addition in any order gives). A sum that
// overflows rounds to +-inf. An exact zero is +0, or -0 when every value was -0 (IEEE). No
// value at all: +0.
// Written for TESSERA_HD code (CPU loops and CUDA kernels) and free of contraction: the TwoSum
// steps have no multiply, and the value added is kept from fusing with the caller's multiply.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tessera/macros.hpp"

namespace tessera::detail {

/// The bits of a double.
TESSERA_HD std::uint64_t bits_of(double v) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(v));
#else
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
#endif
}

/// Whether a double is neither inf nor nan.
TESSERA_HD bool finite(double v) { return ((bits_of(v) >> 52) & 0x7ff) != 0x7ff; }

/// The superaccumulator. Plain data (zero-initialised: empty), so it travels as bytes between
/// tasks, backends and ranks.
struct ExactSum {
  // Value = sum of word[i] * 2^(32 i - 1074). Normalised, words 0..kWords-2 are digits in
  // [0, 2^32) and the last word is signed. A double spans 3 words at most (53 bits at any
  // offset) and reaches bit 2098; two words more hold the carries of 2^63 values.
  static constexpr int kWords = 68;
  static constexpr std::int64_t kDigit = std::int64_t{1} << 32;
  // Merged and added digits are each < 2^32 in magnitude: `deposits` bounds a word by
  // deposits * 2^32, and the host normalises before it could reach 2^62.
  static constexpr std::int64_t kNormaliseAt = std::int64_t{1} << 30;
  enum Flag : std::int64_t { kAny = 1, kNotNegZero = 2, kNaN = 4, kPosInf = 8, kNegInf = 16 };

  std::int64_t word[kWords];
  std::int64_t deposits;  // words may hold up to deposits * 2^32 (0 or 1: normalised)
  std::int64_t flags;     // Flag bits: what arrived besides finite values' digits

  /// Adds one value (any double).
  TESSERA_HD void add(double v) {
    if (!finite(v)) return special(v);
    set_flags(bits_of(v) == (std::uint64_t{1} << 63) ? kAny : kAny | kNotNegZero);
    deposit(v);
  }

  /// Adds another accumulator's value (exact, associative and commutative).
  TESSERA_HD void merge(const ExactSum& o) {
    for (int i = 0; i < kWords; ++i) add_word(i, o.word[i]);
    set_flags(o.flags);
    count(o.deposits);
  }

  /// The sum rounded once to the nearest double.
  TESSERA_HD double round() const {
    if ((flags & kNaN) != 0 || ((flags & kPosInf) != 0 && (flags & kNegInf) != 0)) return NAN;
    if ((flags & kPosInf) != 0) return INFINITY;
    if ((flags & kNegInf) != 0) return -INFINITY;
    ExactSum m = *this;
    m.normalise();
    const bool negative = m.word[kWords - 1] < 0;
    if (negative) {
      for (int i = 0; i < kWords; ++i) m.word[i] = -m.word[i];
      m.normalise();
    }
    int h = kWords - 1;
    while (h >= 0 && m.word[h] == 0) --h;
    if (h < 0) return (flags & kNotNegZero) != 0 || (flags & kAny) == 0 ? 0.0 : -0.0;
    // The leading 64 bits, the bits below them folded into the lowest (sticky): converting that
    // to double rounds to nearest even exactly as rounding the whole value would.
    const auto digit = [&](int i) { return i >= 0 ? static_cast<std::uint64_t>(m.word[i]) : 0; };
    int lead = 31;  // the leading bit of word h (a digit after normalising, whatever its size)
    while ((digit(h) >> lead) == 0) --lead;
    const int shift = 63 - 32 - lead;  // bits to move word h's leading bit to bit 63 of `top`
    std::uint64_t top = (digit(h) << (32 + shift)) | (digit(h - 1) << shift) |
                        (shift > 0 ? digit(h - 2) >> (32 - shift) : 0);
    bool sticky = (digit(h - 2) & ((std::uint64_t{1} << (32 - shift)) - 1)) != 0;
    for (int i = h - 3; i >= 0 && !sticky; --i) sticky = m.word[i] != 0;
    if (sticky) top |= 1;
    // top's lowest bit is bit 32 h + lead - 63 of the value, in units of 2^-1074. Below 2^53
    // units (subnormal results) nothing was dropped and the scaling is exact.
    const double r = ::ldexp(static_cast<double>(top), 32 * h + lead - 63 - 1074);
    return negative ? -r : r;
  }

  /// Carries every word's excess into the next: digits in [0, 2^32), the last word signed.
  TESSERA_HD void normalise() {
    std::int64_t carry = 0;
    for (int i = 0; i < kWords - 1; ++i) {
      const std::int64_t t = word[i] + carry;
      carry = t >> 32;  // floor division by 2^32 (arithmetic shift)
      word[i] = t - carry * kDigit;
    }
    word[kWords - 1] += carry;
    deposits = 1;
  }

  /// Adds a finite value's digits: value = m * 2^(k - 1074), m < 2^53, 0 <= k <= 2045.
  TESSERA_HD void deposit(double v) {
    const std::uint64_t b = bits_of(v);
    const int e = static_cast<int>((b >> 52) & 0x7ff);
    std::uint64_t m = b & ((std::uint64_t{1} << 52) - 1);
    if (e != 0) m |= std::uint64_t{1} << 52;
    if (m == 0) return;
    const int k = (e != 0 ? e : 1) - 1, w = k / 32, off = k % 32;
    const std::uint64_t rest = m >> (32 - off);
    const std::int64_t d0 = static_cast<std::int64_t>((m << off) & 0xffffffffu),
                       d1 = static_cast<std::int64_t>(rest & 0xffffffffu),
                       d2 = static_cast<std::int64_t>(rest >> 32);
    const bool negative = (b >> 63) != 0;
    add_word(w, negative ? -d0 : d0);
    add_word(w + 1, negative ? -d1 : d1);
    add_word(w + 2, negative ? -d2 : d2);
    count(1);
  }

  /// inf or nan: remembered as a flag.
  TESSERA_HD void special(double v) {
    set_flags(kAny | kNotNegZero | (v != v ? kNaN : v > 0 ? kPosInf : kNegInf));
  }

  // On a GPU an accumulator is shared by the threads of a task: integer atomics, whose result
  // does not depend on their order. The host normalises what the device left.
  TESSERA_HD void add_word(int i, std::int64_t v) {
#if defined(__CUDA_ARCH__)
    atomicAdd(reinterpret_cast<unsigned long long*>(&word[i]), static_cast<unsigned long long>(v));
#else
    word[i] += v;
#endif
  }
  TESSERA_HD void set_flags(std::int64_t f) {
#if defined(__CUDA_ARCH__)
    if ((flags & f) != f)
      atomicOr(reinterpret_cast<unsigned long long*>(&flags), static_cast<unsigned long long>(f));
#else
    flags |= f;
#endif
  }
  TESSERA_HD void count(std::int64_t n) {
#if defined(__CUDA_ARCH__)
    atomicAdd(reinterpret_cast<unsigned long long*>(&deposits), static_cast<unsigned long long>(n));
#else
    deposits += n;
    if (deposits >= kNormaliseAt) normalise();
#endif
  }
};

/// The sum of a stream of values, exact: a two-term expansion (hi + lo) kept in registers, with
/// what it cannot hold sent to an ExactSum. flush() sends the expansion too. Trivially copyable;
/// start with `SumFront{}`.
struct SumFront {
  double hi = -0.0;  // -0 + -0 = -0: hi stays -0 only while every value is -0
  double lo = 0.0;
  bool any = false;

  /// Adds v exactly: TwoSum into hi, its error TwoSum into lo; the rare remainder (v's bits
  /// far below lo's, an overflow, inf or nan) goes to `exact`.
  TESSERA_HD void add(double v, ExactSum& exact) {
    v = opaque(v);
    any = true;
    const double s = plus(hi, v), bv = minus(s, hi);
    const double e = plus(minus(hi, minus(s, bv)), minus(v, bv));
    const double s2 = plus(lo, e), bv2 = minus(s2, lo);
    const double e2 = plus(minus(lo, minus(s2, bv2)), minus(e, bv2));
    if (e2 == 0.0) {  // false for nan: overflows (inf - inf) and special values land below
      hi = s;
      lo = s2;
    } else {
      spill(v, s, s2, e2, exact);
    }
  }

  /// Sends the expansion to `exact` and starts again.
  TESSERA_HD void flush(ExactSum& exact) {
    if (!any) return;
    exact.set_flags(bits_of(hi) == (std::uint64_t{1} << 63)
                        ? ExactSum::kAny
                        : ExactSum::kAny | ExactSum::kNotNegZero);
    exact.deposit(hi);
    exact.deposit(lo);
    *this = SumFront{};
  }

 private:
  // Kept out of line: the common path stays a few flops and a branch.
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  __attribute__((noinline))
#endif
  TESSERA_HD void
  spill(double v, double s, double s2, double e2, ExactSum& exact) {
    if (!finite(v)) return exact.special(v);
    if (finite(s) && finite(s2) && finite(e2)) {
      hi = s;  // exact: hi + lo + e2 is the old hi + lo + v
      lo = s2;
      exact.deposit(e2);
    } else {  // the expansion would overflow: v goes to the superaccumulator as it is
      exact.set_flags(ExactSum::kAny | ExactSum::kNotNegZero);
      exact.deposit(v);
    }
  }

  // The value as a rounded double, never fused with the multiply that produced it (a fused
  // hi + a * b would not be the sum of the rounded a * b that the error terms assume). On the
  // device the intrinsics below are never fused.
  TESSERA_HD static double opaque(double v) {
#if !defined(__CUDA_ARCH__) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(v));
#elif !defined(__CUDA_ARCH__) && defined(__GNUC__) && defined(__aarch64__)
    __asm__("" : "+w"(v));
#endif
    return v;
  }
  TESSERA_HD static double plus(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
  }
  TESSERA_HD static double minus(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
  }
};

/// The CPU's front: values are buffered and added kLanes at a time, in lanes of two-term
/// expansions that the compiler vectorises (SumFront's TwoSums, lane by lane: any order gives
/// the same exact sum). A batch the lanes cannot hold exactly is added again through SumFront,
/// which spills what it must. Host only; start with `SumBatch{}`, flush() at the end.
struct SumBatch {
  static constexpr int kLanes = 8, kSize = 128;
  int n = 0;
  SumFront lane[kLanes];
  double buf[kSize];

  void add(double v, ExactSum& exact) {
    buf[n++] = v;
    if (n == kSize) run(exact);
  }
  /// Adds value_at(0), ..., value_at(count - 1): the buffer is filled a run at a time by a loop
  /// with no branch per value, which compilers vectorise (add() costs a store of n per value).
  template <class ValueAt>
  void add_each(std::int64_t count, const ValueAt& value_at, ExactSum& exact) {
    for (std::int64_t i = 0; i < count;) {
      const std::int64_t room = kSize - n, m = count - i < room ? count - i : room;
      double* out = buf + n;
      for (std::int64_t k = 0; k < m; ++k) out[k] = value_at(i + k);
      n += static_cast<int>(m);
      i += m;
      if (n == kSize) run(exact);
    }
  }
  void flush(ExactSum& exact) {
    run(exact);
    for (SumFront& f : lane) f.flush(exact);
  }

#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void
  run(ExactSum& exact) {
    const int whole = n - n % kLanes;
    double hi[kLanes], lo[kLanes], err[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      hi[j] = lane[j].hi;
      lo[j] = lane[j].lo;
      err[j] = 0.0;
    }
    for (int i = 0; i < whole; i += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        const double v = buf[i + j];
        const double s = hi[j] + v, bv = s - hi[j], e = (hi[j] - (s - bv)) + (v - bv);
        const double s2 = lo[j] + e, bv2 = s2 - lo[j], e2 = (lo[j] - (s2 - bv2)) + (e - bv2);
        hi[j] = s;
        lo[j] = s2;
        err[j] += std::fabs(e2);  // stays 0 only while every lane was exact (nan: not 0)
      }
    double missed = 0.0;
    for (int j = 0; j < kLanes; ++j) missed += err[j];
    if (missed == 0.0) {
      for (int j = 0; j < kLanes && whole > 0; ++j) {
        lane[j].hi = hi[j];
        lane[j].lo = lo[j];
        lane[j].any = true;
      }
    } else {  // rare: the batch again, value by value, with spills
      for (int i = 0; i < whole; ++i) lane[i % kLanes].add(buf[i], exact);
    }
    for (int i = whole; i < n; ++i) lane[i % kLanes].add(buf[i], exact);
    n = 0;
  }
};

}  // namespace tessera::detail
