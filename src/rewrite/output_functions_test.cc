#include "rewrite/output_functions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cg_inject/symbols.h"
#include "resolve/name_table.h"

namespace cg_inject {
namespace {

class OutputFunctionsTest : public ::testing::Test {
 protected:
  OutputFunctionsTest() {
    uint32_t map = index_.AddSource({"/tmp/perf-7.map", "perf-map", "", 0});
    uint32_t dump = index_.AddSource({"/tmp/jit-7.dump", "jitdump", "jit-7.dump", 0});
    // Two tiers of one definition, moved: one function.
    Add(dump, 0x1000, 0x40, "f", "app.js", 3);
    Add(dump, 0x5000, 0x40, "f", "app.js", 3);
    // Two definitions of `get` in one file: told apart by their lines.
    Add(dump, 0x2000, 0x20, "get", "app.js", 10);
    Add(dump, 0x3000, 0x20, "get", "app.js", 20);
    Add(dump, 0x4000, 0x20, "", "", 0);  // nameless
    Add(map, 0x6000, 0x20, "h", "", 0);  // a source without an object name: its path
    // BEAM's prologue, no line table of its own, right before its function (ParseErlang's names).
    Add(dump, 0x7000, 0x30, "m:f/1", "", 0, "m:f/1-CodeInfoPrologue");
    Add(dump, 0x7030, 0x40, "m:f/1", "m.erl", 3);
    index_.Finish();
  }
  void Add(uint32_t source, uint64_t start, uint64_t size, std::string_view name,
           std::string_view file, uint32_t line, std::string_view raw_name = {}) {
    CodeVersionSpec v;
    v.start = start;
    v.size = size;
    v.raw_name = raw_name.empty() ? name : raw_name;
    v.function_name = name;
    v.source_file = file;
    v.source_line = line;
    v.definition_line = line;
    v.source = source;
    index_.Add(v);
  }
  const CodeVersion* At(uint64_t addr) { return index_.Lookup(addr); }
  std::string Name(const OutputFunctions& out, int i) {
    const FunctionKey& k = out[i].key;
    return std::string(names_.Text(k.object)) + "|" + std::string(names_.Text(k.file)) + "|" +
           std::string(names_.Text(k.function));
  }

