// Issue 23 item 7: real objects' stubs that Callgrind puts in `ob=???` (a PIE executable's
// .plt.got slots: mono-sgen's free, beam.smp's code at 0x16f130) are no JIT code. The program's
// PIE executable runs at Valgrind's base 0x108000, an ET_EXEC at its own addresses: there the
// stub is named as objdump names it, under its object, and the report leaves it out of the
// unnamed JIT cost. A shared library's stubs cannot be located and stay as they are.
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

// main (in /usr/bin/prog, a PIE) calls free through its .plt.got slot 0x1070, which Callgrind
// wrote in `???` at 0x109070 and named by that address; the slot jumps to libc's free. JIT
// function f (0x40000000, in the perf map) calls the slot too, and a second `???` block at
// 0x4838030 is a shared library's PLT (unknown base): unnamed either way.
constexpr const char* kProfile = R"(positions: instr
events: Ir
ob=(1) /usr/bin/prog
fl=(1) prog.c
fn=(1) main
0x1150 3
cob=(2) ???
cfi=(2) ???
cfn=(3) 0x0000000000109070
calls=2 0x109070
0x1154 20
ob=(2)
fl=(2)
fn=(4) 0x0000000040000000
0x40000000 5
cfn=(3)
calls=1 0x109070
0x40000004 10
fn=(3)
0x109070 3
cob=(3) /lib/libc.so.6
cfi=(3) malloc.c
cfn=(5) free
calls=3 0x98ef0
0x109070 27
fn=(6) 0x0000000004838030
0x4838030 4
ob=(3)
fl=(3)
fn=(5)
0x98ef0 27
)";

class InjectorStubsTest : public ::testing::Test {
 protected:
  InjectorStubsTest() {
    FakeExtents::Object prog{0x1000, 0x2000, false, {{0x1150, "main"}}};
    prog.load_bias = kPieBase;
    prog.plt = {{0x1070, "free@plt"}};
    extents_.objects["/usr/bin/prog"] = prog;
    extents_.objects["/lib/libc.so.6"] = FakeExtents::Object{0x1000, 0x200000, false, {}};
  }
  void Run(std::string_view input, bool with_source = true) {
    if (with_source) {
      uint32_t source = index_.AddSource({"/tmp/perf-1.map", "perf-map", "jit.map", 0});
      testing::AddVersion(&index_, source, 0x40000000, 0x100, "f");
      if (cover_stub_) testing::AddVersion(&index_, source, 0x109070, 8, "stub_from_map");
    }
    index_.Finish();
    Injector injector(index_, &extents_, InjectOptions{}, &out_);
    testing::FeedProfile(input, &injector);
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
  std::vector<std::string> Unresolved() const {
    std::vector<std::string> names;
    for (const auto& u : stats_.top_unresolved) names.push_back(u.name);
    return names;
  }

  SymbolIndex index_;
  FakeExtents extents_;
  RecordingSink out_;
  InjectStats stats_;
  bool cover_stub_ = false;
};

TEST_F(InjectorStubsTest, PieStubIsNamedUnderItsObject) {
  Run(kProfile);
  // The stub's block and every call into it: free@plt in /usr/bin/prog.
  const auto& stub = F("/usr/bin/prog|???|free@plt");
  EXPECT_THAT(stub.self, ElementsAre(3));
  ASSERT_EQ(stub.calls.count("/lib/libc.so.6|malloc.c|free"), 1u) << out_.text();
  const auto& main_fn = F("/usr/bin/prog|prog.c|main");
  ASSERT_EQ(main_fn.calls.count("/usr/bin/prog|???|free@plt"), 1u) << out_.text();
  EXPECT_THAT(main_fn.calls.at("/usr/bin/prog|???|free@plt").second, ElementsAre(20));
  const auto& f = F("jit.map|???|f");
  ASSERT_EQ(f.calls.count("/usr/bin/prog|???|free@plt"), 1u) << out_.text();
  EXPECT_THAT(f.calls.at("/usr/bin/prog|???|free@plt").second, ElementsAre(10));
  // Its positions, and the calls' target positions, are the object's ELF addresses, as
  // Callgrind writes a real object's (KCachegrind then finds its code with objdump).
  EXPECT_EQ(out_.text().find("109070"), std::string::npos) << out_.text();
  EXPECT_NE(out_.text().find("0x1070"), std::string::npos) << out_.text();
  // The shared library's stub stays what Callgrind wrote.
  EXPECT_THAT(F("???|???|0x0000000004838030").self, ElementsAre(4));
}

TEST_F(InjectorStubsTest, StubIsNoUnnamedJitCode) {
  Run(kProfile);
  // Self cost before: f's 5 and the library stub's 4; the PIE's stub (3) is not JIT code.
  EXPECT_EQ(stats_.unnamed_jit_cost_before, 9u);
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 4u);
  EXPECT_THAT(Unresolved(), ElementsAre("0x0000000004838030"));
}

