// Checkpoint and restart (tessera::Checkpoint, tessera::Restart): a run restarted from step 3
// of another run, with another tiling and schedule, ends bitwise where the uninterrupted run
// ends; a truncated or corrupted checkpoint is refused with a message that says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/io/tile_files.hpp"  // fnv1a: the manifest's checksum, to forge one
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;

struct Average {
  TESSERA_HD void operator()(tessera::Index<3>, tessera::In<double> u,
                             tessera::Out<double> o) const {
    o = (u(1, 0, 0) + u(-1, 0, 0) + u(0, 1, 0) + u(0, -1, 0) + u(0, 0, 1) + u(0, 0, -1)) / 6.0 +
        0.01 * u();
  }
};

const tessera::Index<3> kSize{12, 9, 7};

// Runs steps [first, last) of the average on `tile`; checkpoints at step `at` (if >= 0) into
// `dir`, restarts from `restart` (if not empty); returns the field at the end.
std::vector<double> run(const test::Config& c, tessera::Index<3> tile, int first, int last, int at,
                        const std::string& dir, const std::string& restart) {
  tessera::Runtime rt(test::options(c));
  const tessera::Grid<3> grid(kSize, tile);
  auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(1.0));
  tessera::Field<double, 3> u(grid, 1, bc, "u"), v(grid, 1, bc, "v");
  u.fill([](tessera::Index<3> i) { return test::noise(i); });
  if (!restart.empty()) {
    tessera::Restart r(restart);
    EXPECT_EQ(r.step(), first);
    EXPECT_EQ(r.about(), "average 12x9x7");
    r.restore("u", u);
  }
  tessera::Stencil<3> s("average", tessera::Shape::Star, 1);
  std::unique_ptr<tessera::Checkpoint> ck;
  for (int step = first; step < last; ++step) {
    if (step == at) {
      ck = std::make_unique<tessera::Checkpoint>(dir, step, "average 12x9x7");
      ck->add("u", u);  // written while the next steps run
    }
    s.apply(Average{}, tessera::in(u), tessera::out(v));
    tessera::swap(u, v);
  }
  if (ck) ck->commit();
  return u.gather();
}

std::string fresh(const std::string& name) {
  const std::string dir = testing::TempDir() + "tessera_ckpt_" + name;
  fs::remove_all(dir);
  return dir;
}

TEST(Checkpoint, RestartWithAnotherTilingIsBitwiseTheUninterruptedRun) {
  const std::string dir = fresh("tiling") + "/step-3";
  const auto whole = run({"eager", 1}, {12, 9, 7}, 0, 6, -1, "", "");
  const auto written = run({"dmda", 2}, {5, 4, 7}, 0, 6, 3, dir, "");
  test::expect_bitwise_equal(written, whole);  // checkpointing changes nothing
  EXPECT_TRUE(fs::exists(dir + "/manifest"));
  EXPECT_FALSE(fs::exists(dir + ".partial"));
  const auto restarted = run({"random", 2}, {4, 3, 2}, 3, 6, -1, "", dir);
  test::expect_bitwise_equal(restarted, whole);
  // A second checkpoint of the same name replaces the first whole.
  run({"eager", 2}, {6, 9, 7}, 0, 6, 3, dir, "");
  test::expect_bitwise_equal(run({"eager", 1}, {12, 9, 7}, 3, 6, -1, "", dir), whole);
}

TEST(Checkpoint, StalePartialsAreRemovedOnceAndCompleteCheckpointsKept) {
  const std::string parent = fresh("stale");
  run({"eager", 1}, {6, 9, 7}, 0, 2, 1, parent + "/step-1", "");  // a complete checkpoint
  // What a run killed while writing two checkpoints leaves: directories with the checkpoint
  // writer's marker and some tile files.
  for (const char* stale : {"/step-2.partial", "/step-4.partial"}) {
    fs::create_directories(parent + stale);
    std::ofstream(parent + stale + "/tessera-checkpoint") << "marker";
    std::ofstream(parent + stale + "/u_0.bin") << "half a tile";
  }
  // A user's own directory whose name ends in .partial, without the marker: not Tessera's.
  fs::create_directories(parent + "/mydata.partial");
  std::ofstream(parent + "/mydata.partial/results.txt") << "the user's data";
  testing::internal::CaptureStderr();
  run({"eager", 1}, {6, 9, 7}, 0, 4, 3, parent + "/step-3", "");
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, HasSubstr("removed 2 partial checkpoints in " + parent));
  EXPECT_THAT(said, HasSubstr("step-2.partial, step-4.partial"));
  EXPECT_THAT(said, Not(HasSubstr("mydata")));
  EXPECT_FALSE(fs::exists(parent + "/step-2.partial"));
  EXPECT_FALSE(fs::exists(parent + "/step-4.partial"));
  EXPECT_TRUE(fs::exists(parent + "/mydata.partial/results.txt"));  // the user's stays
  EXPECT_TRUE(fs::exists(parent + "/step-1/manifest"));             // complete ones stay
  EXPECT_TRUE(fs::exists(parent + "/step-3/manifest"));
}

