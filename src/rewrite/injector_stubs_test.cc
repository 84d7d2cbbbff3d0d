// Issue 23 item 7: real objects' stubs that Callgrind puts in `ob=???` (a PIE executable's
// .plt.got slots: mono-sgen's free, beam.smp's code at 0x16f130) are no JIT code. The program's
// PIE executable runs at Valgrind's base 0x108000, an ET_EXEC at its own addresses: there the
// stub is named as objdump names it, under its object, and the report leaves it out of the
// unnamed JIT cost. A shared library's base is learnt from a stub whose block calls the slot's
// function: its stubs written after that are named too.
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

// The same run with the stub's block first (as Callgrind writes `???` before the program), for
// a program rebuilt since: its slot 0x1070 names calloc now, while the profile shows its stub
// calling free (issue 36 item 3). The `cmd:` line Callgrind writes in every file's header is
// what makes the program's object known before its first block (Injector::OnHeader): without it
// no block of `???` before the program's could be known as its stub.
constexpr const char* kStubFirst = R"(cmd: /usr/bin/prog
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

TEST_F(InjectorStubsTest, RebuiltProgramKeepsItsStubsAddresses) {
  extents_.objects["/usr/bin/prog"].plt = {{0x1070, "calloc@plt"}};
  extents_.objects["/usr/bin/prog"].rebuilt = true;
  Run(kStubFirst);
  // The stub's block waited for its call, which showed the slot changed: it is written as the
  // input has it, and so is main's call into it.
  EXPECT_THAT(F("???|???|0x0000000000109070").self, ElementsAre(3));
  EXPECT_EQ(out_.text().find("@plt"), std::string::npos) << out_.text();
  const auto& main_fn = F("/usr/bin/prog|prog.c|main");
  ASSERT_EQ(main_fn.calls.count("???|???|0x0000000000109070"), 1u) << out_.text();
  // Its cost is unnamed code again.
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 3u);
}

TEST_F(InjectorStubsTest, StubOfTheProgramAsRecordedIsNamedWhenItsBlockComesFirst) {
  Run(kStubFirst);
  const auto& stub = F("/usr/bin/prog|???|free@plt");
  EXPECT_THAT(stub.self, ElementsAre(3));
  ASSERT_EQ(stub.calls.count("/lib/libc.so.6|malloc.c|free"), 1u) << out_.text();
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("/usr/bin/prog|???|free@plt"), 1u);
  EXPECT_EQ(out_.text().find("109070"), std::string::npos) << out_.text();
}

TEST_F(InjectorStubsTest, RebuiltProgramsStubNamedInACallFirstKeepsThatName) {
  // main's call comes before the stub's block: the name is written before the proof, and the
  // block keeps it, so that calls and blocks agree (a documented limit).
  extents_.objects["/usr/bin/prog"].plt = {{0x1070, "calloc@plt"}};
  extents_.objects["/usr/bin/prog"].rebuilt = true;
  Run(kProfile);
  EXPECT_THAT(F("/usr/bin/prog|???|calloc@plt").self, ElementsAre(3));
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("/usr/bin/prog|???|calloc@plt"), 1u);
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
  // The source's name, for code of the program's PIE: under the object, at its ELF address, as
  // any code a source names inside the PIE (issue 34: V8's builtins in Deno's binary).
  EXPECT_THAT(F("/usr/bin/prog|???|stub_from_map").self, ElementsAre(3));
  EXPECT_EQ(out_.text().find("109070"), std::string::npos) << out_.text();
}

