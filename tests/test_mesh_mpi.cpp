// Mesh loops over several ranks (part of test_mpi, run under mpirun with 1 to 4 ranks, whose
// main starts the one Runtime): tiles spread over the ranks (owner compute), halos and
// increments crossing ranks through StarPU-MPI, give the serial reference's bits, and global
// reductions the same value for any rank count.

#include "apps/airfoil/solver.hpp"
#include "tests/reference/airfoil_reference.hpp"
#include "tests/test_support.hpp"

namespace {

struct Cut {
  tessera::Partitioner method;
  int tiles;
};

class DistributedAirfoil : public testing::TestWithParam<Cut> {};

TEST_P(DistributedAirfoil, EqualsTheSerialReferenceBitwise) {
  const apps::airfoil::Mesh m = apps::airfoil::generate_mesh(4, 6);
  apps::airfoil::Solver solver(m, GetParam().tiles, GetParam().method);
  reference::Airfoil ref(m);
  for (int iter = 1; iter <= 4; ++iter) {
    solver.iterate();
    ref.iterate();
    test::expect_bitwise_equal(std::vector<double>{solver.rms(), solver.maxerr()},
                               {ref.rms(), ref.maxerr()});
  }
  test::expect_bitwise_equal(solver.q(), ref.q());
}

INSTANTIATE_TEST_SUITE_P(
    Cuts, DistributedAirfoil,
    testing::Values(Cut{tessera::Partitioner::Block, 4}, Cut{tessera::Partitioner::Metis, 5}),
    [](const testing::TestParamInfo<Cut>& info) {
      return std::string(info.param.method == tessera::Partitioner::Metis ? "metis" : "block") +
             std::to_string(info.param.tiles);
    });

}  // namespace
