#include "rewrite/version_lines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "resolve/name_table.h"

namespace cg_inject {
namespace {

class VersionLinesTest : public ::testing::Test {
 protected:
  VersionLinesTest() {
    source_ = index_.AddSource({"/tmp/jit-1.dump", "jitdump", "jit-1.dump", 0});
    // A line table over two files, rows from 0x1010; and the same function's file without one.
    Add(0x1000, 0x40, "f", "main.js", 10, {{0x1010, 11, 0, 0}, {0x1020, 30, 0, 1}});
    Add(0x2000, 0x20, "g", "main.js", 40, {});
    Add(0x3000, 0x20, "h", "", 0, {{0x3000, 7, 0, 1}});  // file only in its table
    Add(0x4000, 0x20, "k", "", 0, {});                   // nothing known
    // BEAM's prologues (jitdump names, as ParseErlang reads them): right before their function;
    // before another function; with a gap before their function.
    Add(0x5000, 0x30, "m:f/1", "", 0, {}, "m:f/1-CodeInfoPrologue");
    Add(0x5030, 0x40, "m:f/1", "m.erl", 3, {}, "m:f/1");
    Add(0x6000, 0x30, "m:g/1", "", 0, {}, "m:g/1-CodeInfoPrologue");
    Add(0x6030, 0x40, "m:h/1", "m.erl", 9, {}, "m:h/1");
    Add(0x7000, 0x30, "m:k/1", "", 0, {}, "m:k/1-CodeInfoPrologue");
    Add(0x7040, 0x40, "m:k/1", "m.erl", 12, {}, "m:k/1");
    index_.Finish();
  }
  void Add(uint64_t start, uint64_t size, std::string_view name, std::string_view file,
           uint32_t line, std::vector<LineEntry> rows, std::string_view raw_name = {}) {
    CodeVersionSpec v;
    v.start = start;
    v.size = size;
    v.raw_name = raw_name.empty() ? name : raw_name;
    v.function_name = name;
    v.source_file = file;
    v.source_line = line;
    v.source = source_;
    v.files = files_;
    v.lines = rows;
    index_.Add(v);
  }
  const CodeVersion& At(uint64_t addr) { return *index_.Lookup(addr); }
  // (line, file text) of `addr` in the version there.
  std::pair<uint32_t, std::string> LineAt(VersionLines* lines, uint64_t addr) {
    uint32_t line = 0, file = 0;
    lines->LineOf(At(addr), addr, &line, &file);
    return {line, std::string(names_.Text(file))};
  }

  std::vector<std::string_view> files_{"main.js", "lib/util.js"};
  SymbolIndex index_;
  uint32_t source_ = 0;
  NameTable names_;
};

TEST_F(VersionLinesTest, ARowOfTheLineTableElseTheVersionsOwnLine) {
  VersionLines lines(index_, &names_);
  EXPECT_EQ(LineAt(&lines, 0x1000), std::pair(10u, std::string("main.js")));  // before any row
  EXPECT_EQ(LineAt(&lines, 0x1014), std::pair(11u, std::string("main.js")));
  EXPECT_EQ(LineAt(&lines, 0x1020), std::pair(30u, std::string("lib/util.js")));
  EXPECT_EQ(LineAt(&lines, 0x103f), std::pair(30u, std::string("lib/util.js")));
  EXPECT_EQ(LineAt(&lines, 0x2010), std::pair(40u, std::string("main.js")));  // no table
  // Back to a version asked before: its tables again, not the last version's.
  EXPECT_EQ(LineAt(&lines, 0x1018), std::pair(11u, std::string("main.js")));
  // Outside the version: its own line, whatever its table says.
  uint32_t line = 0, file = 0;
  lines.LineOf(At(0x1000), 0x1040, &line, &file);
  EXPECT_EQ(line, 10u);
}

TEST_F(VersionLinesTest, TheFileIsTheVersionsOwnElseItsTablesFirstElseUnknown) {
  VersionLines lines(index_, &names_);
  EXPECT_EQ(names_.Text(lines.FileOf(At(0x1000))), "main.js");
  EXPECT_EQ(names_.Text(lines.FileOf(At(0x3000))), "lib/util.js");
  EXPECT_EQ(names_.Text(lines.FileOf(At(0x4000))), "???");
  EXPECT_EQ(FileText(At(0x3000)), "lib/util.js");
}

TEST_F(VersionLinesTest, FileIdsAreTheNameTablesOnePerText) {
  VersionLines lines(index_, &names_);
  uint32_t a = lines.FileOf(At(0x1000));
  uint32_t b = lines.FileOf(At(0x2000));  // the same text, interned once
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, names_.Intern("main.js").id);
  EXPECT_NE(lines.FileOf(At(0x3000)), a);
  EXPECT_EQ(lines.FileOf(At(0x1000)), a);  // cached: still the same
}

// A prologue is its function's: the file and line of the function that starts where it ends (not
// its own `???`), for its addresses and as its definition; any other version has no owner.
TEST_F(VersionLinesTest, ABeamPrologueTakesItsFunctionsFileAndLine) {
  EXPECT_EQ(PrologueOwner(index_, At(0x5000)), &At(0x5030));
  EXPECT_EQ(PrologueOwner(index_, At(0x5030)), nullptr);  // the function itself
  EXPECT_EQ(PrologueOwner(index_, At(0x6000)), nullptr);  // another function follows
  EXPECT_EQ(PrologueOwner(index_, At(0x7000)), nullptr);  // not adjacent
  EXPECT_EQ(PrologueOwner(index_, At(0x1000)), nullptr);
  VersionLines lines(index_, &names_);
  EXPECT_EQ(LineAt(&lines, 0x5028), std::pair(3u, std::string("m.erl")));
  EXPECT_EQ(LineAt(&lines, 0x5030), std::pair(3u, std::string("m.erl")));
  EXPECT_EQ(LineAt(&lines, 0x6028), std::pair(0u, std::string("???")));
  EXPECT_EQ(LineAt(&lines, 0x7028), std::pair(0u, std::string("???")));
}

// A row answers anywhere up to the next row's address, whatever the order of the questions, and
// only for its own version: the last row reaches to the end of the address space, not into
// another version's code.
TEST_F(VersionLinesTest, RowsAnswerInAnyOrderAndOnlyForTheirVersion) {
  VersionLines lines(index_, &names_);
  auto expected = [](uint64_t addr) {
    if (addr < 0x1010) return std::pair(10u, std::string("main.js"));
    if (addr < 0x1020) return std::pair(11u, std::string("main.js"));
    return std::pair(30u, std::string("lib/util.js"));
  };
  std::vector<uint64_t> addrs;
  for (uint64_t addr = 0x1000; addr < 0x1040; ++addr) addrs.push_back(addr);
  std::vector<uint64_t> questions = addrs;
  questions.insert(questions.end(), addrs.rbegin(), addrs.rend());
  std::mt19937 random(7);
  std::shuffle(addrs.begin(), addrs.end(), random);
  questions.insert(questions.end(), addrs.begin(), addrs.end());
  for (uint64_t addr : questions)
    EXPECT_EQ(LineAt(&lines, addr), expected(addr)) << std::hex << addr;
  EXPECT_EQ(LineAt(&lines, 0x103f), std::pair(30u, std::string("lib/util.js")));  // the last row
  EXPECT_EQ(LineAt(&lines, 0x3010), std::pair(7u, std::string("lib/util.js")));   // h's own
}

}  // namespace
}  // namespace cg_inject
