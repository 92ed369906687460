// The loops around point functions: Kokkos on CPU workers, a CUDA grid on CUDA workers.
// Both visit the same (x, y, z) points of a tile; the point function is the same code.
#pragma once

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessera/access.hpp"
#include "tessera/detail/cuda_launch.hpp"
#include "tessera/detail/task.hpp"
#include "tessera/index.hpp"

namespace tessera::detail {

// Calls body(y, z) once per row of an ny x nz block of rows, through Kokkos. Kokkos' Serial
// space keeps no per-call state for a RangePolicy parallel_for, so every CPU worker thread may
// run this concurrently. With block_y < ny the rows go in y-blocks of block_y rows, every z of
// a block before the next block (cache blocking of 3-D tiles); the set of rows is the same.
// Kokkos iterates over planes (or blocks of a plane) and y is a plain inner loop: a row of a
// small tile costs about as much as an integer division, which a flat row index would pay
// twice a row (y = row % ny, z = row / ny: 10-20 % of a 64-point row of doubles).
// The label is short enough for std::string's inline buffer: Kokkos takes it as a std::string,
// and a longer one cost a malloc and a free at every call, a temporal block's hundreds of
// windows each (about 1 % of life's 1024^2 block: docs/scheduling.md).
inline constexpr const char* kRowsLabel = "tessera.rows";
template <class Body>
void parallel_rows(std::int64_t ny, std::int64_t nz, const Body& body) {
  Kokkos::parallel_for(kRowsLabel,
                       Kokkos::RangePolicy<Kokkos::Serial, Kokkos::IndexType<std::int64_t>>(0, nz),
                       [&](std::int64_t z) {
                         for (std::int64_t y = 0; y < ny; ++y) body(y, z);
                       });
}
template <class Body>
void parallel_rows(std::int64_t ny, std::int64_t nz, std::int64_t block_y, const Body& body) {
  if (block_y >= ny || nz == 1) return parallel_rows(ny, nz, body);
  const std::int64_t blocks = (ny + block_y - 1) / block_y;
  Kokkos::parallel_for(
      kRowsLabel,
      Kokkos::RangePolicy<Kokkos::Serial, Kokkos::IndexType<std::int64_t>>(0, blocks * nz),
      [&](std::int64_t i) {
        const std::int64_t y0 = (i / nz) * block_y, z = i % nz;
        const std::int64_t y1 = ny - y0 < block_y ? ny : y0 + block_y;  // the last is shorter
        for (std::int64_t y = y0; y < y1; ++y) body(y, z);
      });
}

template <int N>
struct Pointers {
  void* p[N];
};

#if TESSERA_CUDA_BODIES
// One thread per point; x along threadIdx.x so neighbouring threads touch neighbouring memory.
// A launch covers the rows from y0 and the planes from z0 (a tile over the grid's y or z limit
// is launched in pieces).
template <class K>
__global__ void point_kernel(typename K::Args a, Pointers<K::kFields> base, std::int64_t y0,
                             std::int64_t z0) {
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t y = y0 + blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  const std::int64_t z = z0 + blockIdx.z;
  if (x < a.frame.extent(0) && y < a.frame.extent(1)) K::point(a, base.p, x, y, z);
}

template <class K>
void launch_points(const typename K::Args& a, const Pointers<K::kFields>& base) {
  const std::int64_t nx = a.frame.extent(0), ny = a.frame.extent(1), nz = a.frame.extent(2);
  if (nx <= 0 || ny <= 0 || nz <= 0) return;  // an empty window: nothing to launch
  const dim3 block(64, 4, 1);
  const auto gx = static_cast<unsigned>((nx + block.x - 1) / block.x);
  in_pieces((ny + block.y - 1) / block.y, nz,
            [&](std::int64_t by, std::int64_t z0, unsigned gy, unsigned gz) {
              launch("point_kernel", &point_kernel<K>, dim3(gx, gy, gz), block,
                     static_cast<cudaStream_t>(cuda_stream()), LaunchTile::points(a.frame), a, base,
                     by * block.y, z0);
            });
}

// With reductions: one thread per row, each visiting its row in x order as the CPU does. A
// row's sums go into the tile's accumulators by integer atomics (exact, so their order does not
// matter: the CPU's bits); its Min and Max values into the row's slots, which one block then
// folds in parallel (a tree of pairs in shared memory).
template <class K>
__global__ void row_kernel(typename K::Args a, Pointers<K::kBuffers> base) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r < a.frame.extent(1) * a.frame.extent(2))
    K::row(a, base.p, r % a.frame.extent(1), r / a.frame.extent(1));
}

constexpr int kFoldThreads = 256;

template <class K>
__global__ void fold_extrema_kernel(typename K::Args a, Pointers<K::kBuffers> base) {
  __shared__ double value[kFoldThreads];
  __shared__ bool any[kFoldThreads];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t rows = a.frame.extent(1) * a.frame.extent(2);
  for (int k = 0; k < K::kReduce; ++k) {
    const ReduceOp op = K::op(k);
    if (op == ReduceOp::Sum) continue;  // complete: the rows added into the tile's accumulator
    double v = 0.0;
    bool got = false;
    for (std::int64_t r = t; r < rows; r += kFoldThreads) {
      const double* s = K::row_extrema(a, base.p, r) + 2 * k;
      if (s[1] != 0.0) {
        v = got ? extremum(op, v, s[0]) : s[0];
        got = true;
      }
    }
    value[t] = v;
    any[t] = got;
    __syncthreads();
    for (int w = kFoldThreads / 2; w > 0; w /= 2) {
      if (t < w && any[t + w]) {
        value[t] = any[t] ? extremum(op, value[t], value[t + w]) : value[t + w];
        any[t] = true;
      }
      __syncthreads();
    }
    if (t == 0) {
      ReduceSlot& tile = K::tile_slots(base.p)[k];
      tile.value = value[0];
      tile.any = any[0] ? 1.0 : 0.0;
    }
    __syncthreads();
  }
}

template <class K>
void launch_rows(const typename K::Args& a, const Pointers<K::kBuffers>& base) {
  const std::int64_t rows = a.frame.extent(1) * a.frame.extent(2);
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream());
  // Empty accumulators and slots: zero bytes.
  const LaunchTile tile = LaunchTile::points(a.frame);
  check_call(cudaMemsetAsync(base.p[K::kFields], 0, sizeof(ReduceSlot) * K::kReduce, stream),
             "cudaMemsetAsync of the reduction slots", tile);
  if (rows <= 0 || a.frame.extent(0) <= 0) return;  // an empty window: empty results
  launch("row_kernel", &row_kernel<K>, dim3(static_cast<unsigned>((rows + 127) / 128)), dim3(128),
         stream, tile, a, base);
  if constexpr (K::kExtrema > 0)
    launch("fold_extrema_kernel", &fold_extrema_kernel<K>, dim3(1), dim3(kFoldThreads), stream,
           tile, a, base);
}
#endif

}  // namespace tessera::detail
