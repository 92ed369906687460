// GoogleTest main: Tessera's runtime flags are stripped before GoogleTest sees argv. Each test
// starts its own Runtime, since tests vary the scheduler and worker count.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <tessera/runtime.hpp>

namespace {
// gtest_discover_tests hands its PROPERTIES on as one flat list, so a test's ENVIRONMENT keeps
// only its first variable (the others became properties of their own, and the NUMA stand-in's
// tests ran without their topology). Tests that need several give them in TESSERA_TEST_ENV,
// "NAME=value" entries separated by '|', set here before anything reads them.
void set_test_environment() {
  const char* all = std::getenv("TESSERA_TEST_ENV");
  if (all == nullptr) return;
  const std::string list = all;
  for (std::size_t begin = 0; begin <= list.size();) {
    std::size_t end = list.find('|', begin);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(begin, end - begin);
    const std::size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0)
      setenv(entry.substr(0, eq).c_str(), entry.substr(eq + 1).c_str(), 1);
    begin = end + 1;
  }
}
}  // namespace

int main(int argc, char** argv) {
  set_test_environment();
  tessera::parse_options(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
