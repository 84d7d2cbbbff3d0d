#include "cli/valgrind_choice.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace cg_inject {
namespace {

namespace fs = std::filesystem;

class ValgrindChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("valgrind_choice_test." + std::to_string(::getpid()) + "." +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
    exe_ = (root_ / "bin" / "cg-inject").string();
  }
  void TearDown() override { fs::remove_all(root_); }
  // PREFIX/lib/cg-inject/valgrind with an executable bin/valgrind and libexec/valgrind/.
  void InstallBundled() {
    fs::path dir = root_ / "lib" / "cg-inject" / "valgrind";
    fs::create_directories(dir / "bin");
    fs::create_directories(dir / "libexec" / "valgrind");
    std::ofstream(dir / "bin" / "valgrind") << "#!/bin/sh\n";
    ::chmod((dir / "bin" / "valgrind").c_str(), 0755);
  }
  fs::path root_;
  std::string exe_;
};

TEST_F(ValgrindChoiceTest, PathValgrindWithoutABundledOne) {
  ValgrindChoice c = ChooseValgrind("", exe_);
  EXPECT_EQ(c.program, "valgrind");
  EXPECT_EQ(c.valgrind_lib, "");
  EXPECT_NE(c.message.find("valgrind from PATH"), std::string::npos) << c.message;
}

TEST_F(ValgrindChoiceTest, BundledValgrindBesideTheExecutable) {
  InstallBundled();
  ValgrindChoice c = ChooseValgrind("", exe_);
  std::string dir = (root_ / "lib" / "cg-inject" / "valgrind").string();
  EXPECT_EQ(c.program, dir + "/bin/valgrind");
  EXPECT_EQ(c.valgrind_lib, dir + "/libexec/valgrind");
  EXPECT_NE(c.message.find("installed with cg-inject (" + dir + ")"), std::string::npos)
      << c.message;
}

TEST_F(ValgrindChoiceTest, ExplicitValgrindOverridesTheBundledOne) {
  InstallBundled();
  ValgrindChoice c = ChooseValgrind("/opt/vg/bin/valgrind", exe_);
  EXPECT_EQ(c.program, "/opt/vg/bin/valgrind");
  EXPECT_EQ(c.valgrind_lib, "");
  // A bare name given with --valgrind is that name from PATH, not the bundled one.
  EXPECT_EQ(ChooseValgrind("valgrind", exe_).program, "valgrind");
}

TEST_F(ValgrindChoiceTest, ALauncherWithoutToolsIsNotUsed) {
  fs::path dir = root_ / "lib" / "cg-inject" / "valgrind";
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin" / "valgrind") << "#!/bin/sh\n";
  ::chmod((dir / "bin" / "valgrind").c_str(), 0755);
  EXPECT_EQ(ChooseValgrind("", exe_).program, "valgrind");
}

}  // namespace
}  // namespace cg_inject
