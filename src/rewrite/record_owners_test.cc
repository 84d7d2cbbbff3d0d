#include "rewrite/record_owners.h"

#include <gtest/gtest.h>

#include <string>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "resolve/name_table.h"
#include "resolve/version_chooser.h"
#include "rewrite/input_functions.h"
#include "rewrite/object_code.h"
#include "rewrite/output_functions.h"
#include "rewrite/position_columns.h"
#include "rewrite/rewrite_test_util.h"

namespace cg_inject {
namespace {

using testing::AddVersion;
using testing::FakeExtents;

class RecordOwnersTest : public ::testing::Test {
 protected:
  RecordOwnersTest() {
    PositionLayout instr;
    instr.kinds[0] = PositionKind::kInstr;
    columns_.Set(instr, /*may_add_line=*/true);
  }
  // Before the members that read the index: ObjectCode takes its address span when made.
  static bool BuildIndex(SymbolIndex* index) {
    uint32_t source = index->AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
    AddVersion(index, source, 0x1000, 0x100, "a");
    AddVersion(index, source, 0x2000, 0x100, "b");
    AddVersion(index, source, 0x3000, 0x100, "r1");  // reused code: r2 runs at the same entry
    AddVersion(index, source, 0x3000, 0x80, "r2");
    AddVersion(index, source, 0x1000100, 0x80,
               "Builtin:Add");  // node's own code, listed by the map
    index->Finish();
    return true;
  }
  const CodeVersion* At(uint64_t addr, std::string_view name = {}) {
    for (const CodeVersion* v : index_.LookupAll(addr))
      if (name.empty() || v->display_name() == name) return v;
    return nullptr;
  }
  // A JIT block of the version named `name` at `entry`, resolved as the injector does.
  void JitBlock(uint64_t entry, std::string_view name, uint32_t suffix = 0) {
    function_ = InFunction{};
    function_.key = FunctionKey{names_.Intern("???").id, names_.Intern("???").id,
                                names_.Intern("0x" + std::to_string(entry)).id};
    function_.jit = true;
    function_.entry = entry;
    block_ = ResolvedBlock{};
    block_.version = At(entry, name);
    block_.identity = out_.Identity(block_.version, suffix);
    block_.base_identity = out_.Identity(block_.version, 0);
  }
  std::string FunctionName(int owner) { return std::string(names_.Text(out_[owner].key.function)); }

