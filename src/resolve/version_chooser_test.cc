#include "resolve/version_chooser.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

class VersionChooserTest : public ::testing::Test {
 protected:
  void Add(uint64_t start, uint64_t size, std::string name, std::string code = "") {
    CodeVersionSpec v;
    v.start = start;
    v.size = size;
    v.function_name = std::move(name);
    v.code = std::move(code);
    index_.Add(std::move(v));
  }
  SymbolIndex index_;
};

TEST_F(VersionChooserTest, SingleVersionAndUncovered) {
  Add(0x1000, 0x10, "f");
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  ASSERT_NE(c.Choose(0x1008, nullptr, 1), nullptr);
  EXPECT_EQ(c.Choose(0x1008, nullptr, 1)->function_name(), "f");
  EXPECT_EQ(c.Choose(0x1010, nullptr, 1), nullptr);
  EXPECT_EQ(c.reused_addresses(), 0);
}

// Choose remembers versions it found alone: a remembered one must not answer for an address
// next to it where two versions overlap (their choice still follows the rules), nor past its end.
TEST_F(VersionChooserTest, AVersionFoundAloneAnswersOnlyInsideItsRange) {
  Add(0x1000, 0x10, "alone");
  Add(0x1010, 6, "mov", std::string("\xb8\x01\x00\x00\x00\xc3", 6));
  Add(0x1010, 6, "nops", std::string("\x90\x90\x90\x90\x90\xc3", 6));
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(c.Choose(0x100f, nullptr, 1)->function_name(), "alone");
    EXPECT_EQ(c.Choose(0x1012, nullptr, 1)->function_name(), "nops");
    EXPECT_EQ(c.Choose(0x1015, nullptr, 2)->function_name(), "nops");
    EXPECT_EQ(c.Choose(0x1015, nullptr, 1)->function_name(), "mov");
    EXPECT_EQ(c.Choose(0x1016, nullptr, 1), nullptr);
  }
  // The preferred version does not contain the address: the lone one still answers.
  const CodeVersion* mov = c.Choose(0x1015, nullptr, 1);
  EXPECT_EQ(c.Choose(0x1004, mov, 1)->function_name(), "alone");
}

// A version alone at one address but overlapped at another is not remembered as alone.
TEST_F(VersionChooserTest, AVersionOverlappedElsewhereIsAskedAgain) {
  Add(0x1000, 0x20, "outer");
  Add(0x1010, 8, "inner");
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  EXPECT_EQ(c.Choose(0x1004, nullptr, 2)->function_name(), "outer");
  EXPECT_EQ(c.Choose(0x1012, nullptr, 2)->function_name(), "inner");
  EXPECT_EQ(c.Choose(0x1012, nullptr, 1)->function_name(), "outer");
}

TEST_F(VersionChooserTest, X86BoundariesPickTheVersion) {
  Add(0x1000, 6, "mov", std::string("\xb8\x01\x00\x00\x00\xc3", 6));
  Add(0x1000, 6, "nops", std::string("\x90\x90\x90\x90\x90\xc3", 6));
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  EXPECT_EQ(c.Choose(0x1002, nullptr, 1)->function_name(), "nops");
  // 0x1005 is an instruction start in both: ambiguous, part 1 takes the first loaded.
  EXPECT_EQ(c.Choose(0x1005, nullptr, 1)->function_name(), "mov");
  EXPECT_EQ(c.Choose(0x1005, nullptr, 2)->function_name(), "nops");
  EXPECT_EQ(c.Choose(0x1005, nullptr, 9)->function_name(), "nops");
  EXPECT_EQ(c.ambiguous_choices(), 1);
  EXPECT_EQ(c.reused_addresses(), 2);
  std::vector<uint64_t> addrs = {0x1001, 0x1003};
  EXPECT_EQ(c.ChooseForBlock(0x1000, addrs, 1)->function_name(), "nops");
}

