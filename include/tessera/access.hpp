// What a point functor receives: In (read), Out (write), InOut (read-modify-write at the point)
// and Reducer (contribute to a reduction), and, in checking mode (TESSERA_CHECKED_ACCESS), the
// rule every In offset is checked against.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "tessera/detail/exact_sum.hpp"
#include "tessera/macros.hpp"

#if !defined(TESSERA_CHECKED_ACCESS)
#define TESSERA_CHECKED_ACCESS 0
#endif

namespace tessera {

namespace detail {

/// What an input may be read at, for checking mode: the offsets of a stencil's radius and
/// shape, only the point itself (centre-only inputs, loops). Plain data: it travels to the GPU
/// inside the task's argument block.
struct AccessRule {
  char owner[48];  // "stencil 'heat3d'" or "loop 'ode'", truncated
  char field[32];  // the input field's name, truncated
  int radius;      // 0: the point only
  int dims;
  bool box;
  bool centre_only;  // declared with tessera::centre() in a stencil
};

// Stops the run: on the host with a message on stderr and abort(); on a GPU with printf and a
// trap (the CUDA context fails, StarPU reports it and stops).
TESSERA_HD void access_violation(const AccessRule& r, int dx, int dy, int dz, const char* rule) {
#if defined(__CUDA_ARCH__)
  printf("tessera: %s reads input '%s' at offset (%d, %d, %d): %s\n", r.owner, r.field, dx, dy, dz,
         rule);
  __trap();
#else
  std::fprintf(stderr, "tessera: %s reads input '%s' at offset (%d, %d, %d): %s\n", r.owner,
               r.field, dx, dy, dz, rule);
  std::fflush(stderr);
  std::abort();
#endif
}

TESSERA_HD int magnitude(int v) { return v < 0 ? -v : v; }

TESSERA_HD void check_offset(const AccessRule& r, int dx, int dy, int dz) {
  if (dx == 0 && dy == 0 && dz == 0) return;
  if (r.centre_only)
    access_violation(r, dx, dy, dz,
                     "the input is declared centre-only (tessera::centre): read it as u() only, "
                     "or pass it without centre() and give it a halo");
  if (r.radius == 0)
    access_violation(r, dx, dy, dz,
                     "a loop reads its inputs at the point only (u()); use a Stencil to read "
                     "neighbours");
  if (r.dims == 2 && dz != 0)
    access_violation(r, dx, dy, dz, "the stencil is 2-D: give (dx, dy) offsets only");
  if (magnitude(dx) > r.radius || magnitude(dy) > r.radius || magnitude(dz) > r.radius)
    access_violation(r, dx, dy, dz,
                     "the offset is outside the stencil's radius: every |offset| must be <= the "
                     "radius given to the Stencil");
  if (!r.box && (dx != 0) + (dy != 0) + (dz != 0) > 1)
    access_violation(r, dx, dy, dz,
                     "a Shape::Star stencil reads along the axes only: use Shape::Box to read "
                     "diagonal neighbours");
}

}  // namespace detail

/// Read access to an input field, centred on the current point: u() is the value at the point,
/// u(dx, dy[, dz]) the value at that offset, which must lie within the stencil's radius and
/// shape (loops and centre-only inputs: the point only). Checked in checking mode.
/// The value at the point is read when the accessor is made, so u() costs no memory access
/// where the functor calls it: `n == 3 || (n == 2 && u() != 0)` is as cheap as `|`/`&` (a read
/// under a condition would keep the compiler from vectorising the point loop). An unused
/// centre read is removed by the compiler.
template <class T>
struct In {
  const T* p;
  std::int64_t sy, sz;
#if TESSERA_CHECKED_ACCESS
  const detail::AccessRule* rule = nullptr;  // null: unchecked (the serial reference)
#endif
  T centre;

  TESSERA_HD In(const T* at, std::int64_t stride_y, std::int64_t stride_z)
      : p(at), sy(stride_y), sz(stride_z), centre(*at) {}
#if TESSERA_CHECKED_ACCESS
  TESSERA_HD In(const T* at, std::int64_t stride_y, std::int64_t stride_z,
                const detail::AccessRule* r)
      : p(at), sy(stride_y), sz(stride_z), rule(r), centre(*at) {}
#endif

