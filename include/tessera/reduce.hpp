// Reductions over a field's interior: sum, min, max and the sum of a point function.
// Deterministic: each tile folds its rows in order (x, then y, then z), and the tiles are
// combined in tile order, so the result does not depend on scheduling, workers or backend.
#pragma once

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "tessera/detail/kernel_launch.hpp"
#include "tessera/field.hpp"

namespace tessera {

namespace detail {

struct SumOp {
  static constexpr const char* name = "sum";
  TESSERA_HD static double combine(double a, double b) { return a + b; }
};
struct MinOp {
  static constexpr const char* name = "min";
  TESSERA_HD static double combine(double a, double b) { return b < a ? b : a; }
};
struct MaxOp {
  static constexpr const char* name = "max";
  TESSERA_HD static double combine(double a, double b) { return b > a ? b : a; }
};

template <class T>
struct AsDouble {
  TESSERA_HD double operator()(T v) const { return static_cast<double>(v); }
};

#if defined(__CUDACC__)
// One thread per row, each folding its row in x order exactly as the CPU does.
template <class K>
__global__ void reduce_rows_kernel(typename K::Args a, Pointers<2> base) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r < a.extent[1] * a.extent[2]) K::point(a, base.p, 0, r % a.extent[1], r / a.extent[1]);
}
// The rows are then folded in order by a single thread: slow but the same as the CPU order.
template <class K>
__global__ void reduce_fold_kernel(typename K::Args a, double* partial) {
  K::fold_rows(a, partial);
}
#endif

// Per tile: buffer 0 is the tile, buffer 1 holds [tile result, one partial per row].
template <class T, class Op, class G>
struct TileReduce {
  static constexpr int kFields = 2;
  struct Args {
    G g;
    std::int64_t extent[3];
    std::int64_t offset0, sy, sz;
  };

  TESSERA_HD static void point(const Args& a, void* const* base, std::int64_t, std::int64_t y,
                               std::int64_t z) {
    const T* row = static_cast<const T*>(base[0]) + a.offset0 + y * a.sy + z * a.sz;
    double acc = a.g(row[0]);
    for (std::int64_t x = 1; x < a.extent[0]; ++x) acc = Op::combine(acc, a.g(row[x]));
    static_cast<double*>(base[1])[1 + y + z * a.extent[1]] = acc;
  }

  TESSERA_HD static void fold_rows(const Args& a, double* partial) {
    const std::int64_t rows = a.extent[1] * a.extent[2];
    double acc = partial[1];
    for (std::int64_t r = 1; r < rows; ++r) acc = Op::combine(acc, partial[1 + r]);
    partial[0] = acc;
  }

  static void cpu(void** buffers, void* arg) {
    const Args a = *static_cast<const Args*>(arg);
    void* base[2] = {buffer_data(buffers, 0), buffer_data(buffers, 1)};
    for_each_row(a.extent, [&](std::int64_t y, std::int64_t z) { point(a, base, 0, y, z); });
    fold_rows(a, static_cast<double*>(base[1]));
  }

#if defined(__CUDACC__)
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    Pointers<2> base{{buffer_data(buffers, 0), buffer_data(buffers, 1)}};
    cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream());
    const std::int64_t rows = a.extent[1] * a.extent[2];
    reduce_rows_kernel<TileReduce><<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(a, base);
    reduce_fold_kernel<TileReduce><<<1, 1, 0, stream>>>(a, static_cast<double*>(base.p[1]));
  }
#endif

  static TaskKind kind() {
#if defined(__CUDACC__)
    return {Op::name, Access::Read, Access::Write, &cpu, &cuda, /*untimed=*/true};
#else
    return {Op::name, Access::Read, Access::Write, &cpu, nullptr, /*untimed=*/true};
#endif
  }
};

template <class Op, class T, int D, class G>
double reduce(const Field<T, D>& field, const G& g, const std::string& what) {
  using K = TileReduce<T, Op, G>;
  FieldStorage& s = field.storage();
  TaskKind kind = K::kind();
  kind.kind = what.c_str();  // sum, sum-of, min, max
  Codelet& cl = codelet("reduce", s.type_name(), kind);
  // Per tile: [tile result, one partial per row], in memory only on the tile's owner.
  std::vector<std::vector<double>> partial(static_cast<std::size_t>(s.tiles()));
  std::vector<Handle> results;
  for (int t = 0; t < s.tiles(); ++t) {
    const TileGeometry geo = s.geometry(t);
    auto& p = partial[static_cast<std::size_t>(t)];
    const auto size = static_cast<std::size_t>(1 + geo.extent[1] * geo.extent[2]);
    if (s.mine(t)) p.assign(size, 0.0);
    results.push_back(register_vector(s.mine(t) ? p.data() : nullptr, size, sizeof(double), s.owner(t)));
    auto* a = new (std::malloc(sizeof(typename K::Args))) typename K::Args{
        g, {geo.extent[0], geo.extent[1], geo.extent[2]}, geo.offset0, geo.stride_y,
        geo.stride_z};
    submit(cl, {s.handle(t)}, {results.back()}, a, sizeof(*a), true,
           "reduce:" + what + " " + s.name() + " tile=" + std::to_string(t), {t, s.tiles()});
  }
  std::vector<double> tile_result(static_cast<std::size_t>(s.tiles()), 0.0);
  for (int t = 0; t < s.tiles(); ++t) {
    unregister_buffer(results[static_cast<std::size_t>(t)]);  // waits, brings the result home
    if (s.mine(t)) tile_result[static_cast<std::size_t>(t)] = partial[static_cast<std::size_t>(t)][0];
  }
  // Every rank folds every tile's result in tile order: the same bits for any rank count.
  tile_result = s.from_owners(tile_result);
  double acc = 0;
  for (int t = 0; t < s.tiles(); ++t) {
    const double v = tile_result[static_cast<std::size_t>(t)];
    acc = t == 0 ? v : Op::combine(acc, v);
  }
  return acc;
}

}  // namespace detail

/// Sum of the interior values, accumulated in double: double total = tessera::sum(u);
template <class T, int D>
double sum(const Field<T, D>& f) {
  return detail::reduce<detail::SumOp>(f, detail::AsDouble<T>{}, "sum");
}
/// Sum of g(value) over the interior; g is a trivially copyable TESSERA_HD functor T -> double.
template <class T, int D, class G>
double sum(const Field<T, D>& f, const G& g) {
  return detail::reduce<detail::SumOp>(f, g, "sum-of");
}
/// Smallest interior value.
template <class T, int D>
double min(const Field<T, D>& f) {
  return detail::reduce<detail::MinOp>(f, detail::AsDouble<T>{}, "min");
}
/// Largest interior value.
template <class T, int D>
double max(const Field<T, D>& f) {
  return detail::reduce<detail::MaxOp>(f, detail::AsDouble<T>{}, "max");
}

}  // namespace tessera
