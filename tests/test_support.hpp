// Shared test helpers: runtime configurations, reproducible inputs, bitwise comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace test {

struct Config {
  const char* scheduler;
  int cpus;
};

inline void PrintTo(const Config& c, std::ostream* os) {
  *os << c.scheduler << " with " << c.cpus << " CPU worker(s)";
}

inline std::string config_name(const testing::TestParamInfo<Config>& info) {
  return std::string(info.param.scheduler) + "_" + std::to_string(info.param.cpus) + "cpu";
}

// The configurations every determinism test runs under (CPU workers only on this machine).
inline std::vector<Config> configs() {
  return {{"eager", 1}, {"eager", 2}, {"dmda", 1}, {"dmda", 2}, {"dmdas", 2}, {"random", 2}};
}

inline tessera::Options options(const Config& c) {
  tessera::Options o;
  o.scheduler = c.scheduler;
  o.cpu_workers = c.cpus;
  o.cuda_workers = 0;
  o.quiet = true;
  return o;
}

// A reproducible pseudo-random value in [0, 1) per global index.
template <int D>
double noise(tessera::Index<D> p) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  for (int a = 0; a < D; ++a) {
    h ^= static_cast<std::uint64_t>(p[a]) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return static_cast<double>(h >> 11) / 9007199254740992.0;
}

// Bitwise equality, reporting the first differing point.
template <class T>
void expect_bitwise_equal(const std::vector<T>& got, const std::vector<T>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      ADD_FAILURE() << "first difference at flat index " << i << ": got " << +got[i]
                    << ", reference " << +want[i];
      return;
    }
}

}  // namespace test
