// Compiles the CUDA implementations of the application stencils and reductions with nvcc,
// so a machine without a GPU still proves the device code builds (nothing runs here).
#include <tessera/tessera.hpp>

#include <tessera/mesh.hpp>

#include "apps/airfoil/solver.hpp"
#include "apps/heat3d/heat3d.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"
#include "apps/life/life.hpp"

namespace tessera::detail {
template struct Interior<3, apps::Heat3d, TypeList<double>, TypeList<double>>;
template struct Interior<2, apps::Jacobi2d, TypeList<float, float>, TypeList<float>>;
template struct Interior<2, apps::Life, TypeList<std::uint8_t>, TypeList<std::uint8_t>>;
template struct TileReduce<double, ReduceOp::Sum, AsDouble<double>>;
template struct TileReduce<std::uint8_t, ReduceOp::Max, AsDouble<std::uint8_t>>;
// Mesh loops: the CUDA implementation of Airfoil's increment loop and of its reductions.
template struct MeshLoop<apps::airfoil::ResCalc, double, double, double, double, double, double, double, double>;
template struct MeshLoop<apps::airfoil::Update, double, double, double, double, double, double>;
}  // namespace tessera::detail

// The entries a CUDA-enabled StarPU would be given.
tessera::detail::KernelFn heat3d_cuda_entry() {
  return tessera::detail::Interior<3, apps::Heat3d, tessera::detail::TypeList<double>,
                                   tessera::detail::TypeList<double>>::kind().cuda;
}

tessera::detail::KernelFn res_calc_cuda_entry() {
  return tessera::detail::MeshLoop<apps::airfoil::ResCalc, double, double, double, double, double, double, double,
                                   double>::kind().cuda;
}