// Issue 23 item 8: two versions at one address with an instruction starting at 0x1005 in both;
// only "caller" has a call there. A call line at 0x1005 is caller's, whatever the preferred
// version or the part; another line there follows the usual rules.
TEST_F(VersionChooserTest, CallLineGoesToTheVersionWithACall) {
  // push rbp ; nop x4 ; mov eax,1 ; ret   /   push rbp ; nop x4 ; call rel32 ; ret
  Add(0x1000, 11, "mover", std::string("\x55\x90\x90\x90\x90\xb8\x01\x00\x00\x00\xc3", 11));
  Add(0x1000, 11, "caller", std::string("\x55\x90\x90\x90\x90\xe8\x00\x00\x00\x00\xc3", 11));
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  const CodeVersion* mover = index_.LookupAll(0x1000)[0];
  const CodeVersion* caller = index_.LookupAll(0x1000)[1];
  ASSERT_EQ(mover->function_name(), "mover");
  EXPECT_TRUE(c.FitsCall(*caller, 0x1005));
  EXPECT_FALSE(c.FitsCall(*mover, 0x1005));
  EXPECT_TRUE(c.FitsBoundary(*mover, 0x1005));
  EXPECT_EQ(c.Choose(0x1005, mover, 1, /*call=*/true), caller);
  EXPECT_EQ(c.Choose(0x1005, nullptr, 1, /*call=*/true), caller);
  EXPECT_EQ(c.Choose(0x1005, nullptr, 1), mover);  // not a call line: part 1, the first loaded
  EXPECT_EQ(c.Choose(0x1005, mover, 1), mover);
  // A block whose lines fit both: its call site decides.
  std::vector<uint64_t> addrs = {0x1001, 0x1005, 0x100a};
  std::vector<uint64_t> calls = {0x1005};
  EXPECT_EQ(c.ChooseForBlock(0x1000, addrs, 1, calls), caller);
  EXPECT_EQ(c.ChooseForBlock(0x1000, addrs, 1), mover);
}

// Callgrind also makes a call of a jump into another function and of a return into code that
// is not the caller's (the tsc capture: 2 of 80,578 call lines sat where the other version had
// a `mov`, this one a `jne` or `jmp`). A call line at such an instruction is that version's.
TEST_F(VersionChooserTest, CallLineGoesToTheVersionWithAJumpOrReturn) {
  // push rbp ; nop x4 ; mov eax,1 ; nop ; ret   and, at 0x1005 instead: jne, jmp, ret
  const std::string head("\x55\x90\x90\x90\x90", 5);
  const std::string mov = head + std::string("\xb8\x01\x00\x00\x00\x90\xc3", 7);
  for (const std::string& tail : {std::string("\x0f\x85\x00\x00\x00\x00\xc3", 7),
                                  std::string("\xe9\x00\x00\x00\x00\x90\xc3", 7),
                                  std::string("\xc3\x90\x90\x90\x90\x90\xc3", 7)}) {
    SymbolIndex index;
    for (const auto& [name, code] : {std::pair{"mover", mov}, std::pair{"jumper", head + tail}}) {
      CodeVersionSpec v;
      v.start = 0x1000;
      v.size = 12;
      v.function_name = name;
      v.code = code;
      index.Add(std::move(v));
    }
    index.Finish();
    VersionChooser c(index, CodeArch::kX86_64);
    const CodeVersion* mover = index.LookupAll(0x1000)[0];
    const CodeVersion* jumper = index.LookupAll(0x1000)[1];
    ASSERT_EQ(jumper->function_name(), "jumper");
    EXPECT_EQ(c.Choose(0x1005, mover, 1, /*call=*/true), jumper) << tail[0];
    EXPECT_EQ(c.Choose(0x1005, nullptr, 1, /*call=*/true), jumper) << tail[0];
    EXPECT_EQ(c.Choose(0x1005, mover, 1), mover);  // not a call line: the block's version
  }
}

TEST_F(VersionChooserTest, PreferredVersionWins) {
  Add(0x1000, 0x20, "a");
  Add(0x1000, 0x20, "b");
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  const CodeVersion* b = index_.LookupAll(0x1000)[1];
  EXPECT_EQ(c.Choose(0x1004, b, 1), b);
}

TEST_F(VersionChooserTest, AArch64FixedWidth) {
  Add(0x1000, 8, "a", std::string(8, '\0'));
  Add(0x1002, 8, "b", std::string(8, '\0'));
  index_.Finish();
  VersionChooser c(index_, CodeArch::kAArch64);
  EXPECT_EQ(c.Choose(0x1004, nullptr, 1)->function_name(), "a");
  EXPECT_EQ(c.Choose(0x1006, nullptr, 1)->function_name(), "b");
}

TEST_F(VersionChooserTest, LaterSourceDescribesTheSameCodeNotReuse) {
  // A discovered perf map (source 0) and an explicit one (source 1) name the same range: the later
  // source wins in every part, and nothing counts as reused.
  uint32_t discovered = index_.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map"});
  uint32_t given = index_.AddSource({"mine.map", "perf-map", "mine.map"});
  CodeVersionSpec a;
  a.start = 0x1000;
  a.size = 0x20;
  a.function_name = "old_name";
  a.source = discovered;
  index_.Add(a);
  CodeVersionSpec b = a;
  b.function_name = "given_name";
  b.source = given;
  b.function_id = 0;
  index_.Add(b);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  EXPECT_EQ(c.Choose(0x1004, nullptr, 1)->function_name(), "given_name");
  EXPECT_EQ(c.Choose(0x1004, nullptr, 2)->function_name(), "given_name");
  std::vector<uint64_t> addrs = {0x1008};
  EXPECT_EQ(c.ChooseForBlock(0x1000, addrs, 1)->function_name(), "given_name");
  EXPECT_EQ(c.reused_addresses(), 0);
}

