// User boundary functions: the ghost values of a face given by a TESSERA_HD functor of the ghost
// point's global index and the mirrored interior value, run on CPU (Kokkos) and CUDA workers.
//   struct Inflow {
//     double speed;
//     TESSERA_HD double operator()(tessera::Index<3> ghost, double mirrored) const {
//       return ghost[1] < 8 ? speed : mirrored;
//     }
//   };
//   auto bc = tessera::Boundaries<3>::all(tessera::Boundary::neumann())
//                 .set(0, 0, tessera::boundary_function("inflow", Inflow{2.0}));
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "tessera/boundary.hpp"
#include "tessera/detail/boundary_function.hpp"
#include "tessera/detail/kernel_launch.hpp"
#include "tessera/field.hpp"
#include "tessera/index.hpp"

namespace tessera {

namespace detail {

/// The field a boundary functor fits, read from its one call operator T(Index<D>, T) const.
template <class Op>
struct GhostSignature {
  static constexpr bool valid = false;
};
template <class C, class T, int D>
struct GhostSignature<T (C::*)(Index<D>, T) const> {
  static constexpr bool valid = true;
  using value_type = T;
  static constexpr int dims = D;
};
template <class F, class = void>
struct GhostSignatureOf : GhostSignature<void> {};
template <class F>
struct GhostSignatureOf<F, std::void_t<decltype(&F::operator())>>
    : GhostSignature<decltype(&F::operator())> {};

#if TESSERA_CUDA_BODIES
// blockIdx.y selects the region; threads stride over its points, x fastest.
template <class K>
__global__ void ghost_function_kernel(typename K::Args a, typename K::Value* tile) {
  const FunctionGhostRegion& g = a.list.region[blockIdx.y];
  const std::int64_t n0 = g.dims[0], n01 = g.dims[0] * g.dims[1], total = n01 * g.dims[2];
  for (std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; p < total;
       p += std::int64_t(gridDim.x) * blockDim.x)
    K::point(a, tile, static_cast<int>(blockIdx.y), p % n0, (p % n01) / n0, p / n01);
}
#endif

/// The task kind of a boundary functor F on Field<T, D>: ghost = f(global index, ghost) over
/// the regions of its argument block's list, in the tile (the task's only buffer).
template <class F, class T, int D>
struct GhostFunctionTask {
  using Value = T;
  struct Args {
    FunctionGhostList list;  // first: the library writes it at offset 0
    F f;
  };

  /// The one place the user's functor is called, by both backends.
  TESSERA_HD static void point(const Args& a, T* tile, int r, std::int64_t i, std::int64_t j,
                               std::int64_t k) {
    const FunctionGhostRegion& g = a.list.region[r];
    T* p = tile + g.start + i * g.stride[0] + j * g.stride[1] + k * g.stride[2];
    Index<D> ghost;
    ghost[0] = g.origin[0] + i;
    ghost[1] = g.origin[1] + j;
    if constexpr (D == 3) ghost[2] = g.origin[2] + k;
    *p = a.f(ghost, *p);
  }

  static void cpu(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    T* tile = static_cast<T*>(buffer_data(buffers, 0));
    for (int r = 0; r < a.list.count; ++r) {
      const FunctionGhostRegion& g = a.list.region[r];
      parallel_rows(g.dims[1], g.dims[2], [&](std::int64_t j, std::int64_t k) {
        for (std::int64_t i = 0; i < g.dims[0]; ++i) point(a, tile, r, i, j, k);
      });
    }
  }

#if TESSERA_CUDA_BODIES
  static void cuda(void** buffers, void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    std::int64_t largest = 1;
    for (int r = 0; r < a.list.count; ++r) {
      const FunctionGhostRegion& g = a.list.region[r];
      const std::int64_t points = g.dims[0] * g.dims[1] * g.dims[2];
      largest = largest > points ? largest : points;
    }
    if (a.list.count == 0) return;
    const unsigned threads = 128;
    const unsigned blocks = static_cast<unsigned>(
        (largest + threads - 1) / threads < 1024 ? (largest + threads - 1) / threads : 1024);
    launch("ghost_function_kernel", &ghost_function_kernel<GhostFunctionTask>,
           dim3(blocks, static_cast<unsigned>(a.list.count)), dim3(threads),
           static_cast<cudaStream_t>(cuda_stream()), LaunchTile::regions(a.list.count, largest), a,
           static_cast<T*>(buffer_data(buffers, 0)));
  }
#endif

  static TaskKind kind() {
#if TESSERA_CUDA_BODIES
    return {"boundary-function", Access::ReadWrite, Access::Read, &cpu, &cuda};
#else
    return {"boundary-function", Access::ReadWrite, Access::Read, &cpu, nullptr};
#endif
  }
};

}  // namespace detail

/// A boundary condition given by the user: each ghost point of the face gets
/// f(ghost, mirrored), where `ghost` is the ghost point's global index (outside the grid along
/// the face's axis: -1, -2, ... or n, n+1, ...) and `mirrored` the interior value a Neumann
/// face would give it (ghost -1-i mirrors interior i). F is trivially copyable with one call
/// operator `TESSERA_HD T operator()(tessera::Index<D>, T) const`, which fixes the fields it
/// fits (Field<T, D>). `name` names its tasks and performance model (letters, digits, '_',
/// '-'); one name, one functor type.
template <class F>
Boundary boundary_function(const std::string& name, const F& f) {
  static_assert(std::is_trivially_copyable_v<F>,
                "a boundary functor is copied to every task and to the GPU: make it trivially "
                "copyable (plain data members, no std::vector or references)");
  using Signature = detail::GhostSignatureOf<F>;
  static_assert(Signature::valid,
                "a boundary functor needs exactly one call operator "
                "`TESSERA_HD T operator()(tessera::Index<D> ghost, T mirrored) const`");
  using T = typename Signature::value_type;
  using Task = detail::GhostFunctionTask<F, T, Signature::dims>;
  auto fn = std::make_shared<detail::BoundaryFunction>();
  fn->name = detail::check_name("boundary function", name);
  fn->dims = Signature::dims;
  fn->type_name = detail::element_name<T>();
  fn->kind = Task::kind();
  const typename Task::Args prototype{{}, f};
  fn->prototype.resize(sizeof(prototype));
  std::memcpy(fn->prototype.data(), &prototype, sizeof(prototype));
  Boundary b;
  b.kind = Boundary::Kind::Function;
  b.function = std::move(fn);
  return b;
}

}  // namespace tessera
