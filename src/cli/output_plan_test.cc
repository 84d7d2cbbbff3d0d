#include "cli/output_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cg_inject/error.h"
#include "cli/options.h"

namespace cg_inject {
namespace {

namespace fs = std::filesystem;

class OutputPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cg_inject_plan_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Touch(const std::string& name, std::string_view content = "") {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << content;
    return path;
  }
  fs::path dir_;
};

TEST_F(OutputPlanTest, OneInputDefaultsToStdout) {
  CliOptions o;
  o.inputs = {Touch("callgrind.out.1", "x")};
  std::vector<PlannedOutput> plan = PlanOutputs(o);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].output, "-");
  EXPECT_FALSE(plan[0].zstd);
}

TEST_F(OutputPlanTest, ZstdFromName) {
  CliOptions o;
  o.inputs = {Touch("a", "x")};
  o.output = (dir_ / "out.zst").string();
  EXPECT_TRUE(PlanOutputs(o)[0].zstd);
}

TEST_F(OutputPlanTest, SeveralInputsGetSuffixOrDirectory) {
  CliOptions o;
  std::string a = Touch("callgrind.out.7.1", "x"), b = Touch("callgrind.out.7.2", "x");
  o.inputs = {a, b};
  std::vector<PlannedOutput> plan = PlanOutputs(o);
  EXPECT_EQ(plan[0].output, a + ".jit");
  EXPECT_EQ(plan[1].output, b + ".jit");

  fs::create_directories(dir_ / "out");
  o.output = (dir_ / "out").string();
  plan = PlanOutputs(o);
  EXPECT_EQ(plan[1].output, (dir_ / "out" / "callgrind.out.7.2.jit").string());

  o.output = (dir_ / "missing").string();
  EXPECT_THROW(PlanOutputs(o), InputError);
}

TEST_F(OutputPlanTest, OutputThatIsTheInputNeedsInPlace) {
  CliOptions o;
  std::string a = Touch("p", "x");
  o.inputs = {a};
  o.output = (dir_ / "." / "p").string();  // same file under another spelling
  try {
    PlanOutputs(o);
    FAIL() << "expected a refusal";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              o.output + ": output is the input file " + a + "; use --in-place to replace it");
  }
  o.in_place = true;
  EXPECT_EQ(PlanOutputs(o)[0].output, o.output);
}

// The message of PlanOutputs' refusal, or "" when it plans.
std::string Refusal(const CliOptions& o) {
  try {
    PlanOutputs(o);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST_F(OutputPlanTest, SymbolSourceIsNeverAnOutputEvenInPlace) {
  CliOptions o;
  o.inputs = {Touch("p", "x")};
  std::string map = Touch("perf-1.map", "1 2 f\n");
  o.perf_maps = {map};
  o.output = map;
  for (bool in_place : {false, true}) {
    o.in_place = in_place;
    EXPECT_EQ(Refusal(o), map + ": output is the perf map " + map +
                              "; refusing to replace what this run reads");
  }
  o.output = (dir_ / "out").string();
  o.callgraph_path = map;
  EXPECT_EQ(Refusal(o), map + ": --callgraph output is the perf map " + map +
                            "; refusing to replace what this run reads");
}

TEST_F(OutputPlanTest, CallgraphAndOutputMustDiffer) {
  CliOptions o;
  o.inputs = {Touch("p", "x")};
  o.output = (dir_ / "out").string();  // not there yet: compared by name
  o.callgraph_path = (dir_ / "." / "out").string();
  EXPECT_EQ(Refusal(o), o.callgraph_path +
                            ": the --callgraph output is also the output: one would overwrite "
                            "the other; give them different names");
  o.callgraph_path = "-";
  EXPECT_EQ(Refusal(o), "");
  o.output = "";  // the profile to stdout too
  EXPECT_EQ(Refusal(o),
            "-: the --callgraph output and the output would both go to standard output; give "
            "one of them a file");
}

TEST_F(OutputPlanTest, OneBasenameTwiceIntoOneDirectoryIsRefused) {
  fs::create_directories(dir_ / "x");
  fs::create_directories(dir_ / "y");
  fs::create_directories(dir_ / "out");
  CliOptions o;
  std::string x = Touch("x/callgrind.out", "x"), y = Touch("y/callgrind.out", "x");
  o.inputs = {x, y};
  o.output = (dir_ / "out").string();
  EXPECT_EQ(Refusal(o), (dir_ / "out" / "callgrind.out.jit").string() + ": the output of " + y +
                            " is also the output of " + x +
                            ": one would overwrite the other; run inputs with one basename "
                            "separately");
}

TEST_F(OutputPlanTest, PerThreadSiblingsOfAnEmptyFile) {
  std::string main_file = Touch("callgrind.out.42");
  Touch("callgrind.out.42-02", "x");
  Touch("callgrind.out.42-01", "x");
  Touch("callgrind.out.42-xx", "x");  // not a thread number
  Touch("callgrind.out.421-01", "x");
  EXPECT_EQ(FindPerThreadSiblings(main_file),
            (std::vector<std::string>{(dir_ / "callgrind.out.42-01").string(),
                                      (dir_ / "callgrind.out.42-02").string()}));
  // A non-empty file is a profile of its own.
  EXPECT_TRUE(FindPerThreadSiblings(Touch("callgrind.out.43", "x")).empty());
}

}  // namespace
}  // namespace cg_inject
