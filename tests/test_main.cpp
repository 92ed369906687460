// GoogleTest main: Tessera's runtime flags are stripped before GoogleTest sees argv. Each test
// starts its own Runtime, since tests vary the scheduler and worker count.
#include <gtest/gtest.h>

#include <tessera/runtime.hpp>

int main(int argc, char** argv) {
  tessera::parse_options(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
