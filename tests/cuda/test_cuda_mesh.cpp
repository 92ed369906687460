// Mesh loops on one CUDA worker and no CPU worker (so StarPU cannot fall back), or on the
// emulated device: Airfoil's five
// loops, halo-gather/import and inc-combine on the GPU give the serial reference's bits (the
// device adds each cell's increments in element order too: docs/mesh.md). Part of test_cuda,
// whose main skips (77) without a CUDA StarPU or a device.
#include <gtest/gtest.h>

#include "apps/airfoil/solver.hpp"
#include "tests/cuda/cuda_options.hpp"
#include "tests/reference/airfoil_reference.hpp"
#include "tests/test_support.hpp"

namespace {

class CudaMesh : public testing::TestWithParam<int> {};

TEST_P(CudaMesh, AirfoilOnTheGpuEqualsTheSerialReference) {
  tessera::Runtime rt(test::cuda_bodies_only("eager"));
  const apps::airfoil::Mesh m = apps::airfoil::generate_mesh(8, 12);
  apps::airfoil::Solver solver(m, GetParam(), tessera::Partitioner::Metis);
  reference::Airfoil ref(m);
  for (int iter = 1; iter <= 5; ++iter) {
    solver.iterate();
    ref.iterate();
#if TESSERA_TEST_NO_FMA
    test::expect_bitwise_equal(std::vector<double>{solver.rms(), solver.maxerr()},
                               {ref.rms(), ref.maxerr()});
#else
    EXPECT_NEAR(solver.rms(), ref.rms(), 1e-12 * ref.rms());
#endif
  }
#if TESSERA_TEST_NO_FMA
  test::expect_bitwise_equal(solver.q(), ref.q());
#endif
}

INSTANTIATE_TEST_SUITE_P(Tiles, CudaMesh, testing::Values(1, 4));

}  // namespace
