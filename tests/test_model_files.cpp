// The model-file checker (core/runtime/model_files.cpp): what StarPU 1.3 and 1.4 parse without
// aborting passes, what they assert on is named and moved aside, never removed (issue 72).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/runtime/model_files.hpp"

namespace mf = tessera::detail::model_files;

namespace {

// A history model as StarPU writes it: one combination (a CPU), one implementation, two entries.
const char* const kGoodModel =
    "##################\n# Performance Model Version\n45\n\n"
    "####################\n# COMBs\n# number of combinations\n1\n"
    "####################\n# COMB_0\n# number of types devices\n1\n"
    "####################\n# DEV_0\n# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3)\n0\n"
    "####################\n# DEV_0\n# device id \n0\n"
    "####################\n# DEV_0\n# number of cores \n1\n"
    "##########\n# number of implementations\n1\n"
    "#####\n# Model for cpu0_impl0 (Comb0)\n# number of entries\n2\n"
    "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n"
    "0.000000e+00\t0.000000e+00\t0.000000e+00\t0.000000e+00\tnan\tnan\t0\t0\t0\n"
    "# a\t\tb\t\tc\n"
    "nan\tnan\tnan\n"
    "# not multiple-regression-base\n0\n"
    "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n"
    "a3d0b4f1\t131072         \t0.000000e+00   \t1.500000e+01   \t2.000000e+00   \t"
    "3.000000e+01   \t4.580000e+02   \t2\n"
    "0b9e0c22\t65536          \t0.000000e+00   \t7.000000e+00   \t1.000000e+00   \t"
    "1.400000e+01   \t1.000000e+02   \t2\n"
    "\n";

class ModelFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/tessera-models-XXXXXX";
    dir_ = mkdtemp(name);
    ASSERT_EQ(std::system(("mkdir -p " + dir_ + "/codelets/45 " + dir_ + "/bus").c_str()), 0);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string replaced(std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  }
  static bool exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
  }
  std::string dir_;
};

}  // namespace

TEST_F(ModelFiles, StarPUsOwnModelPasses) {
  EXPECT_EQ(mf::model_damage(write("codelets/45/tessera.a", kGoodModel)), "");
  EXPECT_EQ(mf::model_damage(write("codelets/45/tessera.e", "")), "");  // StarPU skips it
}

TEST_F(ModelFiles, WhatStarPUAssertsOnIsNamed) {
  const std::string good = kGoodModel;
  EXPECT_NE(mf::model_damage(write("t1", "garbage text\n")), "");
  EXPECT_NE(mf::model_damage(write("t2", good.substr(0, good.size() / 2))), "");
  EXPECT_NE(mf::model_damage(write("t3", good.substr(0, good.size() - 2))), "");
  EXPECT_NE(mf::model_damage(write("t4", replaced(good, "1.500000e+01", "nan"))), "");
  EXPECT_NE(mf::model_damage(write("t5", replaced(good, "1.500000e+01", "-1e300"))), "");
  EXPECT_NE(mf::model_damage(write("t6", replaced(good, "\n45\n", "\n44\n"))), "");
  EXPECT_NE(mf::model_damage(write("t7", replaced(good, "2.000000e+00", "-2"))), "");
  EXPECT_NE(mf::model_damage(
                write("t8", replaced(good, "combinations\n1\n", "combinations\n999999999\n"))),
            "");
  EXPECT_NE(mf::model_damage(write("t9", std::string("\x7f"
                                                     "ELF\0\1\2",
                                                     7))),
            "");
  EXPECT_NE(mf::model_damage(dir_ + "/codelets"), "");  // a directory
  EXPECT_NE(
      mf::model_damage(write("t10", replaced(good, "\t2\n", "\t2" + std::string(300, ' ') + "\n"))),
      "");
  EXPECT_EQ(mf::model_damage(
                write("t11", replaced(good, "0.000000e+00   \t1.500000e+01", "nan\t1.500000e+01"))),
            "");  // NaN flops: StarPU's "no flops"
  EXPECT_NE(mf::model_damage(write("t12", replaced(good, "a3d0b4f1\t131072         \t0.000000e+00",
                                                   "a3d0b4f1\t131072         \t-5"))),
            "");  // negative flops
}

