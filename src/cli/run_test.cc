// End-to-end tests of the entry function on small files in a temporary directory: what reaches
// the output file, what is said on stderr, and which exit code results.
#include "cli/run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "callgrind/callgrind_reader.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/io.h"
#include "cli/options.h"

namespace cg_inject {
namespace {

namespace fs = std::filesystem;

// A JIT function 0x...1000 called from main, calling a second JIT function; one stub no source
// covers; pid 4242 for discovery.
constexpr std::string_view kJitProfile =
    "# callgrind format\n"
    "version: 1\n"
    "creator: callgrind-3.19.0\n"
    "pid: 4242\n"
    "cmd: ./jit\n"
    "positions: line\n"
    "events: Ir\n"
    "summary: 1111\n"
    "\n"
    "ob=/usr/bin/jit\n"
    "fl=main.c\n"
    "fn=main\n"
    "10 100\n"
    "cob=???\n"
    "cfi=???\n"
    "cfn=0x0000000004a2e000\n"
    "calls=3 0\n"
    "11 1000\n"
    "\n"
    "ob=???\n"
    "fl=???\n"
    "fn=0x0000000004a2e000\n"
    "0 900\n"
    "cfn=0x0000000004a2f000\n"
    "calls=3 0\n"
    "0 100\n"
    "\n"
    "fn=0x0000000004a2f000\n"
    "0 100\n"
    "\n"
    "fn=0x0000000000000010\n"
    "0 11\n"
    "totals: 1111\n";

constexpr std::string_view kPerfMap =
    "4a2e000 100 LazyCompile:~outer /app/a.js:10\n"
    "4a2f000 80 LazyCompile:~inner /app/a.js:20\n";

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cg_inject_run_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "tmp");
    env_.roots.tmp_dir = (dir_ / "tmp").string();
    env_.roots.cwd = dir_.string();
    env_.roots.home = "";
    err_ = std::tmpfile();
    env_.err = err_;
  }
  void TearDown() override {
    std::fclose(err_);
    fs::remove_all(dir_);
  }
  std::string Write(const std::string& name, std::string_view content) {
    std::string path = (dir_ / name).string();
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string Stderr() {
    std::fflush(err_);
    std::rewind(err_);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, err_)) > 0) text.append(buf, n);
    return text;
  }
  ExitCode Run(std::vector<std::string_view> args) {
    ParsedCommandLine parsed = ParseCommandLine(args);
    EXPECT_EQ(parsed.error, "");
    return RunCgInject(parsed.options, env_);
  }
  std::vector<std::string> FilesIn(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  static ProfileSummary Summarize(const std::string& path) {
    ProfileSummary summary;
    std::unique_ptr<ByteSource> in = OpenInput(path);
    ReadCallgrind(*in, summary);
    return summary;
  }

  fs::path dir_;
  RunEnvironment env_;
  std::FILE* err_ = nullptr;
};

TEST_F(RunTest, WithoutSourcesTheProfileIsUnchanged) {
  std::string in = Write("callgrind.out.4242", kJitProfile);
  std::string out = (dir_ / "out").string();
  ASSERT_EQ(Run({"-i", in, "-o", out}), ExitCode::kOk) << Stderr();
  EXPECT_EQ(CompareSummaries(Summarize(in), Summarize(out)), "");
  EXPECT_NE(Stderr().find("no symbol source (none found for pid 4242"), std::string::npos);
  EXPECT_EQ(Slurp(in), kJitProfile);  // the input is never modified
}

TEST_F(RunTest, DiscoveredPerfMapNamesBothSidesOfTheCall) {
  Write("tmp/perf-4242.map", kPerfMap);
  std::string in = Write("callgrind.out.4242", kJitProfile);
  std::string out = (dir_ / "out").string();
  ASSERT_EQ(Run({"-i", in, "-o", out, "--no-compress"}), ExitCode::kOk) << Stderr();
  EXPECT_NE(Stderr().find("using perf map " + (dir_ / "tmp" / "perf-4242.map").string()),
            std::string::npos)
      << Stderr();
  std::string text = Slurp(out);
  EXPECT_EQ(text.find("0x0000000004a2e000"), std::string::npos) << text;
  EXPECT_EQ(text.find("0x0000000004a2f000"), std::string::npos) << text;
  // The stub no source covers keeps its name.
  EXPECT_NE(text.find("fn=0x0000000000000010"), std::string::npos) << text;
  ProfileSummary summary = Summarize(out);
  ASSERT_EQ(summary.parts().size(), 1u);
  const PartSummary& part = summary.parts()[0];
  EXPECT_EQ(part.totals, std::vector<uint64_t>{1111});
  FunctionKey outer{"perf-4242.map", "/app/a.js", "outer"};
  FunctionKey inner{"perf-4242.map", "/app/a.js", "inner"};
  FunctionKey main_fn{"/usr/bin/jit", "main.c", "main"};
  ASSERT_TRUE(part.functions.count(outer)) << summary.ToText();
  EXPECT_EQ(part.functions.at(outer).self, std::vector<uint64_t>{900});
  EXPECT_EQ(part.functions.at(outer).inclusive, std::vector<uint64_t>{1000});
  ASSERT_TRUE(part.calls.count({main_fn, outer})) << summary.ToText();
  EXPECT_EQ(part.calls.at({main_fn, outer}).count, 3u);
  ASSERT_TRUE(part.calls.count({outer, inner})) << summary.ToText();
}

