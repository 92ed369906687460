// The main of the test programs run under mpirun: one Runtime for all tests (they are
// collective, so every rank runs every test), and only rank 0 prints GoogleTest's report.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include <tessera/runtime.hpp>

namespace test {

inline int run_mpi_tests(int argc, char** argv, tessera::Runtime*& runtime) {
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
  // Every test that ran skipped (GTEST_SKIP: no CUDA workers, a rank count it does not fit):
  // 77, which CTest reports as Skipped (SKIP_RETURN_CODE), not Passed; mpirun passes it on.
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  if (failed == 0 && unit.test_to_run_count() > 0 &&
      unit.skipped_test_count() == unit.test_to_run_count())
    return 77;
  return failed;
}

}  // namespace test
