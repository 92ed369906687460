// Reductions over a field's interior: sum, min, max and the sum of a point function.
// Deterministic: each tile folds its rows in order (x, then y, then z), and the tiles are
// combined in tile order, so the result does not depend on scheduling, workers or backend.
#pragma once

#include <string>

#include "tessera/detail/kernel_launch.hpp"
#include "tessera/field.hpp"

namespace tessera {

namespace detail {

enum class ReduceOp { Sum, Min, Max };

// How two partial results combine; the kernels and the library's fold over tiles share it.
TESSERA_HD double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Sum: return a + b;
    case ReduceOp::Min: return b < a ? b : a;
    case ReduceOp::Max: return b > a ? b : a;
  }
  return a;
}

template <class T>
struct AsDouble {
  TESSERA_HD double operator()(T v) const { return static_cast<double>(v); }
};

#if defined(__CUDACC__)
// One thread per row, each folding its row in x order exactly as the CPU does.
template <class K>
__global__ void reduce_rows_kernel(typename K::Args a, Pointers<2> base) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r < a.frame.extent(1) * a.frame.extent(2))
    K::point(a, base.p, 0, r % a.frame.extent(1), r / a.frame.extent(1));
}
// The rows are then folded in order by a single thread: slow but the same as the CPU order.
template <class K>
__global__ void reduce_fold_kernel(typename K::Args a, double* partial) {
  K::fold_rows(a, partial);
}
#endif

// Per tile: buffer 0 is the tile, buffer 1 holds [tile result, one partial per row].
template <class T, ReduceOp Op, class G>
struct TileReduce {
  static constexpr int kFields = 2;
  using Args = TileArgs<G, 1>;  // the frame of the field; buffer 1 needs none

  TESSERA_HD static void point(const Args& a, void* const* base, std::int64_t, std::int64_t y,
                               std::int64_t z) {
    const TileFrame<1>& t = a.frame;
    const T* row = static_cast<const T*>(base[0]) + t.offset0(0) + y * t.sy(0) + z * t.sz(0);
    double acc = a.f(row[0]);
    for (std::int64_t x = 1; x < t.extent(0); ++x) acc = combine(Op, acc, a.f(row[x]));
    static_cast<double*>(base[1])[1 + y + z * t.extent(1)] = acc;
  }

  TESSERA_HD static void fold_rows(const Args& a, double* partial) {
    const std::int64_t rows = a.frame.extent(1) * a.frame.extent(2);
    double acc = partial[1];
    for (std::int64_t r = 1; r < rows; ++r) acc = combine(Op, acc, partial[1 + r]);
    partial[0] = acc;
  }

  static void cpu(void** buffers, void* arg) {
    const Args a = *static_cast<const Args*>(arg);
    void* base[2] = {buffer_data(buffers, 0), buffer_data(buffers, 1)};
    parallel_rows(a.frame.extent(1), a.frame.extent(2),
                  [&](std::int64_t y, std::int64_t z) { point(a, base, 0, y, z); });
    fold_rows(a, static_cast<double*>(base[1]));
  }

#if defined(__CUDACC__)
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    Pointers<2> base{{buffer_data(buffers, 0), buffer_data(buffers, 1)}};
    cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream());
    const std::int64_t rows = a.frame.extent(1) * a.frame.extent(2);
    reduce_rows_kernel<TileReduce><<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(a, base);
    reduce_fold_kernel<TileReduce><<<1, 1, 0, stream>>>(a, static_cast<double*>(base.p[1]));
  }
#endif

  static TaskKind kind(const char* name) {
#if defined(__CUDACC__)
    return {name, Access::Read, Access::Write, &cpu, &cuda, /*untimed=*/true};
#else
    return {name, Access::Read, Access::Write, &cpu, nullptr, /*untimed=*/true};
#endif
  }
};

/// Runs one `kind` task per tile of `field` (library), each writing its tile's result, and
/// combines the tile results in tile order on every rank. Waits for the tasks.
double reduce_tiles(FieldStorage& field, ReduceOp op, const TaskKind& kind, const ArgBlock& args);

// `what` names the task kind: "sum", "sum-of", "min" or "max".
template <ReduceOp Op, class T, int D, class G>
double reduce(const Field<T, D>& field, const G& g, const char* what) {
  using K = TileReduce<T, Op, G>;
  const typename K::Args prototype{{}, g};
  return reduce_tiles(field.storage(), Op, K::kind(what), ArgBlock::of(prototype));
}

}  // namespace detail

/// Sum of the interior values, accumulated in double: double total = tessera::sum(u);
template <class T, int D>
double sum(const Field<T, D>& f) {
  return detail::reduce<detail::ReduceOp::Sum>(f, detail::AsDouble<T>{}, "sum");
}
/// Sum of g(value) over the interior; g is a trivially copyable TESSERA_HD functor T -> double.
template <class T, int D, class G>
double sum(const Field<T, D>& f, const G& g) {
  return detail::reduce<detail::ReduceOp::Sum>(f, g, "sum-of");
}
/// Smallest interior value.
template <class T, int D>
double min(const Field<T, D>& f) {
  return detail::reduce<detail::ReduceOp::Min>(f, detail::AsDouble<T>{}, "min");
}
/// Largest interior value.
template <class T, int D>
double max(const Field<T, D>& f) {
  return detail::reduce<detail::ReduceOp::Max>(f, detail::AsDouble<T>{}, "max");
}

}  // namespace tessera