// A directory in the way of a checkpoint's DIR.partial that the checkpoint writer did not make
// is refused with its name, not removed.
TEST(Checkpoint, PartialNameInUseByTheUserIsRefusedNotRemoved) {
  const std::string parent = fresh("user-partial");
  fs::create_directories(parent + "/step-5.partial");
  std::ofstream(parent + "/step-5.partial/notes.txt") << "the user's data";
  std::string error = "no error";
  try {
    run({"eager", 1}, {6, 9, 7}, 0, 6, 5, parent + "/step-5", "");
  } catch (const tessera::Error& e) { error = e.what(); }
  EXPECT_THAT(error, HasSubstr(parent + "/step-5.partial exists and was not made by a Tessera "
                                        "checkpoint (it has no file tessera-checkpoint)"));
  EXPECT_TRUE(fs::exists(parent + "/step-5.partial/notes.txt"));
}

std::string restart_error(const std::string& dir) {
  tessera::Runtime rt(test::options({"eager", 1}));
  const tessera::Grid<3> grid(kSize, {6, 9, 7});
  tessera::Field<double, 3> u(grid, 1, {}, "u");
  try {
    tessera::Restart r(dir);
    r.restore("u", u);
  } catch (const tessera::Error& e) { return e.what(); }
  return "no error";
}

TEST(Checkpoint, TruncatedOrCorruptedCheckpointsAreRefused) {
  const std::string dir = fresh("bad") + "/step-2";
  run({"eager", 1}, {6, 9, 7}, 0, 3, 2, dir, "");
  const auto copy = [&](const std::string& name) {
    const std::string to = fresh(name);
    fs::copy(dir, to);
    return to;
  };
  {  // a flipped byte in a tile file
    const std::string d = copy("flipped");
    std::fstream f(d + "/u_1.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(17);
    f.put('\x5a');
    f.close();
    EXPECT_THAT(restart_error(d), HasSubstr("tile file u_1.bin is corrupted"));
  }
  {  // a truncated tile file
    const std::string d = copy("short");
    fs::resize_file(d + "/u_0.bin", 100);
    EXPECT_THAT(restart_error(d), HasSubstr("tile file u_0.bin is missing or truncated"));
  }
  {  // a truncated manifest
    const std::string d = copy("manifest");
    fs::resize_file(d + "/manifest", fs::file_size(d + "/manifest") - 5);
    EXPECT_THAT(restart_error(d), HasSubstr("manifest is truncated or corrupted"));
  }
  {  // no manifest: a checkpoint whose writing did not finish
    const std::string d = copy("unfinished");
    fs::remove(d + "/manifest");
    EXPECT_THAT(restart_error(d), HasSubstr("has no manifest"));
  }
  {  // a manifest, checksum intact, whose field claims 2^40 tiles: refused before allocating
    const std::string d = copy("huge");
    std::ifstream in(d + "/manifest");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text = text.substr(0, text.rfind("end "));
    const std::size_t at = text.find("field u double 3 12 9 7 ");
    ASSERT_NE(at, std::string::npos);
    const std::size_t count = at + std::string("field u double 3 12 9 7 ").size();
    text = text.substr(0, count) + "1099511627776" + text.substr(text.find('\n', count));
    char sum[17];
    std::snprintf(
        sum, sizeof(sum), "%016llx",
        static_cast<unsigned long long>(tessera::detail::fnv1a(text.data(), text.size())));
    std::ofstream(d + "/manifest", std::ios::binary | std::ios::trunc)
        << text << "end " << sum << "\n";
    EXPECT_THAT(restart_error(d), HasSubstr("claims 1099511627776 tiles, more than its manifest"));
  }
  EXPECT_THAT(restart_error(dir + "-missing"), HasSubstr("it does not exist"));
  // Another grid size.
  tessera::Runtime rt(test::options({"eager", 1}));
  tessera::Field<double, 3> small(tessera::Grid<3>({6, 9, 7}, {6, 9, 7}), 1, {}, "u");
  tessera::Restart r(dir);
  try {
    r.restore("u", small);
    FAIL() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("restart with the same --size"));
  }
  EXPECT_THROW(r.restore("w", small), tessera::Error);
}

}  // namespace
