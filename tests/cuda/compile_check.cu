// Compiles the CUDA implementations of the application stencils and reductions with nvcc,
// so a machine without a GPU still proves the device code builds (nothing runs here).
#include <tessera/mesh.hpp>
#include <tessera/tessera.hpp>

#include "apps/airfoil/solver.hpp"
#include "apps/cardiac/cardiac.hpp"
#include "apps/cloudsim/cloudsim.hpp"
#include "apps/heat3d/heat3d.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"
#include "apps/life/life.hpp"

// A user boundary function: its task's CPU and CUDA bodies from the one functor.
struct CompileCheckInflow {
  double speed;
  TESSERA_HD double operator()(tessera::Index<3> ghost, double mirrored) const {
    return ghost[1] < 4 ? speed : 2.0 * speed - mirrored;
  }
};

namespace tessera::detail {
template struct Interior<3, apps::Heat3d, TypeList<double>, TypeList<double>>;
template struct Interior<2, apps::Jacobi2d, TypeList<float, float>, TypeList<float>>;
template struct Interior<2, apps::Life, TypeList<std::uint8_t>, TypeList<std::uint8_t>>;
template struct TilePoints<3, ReduceValue<AsDouble<double>, Sum>, TypeList<In<double>>,
                           TypeList<Sum>>;
template struct TilePoints<2, ReduceValue<AsDouble<std::uint8_t>, Max>, TypeList<In<std::uint8_t>>,
                           TypeList<Max>>;
// A stencil with a field updated in place, loops (in place, with fused reductions: the row and
// fold kernels) and centre-only inputs.
template struct Interior<2, apps::CardiacPoint<2>, TypeList<double>, TypeList<double>,
                         TypeList<double>>;
template struct TilePoints<3, apps::CardiacReaction<3>, TypeList<InOut<double>, InOut<double>>,
                           TypeList<>>;
template struct TilePoints<2, apps::Extrema<2>, TypeList<In<double>>, TypeList<Min, Max>>;
template struct Interior<2, apps::CloudStep, TypeList<float, float, float>, TypeList<float>>;
// A stencil on a box (Stencil::apply(box, ...)), with an accumulating in-place field.
template struct Interior<3, InBox<3, apps::Heat3d>, TypeList<double>, TypeList<double>>;
template struct Interior<2, InBox<2, apps::CardiacPoint<2>>, TypeList<double>, TypeList<double>,
                         TypeList<double>>;
template struct TilePoints<2, apps::CloudCells, TypeList<In<float>>, TypeList<Sum, Min, Max>>;
// Mesh loops: the CUDA implementation of Airfoil's increment loop and of its reductions.
template struct MeshLoop<apps::airfoil::ResCalc, double, double, double, double, double, double,
                         double, double>;
template struct MeshLoop<apps::airfoil::Update, double, double, double, double, double, double>;
template struct GhostFunctionTask<CompileCheckInflow, double, 3>;
// Temporal blocks: several steps per task, one launch per step and window box.
template struct TimeBlock<3, apps::Heat3d, double, TypeList<>, TypeList<>>;
template struct TimeBlock<2, apps::Life, std::uint8_t, TypeList<>, TypeList<>>;
template struct TimeBlock<2, apps::CardiacPoint<2>, double, TypeList<>, TypeList<double>>;
}  // namespace tessera::detail

tessera::detail::KernelFn boundary_function_cuda_entry() {
  return tessera::boundary_function("inflow", CompileCheckInflow{1.0}).function->kind.cuda;
}

// The entries a CUDA-enabled StarPU would be given.
tessera::detail::KernelFn heat3d_cuda_entry() {
  return tessera::detail::Interior<3, apps::Heat3d, tessera::detail::TypeList<double>,
                                   tessera::detail::TypeList<double>>::kind()
      .cuda;
}

tessera::detail::KernelFn res_calc_cuda_entry() {
  return tessera::detail::MeshLoop<apps::airfoil::ResCalc, double, double, double, double, double,
                                   double, double, double>::kind()
      .cuda;
}