// Issue 33 item 5: `cmd:` names the program by a symbolic link (/usr/bin/mono runs
// /usr/bin/mono-sgen), and the stub's blocks come before any line of the program's object: the
// stub is named under the object Callgrind writes, the file the link leads to, not under a
// second name for one file (the link reads as the same ELF file, so it has the same stubs).
TEST_F(InjectorStubsTest, ProgramNamedByALinkIsTheObjectTheProfileNames) {
  extents_.objects["/usr/bin/prog-link"] = extents_.objects["/usr/bin/prog"];
  extents_.programs["/usr/bin/prog-link"] = "/usr/bin/prog";
  std::string profile = "cmd: /usr/bin/prog-link --x\n" + std::string(kProfile);
  // Move main's block after the `???` ones: the first line naming /usr/bin/prog comes last.
  size_t main_at = profile.find("ob=(1) /usr/bin/prog\n");
  size_t jit_at = profile.find("ob=(2)\n");
  std::string main_block = profile.substr(main_at, jit_at - main_at);
  profile.erase(main_at, jit_at - main_at);
  // Its ids (1) are defined in the moved block: the `???` blocks name their object and file.
  profile.replace(profile.find("ob=(2)\nfl=(2)\n"), 14, "ob=(2) ???\nfl=(2) ???\n");
  profile.replace(profile.find("cfn=(3)\ncalls=1"), 7, "cfn=(3) 0x0000000000109070");
  profile += main_block;
  Run(profile);
  EXPECT_THAT(F("/usr/bin/prog|???|free@plt").self, ElementsAre(3));
  for (const auto& [key, function] : out_.functions()) {
    EXPECT_EQ(key.find("prog-link"), std::string::npos) << out_.text();
    for (const auto& [target, call] : function.calls)
      EXPECT_EQ(target.find("prog-link"), std::string::npos) << out_.text();
  }
  const auto& f = F("jit.map|???|f");
  EXPECT_EQ(f.calls.count("/usr/bin/prog|???|free@plt"), 1u) << out_.text();
}

TEST_F(InjectorStubsTest, SharedLibraryStubLearntLateKeepsItsAddressName) {
  // The same object as a shared library: its base is learnt only from the stub's own block (the
  // slot 0x1070 at 0x109070 calls free), after main's call into it and the block's header were
  // written: both keep the address name, alike. The report, at the part's end, knows the stub.
  extents_.objects["/usr/bin/prog"].load_bias = std::nullopt;
  Run(kProfile);
  EXPECT_THAT(F("???|???|0x0000000000109070").self, ElementsAre(3));
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("???|???|0x0000000000109070"), 1u)
      << out_.text();
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 4u);
  EXPECT_THAT(Unresolved(), ElementsAre("0x0000000004838030"));
}

// libc.so.6's .plt.got: free@plt at 0x26360, malloc@plt at 0x26368 (Debian 12's libc), loaded
// at 0x4948000 (tests/data/mono). Callgrind writes libc's own functions at ELF addresses, and
// its slots in `???` at runtime ones: the block at 0x496e368 calls malloc from its first
// instruction, so libc's base is 0x496e368 - 0x26368. Then main calls 0x496e360, libc's
// free@plt; 0x5000368 is JIT-looking code at the same page offset as malloc@plt, which calls
// malloc too, but not from its first instruction.
constexpr const char* kLibcStubs = R"(positions: instr
events: Ir
ob=(1) /usr/bin/prog
fl=(1) prog.c
fn=(1) main
0x1150 3
cob=(2) ???
cfi=(2) ???
cfn=(3) 0x000000000496e368
calls=2 0x496e368
0x1154 20
ob=(2)
fl=(2)
fn=(3)
0x496e368 3
cob=(3) /lib/libc.so.6
cfi=(3) malloc.c
cfn=(5) malloc
calls=3 0x98930
0x496e368 27
ob=(1)
fl=(1)
fn=(1)
0x1160 1
cob=(2)
cfi=(2)
cfn=(6) 0x000000000496e360
calls=1 0x496e360
0x1164 8
ob=(2)
fl=(2)
fn=(6)
0x496e360 2
cob=(3)
cfi=(3)
cfn=(7) free
calls=1 0x98ef0
0x496e360 6
fn=(8) 0x0000000005000368
0x5000368 5
cob=(3)
cfi=(3)
cfn=(5)
calls=1 0x98930
0x500036c 9
ob=(3)
fl=(3)
fn=(5)
0x98930 36
fn=(7)
0x98ef0 6
)";

class InjectorLibraryStubsTest : public InjectorStubsTest {
 protected:
  InjectorLibraryStubsTest() {
    FakeExtents::Object libc{0x26000, 0x17c000, false, {{0x98930, "malloc"}, {0x98ef0, "free"}}};
    libc.plt = {{0x26360, "free@plt"}, {0x26368, "malloc@plt"}};
    extents_.objects["/lib/libc.so.6"] = libc;
  }
};