TEST_F(ModelFiles, BusFiles) {
  EXPECT_EQ(mf::bus_damage(write("bus/h.config",
                                 "# Current configuration\n4 # Number of CPUs\n1 # Number of NUMA "
                                 "nodes\n0 # Number of CUDA nodes\n")),
            "");
  EXPECT_NE(mf::bus_damage(write("bus/g.config", "garbage\n")), "");
  EXPECT_NE(mf::bus_damage(write("bus/e.config", "")), "");
  EXPECT_NE(mf::bus_damage(write("bus/c.config", "# Current configuration\n")), "");
  EXPECT_EQ(mf::bus_damage(write("bus/h.affinity", "# GPU\tNUMA in preference order\n")), "");
  EXPECT_EQ(mf::bus_damage(write("bus/g.affinity", "# GPU\tNUMA\n# CUDA\n0\t0\t\n1\t0\t\n")), "");
  EXPECT_NE(mf::bus_damage(write("bus/e.affinity", "")), "");
  EXPECT_NE(mf::bus_damage(write("bus/o.affinity", "# GPU\tNUMA\n# CUDA\n1\t0\t\n")), "");
  // CUDA's rows, then OpenCL's numbered from 0 again without a comment between (as StarPU writes
  // them, and the simulation's platforms hold them): not damaged.
  EXPECT_EQ(mf::bus_damage(
                write("bus/k.affinity", "# GPU\tCPU0\tCPU1\n0\t0\t1\n1\t0\t1\n0\t0\t1\n1\t0\t1\n")),
            "");
  EXPECT_NE(mf::bus_damage(write("bus/j.affinity", "# GPU\tCPU0\n0\t0\n2\t0\n")), "");
  EXPECT_EQ(mf::bus_damage(write("bus/h.latency", "# lat\n0.000000\t1.500000\tnan\t\n1.5\t0\t\n")),
            "");
  EXPECT_NE(mf::bus_damage(write("bus/g.latency", "fast slow\n")), "");
  EXPECT_NE(mf::bus_damage(write("bus/n.latency", "-7\t1\n")), "");
  EXPECT_NE(mf::bus_damage(write("bus/e.bandwidth", "")), "");
}

TEST_F(ModelFiles, DamagedFilesAreMovedAsideNeverRemoved) {
  write("codelets/45/tessera.good", kGoodModel);
  const std::string bad = write("codelets/45/tessera.bad", "garbage\n");
  write("codelets/45/tessera.bad.damaged-1", "a user's file\n");
  write("codelets/45/other.bad", "not Tessera's: left alone\n");
  const auto lines = mf::quarantine_damaged(dir_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("tessera.bad is damaged"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("moved aside to " + bad + ".damaged-2"), std::string::npos) << lines[0];
  EXPECT_FALSE(exists(bad));
  std::ifstream user(bad + ".damaged-1");
  std::string first;
  std::getline(user, first);
  EXPECT_EQ(first, "a user's file");
  EXPECT_TRUE(exists(dir_ + "/codelets/45/tessera.good"));
  EXPECT_TRUE(exists(dir_ + "/codelets/45/other.bad"));
  EXPECT_TRUE(mf::quarantine_damaged(dir_).empty());  // said once
}

TEST_F(ModelFiles, ADamagedBusFileMovesTheHostsCalibration) {
  setenv("STARPU_HOSTNAME", "testhost", 1);
  write("bus/testhost.config", "garbage\n");
  write("bus/testhost.latency", "0\t1\n");
  write("bus/otherhost.config", "garbage\n");
  const auto lines = mf::quarantine_damaged(dir_);
  unsetenv("STARPU_HOSTNAME");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("its latency files too"), std::string::npos) << lines[0];
  EXPECT_TRUE(exists(dir_ + "/bus/testhost.config.damaged-1"));
  EXPECT_TRUE(exists(dir_ + "/bus/testhost.latency.damaged-1"));
  EXPECT_TRUE(exists(dir_ + "/bus/otherhost.config"));  // another host's: not read here
}