TEST_F(InjectorStubsTest, WithoutSourcesNothingIsRenamedButTheReportKnowsTheStub) {
  Run(kProfile, /*with_source=*/false);
  EXPECT_THAT(F("???|???|0x0000000000109070").self, ElementsAre(3));
  EXPECT_EQ(out_.Find("/usr/bin/prog|???|free@plt"), nullptr);
  // f (5) and the library's stub (4) are unnamed JIT-looking code; the PIE's stub is not.
  EXPECT_EQ(stats_.unnamed_jit_cost_before, 9u);
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 9u);
  EXPECT_THAT(Unresolved(), ElementsAre("0x0000000040000000", "0x0000000004838030"));
}

TEST_F(InjectorStubsTest, ASourcesEntryWins) {
  cover_stub_ = true;
  Run(kProfile);
  EXPECT_EQ(out_.Find("/usr/bin/prog|???|free@plt"), nullptr) << out_.text();
  EXPECT_THAT(F("jit.map|???|stub_from_map").self, ElementsAre(3));
}

TEST_F(InjectorStubsTest, SharedLibraryStubsAreNotLocated) {
  // The same object as a shared library: no load bias known, nothing named, all unnamed.
  extents_.objects["/usr/bin/prog"].load_bias = std::nullopt;
  Run(kProfile);
  EXPECT_THAT(F("???|???|0x0000000000109070").self, ElementsAre(3));
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 7u);
}

// Callgrind may write the stub's block before any block or call names the program's object (the
// plt-stubs e2e test met it: vgpreload's and libc's blocks first). `cmd:` names the program as it
// was started (`./prog`, `mono`): found as a shell would, it is known from the header on.
constexpr const char* kStubFirst = R"(cmd: ./prog --flag
positions: instr
events: Ir
ob=(2) ???
fl=(2) ???
fn=(3) 0x0000000000109070
0x109070 3
cob=(3) /lib/libc.so.6
cfi=(3) malloc.c
cfn=(5) free
calls=3 0x98ef0
0x109070 27
ob=(1) /usr/bin/prog
fl=(1) prog.c
fn=(1) main
0x1150 3
cob=(2)
cfi=(2)
cfn=(3)
calls=2 0x109070
0x1154 20
ob=(3)
fl=(3)
fn=(5)
0x98ef0 27
)";

TEST_F(InjectorStubsTest, ProgramOfTheCommandIsKnownBeforeItsBlocks) {
  extents_.programs["./prog"] = "/usr/bin/prog";
  Run(kStubFirst);
  EXPECT_THAT(F("/usr/bin/prog|???|free@plt").self, ElementsAre(3));
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("/usr/bin/prog|???|free@plt"), 1u)
      << out_.text();
}

TEST_F(InjectorStubsTest, WithoutTheProgramFoundTheEarlyStubKeepsItsAddressName) {
  // Not found from here: the block came before its object was known, so it and the call into
  // it keep the address name, alike.
  Run(kStubFirst);
  EXPECT_THAT(F("???|???|0x0000000000109070").self, ElementsAre(3));
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("???|???|0x0000000000109070"), 1u)
      << out_.text();
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 0u);  // no JIT code: by the part end it is known
}

TEST_F(InjectorStubsTest, EtExecStubAtItsOwnAddress) {
  // An ET_EXEC: bias 0, the slot at its ELF address.
  FakeExtents::Object exec{0x400000, 0x500000, true, {{0x401150, "main"}}};
  exec.load_bias = 0;
  exec.plt = {{0x401070, "strcmp@plt"}};
  extents_.objects["/usr/bin/prog"] = exec;
  Run(R"(positions: instr
events: Ir
ob=(1) /usr/bin/prog
fl=(1) prog.c
fn=(1) main
0x401150 3
cob=(2) ???
cfi=(2) ???
cfn=(3) 0x0000000000401070'2
calls=1 0x401070
0x401154 5
ob=(2)
fl=(2)
fn=(3)
0x401070 5
)");
  // The recursion suffix stays on the name.
  EXPECT_THAT(F("/usr/bin/prog|???|strcmp@plt'2").self, ElementsAre(5));
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("/usr/bin/prog|???|strcmp@plt'2"), 1u)
      << out_.text();
}

}  // namespace
}  // namespace cg_inject