TEST_F(VersionChooserTest, SaltedTailFitsAnyAddress) {
  // CPython salts the last 8 bytes of the dumped code: an address there is not checked against
  // the (wrong) bytes. Here the bytes would put 0x100a inside a 5-byte mov.
  CodeVersionSpec v;
  v.start = 0x1000;
  v.size = 16;
  v.function_name = "py::f";
  v.code = std::string_view("\x90\x90\x90\x90\x90\x90\x90\x90\xb8\x01\x00\x00\x00\x90\x90\xc3", 16);
  index_.Add(v);
  v.salted_code_tail = 8;
  index_.Add(v);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  const CodeVersion& added = index_.version(0);
  EXPECT_FALSE(c.FitsBoundary(added, 0x100a));
  const CodeVersion& salted = index_.version(1);
  EXPECT_TRUE(c.FitsBoundary(salted, 0x100a));
  EXPECT_FALSE(c.FitsBoundary(salted, 0x1010));  // outside the range stays outside
}

}  // namespace
}  // namespace cg_inject

namespace cg_inject {
namespace {

// A jitdump's e_machine overrides the default architecture: AArch64 code given to a chooser
// that defaults to x86-64 is still checked with 4-byte instructions.
TEST(VersionChooserMachineTest, SourceMachineWins) {
  SymbolIndex index;
  SymbolSourceInfo info;
  info.path = "jit-1.dump";
  info.kind = "jitdump";
  info.elf_machine = 183;
  uint32_t source = index.AddSource(info);
  for (const char* name : {"a", "b"}) {
    CodeVersionSpec v;
    v.start = 0x1000;
    v.size = 8;
    v.function_name = name;
    v.source = source;
    // As x86-64 this is one 7-byte instruction and a nop; as AArch64 two instructions.
    v.code = std::string_view(
        name[0] == 'a' ? "\x48\xc7\xc0\x01\x00\x00\x00\x90" : "\x90\x90\x90\x90\x90\x90\x90\x90",
        8);
    index.Add(std::move(v));
  }
  index.Finish();
  VersionChooser c(index, CodeArch::kX86_64);
  // 0x1004 is an instruction start of both (AArch64): ambiguous, part 1 takes the first.
  EXPECT_EQ(c.Choose(0x1004, nullptr, 1)->function_name(), "a");
  EXPECT_EQ(c.ambiguous_choices(), 1);
  // 0x1002 is no AArch64 instruction start; neither fits, so both stay candidates.
  EXPECT_EQ(c.Choose(0x1002, nullptr, 2)->function_name(), "b");
}

}  // namespace
}  // namespace cg_inject

namespace cg_inject {
namespace {

// Blocks against a perf map (no code bytes) and a jitdump whose header says x86-64. The chooser's
// own default architecture is kUnknown, so any decoding below happens because of the e_machine.
class ChooseForBlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    map_ = index_.AddSource({"perf-1.map", "perf-map", "perf-1.map"});
    SymbolSourceInfo dump{"jit-1.dump", "jitdump", "jit-1.dump"};
    dump.elf_machine = 62;
    dump_ = index_.AddSource(dump);
  }
  void Add(uint64_t start, uint64_t size, std::string name, uint32_t source, std::string code = "",
           uint32_t salted_code_tail = 0) {
    CodeVersionSpec v;
    v.start = start;
    v.size = size;
    v.raw_name = name;
    v.function_name = std::move(name);
    v.source = source;
    v.code = std::move(code);
    v.salted_code_tail = salted_code_tail;
    index_.Add(std::move(v));
  }
  SymbolIndex index_;
  uint32_t map_ = 0, dump_ = 0;
};

// x86-64: push rbp (1) ; mov rbp,rsp (3) ; ret (1)  -> starts at 0, 1, 4
const std::string kPrologue("\x55\x48\x89\xe5\xc3", 5);
// x86-64: nop x5 -> starts at 0..4
const std::string kNops("\x90\x90\x90\x90\x90", 5);

TEST_F(ChooseForBlockTest, EmptyIndex) {
  index_.Finish();
  VersionChooser c(index_, CodeArch::kUnknown);
  EXPECT_EQ(c.Choose(5, nullptr, 1), nullptr);
  EXPECT_EQ(c.ChooseForBlock(5, {}, 1), nullptr);
  EXPECT_EQ(c.reused_addresses(), 0);
}

