#include "rewrite/input_functions.h"

#include <gtest/gtest.h>

#include <string>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "resolve/name_table.h"
#include "rewrite/object_code.h"
#include "rewrite/rewrite_test_util.h"

namespace cg_inject {
namespace {

using testing::AddVersion;
using testing::FakeExtents;

class InputFunctionsTest : public ::testing::Test {
 protected:
  // Before the members that read the index: ObjectCode takes its address span when made.
  static bool BuildIndex(SymbolIndex* index) {
    uint32_t source = index->AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
    AddVersion(index, source, 0x40000000, 0x100, "f");
    AddVersion(index, source, 0x40001000, 0x100, "g");
    AddVersion(index, source, 0x40001000, 0x80, "g2");  // reused code: two versions at one entry
    AddVersion(index, source, 0x1000100, 0x80, "Builtin:Add");
    index->Finish();
    return true;
  }
  FunctionKey Key(std::string_view object, std::string_view function) {
    return {names_.Intern(object).id, names_.Intern("???").id, names_.Intern(function).id};
  }

  SymbolIndex index_;
  bool built_ = BuildIndex(&index_);
  FakeExtents extents_ = FakeExtents::Node(0x1000000, 0x2000000);
  NameTable names_;
  ObjectCode objects_{index_, &extents_, &names_};
  InputFunctions in_{index_, objects_, &names_};
};

TEST_F(InputFunctionsTest, AJitLookingFunctionGetsAnEntryOnItsFirstBlock) {
  bool added = false;
  FunctionKey f = Key("???", "0x0000000040000000");
  int i = in_.ForBlock(f, &added);
  ASSERT_GE(i, 0);
  EXPECT_TRUE(added);
  EXPECT_TRUE(in_[i].unnamed);
  EXPECT_TRUE(in_[i].jit);
  EXPECT_EQ(in_[i].entry, 0x40000000u);
  EXPECT_TRUE(in_[i].lone_entry);
  EXPECT_EQ(in_[i].suffix, 0u);
  EXPECT_EQ(in_.ForBlock(f, &added), i);  // a later block: the same entry
  EXPECT_FALSE(added);
  EXPECT_EQ(in_.Find(f), i);

  int reused = in_.ForBlock(Key("???", "0x40001000'2"), &added);
  EXPECT_TRUE(in_[reused].jit);
  EXPECT_FALSE(in_[reused].lone_entry);
  EXPECT_EQ(names_.Text(in_[reused].suffix), "'2");

  // Looks like JIT code, but no source covers it: an entry, not resolved.
  int uncovered = in_.ForBlock(Key("???", "0x0000000050000000"), &added);
  EXPECT_TRUE(added);
  EXPECT_TRUE(in_[uncovered].unnamed);
  EXPECT_FALSE(in_[uncovered].jit);
}

TEST_F(InputFunctionsTest, OrdinaryFunctionsShareOneScratchEntry) {
  bool added = true;
  FunctionKey main = Key("/usr/bin/node", "main");
  EXPECT_EQ(in_.ForBlock(main, &added), InputFunctions::kOrdinary);
  EXPECT_FALSE(added);
  EXPECT_EQ(in_[InputFunctions::kOrdinary].key, main);
  EXPECT_FALSE(in_[InputFunctions::kOrdinary].unnamed);
  // An address name in a real object is not JIT-looking either.
  FunctionKey other = Key("/lib/libc.so.6", "0x0000000040000000");
  EXPECT_EQ(in_.ForBlock(other, &added), InputFunctions::kOrdinary);
  EXPECT_EQ(in_[InputFunctions::kOrdinary].key, other);
  EXPECT_EQ(in_.Find(main), -1);
}

TEST_F(InputFunctionsTest, JitTargetsAreAnsweredWithOrWithoutABlock) {
  uint64_t addr = 0;
  uint32_t suffix = 0;
  int known = 7;
  FunctionKey g = Key("???", "0x40001000'3");
  EXPECT_TRUE(in_.IsJitTarget(g, &addr, &suffix, &known));
  EXPECT_EQ(addr, 0x40001000u);
  EXPECT_EQ(names_.Text(suffix), "'3");
  EXPECT_EQ(known, -1);  // no block yet

  bool added = false;
  int i = in_.ForBlock(g, &added);
  addr = 0;
  EXPECT_TRUE(in_.IsJitTarget(g, &addr, &suffix, &known));
  EXPECT_EQ(known, i);
  EXPECT_EQ(addr, 0x40001000u);

  // Under a real object's name, an address name is a JIT target where a source covers it and no
  // object's code does (issue 23 item 2: an id bound to a JIT function, used under another
  // cob=), never in the object's own code.
  EXPECT_TRUE(in_.IsJitTarget(Key("/usr/bin/node", "0x40001000"), &addr, &suffix));
  EXPECT_EQ(addr, 0x40001000u);
  objects_.NoteObject(names_.Intern("/usr/bin/node").id);
  EXPECT_FALSE(in_.IsJitTarget(Key("/usr/bin/node", "0x1000100"), &addr, &suffix));
  EXPECT_FALSE(in_.IsJitTarget(Key("/usr/bin/node", "main"), &addr, &suffix));
  EXPECT_FALSE(in_.IsJitTarget(Key("???", "main"), &addr, &suffix));
  EXPECT_FALSE(in_.IsJitTarget(Key("???", "0x50000000"), &addr, &suffix));  // not covered
}

TEST_F(InputFunctionsTest, ObjectCodeIsNeverAJitFunction) {
  FunctionKey builtin = Key("???", "0x1000100");
  uint64_t addr = 0;
  uint32_t suffix = 0;
  EXPECT_TRUE(in_.IsJitTarget(builtin, &addr, &suffix));  // node not seen yet
  bool added = false;
  int before = in_.ForBlock(builtin, &added);
  EXPECT_TRUE(in_[before].jit);
  objects_.NoteObject(names_.Intern("/usr/bin/node").id);
  // Its entry stays as made; as a target it is object code from now on.
  EXPECT_FALSE(in_.IsJitTarget(builtin, &addr, &suffix));
  FunctionKey other = Key("???", "0x1000110");
  int after = in_.ForBlock(other, &added);
  EXPECT_TRUE(added);
  EXPECT_FALSE(in_[after].jit);
}

// Covered: an address name a source covers, object code or not; asked again, the same answer.
TEST_F(InputFunctionsTest, CoveredTellsAddressNamesASourceCovers) {
  objects_.NoteObject(names_.Intern("/usr/bin/node").id);
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(in_.Covered(names_.Intern("0x40000000").id));
    EXPECT_TRUE(in_.Covered(names_.Intern("0x40001040'2").id));  // inside g, with a suffix
    EXPECT_TRUE(in_.Covered(names_.Intern("0x1000100").id));     // node's code, listed
    EXPECT_FALSE(in_.Covered(names_.Intern("0x40000100").id));   // just past f
    EXPECT_FALSE(in_.Covered(names_.Intern("0x50000000").id));
    EXPECT_FALSE(in_.Covered(names_.Intern("main").id));
    EXPECT_FALSE(in_.Covered(names_.Intern("0xzz").id));
  }
  // The other questions about the same names keep their own answers.
  EXPECT_TRUE(in_.JitLooking(names_.Intern("0x50000000").id));
  EXPECT_FALSE(in_.JitLooking(names_.Intern("main").id));
}

TEST_F(InputFunctionsTest, ClearForgetsThePartsFunctionsAndSplits) {
  bool added = false;
  int i = in_.ForBlock(Key("???", "0x40001000"), &added);
  ReuseSplit split;
  split.entry_counts = {1, 2};
  in_.SetSplit(i, split);
  ASSERT_NE(in_.SplitOf(i), nullptr);
  EXPECT_EQ(in_.SplitOf(i)->entry_counts, split.entry_counts);
  in_.Clear();
  EXPECT_EQ(in_.Find(Key("???", "0x40001000")), -1);
  EXPECT_EQ(in_.SplitOf(i), nullptr);
  EXPECT_EQ(in_.ForBlock(Key("???", "0x40000000"), &added), 0);
  EXPECT_TRUE(added);
}

}  // namespace
}  // namespace cg_inject
