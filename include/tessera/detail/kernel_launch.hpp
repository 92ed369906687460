// The loops around point functions: Kokkos on CPU workers, a CUDA grid on CUDA workers.
// Both visit the same (x, y, z) points of a tile; the point function is the same code.
#pragma once

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessera/detail/task.hpp"
#include "tessera/index.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace tessera::detail {

// Calls body(y, z) once per row of an ny x nz block of rows, through Kokkos. Kokkos' Serial
// space keeps no per-call state for a RangePolicy parallel_for, so every CPU worker thread may
// run this concurrently. With block_y < ny the rows go in y-blocks of block_y rows, every z of
// a block before the next block (cache blocking of 3-D tiles); the set of rows is the same.
template <class Body>
void parallel_rows(std::int64_t ny, std::int64_t nz, const Body& body) {
  Kokkos::parallel_for(
      "tessera.tile_rows",
      Kokkos::RangePolicy<Kokkos::Serial, Kokkos::IndexType<std::int64_t>>(0, ny * nz),
      [&](std::int64_t row) { body(row % ny, row / ny); });
}
template <class Body>
void parallel_rows(std::int64_t ny, std::int64_t nz, std::int64_t block_y, const Body& body) {
  if (block_y >= ny || nz == 1) return parallel_rows(ny, nz, body);
  Kokkos::parallel_for(
      "tessera.tile_rows",
      Kokkos::RangePolicy<Kokkos::Serial, Kokkos::IndexType<std::int64_t>>(0, ny * nz),
      [&](std::int64_t row) {
        const std::int64_t block = row / (block_y * nz), in = row - block * block_y * nz;
        const std::int64_t y0 = block * block_y;
        const std::int64_t rows = ny - y0 < block_y ? ny - y0 : block_y;  // the last is shorter
        body(y0 + in % rows, in / rows);
      });
}

template <int N>
struct Pointers {
  void* p[N];
};

#if defined(__CUDACC__)
// One thread per point; x along threadIdx.x so neighbouring threads touch neighbouring memory.
template <class K>
__global__ void point_kernel(typename K::Args a, Pointers<K::kFields> base) {
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t y = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  const std::int64_t z = blockIdx.z;
  if (x < a.frame.extent(0) && y < a.frame.extent(1)) K::point(a, base.p, x, y, z);
}

template <class K>
void launch_points(const typename K::Args& a, const Pointers<K::kFields>& base) {
  const dim3 block(64, 4, 1);
  const dim3 grid(static_cast<unsigned>((a.frame.extent(0) + block.x - 1) / block.x),
                  static_cast<unsigned>((a.frame.extent(1) + block.y - 1) / block.y),
                  static_cast<unsigned>(a.frame.extent(2)));
  point_kernel<K><<<grid, block, 0, static_cast<cudaStream_t>(cuda_stream())>>>(a, base);
}

// With reductions: one thread per row, each visiting its row in x order as the CPU does, then
// one thread folding the rows in order (slow, but the same bits as the CPU).
template <class K>
__global__ void row_kernel(typename K::Args a, Pointers<K::kBuffers> base) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r < a.frame.extent(1) * a.frame.extent(2))
    K::row(a, base.p, r % a.frame.extent(1), r / a.frame.extent(1));
}
template <class K>
__global__ void fold_rows_kernel(typename K::Args a, double* partial) {
  K::fold_rows(a, partial);
}

template <class K>
void launch_rows(const typename K::Args& a, const Pointers<K::kBuffers>& base) {
  const std::int64_t rows = a.frame.extent(1) * a.frame.extent(2);
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream());
  row_kernel<K><<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(a, base);
  fold_rows_kernel<K><<<1, 1, 0, stream>>>(a, static_cast<double*>(base.p[K::kFields]));
}
#endif

}  // namespace tessera::detail
