// Mesh loops over several ranks (run under mpirun with 1 to 3 ranks): tiles spread over the
// ranks (owner compute), halos and increments crossing ranks through StarPU-MPI, give the serial
// reference's bits, and global reductions the same value for any rank count.
#include <memory>

#include "apps/airfoil/solver.hpp"
#include "tests/reference/airfoil_reference.hpp"
#include "tests/test_support.hpp"

namespace {

tessera::Runtime* runtime = nullptr;

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
    test::expect_bitwise_equal(std::vector<double>{solver.rms(), solver.maxerr()}, {ref.rms(), ref.maxerr()});
  }
  test::expect_bitwise_equal(solver.q(), ref.q());
}

INSTANTIATE_TEST_SUITE_P(Cuts, DistributedAirfoil,
                         testing::Values(Cut{tessera::Partitioner::Block, 3}, Cut{tessera::Partitioner::Metis, 5}),
                         [](const testing::TestParamInfo<Cut>& info) {
                           return std::string(info.param.method == tessera::Partitioner::Metis ? "metis" : "block") +
                                  std::to_string(info.param.tiles);
                         });

}  // namespace

int main(int argc, char** argv) {
  tessera::Options options = tessera::parse_options(argc, argv);
  options.quiet = true;
  testing::InitGoogleTest(&argc, argv);
  auto rt = std::make_unique<tessera::Runtime>(options);
  runtime = rt.get();
  if (rt->rank() != 0)
    delete testing::UnitTest::GetInstance()->listeners().Release(
        testing::UnitTest::GetInstance()->listeners().default_result_printer());
  const int failed = RUN_ALL_TESTS();
  rt.reset();
  return failed;
}