  SymbolIndex index_;
  bool built_ = BuildIndex(&index_);
  FakeExtents extents_ =
      FakeExtents::Node(0x1000000, 0x2000000, {{0x1000000, "main"}, {0x1000100, "Builtins_Add"}});
  NameTable names_;
  VersionChooser chooser_{index_, CodeArch::kUnknown};
  ObjectCode objects_{index_, &extents_, &names_};
  OutputFunctions out_{index_, {}, &names_};
  PositionColumns columns_;
  RecordOwners owners_{index_, &chooser_, &objects_, &out_, &columns_};
  InFunction function_;
  ResolvedBlock block_;
};

TEST_F(RecordOwnersTest, TheBlocksOwnCodeStaysWithIt) {
  JitBlock(0x1000, "a");
  const CodeVersion* version = nullptr;
  EXPECT_EQ(owners_.Owner(function_, block_, 0x1010, &version), block_.identity);
  EXPECT_EQ(version, At(0x1000));
  // Not covered by any version: stays too, at the block's version.
  EXPECT_EQ(owners_.Owner(function_, block_, 0x9000, &version), block_.identity);
  EXPECT_EQ(version, At(0x1000));
}

TEST_F(RecordOwnersTest, AnotherVersionsCodeIsThatVersionsFunctions) {
  JitBlock(0x1000, "a");
  const CodeVersion* version = nullptr;
  int owner = owners_.Owner(function_, block_, 0x2010, &version);  // a tail jump into b
  EXPECT_EQ(version, At(0x2000));
  EXPECT_EQ(FunctionName(owner), "b");
  EXPECT_FALSE(block_.IsOwn(owner));
  EXPECT_EQ(block_.BaseOf(owner), owner);
}

TEST_F(RecordOwnersTest, ARecursionSuffixStaysOnTheBlocksOwnLines) {
  JitBlock(0x1000, "a", names_.Intern("'2").id);
  ASSERT_NE(block_.identity, block_.base_identity);
  const CodeVersion* version = nullptr;
  EXPECT_EQ(owners_.Owner(function_, block_, 0x1010, &version), block_.identity);
  EXPECT_EQ(FunctionName(block_.identity), "a'2");
  EXPECT_EQ(block_.BaseOf(block_.identity), block_.base_identity);
}

TEST_F(RecordOwnersTest, ObjectCodeGoesBackToTheObjectsSymbol) {
  objects_.NoteObject(names_.Intern("/usr/bin/node").id);
  objects_.NoteFunction(FunctionKey{names_.Intern("/usr/bin/node").id,
                                    names_.Intern("builtins.cc").id,
                                    names_.Intern("Builtins_Add").id});
  JitBlock(0x1000, "a");
  const CodeVersion* version = At(0x1000);
  int owner = owners_.Owner(function_, block_, 0x1000110, &version);
  EXPECT_EQ(version, nullptr);  // positions stay as Callgrind wrote them
  EXPECT_EQ(FunctionName(owner), "Builtins_Add");
  EXPECT_EQ(names_.Text(out_[owner].key.file), "builtins.cc");
  EXPECT_FALSE(out_[owner].jit);
  EXPECT_TRUE(out_[owner].moved_in);
  EXPECT_EQ(owners_.object_code_lines(), 1);
}

TEST_F(RecordOwnersTest, AnOrdinaryBlocksJitCodeGoesToTheJitFunction) {
  function_ = InFunction{};
  function_.key = FunctionKey{names_.Intern("/lib/libc.so.6").id, names_.Intern("x.c").id,
                              names_.Intern("memcpy").id};
  block_ = ResolvedBlock{};
  block_.identity = block_.base_identity = out_.For(function_.key, /*jit=*/false);
  const CodeVersion* version = nullptr;
  int owner = owners_.Owner(function_, block_, 0x2010, &version);
  EXPECT_EQ(FunctionName(owner), "b");
  EXPECT_EQ(version, At(0x2000));
  EXPECT_EQ(owners_.Owner(function_, block_, 0x7000, &version), block_.identity);
  EXPECT_EQ(version, nullptr);
}

TEST_F(RecordOwnersTest, ASplitBlockGivesEachLineToTheFirstSplitVersionThatFits) {
  JitBlock(0x3000, "r1");
  block_.split.versions = {At(0x3000, "r2"), At(0x3000, "r1")};
  block_.split.identities = {out_.Identity(At(0x3000, "r2"), 0), block_.identity};
  const CodeVersion* version = nullptr;
  int owner = owners_.Owner(function_, block_, 0x3010, &version);  // both fit: r2 is first
  EXPECT_EQ(version, At(0x3000, "r2"));
  EXPECT_EQ(FunctionName(owner), "r2");
  EXPECT_TRUE(block_.IsOwn(owner));
  owner = owners_.Owner(function_, block_, 0x3090, &version);  // past r2's end: r1 only
  EXPECT_EQ(version, At(0x3000, "r1"));
  EXPECT_EQ(owner, block_.identity);
}

TEST_F(RecordOwnersTest, WithoutInstrPositionsEveryRecordIsTheBlocks) {
  columns_.Reset();
  JitBlock(0x1000, "a");
  const CodeVersion* version = nullptr;
  EXPECT_EQ(owners_.Owner(function_, block_, 0x2010, &version), block_.identity);
  EXPECT_EQ(version, At(0x1000));
}

}  // namespace
}  // namespace cg_inject