TEST_F(RunTest, ExplicitSourceWinsOverDiscoveredOne) {
  Write("tmp/perf-4242.map", kPerfMap);
  std::string mine = Write("mine.map", "4a2e000 100 explicit_outer\n");
  std::string in = Write("callgrind.out.4242", kJitProfile);
  std::string out = (dir_ / "out").string();
  ASSERT_EQ(Run({"-i", in, "-o", out, "--perf-map", mine}), ExitCode::kOk) << Stderr();
  // Both were used (the discovered one still names inner) ...
  EXPECT_NE(Stderr().find("using perf map " + mine), std::string::npos) << Stderr();
  EXPECT_NE(Stderr().find("perf-4242.map"), std::string::npos) << Stderr();
  ProfileSummary summary = Summarize(out);
  const PartSummary& part = summary.parts()[0];
  // ... but where they overlap the explicit file names the code.
  EXPECT_TRUE(part.functions.count({"mine.map", "???", "explicit_outer"})) << summary.ToText();
  EXPECT_TRUE(part.functions.count({"perf-4242.map", "/app/a.js", "inner"}));
}

TEST_F(RunTest, JitDirIsSearchedByPid) {
  Write("elsewhere/perf-4242.map", kPerfMap);
  std::string in = Write("callgrind.out.4242", kJitProfile);
  std::string out = (dir_ / "out").string();
  ASSERT_EQ(Run({"-i", in, "-o", out, "--jit-dir", (dir_ / "elsewhere").string()}), ExitCode::kOk);
  EXPECT_NE(Stderr().find("using perf map " + (dir_ / "elsewhere" / "perf-4242.map").string()),
            std::string::npos)
      << Stderr();
  EXPECT_EQ(Slurp(out).find("0x0000000004a2e000"), std::string::npos);
}

TEST_F(RunTest, MalformedInputLeavesNoOutput) {
  std::string in = Write("bad.out", "# callgrind format\nevents: Ir\nfn=f\n10 x\n");
  std::string out = (dir_ / "out" / "result").string();
  fs::create_directories(dir_ / "out");
  EXPECT_EQ(Run({"-i", in, "-o", out}), ExitCode::kInputError);
  std::string err = Stderr();
  EXPECT_NE(err.find("\ncg-inject: " + in +
                     ":4: expected a cost (a decimal or 0x hex number), got 'x'\n"),
            std::string::npos)
      << err;
  EXPECT_TRUE(FilesIn(dir_ / "out").empty());
}

TEST_F(RunTest, ExistingOutputSurvivesAFailedRun) {
  std::string in = Write("bad.out", "# callgrind format\nevents: Ir\nfn=f\n10 x\n");
  std::string out = Write("keep", "old contents");
  EXPECT_EQ(Run({"-i", in, "-o", out}), ExitCode::kInputError);
  EXPECT_EQ(Slurp(out), "old contents");
}

TEST_F(RunTest, MissingExplicitSourceIsAnError) {
  std::string in = Write("callgrind.out.1", kJitProfile);
  EXPECT_EQ(
      Run({"-i", in, "-o", (dir_ / "o").string(), "--perf-map", (dir_ / "nope.map").string()}),
      ExitCode::kInputError);
  EXPECT_NE(Stderr().find("nope.map"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

TEST_F(RunTest, EmptyMainFilePointsAtPerThreadFiles) {
  std::string in = Write("callgrind.out.9", "");
  Write("callgrind.out.9-01", kJitProfile);
  EXPECT_EQ(Run({"-i", in, "-o", (dir_ / "o").string()}), ExitCode::kInputError);
  EXPECT_NE(Stderr().find("callgrind.out.9-01"), std::string::npos) << Stderr();
}

TEST_F(RunTest, CallgraphJsonAndZstdOutput) {
  std::string in = Write("callgrind.out.4242", kJitProfile);
  std::string map = Write("m.map", kPerfMap);
  std::string out = (dir_ / "out.zst").string();
  std::string json = (dir_ / "graph.json").string();
  ASSERT_EQ(Run({"-i", in, "-o", out, "--perf-map", map, "--callgraph", json, "--no-discover"}),
            ExitCode::kOk)
      << Stderr();
  std::string compressed = Slurp(out);
  ASSERT_GE(compressed.size(), 4u);
  EXPECT_EQ(compressed.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
  EXPECT_NE(Slurp(json).find("outer"), std::string::npos);
  EXPECT_EQ(Summarize(out).parts()[0].totals, std::vector<uint64_t>{1111});
}

TEST_F(RunTest, SeveralInputsOneOutputEach) {
  std::string a = Write("callgrind.out.4242.1", kJitProfile);
  std::string b = Write("callgrind.out.4242.2", kJitProfile);
  std::string map = Write("m.map", kPerfMap);
  ASSERT_EQ(Run({a, b, "--perf-map", map}), ExitCode::kOk) << Stderr();
  EXPECT_TRUE(fs::exists(a + ".jit"));
  EXPECT_TRUE(fs::exists(b + ".jit"));
}

}  // namespace
}  // namespace cg_inject
