// Issue 34: code inside the program's stripped PIE executable that the sources name. Deno's
// binary embeds V8's builtins and bytecode handlers without symbols; Callgrind names such code by
// its ELF address (`fn=0x...` in ob=deno), while V8's map and dump name it at its runtime address,
// the ELF address plus Valgrind's PIE base 0x108000. The injector names it as the source does,
// under the object, at its ELF addresses, each cost line by the code that ran there (a handler
// reached by V8's dispatch jump is its own function), the same on the callee and caller sides.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "rewrite/rewrite_test_util.h"
#include "rewrite/test_profile.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;
using testing::FakeExtents;
using testing::RecordingSink;

constexpr uint64_t kPieBase = 0x108000;

// /usr/bin/deno (a PIE, no symbols): 0x2000 is native code no source names; it calls a builtin
// at ELF 0x3000 (runtime 0x10b000, Builtin:A) twice, whose block also ran the handler at ELF
// 0x3040 (BytecodeHandler:B), reached by a jump, and JIT function f's code at 0x40000010 (a
// tail call: an address outside the object, its own). JIT function f calls the builtin once,
// and its block ran B's code at ELF 0x3044 (the bundled Callgrind keeps a jump from JIT code into
// an object in the jumping block; the object's instructions are at its ELF addresses there too).
// The builtin's block is recursive ('2) once, as Callgrind writes a call into a function already
// on the stack.
constexpr const char* kProfile = R"(positions: instr
events: Ir
cmd: /usr/bin/deno run prog.js
ob=(1) /usr/bin/deno
fl=(1) ???
fn=(1) 0x0000000000002000
0x2000 7
cfn=(2) 0x0000000000003000
calls=2 0x3000
0x2004 78
fn=(2)
0x3000 30
+16 20
cfn=(3) 0x0000000000003000'2
calls=1 0x3000
+4 10
0x3040 40
+4 10
0x40000010 8
fn=(3)
0x3000 6
+16 4
ob=(2) ???
fl=(2)
fn=(4) 0x0000000040000000
0x40000000 5
cob=(1)
cfi=(1)
cfn=(2)
calls=1 0x3000
0x40000004 40
0x3044 3
)";

class InjectorShiftedTest : public ::testing::Test {
 protected:
  InjectorShiftedTest() {
    FakeExtents::Object deno{0x1000, 0x100000, false, {}};
    deno.load_bias = kPieBase;
    extents_.objects["/usr/bin/deno"] = deno;
  }
  void Run(bool with_source = true, const std::string& profile = kProfile) {
    if (with_source) {
      uint32_t source = index_.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
      testing::AddVersion(&index_, source, 0x40000000, 0x100, "f");
      testing::AddVersion(&index_, source, 0x10b000, 0x40, "Builtin:A");
      testing::AddVersion(&index_, source, 0x10b040, 0x40, "BytecodeHandler:B");
    }
    index_.Finish();
    Injector injector(index_, &extents_, InjectOptions{}, &out_);
    testing::FeedProfile(profile, &injector);
    stats_ = injector.stats();
    EXPECT_TRUE(out_.IdsConsistent());
    EXPECT_THAT(stats_.invariant_violations, ::testing::IsEmpty());
  }
  const testing::FunctionSummary& F(const std::string& key) {
    const testing::FunctionSummary* f = out_.Find(key);
    if (!f) {
      ADD_FAILURE() << "no function " << key << " in\n" << out_.text();
      static testing::FunctionSummary empty;
      return empty;
    }
    return *f;
  }

  SymbolIndex index_;
  FakeExtents extents_;
  RecordingSink out_;
  InjectStats stats_;
};

