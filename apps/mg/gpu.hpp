// The one kernel of NAS MG's and NAS FT's CUDA bodies: op(x, y, z) at every point of a box, a
// thread each, launched through Tessera's checked launcher (tessera::detail::launch), so the
// same bodies run on a GPU under nvcc and on the emulated device (TESSERA_EMULATE_CUDA, the
// emulated.app.* tests). Each op is a small struct whose TESSERA_HD call operator does one
// point with the applications' point functions, the ones the CPU bodies use.
#pragma once

#include <cstdint>

#include <tessera/detail/cuda_launch.hpp>

#if TESSERA_CUDA_BODIES
namespace apps {

template <class Op>
__global__ void points_kernel(Op op, std::int64_t nx, std::int64_t y0, std::int64_t z0) {
  const std::int64_t x = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (x < nx) op(x, y0 + blockIdx.y, z0 + blockIdx.z);
}

/// op(x, y, z) for x in [0, nx), y in [0, ny), z in [0, nz), on `stream` (a task's CUDA stream,
/// tessera's cuda(stream, ...) argument). Rows of 128 threads; y and z in launches within
/// CUDA's grid limits.
template <class Op>
void for_points(const char* name, void* stream, const Op& op, std::int64_t nx, std::int64_t ny,
                std::int64_t nz) {
  if (nx <= 0 || ny <= 0 || nz <= 0) return;
  tessera::detail::LaunchTile tile;
  tile.extent[0] = nx;
  tile.extent[1] = ny;
  tile.extent[2] = nz;
  const auto gx = static_cast<unsigned>((nx + 127) / 128);
  tessera::detail::in_pieces(
      ny, nz, [&](std::int64_t y0, std::int64_t z0, unsigned gy, unsigned gz) {
        tessera::detail::launch(name, &points_kernel<Op>, dim3(gx, gy, gz), dim3(128),
                                static_cast<cudaStream_t>(stream), tile, op, nx, y0, z0);
      });
}

}  // namespace apps
#endif
