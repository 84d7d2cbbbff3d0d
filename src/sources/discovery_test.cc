#include "sources/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace cg_inject {
namespace {

namespace fs = std::filesystem;

// A temporary directory tree, removed even when an assertion fails.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string pattern = (fs::temp_directory_path() / "cg-inject-discovery-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path Touch(const std::string& relative) const {
    fs::path file = path_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "x";
    return file;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::string> Paths(const std::vector<SourceSpec>& specs) {
  std::vector<std::string> paths;
  for (const SourceSpec& spec : specs) paths.push_back(spec.path);
  return paths;
}

TEST(DiscoveryTest, FindsEveryConventionalPlaceInOrder) {
  ScopedTempDir root;
  root.Touch("tmp/perf-42.map");
  root.Touch("tmp/jit-42.dump");
  root.Touch("cwd/jit-42.dump");
  root.Touch("home/.debug/jit/llvm-b/jit-42.dump");
  root.Touch("home/.debug/jit/java-a/jit-42.dump");
  root.Touch("home/.debug/jit/java-a/jit-43.dump");  // another process
  root.Touch("extra/jit-42.dump");
  root.Touch("extra/perf-42.map");
  root.Touch("tmp/perf-420.map");  // not a prefix match
  DiscoveryRoots roots;
  roots.tmp_dir = (root.path() / "tmp").string();
  roots.cwd = (root.path() / "cwd").string();
  roots.home = (root.path() / "home").string();
  roots.jit_dirs = {(root.path() / "extra").string(), (root.path() / "missing").string()};
  std::vector<SourceSpec> found = DiscoverSources(42, roots);
  const std::string r = root.path().string();
  EXPECT_THAT(Paths(found), ::testing::ElementsAre(
                                r + "/tmp/perf-42.map", r + "/cwd/jit-42.dump",
                                r + "/tmp/jit-42.dump", r + "/home/.debug/jit/java-a/jit-42.dump",
                                r + "/home/.debug/jit/llvm-b/jit-42.dump", r + "/extra/jit-42.dump",
                                r + "/extra/perf-42.map"));
  EXPECT_EQ(found[0].kind, SourceKind::kPerfMap);
  EXPECT_EQ(found[1].kind, SourceKind::kJitdump);
  EXPECT_FALSE(found[0].explicit_file);
}

// JavaScriptCore (Bun) names its dump after its writer thread too: jit-TID-PID.dump in
// BUN_JSC_jitDumpDirectory, /tmp/jit-TID-PID-XXXXXX (mkstemp) without one.
TEST(DiscoveryTest, FindsJavaScriptCoreDumpsNamedAfterTheirThread) {
  ScopedTempDir root;
  root.Touch("cwd/jit-4544-4525.dump");
  root.Touch("tmp/jit-6543-4525-XyMmjS");
  root.Touch("tmp/jit-6544-4525.dump");
  root.Touch("extra/jit-77-4525.dump");
  root.Touch("cwd/jit-4544-45250.dump");   // another process
  root.Touch("cwd/jit-45-4525.dump.txt");  // not a dump's name
  root.Touch("cwd/jit-x1-4525.dump");      // no thread id
  root.Touch("tmp/jit-6543-4525-XyMmj");   // five letters
  root.Touch("cwd/jit-1-4525-XyMmjS");     // mkstemp's name only in /tmp
  DiscoveryRoots roots;
  roots.tmp_dir = (root.path() / "tmp").string();
  roots.cwd = (root.path() / "cwd").string();
  roots.jit_dirs = {(root.path() / "extra").string()};
  const std::string r = root.path().string();
  EXPECT_THAT(Paths(DiscoverSources(4525, roots)),
              ::testing::ElementsAre(r + "/cwd/jit-4544-4525.dump", r + "/tmp/jit-6543-4525-XyMmjS",
                                     r + "/tmp/jit-6544-4525.dump", r + "/extra/jit-77-4525.dump"));
}

// record finds the dumps Bun wrote into its directory by the pid in their headers.
TEST(DiscoveryTest, FindsJitdumpsByTheirHeadersPid) {
  ScopedTempDir root;
  auto write = [&](const std::string& name, uint32_t magic, uint32_t pid, size_t size) {
    std::string bytes(40, '\0');
    std::memcpy(bytes.data(), &magic, 4);
    std::memcpy(bytes.data() + 20, &pid, 4);
    bytes.resize(size);
    std::ofstream(root.path() / name, std::ios::binary) << bytes;
  };
  write("jit-1-4525.dump", 0x4A695444, 4525, 40);
  write("jit-2-9.dump", 0x4A695444, 4525, 40);                   // another name, this pid
  write("jit-3-4525.dump", 0x4A695444, 4526, 40);                // this name, another pid
  write("jit-4.dump", 0x4454694A, __builtin_bswap32(4525), 40);  // the other byte order
  write("jit-5.dump", 0x12345678, 4525, 40);                     // no jitdump
  write("jit-6.dump", 0x4A695444, 4525, 20);                     // cut inside the header
  write("perf-4525.map", 0x4A695444, 4525, 40);                  // not named jit-*
  const std::string r = root.path().string();
  EXPECT_THAT(
      FindJitdumpsOfProcess(r, 4525),
      ::testing::ElementsAre(r + "/jit-1-4525.dump", r + "/jit-2-9.dump", r + "/jit-4.dump"));
  EXPECT_THAT(FindJitdumpsOfProcess(r + "/missing", 4525), ::testing::IsEmpty());
}

TEST(DiscoveryTest, PidValues) {
  EXPECT_EQ(ParsePidValue("4242"), 4242u);
  EXPECT_EQ(ParsePidValue(" 4242 \r"), 4242u);
  EXPECT_EQ(ParsePidValue("4294967295"), 4294967295u);
  // Issue 22: "3999991abc" was read as 3999991 and that process's map used.
  for (const char* bad : {"3999991abc", "", " ", "0", "-1", "+5", "0x10", "12 34", "4294967296",
                          "99999999999999999999999"}) {
    EXPECT_EQ(ParsePidValue(bad), std::nullopt) << bad;
  }
}

TEST(DiscoveryTest, NothingThere) {
  ScopedTempDir root;
  DiscoveryRoots roots;
  roots.tmp_dir = root.path().string();
  roots.cwd = root.path().string();
  EXPECT_TRUE(DiscoverSources(7, roots).empty());
}

TEST(DiscoveryTest, SameFileReachedTwiceIsListedOnce) {
  ScopedTempDir root;
  root.Touch("jit-5.dump");
  DiscoveryRoots roots;
  roots.tmp_dir = root.path().string();  // cwd and tmp are the same directory
  roots.cwd = root.path().string();
  roots.jit_dirs = {root.path().string() + "/"};
  EXPECT_EQ(DiscoverSources(5, roots).size(), 1u);
}

TEST(DiscoveryTest, DirectoriesNamedLikeSourcesAreIgnored) {
  ScopedTempDir root;
  fs::create_directories(root.path() / "perf-5.map");
  DiscoveryRoots roots;
  roots.tmp_dir = root.path().string();
  roots.cwd = root.path().string();
  EXPECT_TRUE(DiscoverSources(5, roots).empty());
}

}  // namespace
}  // namespace cg_inject
