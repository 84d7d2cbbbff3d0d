#include "sources/moar_jit_code.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

class MoarJitCodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = index_.AddSource({"/tmp/perf-9.map", "perf-map", "perf-9.map", 0, 0});
    other_ = index_.AddSource({"/tmp/perf-8.map", "perf-map", "perf-8.map", 0, 0});
  }
  void AddLine(uint64_t start, uint64_t size, uint32_t source) {
    CodeVersionSpec v;
    v.start = start;
    v.size = size;
    v.raw_name = "f";
    v.source = source;
    index_.Add(std::move(v));
  }
  SymbolIndex index_;
  uint32_t source_ = 0, other_ = 0;
};

TEST_F(MoarJitCodeTest, PairsFilesInNumberOrderWithTheMapLinesOfTheirSource) {
  AddLine(0x1000, 2, source_);
  AddLine(0x5000, 1, other_);
  AddLine(0x2000, 3, source_);
  AddLine(0x3000, 1, source_);
  // Numbered out of order on purpose; 10 sorts after 9 numerically, not as text.
  MoarCodeStats stats =
      AttachMoarCode({{10, "\xc3"}, {2, "\x90\x90\xc3"}, {1, "\x90\xc3"}}, source_, &index_);
  EXPECT_EQ(stats.files, 3);
  EXPECT_EQ(stats.lines, 3);
  EXPECT_EQ(stats.paired, 3);
  EXPECT_EQ(stats.size_mismatches, 0);
  EXPECT_EQ(index_.version(0).code(), "\x90\xc3");
  EXPECT_EQ(index_.version(1).code(), "");  // another map
  EXPECT_EQ(index_.version(2).code(), "\x90\x90\xc3");
  EXPECT_EQ(index_.version(3).code(), "\xc3");
  EXPECT_NE(index_.sources()[source_].elf_machine, 0u);
  EXPECT_EQ(index_.sources()[other_].elf_machine, 0u);
}

TEST_F(MoarJitCodeTest, SizeMismatchLeavesTheLineWithoutCodeAndIsCounted) {
  AddLine(0x1000, 2, source_);
  AddLine(0x2000, 5, source_);
  MoarCodeStats stats =
      AttachMoarCode({{1, "\x90\xc3"}, {2, "\x90\xc3"}, {3, "\xc3"}}, source_, &index_);
  EXPECT_EQ(stats.paired, 1);
  EXPECT_EQ(stats.size_mismatches, 1);
  EXPECT_EQ(stats.files, 3);
  EXPECT_EQ(index_.version(1).code(), "");
}

TEST_F(MoarJitCodeTest, NothingPairedKeepsTheSourceWithoutMachine) {
  AddLine(0x1000, 2, source_);
  MoarCodeStats stats = AttachMoarCode({{1, "\xc3"}}, source_, &index_);
  EXPECT_EQ(stats.paired, 0);
  EXPECT_EQ(index_.sources()[source_].elf_machine, 0u);
}

TEST(MoarJitCodeDirTest, FindsAndReadsTheDirectoryBesideTheMap) {
  char tmpl[] = "/tmp/cg-inject-moar-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  EXPECT_EQ(FindMoarCodeDir(dir + "/perf-42.map"), "");
  std::filesystem::create_directory(dir + "/moar-jit.42");
  std::ofstream(dir + "/moar-jit.42/moar-jit-0002.bin") << "bb";
  std::ofstream(dir + "/moar-jit.42/moar-jit-1.bin") << "a";
  std::ofstream(dir + "/moar-jit.42/notes.txt") << "x";
  EXPECT_EQ(FindMoarCodeDir(dir + "/perf-42.map"), dir + "/moar-jit.42");
  EXPECT_EQ(FindMoarCodeDir(dir + "/jit-42.dump"), "");
  std::vector<MoarCodeFile> files = ReadMoarCodeDir(dir + "/moar-jit.42");
  std::sort(files.begin(), files.end(),
            [](const MoarCodeFile& a, const MoarCodeFile& b) { return a.number < b.number; });
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].number, 1u);
  EXPECT_EQ(files[0].code, "a");
  EXPECT_EQ(files[1].number, 2u);
  EXPECT_EQ(files[1].code, "bb");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cg_inject