  TESSERA_HD T operator()() const { return centre; }
  TESSERA_HD T operator()(int dx, int dy = 0, int dz = 0) const {
#if TESSERA_CHECKED_ACCESS
    if (rule != nullptr) detail::check_offset(*rule, dx, dy, dz);
#endif
    return p[dx + dy * sy + dz * sz];
  }
};

/// Write access to an output field at the current point: out = value.
template <class T>
struct Out {
  T* p;
  TESSERA_HD const Out& operator=(T v) const {
    *p = v;
    return *this;
  }
};

/// Read-modify-write access to a field at the current point (loops): v() or the implicit
/// conversion reads, v = value writes. The read sees this point's value before the loop wrote
/// it, unless the functor wrote it first.
template <class T>
struct InOut {
  T* p;
  TESSERA_HD T operator()() const { return *p; }
  TESSERA_HD operator T() const { return *p; }
  TESSERA_HD const InOut& operator=(T v) const {
    *p = v;
    return *this;
  }
};

/// The reductions a loop can produce (tessera::reductions(Sum{}, Min{}, ...)). Every result is a
/// double. Sums are exact and rounded once (detail/exact_sum.hpp), so no order of points, rows,
/// tiles, workers or ranks changes their bits. A reduction that received no value is 0 (Sum),
/// +infinity (Min) or -infinity (Max).
struct Sum {};
struct Min {};
struct Max {};

namespace detail {

enum class ReduceOp { Sum, Min, Max };

template <class Tag>
TESSERA_HD constexpr ReduceOp op_of() {
  if constexpr (std::is_same_v<Tag, Min>) return ReduceOp::Min;
  if constexpr (std::is_same_v<Tag, Max>) return ReduceOp::Max;
  static_assert(std::is_same_v<Tag, Sum> || std::is_same_v<Tag, Min> || std::is_same_v<Tag, Max>,
                "a reduction is tessera::Sum, tessera::Min or tessera::Max");
  return ReduceOp::Sum;
}

// How two values of a Min or Max combine; the kernels and the library's fold over tiles share
// it.
TESSERA_HD double extremum(ReduceOp op, double a, double b) {
  return op == ReduceOp::Min ? (b < a ? b : a) : (b > a ? b : a);
}

/// A tile's result of one reduction, as its task leaves it: a Sum's accumulator, or a Min's or
/// Max's value and whether any value arrived (0 or 1). Zero bytes: nothing arrived.
struct ReduceSlot {
  ExactSum sum;
  double value, any;
};

/// One reduction's partial result while a row of points runs, kept in registers: a Sum's exact
/// expansion (what it cannot hold goes to the tile's accumulator), a Min's or Max's value.
struct ReducePartial {
  SumFront sum;               // Sum on a GPU (and where no batch is given)
  SumBatch* batch = nullptr;  // Sum on a CPU: the row's buffer, added in vectorised batches
  double value = 0.0;
  bool any = false;
  ExactSum* exact = nullptr;  // Sum: the tile's accumulator
};

template <class Tag>
TESSERA_HD void accumulate(ReducePartial& p, double v) {
  if constexpr (std::is_same_v<Tag, Sum>) {
#if !defined(__CUDA_ARCH__)
    if (p.batch != nullptr) return p.batch->add(v, *p.exact);
#endif
    p.sum.add(v, *p.exact);
  } else {
    p.value = p.any ? extremum(op_of<Tag>(), p.value, v) : v;
    p.any = true;
  }
}

}  // namespace detail

/// A point functor's share of one reduction: r(v) contributes v (any number of times per point,
/// or none). A Sum is exact whatever the order; Min and Max fold in x order within a row.
template <class Tag>
struct Reducer {
  detail::ReducePartial* partial;
  TESSERA_HD void operator()(double v) const { detail::accumulate<Tag>(*partial, v); }
};

}  // namespace tessera