  SymbolIndex index_;
  NameTable names_;
};

TEST_F(OutputFunctionsTest, OneFunctionPerKeyInOrderOfFirstUse) {
  OutputFunctions out(index_, {}, &names_);
  FunctionKey a{1, 2, 3}, b{1, 2, 4};  // ids of any table: it only compares them
  EXPECT_EQ(out.Find(a), -1);
  EXPECT_EQ(out.For(a, /*jit=*/false), 0);
  EXPECT_EQ(out.For(b, /*jit=*/true), 1);
  EXPECT_EQ(out.For(a, /*jit=*/true), 0);  // known: its first kind stays
  EXPECT_FALSE(out[0].jit);
  EXPECT_TRUE(out[1].jit);
  EXPECT_EQ(out.Find(b), 1);
  int count = 0;
  for (const OutFunction& f : out) count += f.key == a || f.key == b;
  EXPECT_EQ(count, 2);
}

TEST_F(OutputFunctionsTest, VersionsOfOneDefinitionShareAFunction) {
  OutputFunctions out(index_, {}, &names_);
  int f = out.Identity(At(0x1000), 0);
  EXPECT_EQ(out.Identity(At(0x5000), 0), f);
  EXPECT_TRUE(out[f].jit);
  EXPECT_EQ(Name(out, f), "jit-7.dump|app.js|f");
  EXPECT_EQ(Name(out, out.Identity(At(0x6000), 0)), "/tmp/perf-7.map|???|h");
  EXPECT_EQ(Name(out, out.Identity(At(0x4000), 0)), "jit-7.dump|???|jit@16384");
}

TEST_F(OutputFunctionsTest, DefinitionsSharingANameSayWhereTheyAre) {
  OutputFunctions out(index_, {}, &names_);
  int get10 = out.Identity(At(0x2000), 0);
  int get20 = out.Identity(At(0x3000), 0);
  EXPECT_NE(get10, get20);
  EXPECT_NE(Name(out, get10).find("|get:10"), std::string::npos) << Name(out, get10);
  EXPECT_NE(Name(out, get20).find("|get:20"), std::string::npos) << Name(out, get20);
  EXPECT_EQ(out.disambiguated_groups(), 1);
}

TEST_F(OutputFunctionsTest, ARecursionSuffixIsAFunctionOfItsOwn) {
  OutputFunctions out(index_, {}, &names_);
  uint32_t suffix = names_.Intern("'2").id;
  int plain = out.Identity(At(0x1000), 0);
  int deep = out.Identity(At(0x1000), suffix);
  EXPECT_NE(plain, deep);
  EXPECT_EQ(Name(out, deep), "jit-7.dump|app.js|f'2");
  EXPECT_EQ(out.Identity(At(0x5000), suffix), deep);
}

// The prologue is its function's: one function, also for Callgrind's recursion copies (entered
// at the prologue's last bytes), instead of a second `m:f/1` in `???`.
TEST_F(OutputFunctionsTest, ABeamPrologueIsItsFunction) {
  OutputFunctions out(index_, {}, &names_);
  int f = out.Identity(At(0x7030), 0);
  EXPECT_EQ(out.Identity(At(0x7000), 0), f);
  EXPECT_EQ(Name(out, f), "jit-7.dump|m.erl|m:f/1");
  uint32_t suffix = names_.Intern("'2").id;
  EXPECT_EQ(out.Identity(At(0x7028), suffix), out.Identity(At(0x7030), suffix));
  EXPECT_EQ(Name(out, out.Identity(At(0x7028), suffix)), "jit-7.dump|m.erl|m:f/1'2");
}

TEST_F(OutputFunctionsTest, VersionObjectsNameTheImageThatHoldsTheCode) {
  std::vector<std::string> objects(index_.size());
  objects[At(0x5000)->load_order()] = "/out/jit-7.dump.elf";
  OutputFunctions out(index_, objects, &names_);
  EXPECT_EQ(Name(out, out.Identity(At(0x5000), 0)), "/out/jit-7.dump.elf|app.js|f");
  EXPECT_EQ(Name(out, out.Identity(At(0x1000), 0)), "jit-7.dump|app.js|f");  // empty entry
}

// Issue 33 defect 2: a definition whose versions sit in two ELF images has one name in both.
// Two definitions of `createNodeArray` (lines 100 and 200) share image 1; line 100's code was
// JITed again where other code had been, so that version is in image 2, where no other
// `createNodeArray` is. Its name there was the bare `createNodeArray` beside
// `createNodeArray:100` in image 1: one function in two spellings.
TEST(OutputFunctionsImagesTest, ADefinitionHasOneNameInEveryImage) {
  SymbolIndex index;
  uint32_t dump = index.AddSource({"/tmp/jit-7.dump", "jitdump", "jit-7.dump", 0});
  auto add = [&](uint64_t start, uint32_t line) {
    CodeVersionSpec v;
    v.start = start;
    v.size = 0x40;
    v.raw_name = v.function_name = "createNodeArray";
    v.source_file = "tsc.js";
    v.source_line = v.definition_line = line;
    v.source = dump;
    index.Add(v);
  };
  add(0x1000, 100);
  add(0x2000, 200);
  add(0x3000, 100);
  index.Finish();
  std::vector<std::string> objects(index.size(), "/out/p.jit-7.dump.elf");
  objects[index.Lookup(0x3000)->load_order()] = "/out/p.jit-7.dump.2.elf";
  NameTable names;
  OutputFunctions out(index, objects, &names);
  auto name = [&](uint64_t addr) {
    const FunctionKey& k = out[out.Identity(index.Lookup(addr), 0)].key;
    return std::string(names.Text(k.object)) + "|" + std::string(names.Text(k.function));
  };
  EXPECT_EQ(name(0x1000), "/out/p.jit-7.dump.elf|createNodeArray:100");
  EXPECT_EQ(name(0x2000), "/out/p.jit-7.dump.elf|createNodeArray:200");
  EXPECT_EQ(name(0x3000), "/out/p.jit-7.dump.2.elf|createNodeArray:100");
  // Without images: the same names.
  NameTable plain_names;
  OutputFunctions plain(index, {}, &plain_names);
  EXPECT_EQ(plain_names.Text(plain[plain.Identity(index.Lookup(0x3000), 0)].key.function),
            "createNodeArray:100");
}

TEST_F(OutputFunctionsTest, ClearForgetsFunctionsAndIdentities) {
  OutputFunctions out(index_, {}, &names_);
  FunctionKey main{names_.Intern("/bin/app").id, names_.Intern("app.c").id,
                   names_.Intern("main").id};
  EXPECT_EQ(out.For(main, false), 0);
  EXPECT_EQ(out.Identity(At(0x1000), 0), 1);
  out.Clear();
  EXPECT_TRUE(out.begin() == out.end());
  EXPECT_EQ(out.Find(main), -1);
  EXPECT_EQ(out.Identity(At(0x1000), 0), 0);  // made again, not the stale index
  EXPECT_EQ(Name(out, 0), "jit-7.dump|app.js|f");
}

}  // namespace
}  // namespace cg_inject