TEST_F(InjectorShiftedTest, NamelessObjectCodeTakesTheSourcesNamesUnderItsObject) {
  Run();
  // The builtin's block split by the code that ran: A's lines and B's, both in /usr/bin/deno.
  EXPECT_THAT(F("/usr/bin/deno|???|Builtin:A").self, ElementsAre(50));
  EXPECT_THAT(F("/usr/bin/deno|???|Builtin:A'2").self, ElementsAre(10));
  EXPECT_THAT(F("/usr/bin/deno|???|BytecodeHandler:B").self, ElementsAre(53));
  // f's own code, wherever it ran, and nothing else.
  EXPECT_THAT(F("perf-1.map|???|f").self, ElementsAre(13));
  // The native code no source names stays as Callgrind wrote it.
  EXPECT_THAT(F("/usr/bin/deno|???|0x0000000000002000").self, ElementsAre(7));
  // Callers on both sides name the builtin: the native caller, and the JIT function.
  const auto& native = F("/usr/bin/deno|???|0x0000000000002000");
  ASSERT_EQ(native.calls.count("/usr/bin/deno|???|Builtin:A"), 1u) << out_.text();
  EXPECT_THAT(native.calls.at("/usr/bin/deno|???|Builtin:A").second, ElementsAre(78));
  const auto& f = F("perf-1.map|???|f");
  ASSERT_EQ(f.calls.count("/usr/bin/deno|???|Builtin:A"), 1u) << out_.text();
  EXPECT_THAT(f.calls.at("/usr/bin/deno|???|Builtin:A").second, ElementsAre(40));
  // The handler's cost stays inside the builtin's inclusive cost: an edge A -> B.
  const auto& a = F("/usr/bin/deno|???|Builtin:A");
  ASSERT_EQ(a.calls.count("/usr/bin/deno|???|BytecodeHandler:B"), 1u) << out_.text();
  EXPECT_THAT(a.calls.at("/usr/bin/deno|???|BytecodeHandler:B").second, ElementsAre(50));
  // The JIT code the builtin tail-called, and B's code f's block ran, with their edges.
  ASSERT_EQ(a.calls.count("perf-1.map|???|f"), 1u) << out_.text();
  EXPECT_THAT(a.calls.at("perf-1.map|???|f").second, ElementsAre(8));
  ASSERT_EQ(f.calls.count("/usr/bin/deno|???|BytecodeHandler:B"), 1u) << out_.text();
  EXPECT_THAT(f.calls.at("/usr/bin/deno|???|BytecodeHandler:B").second, ElementsAre(3));
  // Everything in the object is at its ELF addresses (KCachegrind's machine code view runs
  // objdump on it there); no runtime address (0x10b...) is written; f's code keeps its own.
  EXPECT_EQ(out_.text().find("10b0"), std::string::npos) << out_.text();
  EXPECT_NE(out_.text().find("0x3040"), std::string::npos) << out_.text();
  EXPECT_NE(out_.text().find("0x40000010"), std::string::npos) << out_.text();
  EXPECT_EQ(out_.Find("???|???|0x000000000010b000"), nullptr) << out_.text();
}

TEST_F(InjectorShiftedTest, WithoutSourcesTheObjectIsUntouched) {
  Run(/*with_source=*/false);
  EXPECT_THAT(F("/usr/bin/deno|???|0x0000000000003000").self, ElementsAre(108));
  EXPECT_THAT(F("/usr/bin/deno|???|0x0000000000003000'2").self, ElementsAre(10));
  EXPECT_EQ(out_.Find("/usr/bin/deno|???|Builtin:A"), nullptr) << out_.text();
  EXPECT_EQ(out_.text().find("10b0"), std::string::npos) << out_.text();
}

TEST_F(InjectorShiftedTest, AnObjectWithoutAKnownBaseIsUntouched) {
  // A shared library's base is not known up front: its nameless code stays as it was.
  extents_.objects["/usr/bin/deno"].load_bias = std::nullopt;
  Run();
  EXPECT_THAT(F("/usr/bin/deno|???|0x0000000000003000").self, ElementsAre(100));
  const auto& f = F("perf-1.map|???|f");
  EXPECT_EQ(f.calls.count("/usr/bin/deno|???|0x0000000000003000"), 1u) << out_.text();
}

TEST_F(InjectorShiftedTest, TheObjectTheProfileNamesWinsOverTheProgramFoundInPath) {
  // `cmd: deno` is looked up in this machine's PATH, which can hold another deno than the one the
  // profile ran (/usr/local/bin/deno here, a build with the same layout): the profile's ob= says
  // which file ran, and only it gets the code.
  extents_.programs["deno"] = "/usr/local/bin/deno";
  extents_.objects["/usr/local/bin/deno"] = extents_.objects["/usr/bin/deno"];
  std::string profile = kProfile;
  profile.replace(profile.find("cmd: /usr/bin/deno"), 18, "cmd: deno");
  Run(/*with_source=*/true, profile);
  EXPECT_THAT(F("/usr/bin/deno|???|Builtin:A").self, ElementsAre(50));
  EXPECT_THAT(F("/usr/bin/deno|???|BytecodeHandler:B").self, ElementsAre(53));
  EXPECT_THAT(F("perf-1.map|???|f").self, ElementsAre(13));
  EXPECT_EQ(out_.text().find("/usr/local/bin/deno"), std::string::npos) << out_.text();
}

}  // namespace
}  // namespace cg_inject