TEST_F(InjectorLibraryStubsTest, LocatedFromAStubsCallThenNamed) {
  Run(kLibcStubs);
  // The stub that taught the base was written before: as read, and so was main's call into it.
  EXPECT_THAT(F("???|???|0x000000000496e368").self, ElementsAre(3));
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("???|???|0x000000000496e368"), 1u)
      << out_.text();
  // The later one is libc's free@plt, called so, at its ELF address.
  const auto& free_plt = F("/lib/libc.so.6|???|free@plt");
  EXPECT_THAT(free_plt.self, ElementsAre(2));
  ASSERT_EQ(free_plt.calls.count("/lib/libc.so.6|malloc.c|free"), 1u) << out_.text();
  ASSERT_EQ(F("/usr/bin/prog|prog.c|main").calls.count("/lib/libc.so.6|???|free@plt"), 1u)
      << out_.text();
  EXPECT_NE(out_.text().find("0x26360"), std::string::npos) << out_.text();
  EXPECT_EQ(out_.text().find("496e360"), std::string::npos) << out_.text();
  // Neither stub is JIT code; the block at another page with malloc@plt's offset is: the base
  // is learnt once, from the first stub.
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 5u);
  EXPECT_THAT(Unresolved(), ElementsAre("0x0000000005000368"));
  EXPECT_THAT(F("???|???|0x0000000005000368").self, ElementsAre(5));
}

TEST_F(InjectorLibraryStubsTest, WithoutSourcesTheReportKnowsTheStubs) {
  Run(kLibcStubs, /*with_source=*/false);
  EXPECT_EQ(out_.Find("/lib/libc.so.6|???|free@plt"), nullptr);
  // f's 5 is in no block here; 0x5000368's 5 is the only unnamed JIT-looking cost.
  EXPECT_EQ(stats_.unnamed_jit_cost_before, 5u);
  EXPECT_THAT(Unresolved(), ElementsAre("0x0000000005000368"));
}

TEST_F(InjectorLibraryStubsTest, TwoBasesDropTheLibrary) {
  // The JIT-looking block at 0x5000368 calls malloc from its first instruction as well: libc
  // cannot be at both 0x4948000 and 0x4fda000, so from then on none of its stubs is located.
  // free@plt's block, met before, keeps its name (an address's first answer holds, so its
  // calls and block agree); the report, at the part's end, counts all three as unnamed.
  std::string profile = kLibcStubs;
  profile.replace(profile.find("0x500036c 9"), 11, "0x5000368 9");
  Run(profile);
  EXPECT_THAT(F("/lib/libc.so.6|???|free@plt").self, ElementsAre(2));
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 3u + 2u + 5u);
  EXPECT_THAT(Unresolved(),
              ElementsAre("0x0000000005000368", "0x000000000496e368", "0x000000000496e360"));
}

TEST_F(InjectorLibraryStubsTest, AnAddressTwoLibrariesFitPlacesNeither) {
  // libm, named first, has malloc@plt and free@plt at the same page offsets as libc's: each stub
  // fits both (libm at 0x496d000, libc at 0x4948000), so neither library is placed, and no stub
  // is named under the wrong one.
  FakeExtents::Object libm{0x1000, 0x2000, false, {}};
  libm.plt = {{0x1360, "free@plt"}, {0x1368, "malloc@plt"}};
  extents_.objects["/lib/libm.so.6"] = libm;
  std::string profile = kLibcStubs;
  profile.insert(profile.find("ob=(1)"),
                 "ob=(9) /lib/libm.so.6\nfl=(9) m.c\nfn=(10) sin\n0x1500 1\n");
  Run(profile);
  EXPECT_EQ(out_.text().find("@plt"), std::string::npos) << out_.text();
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 3u + 2u + 5u);
}

TEST_F(InjectorLibraryStubsTest, ACallOfAnotherFunctionOrNotAtTheEntryLocatesNothing) {
  // The first stub's slot is calloc@plt but it calls malloc; the second calls free from its
  // third byte: neither is a slot's jump.
  extents_.objects["/lib/libc.so.6"].plt[0x26368] = "calloc@plt";
  std::string profile = kLibcStubs;
  profile.replace(profile.find("0x496e360 6"), 11, "0x496e362 6");
  Run(profile);
  EXPECT_EQ(out_.Find("/lib/libc.so.6|???|free@plt"), nullptr) << out_.text();
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 3u + 2u + 5u);
}

}  // namespace
}  // namespace cg_inject
