// The one CUDA launcher: every kernel of Tessera's CUDA bodies is launched by detail::launch,
// which checks the launch (a launch error becomes a tessera::Error naming the kernel, its grid
// and block, and the tile) and, in builds with the emulated device (TESSERA_EMULATE_CUDA,
// docs/gpu.md), runs the kernel on the calling CPU thread instead. TESSERA_CUDA_BODIES says
// whether the CUDA bodies are compiled: under nvcc, or for the emulated device.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define TESSERA_CUDA_BODIES 1
#elif defined(TESSERA_EMULATE_CUDA) && TESSERA_EMULATE_CUDA
#include "tessera/detail/cuda_emulation.hpp"
#define TESSERA_CUDA_BODIES 1
#else
#define TESSERA_CUDA_BODIES 0
#endif

#if TESSERA_CUDA_BODIES
#include "tessera/error.hpp"

namespace tessera::detail {

// CUDA's limits on a launch (compute capability 5.0 and later): grids over them are launched
// in pieces (in_pieces), and the emulated device refuses what a GPU would refuse.
constexpr std::uint64_t kMaxGridX = 2147483647u, kMaxGridYZ = 65535u;
constexpr unsigned kMaxBlockXY = 1024, kMaxBlockZ = 64, kMaxBlockThreads = 1024;

template <class F, class = void>
struct HasOrigin : std::false_type {};
template <class F>
struct HasOrigin<F, std::void_t<decltype(std::declval<const F&>().origin(0))>> : std::true_type {};

/// What a launch works on, for the message of a failed launch: a tile's points (origin and
/// extent), a mesh tile's elements, or a tile's list of region copies.
struct LaunchTile {
  enum class Kind { Points, Elements, Regions } kind = Kind::Points;
  std::int64_t origin[3] = {0, 0, 0}, extent[3] = {0, 0, 0};

  /// A tile frame's points (a frame without origin(): a box within the tile, at 0).
  template <class Frame>
  static LaunchTile points(const Frame& f) {
    LaunchTile t;
    for (int axis = 0; axis < 3; ++axis) {
      t.extent[axis] = f.extent(axis);
      if constexpr (HasOrigin<Frame>::value) t.origin[axis] = f.origin(axis);
    }
    return t;
  }
  static LaunchTile elements(std::int64_t n) { return {Kind::Elements, {0, 0, 0}, {n, 1, 1}}; }
  static LaunchTile regions(std::int64_t count, std::int64_t largest) {
    return {Kind::Regions, {0, 0, 0}, {count, largest, 1}};
  }

  std::string describe() const {
    const auto triple = [](const std::int64_t* v) {
      return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " +
             std::to_string(v[2]) + ")";
    };
    switch (kind) {
      case Kind::Points: return "the tile at " + triple(origin) + " of extent " + triple(extent);
      case Kind::Elements: return "a mesh tile of " + std::to_string(extent[0]) + " elements";
      case Kind::Regions:
        return "a tile's " + std::to_string(extent[0]) + " region copies (the largest " +
               std::to_string(extent[1]) + " points)";
    }
    return "";
  }
};

/// Whether a launch of `grid` x `block` is within CUDA's limits (every dimension at least 1).
inline bool within_limits(dim3 grid, dim3 block) {
  return grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= kMaxGridX && grid.y <= kMaxGridYZ &&
         grid.z <= kMaxGridYZ && block.x >= 1 && block.y >= 1 && block.z >= 1 &&
         block.x <= kMaxBlockXY && block.y <= kMaxBlockXY && block.z <= kMaxBlockZ &&
         std::uint64_t(block.x) * block.y * block.z <= kMaxBlockThreads;
}

[[noreturn]] inline void launch_failed(const char* kernel, dim3 grid, dim3 block,
                                       const LaunchTile& tile, cudaError_t e) {
  const auto dims = [](dim3 d) {
    return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) +
           ")";
  };
  throw Error("CUDA launch of " + std::string(kernel) + " with grid " + dims(grid) + " and block " +
              dims(block) + " for " + tile.describe() + " failed: " + cudaGetErrorString(e) + " (" +
              cudaGetErrorName(e) +
              "); CUDA allows grid.x <= 2^31-1, grid.y and grid.z <= 65535, at most 1024 threads "
              "per block and block.z <= 64");
}

/// The check of a CUDA call besides launches (cudaMemsetAsync, cudaMemcpyAsync): an error
/// throws tessera::Error naming the call and `tile`.
inline void check_call(cudaError_t e, const char* call, const LaunchTile& tile) {
  if (e != cudaSuccess)
    throw Error(std::string(call) + " for " + tile.describe() +
                " failed: " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

/// kernel<<<grid, block, 0, stream>>>(args...), then the check: a launch error throws
/// tessera::Error naming `name`, the grid and block, and `tile`. On the emulated device the
/// launch is checked against CUDA's limits and run on the calling thread.
template <class... P, class... A>
void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t stream,
            const LaunchTile& tile, const A&... args) {
#if defined(__CUDACC__)
  kernel<<<grid, block, 0, stream>>>(args...);
  const cudaError_t e = cudaGetLastError();
#else
  (void)stream;
  const cudaError_t e = within_limits(grid, block) ? cudaSuccess : cudaErrorInvalidConfiguration;
  if (e == cudaSuccess) emulation::run(name, kernel, grid, block, args...);
#endif
  if (e != cudaSuccess) launch_failed(name, grid, block, tile, e);
}

/// A grid of blocks_y x blocks_z blocks (along y and z) cut into launches within CUDA's limits:
/// piece(first_y, first_z, count_y, count_z) for each, in blocks.
template <class Piece>
void in_pieces(std::int64_t blocks_y, std::int64_t blocks_z, const Piece& piece) {
  const auto most = static_cast<std::int64_t>(kMaxGridYZ);
  for (std::int64_t z = 0; z < blocks_z; z += most)
    for (std::int64_t y = 0; y < blocks_y; y += most)
      piece(y, z, static_cast<unsigned>(blocks_y - y < most ? blocks_y - y : most),
            static_cast<unsigned>(blocks_z - z < most ? blocks_z - z : most));
}

/// Blocks of `threads` threads for n items of a grid-stride loop: at least 1, at most 65535.
inline unsigned blocks_for(std::int64_t n, unsigned threads) {
  const std::int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 65535 ? (b < 1 ? 1 : b) : 65535);
}

}  // namespace tessera::detail
#endif