TEST_F(ChooseForBlockTest, InstructionBoundariesPickTheVersion) {
  Add(0x100, 5, "nops", dump_, kNops);
  Add(0x100, 5, "prologue", dump_, kPrologue);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kUnknown);
  // 0x102 is inside prologue's mov: only the nops fit, although prologue is newer.
  std::vector<uint64_t> addrs = {0x100, 0x102};
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 1)->raw_name(), "nops");
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 2)->raw_name(), "nops");
  EXPECT_EQ(c.reused_addresses(), 1);
  EXPECT_EQ(c.ambiguous_choices(), 0);
  // Both fit 0x100, 0x101 and 0x104: ambiguous, the part number picks (part 1 the first loaded).
  std::vector<uint64_t> both = {0x100, 0x101, 0x104};
  EXPECT_EQ(c.ChooseForBlock(0x100, both, 1)->raw_name(), "nops");
  EXPECT_EQ(c.ChooseForBlock(0x100, both, 2)->raw_name(), "prologue");
  EXPECT_EQ(c.reused_addresses(), 1);
  EXPECT_EQ(c.ambiguous_choices(), 1);
}

TEST_F(ChooseForBlockTest, RangesDecideWithoutCode) {
  Add(0x100, 0x100, "long", map_);
  Add(0x100, 0x10, "short", map_);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  std::vector<uint64_t> addrs = {0x100, 0x150};
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 1)->raw_name(), "long");
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 2)->raw_name(), "long");
  EXPECT_EQ(c.ambiguous_choices(), 0);
  EXPECT_EQ(c.ChooseForBlock(0x300, addrs, 1), nullptr);
}

// Two loads of one name at one address are a tie like any other: the part number picks and the
// address counts as ambiguous (the output is the same function either way).
TEST_F(ChooseForBlockTest, SameNameTieFollowsThePartNumber) {
  Add(0x100, 0x10, "f", map_);
  Add(0x100, 0x10, "f", map_);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  std::vector<uint64_t> addrs = {0x101};
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 1), &index_.version(0));
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 2), &index_.version(1));
  EXPECT_EQ(c.ambiguous_choices(), 1);
}

TEST_F(ChooseForBlockTest, SaltedTailIsNotHeldAgainstAVersion) {
  // CPython dumps end in 8 marker bytes: 0x108 falls in them for "py", while "mov" (no salt) has
  // 0x104 inside its 5-byte mov. Read unsalted, py's bytes would put 0x108 inside mov rbp,rsp.
  const std::string tail("\x0f\x0b\x48\x89\xe5\x90\x90\x90", 8);
  const std::string mov = std::string("\xb8\x01\x00\x00\x00", 5) + std::string(8, '\x90');
  Add(0x100, 13, "other", map_);  // an earlier source describing the same range is not a candidate
  Add(0x100, 13, "mov", dump_, mov);
  Add(0x100, 13, "py::f:/a.py", dump_, kNops + tail, 8);
  Add(0x200, 13, "mov", dump_, mov);
  Add(0x200, 13, "py::f:/a.py", dump_, kNops + tail, 0);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kX86_64);
  std::vector<uint64_t> addrs = {0x100, 0x104, 0x108};
  EXPECT_EQ(c.ChooseForBlock(0x100, addrs, 1)->raw_name(), "py::f:/a.py");
  EXPECT_EQ(c.ambiguous_choices(), 0);
  // Control: the same code with no salted tail ties with "mov" (each misses one address).
  std::vector<uint64_t> unsalted = {0x200, 0x204, 0x208};
  EXPECT_EQ(c.ChooseForBlock(0x200, unsalted, 1)->raw_name(), "mov");
  EXPECT_EQ(c.ChooseForBlock(0x200, unsalted, 2)->raw_name(), "py::f:/a.py");
  EXPECT_EQ(c.ambiguous_choices(), 1);
}

TEST_F(ChooseForBlockTest, AddressPastTheCodeBytesFits) {
  // A version whose range is longer than its code bytes: past them the bytes say nothing.
  Add(0x100, 0x20, "f", dump_, kPrologue);
  index_.Finish();
  VersionChooser c(index_, CodeArch::kUnknown);
  const CodeVersion& f = index_.version(0);
  EXPECT_TRUE(c.FitsBoundary(f, 0x101));
  EXPECT_FALSE(c.FitsBoundary(f, 0x102));  // inside mov rbp,rsp
  EXPECT_TRUE(c.FitsBoundary(f, 0x105));
  EXPECT_TRUE(c.FitsBoundary(f, 0x11f));
  EXPECT_FALSE(c.FitsBoundary(f, 0x120));
}

}  // namespace
}  // namespace cg_inject
