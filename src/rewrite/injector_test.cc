// One small hand-written profile per injection rule (include/cg_inject/inject.h). Each test feeds
// text through the Injector into a RecordingSink and checks names, self costs, edges and the
// invariants; when /usr/bin/callgrind_annotate exists, the rendered output is also read by it.
#include "cg_inject/error.h"
#include "cg_inject/inject.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cg_inject/symbols.h"
#include "rewrite/test_profile.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;
using testing::FeedProfile;
using testing::RecordingSink;

struct Fn {
  uint64_t start = 0, size = 0;
  std::string name, file;
  uint32_t line = 0;
  uint32_t function_id = 0;
  std::string code;
  std::vector<LineEntry> lines;
  std::vector<std::string_view> files;
};

Fn MakeFn(uint64_t start, uint64_t size, std::string name, std::string file = "",
          uint32_t line = 0) {
  Fn f;
  f.start = start;
  f.size = size;
  f.name = std::move(name);
  f.file = std::move(file);
  f.line = line;
  return f;
}

class InjectorTest : public ::testing::Test {
 protected:
  void AddSource(std::string object) {
    source_ = index_.AddSource({"/tmp/" + object, "perf-map", object, 0});
  }
  void Add(uint64_t start, uint64_t size, std::string name, std::string file = "",
           uint32_t line = 0, uint32_t function_id = 0) {
    Fn f = MakeFn(start, size, std::move(name), std::move(file), line);
    f.function_id = function_id;
    AddFn(f);
  }
  void AddFn(const Fn& f) {
    CodeVersionSpec v;
    v.start = f.start;
    v.size = f.size;
    v.raw_name = f.name;
    v.function_name = f.name;
    v.source_file = f.file;
    v.source_line = f.line;
    v.source = source_;
    v.function_id = f.function_id;
    v.code = f.code;
    v.lines = f.lines;
    v.files = f.files;
    index_.Add(std::move(v));
  }

  /// Runs the injector over `input`; returns false if it threw.
  void Run(std::string_view input, const ObjectExtents* extents = nullptr) {
    index_.Finish();
    Injector injector(index_, extents, options_, &out_);
    FeedProfile(input, &injector);
    stats_ = injector.stats();
    EXPECT_TRUE(out_.IdsConsistent());
    EXPECT_THAT(stats_.invariant_violations, ::testing::IsEmpty());
  }

  /// f's block ran 7 Ir of Builtins_Call's code (0x18c0004): they go back to Builtins_Call (5 of
  /// its own), with a call from f, and no `Builtin:` name appears.
  void ExpectBuiltinCodeGivenBack() {
    EXPECT_THAT(F("/usr/bin/node|???|Builtins_Call").self, ElementsAre(12));
    const auto& f = F("jit.map|???|f");
    EXPECT_THAT(f.self, ElementsAre(3));
    ASSERT_EQ(f.calls.count("/usr/bin/node|???|Builtins_Call"), 1u) << out_.text();
    EXPECT_THAT(f.calls.at("/usr/bin/node|???|Builtins_Call").second, ElementsAre(7));
    for (const auto& [key, fn] : out_.functions())
      EXPECT_EQ(key.find("Builtin:"), std::string::npos) << key;
  }
  /// /bin/beam's schedule calls JIT function f (0x1000) by an id bound to f's address name.
  void ExpectCallFromBeamEntersF() {
    const auto& schedule = F("/bin/beam|beam.c|schedule");
    ASSERT_EQ(schedule.calls.count("jit.map|f.erl|f"), 1u) << out_.text();
    EXPECT_THAT(schedule.calls.at("jit.map|f.erl|f").second, ElementsAre(5));
    EXPECT_THAT(F("jit.map|f.erl|f").self, ElementsAre(5));
    for (const auto& [key, fn] : out_.functions()) {
      EXPECT_EQ(key.find("0x0000000000001000"), std::string::npos) << out_.text();
      for (const auto& [target, call] : fn.calls)
        EXPECT_EQ(target.find("0x0000000000001000"), std::string::npos) << out_.text();
    }
  }
  /// A resolved JIT block (f) and an unresolved one (0x9000) call libc's clone, whose input
  /// target reads as `???`'s clone.
  void ExpectCloneCalledInLibc() {
    const auto& f = F("jit.map|f.erl|f");
    ASSERT_EQ(f.calls.count("/lib/libc.so|clone.S|clone"), 1u) << out_.text();
    EXPECT_THAT(f.calls.at("/lib/libc.so|clone.S|clone").second, ElementsAre(7));
    const auto& other = F("???|???|0x0000000000009000");
    ASSERT_EQ(other.calls.count("/lib/libc.so|clone.S|clone"), 1u) << out_.text();
    EXPECT_THAT(other.calls.at("/lib/libc.so|clone.S|clone").second, ElementsAre(7));
    EXPECT_THAT(other.self, ElementsAre(2));
    EXPECT_EQ(out_.Find("???|clone.S|clone"), nullptr) << out_.text();
    for (const auto& [key, fn] : out_.functions())
      EXPECT_EQ(fn.calls.count("???|clone.S|clone"), 0u) << key << "\n" << out_.text();
  }
  /// Two versions of code at the reused address 0x3000 (see kReusedBlock).
  void AddReusedVersions();
  /// How the calls from main into the reused block are split between them.
  void ExpectReusedSplit();

  const testing::FunctionSummary& F(const std::string& key) {
    const testing::FunctionSummary* f = out_.Find(key);
    if (!f) {
      ADD_FAILURE() << "no function " << key << " in\n" << out_.text();
      static testing::FunctionSummary empty;
      return empty;
    }
    return *f;
  }

  /// callgrind_annotate --inclusive=yes on the rendered output: "file:fn" -> first-event cost.
  std::map<std::string, uint64_t> Annotate(bool inclusive) {
    std::map<std::string, uint64_t> result;
    if (access("/usr/bin/callgrind_annotate", X_OK) != 0) {
      ADD_FAILURE() << "no /usr/bin/callgrind_annotate (scripts/setup-deps.sh installs valgrind)";
      return result;
    }
    char path[] = "/tmp/cg_inject_injector_test_XXXXXX";
    int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    if (fd < 0) return result;
    close(fd);
    { std::ofstream(path) << out_.text(); }
    std::string cmd = std::string("/usr/bin/callgrind_annotate --threshold=100 ") +
                      (inclusive ? "--inclusive=yes " : "") + path + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string text;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) text.append(buf, n);
    pclose(pipe);
    unlink(path);
    annotate_text_ = text;
    // Function rows: "  1,234 (12.34%)  file:function [object]". Parsed by hand: GCC 12 warns
    // (maybe-uninitialized, inside <regex>) under -Werror with sanitizers.
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      size_t digits_end = line.find_first_not_of("0123456789,");
      if (digits_end == 0 || digits_end == std::string_view::npos) continue;
      std::string digits;
      for (char c : line.substr(0, digits_end))
        if (c != ',') digits += c;
      std::string_view rest = line.substr(digits_end);
      if (!rest.starts_with(" (")) continue;
      size_t close = rest.find(')');
      if (close == std::string_view::npos) continue;
      rest.remove_prefix(close + 1);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      size_t bracket = rest.find('[');
      std::string_view name = rest.substr(0, bracket);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      size_t colon = name.find(':');
      if (name.empty() || colon == std::string_view::npos || colon == 0 ||
          name.substr(0, colon).find(' ') != std::string_view::npos)
        continue;
      result[std::string(name)] = std::stoull(digits);
    }
    EXPECT_FALSE(result.empty()) << "callgrind_annotate printed no functions:\n" << text;
    return result;
  }

  SymbolIndex index_;
  uint32_t source_ = 0;
  InjectOptions options_;
  RecordingSink out_;
  InjectStats stats_;
  std::string annotate_text_;
};

constexpr const char* kJit = "jit.map";

// main calls JIT function 0x1000 (f), which calls 0x2000 (g); `line` positions only.
constexpr const char* kLineOnlyProfile = R"(positions: line
events: Ir
ob=/bin/prog
fl=main.c
fn=main
5 10
cob=???
cfi=???
cfn=0x0000000000001000
calls=2 0
6 130
ob=???
fl=???
fn=0x0000000000001000
0 30
cob=???
cfi=???
cfn=0x0000000000002000
calls=4 0
0 100
fn=0x0000000000002000
0 100
totals: 140
)";

// Callgrind writes `cmd:` with two blanks; the program is the first word, whatever follows.
TEST(CommandProgramTest, FirstWordAfterTheBlanks) {
  EXPECT_EQ(CommandProgram("  node --perf-prof tsc -p ."), "node");
  EXPECT_EQ(CommandProgram("\t/usr/bin/mono\tmcs.exe"), "/usr/bin/mono");
  EXPECT_EQ(CommandProgram("./prog"), "./prog");
  EXPECT_EQ(CommandProgram("   "), "");
  EXPECT_EQ(CommandProgram(""), "");
}

// Rule 8 (and 1): without instr positions each block is named by its entry address; callee and
// caller sides carry the same (ob, fl, fn) triple; lines come from the name-derived location.
TEST_F(InjectorTest, NoInstrResolvesByBlockName) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.js", 10);
  Add(0x2000, 0x100, "g", "", 0);
  Run(kLineOnlyProfile);
  const auto& main_fn = F("/bin/prog|main.c|main");
  EXPECT_THAT(main_fn.self, ElementsAre(10));
  ASSERT_EQ(main_fn.calls.count("jit.map|f.js|f"), 1u) << out_.text();
  EXPECT_EQ(main_fn.calls.at("jit.map|f.js|f").first, 2u);
  EXPECT_THAT(main_fn.calls.at("jit.map|f.js|f").second, ElementsAre(130));
  const auto& f = F("jit.map|f.js|f");
  EXPECT_THAT(f.self, ElementsAre(30));
  EXPECT_THAT(f.lines.at("f.js:10"), ElementsAre(30));
  ASSERT_EQ(f.calls.count("jit.map|???|g"), 1u);
  EXPECT_THAT(F("jit.map|???|g").self, ElementsAre(100));
  EXPECT_THAT(out_.totals(), ElementsAre(140));
  EXPECT_FALSE(stats_.has_instr_positions);
  EXPECT_EQ(stats_.functions_resolved, 2);
  EXPECT_EQ(stats_.unnamed_jit_cost_before, 130u);
  EXPECT_EQ(stats_.unnamed_jit_cost_after, 0u);
  // `totals:` still comes after the whole body.
  EXPECT_GT(out_.text().find("totals: 140"), out_.text().find("fn=g"));

  auto inclusive = Annotate(true);
  EXPECT_EQ(inclusive["f.js:f"], 130u) << annotate_text_;
  EXPECT_EQ(inclusive["???:g"], 100u) << annotate_text_;
  EXPECT_EQ(inclusive["main.c:main"], 140u) << annotate_text_;
}

// ELF images of JIT code (src/elf/jit_image_plan.h) replace the source's object name per version.
TEST_F(InjectorTest, VersionObjectsOverrideTheSourceObjectName) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.js", 10);
  Add(0x2000, 0x100, "g", "", 0);
  options_.version_objects = {"/out/p.jit-1.dump.elf", ""};
  Run(kLineOnlyProfile);
  EXPECT_THAT(F("/out/p.jit-1.dump.elf|f.js|f").self, ElementsAre(30));
  EXPECT_EQ(F("/bin/prog|main.c|main").calls.count("/out/p.jit-1.dump.elf|f.js|f"), 1u);
  EXPECT_THAT(F("jit.map|???|g").self, ElementsAre(100));  // no image: the source's name
}

// Two call sites into pieces of one JIT function merge into one edge; its count would pass 2^64
// although no input sum does (the reader checks costs, not call counts): refused, not wrapped,
// and said at the fn= line of the block whose records overflowed when the input has a name.
TEST_F(InjectorTest, MergedCountsPast64BitsAreRefused) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.js", 10);
  index_.Finish();
  constexpr std::string_view kMerged = R"(positions: line
events: Ir
fl=main.c
fn=main
5 10
cob=???
cfi=???
cfn=0x0000000000001000
calls=9223372036854775808 0
5 1
cob=???
cfi=???
cfn=0x0000000000001010
calls=9223372036854775808 0
5 1
ob=???
fl=???
fn=0x0000000000001000
0 1
fn=0x0000000000001010
0 1
)";
  const std::string expected =
      "expected cost and count sums below 2^64, got an overflow merging the records of one "
      "function (the profile's counts are too large to merge)";
  for (const std::string name : {"", "in.cg"}) {
    options_.input_name = name;
    Injector injector(index_, nullptr, options_, &out_);
    try {
      FeedProfile(kMerged, &injector);
      ADD_FAILURE() << "no overflow";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), name.empty() ? expected : "in.cg:4: " + expected);
    }
  }
}

// Blocks that no source covers (stubs in ob=???, unknown JIT code) pass through as they were.
TEST_F(InjectorTest, UncoveredBlocksPassThrough) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "", 0);
  Run(R"(positions: line
events: Ir
ob=???
fl=???
fn=_init
0 7
fn=0x0000000000009000
0 11
cfn=0x0000000000001000
calls=1 0
0 5
fn=0x0000000000001000
0 5
)");
  EXPECT_THAT(F("???|???|_init").self, ElementsAre(7));
  EXPECT_THAT(F("???|???|0x0000000000009000").self, ElementsAre(11));
  EXPECT_EQ(F("???|???|0x0000000000009000").calls.count("jit.map|???|f"), 1u);
  EXPECT_EQ(stats_.jit_blocks, 2);
  EXPECT_EQ(stats_.jit_blocks_resolved, 1);
  ASSERT_EQ(stats_.top_unresolved.size(), 1u);
  EXPECT_EQ(stats_.top_unresolved[0].addr, 0x9000u);
  EXPECT_EQ(stats_.top_unresolved[0].cost, 11u);
}

// Recursion suffixes are carried over on both sides.
TEST_F(InjectorTest, RecursionSuffixCarriedOver) {
  AddSource(kJit);
  Add(0x1000, 0x100, "fib", "fib.js", 3);
  Run(R"(positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 10
cfn=0x0000000000001000'2
calls=1 0
0 20
fn=0x0000000000001000'2
0 20
)");
  EXPECT_THAT(F("jit.map|fib.js|fib").self, ElementsAre(10));
  EXPECT_EQ(F("jit.map|fib.js|fib").calls.count("jit.map|fib.js|fib'2"), 1u);
  EXPECT_THAT(F("jit.map|fib.js|fib'2").self, ElementsAre(20));
}

// Rule 2: a tail jump from f into g leaves g's instructions in f's block. They become g's self
// cost and f gets a synthesized call edge whose inclusive cost is what moved, so f's inclusive
// cost (and main's) is unchanged. The count is the execution count of g's entry instruction.
TEST_F(InjectorTest, TailJumpCostMovesWithSynthesizedEdge) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.js", 1);
  Add(0x2000, 0x100, "g", "g.js", 1);
  Run(R"(positions: instr
events: Ir
ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000001000
calls=3 0x1000
0x404 60
ob=???
fl=???
fn=0x0000000000001000
0x1000 3
0x1004 3
0x1008 3
0x2000 3
0x2004 3
0x2008 45
)");
  const auto& f = F("jit.map|f.js|f");
  EXPECT_THAT(f.self, ElementsAre(9));
  ASSERT_EQ(f.calls.count("jit.map|g.js|g"), 1u) << out_.text();
  EXPECT_EQ(f.calls.at("jit.map|g.js|g").first, 3u);
  EXPECT_THAT(f.calls.at("jit.map|g.js|g").second, ElementsAre(51));
  EXPECT_THAT(F("jit.map|g.js|g").self, ElementsAre(51));
  EXPECT_THAT(F("/bin/prog|main.c|main").calls.at("jit.map|f.js|f").second, ElementsAre(60));
  EXPECT_EQ(stats_.cost_lines_moved, 3);
  EXPECT_EQ(stats_.edges_synthesized, 1);
  EXPECT_TRUE(stats_.added_line_column);
  EXPECT_NE(out_.text().find("positions: instr line"), std::string::npos);

  auto inclusive = Annotate(true);
  EXPECT_EQ(inclusive["f.js:f"], 60u) << annotate_text_;
  EXPECT_EQ(inclusive["g.js:g"], 51u) << annotate_text_;
  auto self = Annotate(false);
  EXPECT_EQ(self["f.js:f"], 9u) << annotate_text_;
  EXPECT_EQ(self["g.js:g"], 51u) << annotate_text_;
}

// A `jump=` line from f's own code into g is better evidence of the call count than the entry
// instruction (g loops back to its entry here) and gives the call site.
TEST_F(InjectorTest, SynthesizedEdgeCountFromJumpLines) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "", 0);
  Add(0x2000, 0x100, "g", "", 0);
  Run(R"(positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0x1000 2
0x1008 2
jump=2 0x2000
0x1008
0x2000 10
0x2004 10
)");
  const auto& f = F("jit.map|???|f");
  ASSERT_EQ(f.calls.count("jit.map|???|g"), 1u) << out_.text();
  EXPECT_EQ(f.calls.at("jit.map|???|g").first, 2u);
  EXPECT_THAT(f.calls.at("jit.map|???|g").second, ElementsAre(20));
  EXPECT_NE(out_.text().find("calls=2 0x2000 0\n0x1008 0 20"), std::string::npos) << out_.text();
}

// Calls made from moved code move with it and their inclusive cost is part of the edge.
TEST_F(InjectorTest, CallsFromMovedCodeMoveWithIt) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "", 0);
  Add(0x2000, 0x100, "g", "", 0);
  Run(R"(positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0x1000 1
0x2000 1
ob=/lib/libc.so
fl=x.c
cfn=puts
calls=1 0x500
0x2004 40
)");
  const auto& f = F("jit.map|???|f");
  EXPECT_THAT(f.calls.at("jit.map|???|g").second, ElementsAre(41));
  EXPECT_EQ(F("jit.map|???|g").calls.count("???|x.c|puts"), 0u);
}

// BEAM enters a function at its `-CodeInfoPrologue` helper's last bytes, and Callgrind names the
// function (and its recursion copies) by that address. The prologue, without a line table, is its
// function in that function's file; a call entering there is the function's entry, so the deep
// copy's recursion (`'2` calling itself) stays a call instead of an internal transfer.
TEST_F(InjectorTest, BeamPrologueIsItsFunctionsEntry) {
  AddSource(kJit);
  for (auto [start, size, raw] :
       {std::tuple{0x1000, 0x30, "m:f/1-CodeInfoPrologue"}, std::tuple{0x1030, 0x40, "m:f/1"}}) {
    CodeVersionSpec v;
    v.start = uint64_t(start);
    v.size = uint64_t(size);
    v.raw_name = raw;
    v.function_name = "m:f/1";  // ParseErlang's name for both
    v.source_file = start == 0x1030 ? "m.erl" : "";
    v.source_line = start == 0x1030 ? 3 : 0;
    v.source = source_;
    index_.Add(std::move(v));
  }
  Run(R"(positions: instr
events: Ir
ob=/bin/beam
fl=beam.c
fn=process_main
0x400 1
cob=???
cfi=???
cfn=0x0000000000001028
calls=1 0x1028
0x404 100
ob=???
fl=???
fn=0x0000000000001028
0x1028 1
0x1030 9
cfn=0x0000000000001028'2
calls=1 0x1028
0x1034 90
fn=0x0000000000001028'2
0x1028 5
0x1030 45
cfn=0x0000000000001028'2
calls=4 0x1028
0x1034 40
)");
  const auto& f = F("jit.map|m.erl|m:f/1");
  EXPECT_THAT(f.self, ElementsAre(10));
  ASSERT_EQ(f.calls.count("jit.map|m.erl|m:f/1'2"), 1u) << out_.text();
  const auto& deep = F("jit.map|m.erl|m:f/1'2");
  EXPECT_THAT(deep.self, ElementsAre(50));
  ASSERT_EQ(deep.calls.count("jit.map|m.erl|m:f/1'2"), 1u) << out_.text();
  EXPECT_EQ(deep.calls.at("jit.map|m.erl|m:f/1'2").first, 4u);
  EXPECT_EQ(F("/bin/beam|beam.c|process_main").calls.count("jit.map|m.erl|m:f/1"), 1u);
  EXPECT_EQ(out_.text().find("???|m:f/1"), std::string::npos);
  EXPECT_EQ(stats_.internal_transfers_dropped, 0);
}

// Rule 3: two blocks of one function merge; a call into the middle of the function is an
// internal transfer and disappears; a call to its entry is recursion and stays.
TEST_F(InjectorTest, MergeDropsInternalTransfersKeepsRecursion) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "", 0);
  Run(R"(positions: instr
events: Ir
ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000001000
calls=1 0x1000
0x404 100
ob=???
fl=???
fn=0x0000000000001000
0x1000 10
cfn=0x0000000000001040
calls=2 0x1040
0x1004 40
cfn=0x0000000000001000
calls=1 0x1000
0x1008 50
fn=0x0000000000001040
0x1040 20
0x1044 20
fn=0x0000000000001000
0x1000 50
)");
  const auto& f = F("jit.map|???|f");
  EXPECT_THAT(f.self, ElementsAre(100));
  EXPECT_EQ(f.calls.size(), 1u) << out_.text();
  ASSERT_EQ(f.calls.count("jit.map|???|f"), 1u);
  EXPECT_THAT(f.calls.at("jit.map|???|f").second, ElementsAre(50));
  EXPECT_EQ(stats_.internal_transfers_dropped, 1);
  // The repeated block's position: the injector streams blocks, so the two pieces may stay two
  // lines; consumers sum them to 60.
  uint64_t at_entry = 0;
  std::istringstream text(out_.text());
  for (std::string line; std::getline(text, line);)
    if (line.starts_with("0x1000 0 ")) at_entry += std::stoull(line.substr(9));
  EXPECT_EQ(at_entry, 60u) << out_.text();
}

// Issue 23 item 4 (Mono): main calls fib through a stub (0xf80, in no source) whose block
// Callgrind also gives fib's first frame; that frame's recursive calls enter fib's own function
// at recursion level 1, whose deeper calls go to `'2`. Merged into fib, the stub block's calls to
// fib's entry are no call of fib to itself: fib's inclusive cost stays that of the code it
// merged, 550 (first frame 10 + its calls 240, main's direct calls 300), in every reading.
TEST_F(InjectorTest, MergedFramesCallingTheEntryKeepInclusiveCost) {
  AddSource(kJit);
  Add(0x1000, 0x100, "fib", "", 0);
  Run(R"(positions: instr
events: Ir
ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000000f80
calls=1 0xf80
0x404 352
cob=???
cfi=???
cfn=0x0000000000001000
calls=2 0x1000
0x408 300
ob=/lib/libc.so
fl=x.c
fn=compile
0x500 100
ob=???
fl=???
fn=0x0000000000000f80
0xf80 2
cob=/lib/libc.so
cfi=x.c
cfn=compile
calls=1 0x500
0xf84 100
0x1000 4
0x1004 4
cfn=0x0000000000001000
calls=1 0x1000
0x1008 150
cfn=0x0000000000001000
calls=1 0x1000
0x100c 90
0x1010 2
fn=0x0000000000001000
0x1000 20
cfn=0x0000000000001000'2
calls=8 0x1000
0x1008 520
fn=0x0000000000001000'2
0x1000 520
cfn=0x0000000000001000'2
calls=20 0x1000
0x1008 400
)");
  const auto& fib = F("jit.map|???|fib");
  EXPECT_THAT(fib.self, ElementsAre(30));
  EXPECT_EQ(fib.calls.count("jit.map|???|fib"), 0u) << out_.text();
  ASSERT_EQ(fib.calls.count("jit.map|???|fib'2"), 1u) << out_.text();
  EXPECT_THAT(fib.calls.at("jit.map|???|fib'2").second, ElementsAre(520));
  // The stub keeps its own cost and calls, and calls fib with what fib's first frame cost.
  const auto& stub = F("???|???|0x0000000000000f80");
  EXPECT_THAT(stub.self, ElementsAre(2));
  ASSERT_EQ(stub.calls.count("jit.map|???|fib"), 1u) << out_.text();
  EXPECT_THAT(stub.calls.at("jit.map|???|fib").second, ElementsAre(250));
  EXPECT_EQ(stats_.internal_transfers_dropped, 2);

  // callgrind_annotate: a called function's inclusive cost is the sum of the calls to it; a
  // function's self and outgoing calls (`--callgraph`'s `inclusive`, KCachegrind's reading of a
  // function nobody calls) give the same.
  auto inclusive = Annotate(true);
  EXPECT_EQ(inclusive["???:fib"], 550u) << annotate_text_;
  EXPECT_EQ(inclusive["???:0x0000000000000f80"], 352u) << annotate_text_;
  uint64_t self_and_calls = fib.self[0];
  for (const auto& [target, call] : fib.calls) self_and_calls += call.second[0];
  EXPECT_EQ(self_and_calls, 550u) << out_.text();
}

// Issue 23 item 2 (Erlang): a call names a JIT function by the id its block bound (`fn=(1)
// 0x...` of `???`) under a real object's `cob=`; KCachegrind binds the id to the JIT function
// (callgrind_annotate knows functions by file and name). The call must enter that function's
// output name, not a function of the real object that has no block.
TEST_F(InjectorTest, JitFunctionIdUnderAnotherObjectIsThatFunction) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.erl", 3);
  Run(R"(positions: instr
events: Ir
ob=(1) ???
fl=(1) ???
fn=(1) 0x0000000000001000
0x1000 5
ob=(2) /bin/beam
fl=(2) beam.c
fn=(2) schedule
0x400 1
cob=(2)
cfn=(1)
calls=1 0x1000
0x404 5
)");
  ExpectCallFromBeamEntersF();
}

// The same when the call defines the id (under the real object) before the JIT block uses it.
TEST_F(InjectorTest, JitFunctionIdDefinedUnderAnotherObjectIsThatFunction) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.erl", 3);
  Run(R"(positions: instr
events: Ir
ob=(2) /bin/beam
fl=(2) beam.c
fn=(2) schedule
0x400 1
cob=(2)
cfn=(1) 0x0000000000001000
calls=1 0x1000
0x404 5
ob=(1) ???
fl=(1) ???
fn=(1)
0x1000 5
)");
  ExpectCallFromBeamEntersF();
}

// The same for JIT code no source covers: the call enters the `???` block its id was bound to.
TEST_F(InjectorTest, UnnamedJitIdUnderAnotherObjectIsThatBlock) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.erl", 3);
  Run(R"(positions: instr
events: Ir
ob=(1) ???
fl=(1) ???
fn=(1) 0x0000000000003000
0x3000 5
ob=(2) /bin/beam
fl=(2) beam.c
fn=(2) schedule
0x400 1
cob=(2)
cfn=(1)
calls=1 0x3000
0x404 5
)");
  const auto& schedule = F("/bin/beam|beam.c|schedule");
  ASSERT_EQ(schedule.calls.count("???|???|0x0000000000003000"), 1u) << out_.text();
  EXPECT_EQ(schedule.calls.count("/bin/beam|beam.c|0x0000000000003000"), 0u) << out_.text();
}

// Issue 23 item 3 (Erlang): a JIT block calls libc's clone with no cob= (Callgrind left it
// out), so the target reads as `???`'s clone, and libc's block of clone comes later. The call
// must name the function that has the block: no call target without a block appears.
TEST_F(InjectorTest, CallWithoutCobEntersTheRealFunctionOfItsName) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.erl", 3);
  Run(R"(positions: instr
events: Ir
ob=(1) ???
fl=(1) ???
fn=(1) 0x0000000000001000
0x1000 5
cfi=(2) clone.S
cfn=(2) clone
calls=1 0x500
0x1004 7
fn=(3) 0x0000000000009000
0x9000 2
cfi=(2)
cfn=(2)
calls=1 0x500
0x9004 7
ob=(2) /lib/libc.so
fl=(2)
fn=(2)
0x500 14
)");
  ExpectCloneCalledInLibc();
}

// The same with libc's block first and the calls naming it by its bare id.
TEST_F(InjectorTest, CallByRealFunctionsIdEntersIt) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.erl", 3);
  Run(R"(positions: instr
events: Ir
ob=(2) /lib/libc.so
fl=(2) clone.S
fn=(2) clone
0x500 14
ob=(1) ???
fl=(1) ???
fn=(1) 0x0000000000001000
0x1000 5
cfi=(2)
cfn=(2)
calls=1 0x500
0x1004 7
fn=(3) 0x0000000000009000
0x9000 2
cfi=(2)
cfn=(2)
calls=1 0x500
0x9004 7
)");
  ExpectCloneCalledInLibc();
}

// With no code in any source nothing is renamed: such a call passes through as it was read.
TEST_F(InjectorTest, CallWithoutCobPassesThroughWithoutSources) {
  AddSource(kJit);
  Run(R"(positions: instr
events: Ir
ob=(1) ???
fl=(1) ???
fn=(3) 0x0000000000009000
0x9000 2
cfi=(2) clone.S
cfn=(2) clone
calls=1 0x500
0x9004 7
ob=(2) /lib/libc.so
fl=(2)
fn=(2)
0x500 7
)");
  const auto& other = F("???|???|0x0000000000009000");
  EXPECT_EQ(other.calls.count("???|clone.S|clone"), 1u) << out_.text();
  EXPECT_EQ(other.calls.count("/lib/libc.so|clone.S|clone"), 0u) << out_.text();
}

// Rule 5: a line table gives each cost line its file and line; `instr`-only input gets a line
// column.
TEST_F(InjectorTest, LineTableGivesFileAndLine) {
  AddSource(kJit);
  Fn f = MakeFn(0x1000, 0x100, "f", "a.js", 5);
  f.files = {"a.js", "b.js"};
  f.lines = {{0x1000, 5, 0, 0}, {0x1010, 7, 0, 0}, {0x1020, 40, 0, 1}};
  AddFn(f);
  Run(R"(positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0x1000 1
0x1014 2
0x1024 4
0x1028 8
)");
  const auto& fn = F("jit.map|a.js|f");
  EXPECT_THAT(fn.lines.at("a.js:5"), ElementsAre(1));
  EXPECT_THAT(fn.lines.at("a.js:7"), ElementsAre(2));
  EXPECT_THAT(fn.lines.at("b.js:40"), ElementsAre(12));
}

// A block entered where one version lived is rewritten line by line, in input order (no summing
// by position first): lines at one position, lines out of order and a tail jump's line still give
// the function one block, its lines sorted, every cost kept.
TEST_F(InjectorTest, JitBlockLinesKeptInOrderAddUp) {
  AddSource(kJit);
  Fn f = MakeFn(0x1000, 0x100, "f", "a.js", 5);
  f.files = {"a.js"};
  f.lines = {{0x1000, 5, 0, 0}, {0x1008, 6, 0, 0}};
  AddFn(f);
  Add(0x2000, 0x100, "g", "g.js", 1);
  Run(R"(positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0x1008 3
0x1000 2
0x1008 4
0x2000 10
0x1000 1
)");
  const auto& fn = F("jit.map|a.js|f");
  EXPECT_THAT(fn.self, ElementsAre(10));
  EXPECT_THAT(fn.lines.at("a.js:5"), ElementsAre(3));
  EXPECT_THAT(fn.lines.at("a.js:6"), ElementsAre(7));
  ASSERT_EQ(fn.calls.count("jit.map|g.js|g"), 1u) << out_.text();
  EXPECT_THAT(fn.calls.at("jit.map|g.js|g").second, ElementsAre(10));
  EXPECT_THAT(F("jit.map|g.js|g").self, ElementsAre(10));
  EXPECT_THAT(out_.totals(), ElementsAre(20));
  EXPECT_EQ(stats_.cost_lines_moved, 1);
  // One block for f, its lines by position: 0x1000 twice, then 0x1008 twice.
  const std::string& text = out_.text();
  size_t first = text.find("fn=f");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("fn=f", first + 1), std::string::npos) << text;
  size_t a = text.find("\n0x1000 5 2\n", first), b = text.find("\n0x1000 5 1\n", first);
  size_t c = text.find("\n0x1008 6 3\n", first), d = text.find("\n0x1008 6 4\n", first);
  ASSERT_TRUE(a != std::string::npos && b != std::string::npos && c != std::string::npos &&
              d != std::string::npos)
      << text;
  EXPECT_LT(std::max(a, b), std::min(c, d)) << text;

  auto self = Annotate(false);
  EXPECT_EQ(self["a.js:f"], 10u) << annotate_text_;
  EXPECT_EQ(self["g.js:g"], 10u) << annotate_text_;
}

class FakeExtents : public ObjectExtents {
 public:
  std::optional<bool> Contains(std::string_view object, uint64_t addr) const override {
    if (object != "/bin/helper") return std::nullopt;
    return addr >= 0x1000 && addr < 0x3000;
  }
};

// The AArch64 case: JIT instructions inside an ordinary function's block at absolute addresses.
// They go to the JIT function with a synthesized edge; the object's own addresses (told apart by
// its extent) stay, even where a JIT version also covers them.
TEST_F(InjectorTest, JitCodeInsideOrdinaryBlock) {
  AddSource(kJit);
  Add(0x2000, 0x100, "g", "", 0);
  Add(0x50000, 0x100, "h", "", 0);
  FakeExtents extents;
  Run(R"(positions: instr
events: Ir
ob=/bin/helper
fl=helper.c
fn=c_helper
0x2000 4
0x2004 4
0x50000 6
0x50004 6
totals: 20
)",
      &extents);
  const auto& helper = F("/bin/helper|helper.c|c_helper");
  EXPECT_THAT(helper.self, ElementsAre(8));
  ASSERT_EQ(helper.calls.count("jit.map|???|h"), 1u) << out_.text();
  EXPECT_EQ(helper.calls.at("jit.map|???|h").first, 6u);
  EXPECT_THAT(helper.calls.at("jit.map|???|h").second, ElementsAre(12));
  EXPECT_THAT(F("jit.map|???|h").self, ElementsAre(12));
  EXPECT_EQ(out_.Find("jit.map|???|g"), nullptr);
}

class NodeExtents : public ObjectExtents {
 public:
  std::optional<bool> Contains(std::string_view object, uint64_t addr) const override {
    if (object != "/usr/bin/node") return std::nullopt;
    return addr >= 0x400000 && addr < 0x3000000;
  }
  bool AddressesAreAbsolute(std::string_view object) const override {
    return object == "/usr/bin/node";
  }
};

// Rule 9: Node's perf map also lists V8's embedded builtins, which are /usr/bin/node's own code
// (`Builtin:Call` = ELF `Builtins_Call`). A source never renames them: cost that a JIT block
// holds at their addresses goes back to the object's function, with a synthesized edge.
TEST_F(InjectorTest, RealObjectCodeIsNeverRenamed) {
  AddSource(kJit);
  Add(0x18c0000, 0x100, "Builtin:Call");
  Add(0x10000000, 0x100, "f");
  NodeExtents extents;
  Run(R"(positions: instr
events: Ir
ob=/usr/bin/node
fl=???
fn=Builtins_Call
0x18c0000 5
ob=???
fl=???
fn=0x0000000010000000
0x10000000 3
0x18c0004 7
fn=0x00000000018c0010
0x18c0010 2
)",
      &extents);
  ExpectBuiltinCodeGivenBack();
  EXPECT_THAT(F("???|???|0x00000000018c0010").self, ElementsAre(2));
  EXPECT_EQ(stats_.object_code_lines, 1);
}

class NodeExtentsWithSymbols : public NodeExtents {
 public:
  std::optional<std::string> FunctionAt(std::string_view object, uint64_t addr) const override {
    if (object != "/usr/bin/node") return std::nullopt;
    if (addr >= 0x18c0000 && addr < 0x18c0020) return "Builtins_Call";
    if (addr >= 0x18c0020 && addr < 0x18c0040) return "Builtins_TailTarget";
    return std::nullopt;
  }
};

// Builtins_Call's block holds a cost line in Builtins_TailTarget (0x18c0024, a tail jump Callgrind
// charged to the jumper), and JIT function f ran Builtins_TailTarget's code (0x18c0028).
constexpr const char* kTailJumpIntoBuiltin = R"(positions: instr
events: Ir
ob=/usr/bin/node
fl=builtins.cc
fn=Builtins_Call
0x18c0000 5
0x18c0024 1
ob=???
fl=???
fn=0x0000000010000000
0x10000000 3
0x18c0028 7
)";

// Rule 9, owner: object code in a JIT block belongs to the ELF symbol that contains it, not to
// the function that happened to have a cost line there: Callgrind charged a tail jump from
// Builtins_Call into Builtins_TailTarget to Builtins_Call (0x18c0024 in its block), as it does
// in Node 20 captures (Builtins_InterpreterPushUndefinedAndArgsThenCall's code under
// Builtins_InterpreterEntryTrampoline).
TEST_F(InjectorTest, ObjectCodeGoesToTheElfSymbolThatContainsIt) {
  AddSource(kJit);
  Add(0x18c0000, 0x20, "Builtin:Call");
  Add(0x18c0020, 0x20, "Builtin:TailTarget");
  Add(0x10000000, 0x100, "f");
  NodeExtentsWithSymbols extents;
  Run(kTailJumpIntoBuiltin, &extents);
  EXPECT_THAT(F("/usr/bin/node|builtins.cc|Builtins_Call").self, ElementsAre(6));
  // A function the profile never named gets the file Callgrind gives code without debug info.
  EXPECT_THAT(F("/usr/bin/node|???|Builtins_TailTarget").self, ElementsAre(7));
  const auto& f = F("jit.map|???|f");
  ASSERT_EQ(f.calls.count("/usr/bin/node|???|Builtins_TailTarget"), 1u) << out_.text();
  EXPECT_EQ(stats_.object_code_lines, 1);
}

// Without symbols (a stripped object), the function that had a cost line there keeps it.
TEST_F(InjectorTest, ObjectCodeWithoutSymbolsGoesToTheFunctionThatRanIt) {
  AddSource(kJit);
  Add(0x18c0000, 0x20, "Builtin:Call");
  Add(0x18c0020, 0x20, "Builtin:TailTarget");
  Add(0x10000000, 0x100, "f");
  NodeExtents stripped;
  Run(kTailJumpIntoBuiltin, &stripped);
  EXPECT_THAT(F("/usr/bin/node|builtins.cc|Builtins_Call").self, ElementsAre(13));
}

// Rule 4: a moved function (same function_id at two addresses) is one identity; two functions
// with one name but different files stay two.
TEST_F(InjectorTest, MovedFunctionIsOneIdentity) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "f.js", 1, 7);
  Add(0x5000, 0x100, "f", "f.js", 1, 7);
  Add(0x9000, 0x100, "f", "other.js", 1);
  Run(R"(positions: line
events: Ir
ob=/bin/prog
fl=main.c
fn=main
0 1
cob=???
cfi=???
cfn=0x0000000000001000
calls=1 0
0 3
cob=???
cfi=???
cfn=0x0000000000005000
calls=1 0
0 5
cob=???
cfi=???
cfn=0x0000000000009000
calls=1 0
0 9
ob=???
fl=???
fn=0x0000000000001000
0 3
fn=0x0000000000005000
0 5
fn=0x0000000000009000
0 9
)");
  EXPECT_THAT(F("jit.map|f.js|f").self, ElementsAre(8));
  EXPECT_THAT(F("jit.map|other.js|f").self, ElementsAre(9));
  const auto& main_fn = F("/bin/prog|main.c|main");
  EXPECT_EQ(main_fn.calls.at("jit.map|f.js|f").first, 2u);
  EXPECT_THAT(main_fn.calls.at("jit.map|f.js|f").second, ElementsAre(8));
  EXPECT_EQ(stats_.functions_resolved, 2);
}

// Rule 4: an address reused by new code. In a profile with several parts, part N takes the N-th
// loaded version; the choice is counted as ambiguous. Callgrind says so in part 1: a client
// request (CALLGRIND_DUMP_STATS_AT) ended it, not the program's end.
TEST_F(InjectorTest, ReusedAddressFollowsPartOrder) {
  AddSource(kJit);
  Add(0x1000, 0x100, "old", "", 0);
  Add(0x1000, 0x100, "new", "", 0);
  Run(R"(part: 1
desc: Trigger: Client Request: reuse
positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 3
part: 2
desc: Trigger: Program termination
positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 5
)");
  EXPECT_THAT(F("jit.map|???|old").self, ElementsAre(3));
  EXPECT_THAT(F("jit.map|???|new").self, ElementsAre(5));
  EXPECT_EQ(stats_.ambiguous_choices, 1);
  EXPECT_EQ(stats_.parts, 2);
}

// Issue 33 defect 4: in a profile of one part, a perf map cannot tell which of two functions
// that used one address ran there (no code bytes, the block's lines fit both). Before, the first
// one loaded took the block and every call into it: tsc's node:crypto module wrapper, run once,
// was given 22,352 calls of the function that replaced it. Now the block is one function whose
// name says it is ambiguous, and the calls and costs stay as Callgrind counted them.
constexpr const char* kMapReusedProfile = R"(desc: Trigger: Program termination
positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0x1000 40
0x1010 50
ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000001000
calls=22352 0x1000
0x404 90
)";
constexpr const char* kAmbiguous = "jit.map|???|0x0000000000001000 (ambiguous: wrapper | hot)";

TEST_F(InjectorTest, ReusedAddressAPerfMapCannotTellApartIsAmbiguous) {
  AddSource(kJit);
  Add(0x1000, 0x100, "wrapper");
  Add(0x1000, 0x80, "hot");
  Run(kMapReusedProfile);
  EXPECT_EQ(out_.Find("jit.map|???|wrapper"), nullptr) << out_.text();
  EXPECT_EQ(out_.Find("jit.map|???|hot"), nullptr) << out_.text();
  EXPECT_THAT(F(kAmbiguous).self, ElementsAre(90));
  const auto& main_fn = F("/bin/prog|main.c|main");
  ASSERT_EQ(main_fn.calls.count(kAmbiguous), 1u) << out_.text();
  EXPECT_EQ(main_fn.calls.at(kAmbiguous).first, 22352u);
  EXPECT_THAT(main_fn.calls.at(kAmbiguous).second, ElementsAre(90));
  EXPECT_EQ(stats_.ambiguous_functions, 1);
  EXPECT_EQ(stats_.ambiguous_cost, 90u);
  std::string text;
  AppendStatsText(stats_, &text);
  EXPECT_NE(text.find("functions named ambiguous (reused code a perf map cannot tell apart): 1 "
                      "(90 Ir self)"),
            std::string::npos)
      << text;
}

// The block's lines are the evidence: a line past the end of the shorter version's code is the
// longer one's, and then the block is the longer one's (no ambiguity); and code that versions of
// one definition share is that definition's.
TEST_F(InjectorTest, ReusedAddressWithEvidenceOrOneDefinitionIsNotAmbiguous) {
  AddSource(kJit);
  Add(0x1000, 0x100, "wrapper");
  Add(0x1000, 0x10, "hot");  // the block's line at 0x1010 is past its end
  Add(0x5000, 0x100, "f", "f.js", 3);
  Add(0x5000, 0x100, "f", "f.js", 3);  // re-JITed where it was
  std::string profile = kMapReusedProfile;
  profile += R"(ob=???
fl=???
fn=0x0000000000005000
0x5000 7
)";
  Run(profile);
  EXPECT_THAT(F("jit.map|???|wrapper").self, ElementsAre(90));
  EXPECT_EQ(F("/bin/prog|main.c|main").calls.at("jit.map|???|wrapper").first, 22352u);
  EXPECT_THAT(F("jit.map|f.js|f").self, ElementsAre(7));
  EXPECT_EQ(stats_.ambiguous_functions, 0);
  for (const auto& [key, fn] : out_.functions())
    EXPECT_EQ(key.find("ambiguous"), std::string::npos) << key;
}

// With several parts the part number still chooses (ReusedAddressFollowsPartOrder); in one part
// the choice by part number is not made, also where the call comes before the block, and for the
// recursion copy `'2` (its own ambiguous function, which calls it enter).
TEST_F(InjectorTest, AmbiguousFunctionKeepsCallsBeforeItsBlockAndRecursion) {
  AddSource(kJit);
  Add(0x1000, 0x100, "wrapper");
  Add(0x1000, 0x80, "hot");
  Run(R"(desc: Trigger: Program termination
positions: instr
events: Ir
ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000001000
calls=3 0x1000
0x404 16
ob=???
fl=???
fn=0x0000000000001000
0x1000 4
cfn=0x0000000000001000'2
calls=2 0x1000
0x1004 12
fn=0x0000000000001000'2
0x1000 6
0x1008 6
)");
  const std::string ambiguous2 = std::string(kAmbiguous) + "'2";
  const auto& main_fn = F("/bin/prog|main.c|main");
  ASSERT_EQ(main_fn.calls.count(kAmbiguous), 1u) << out_.text();
  EXPECT_EQ(main_fn.calls.at(kAmbiguous).first, 3u);
  const auto& a = F(kAmbiguous);
  EXPECT_THAT(a.self, ElementsAre(4));
  ASSERT_EQ(a.calls.count(ambiguous2), 1u) << out_.text();
  EXPECT_EQ(a.calls.at(ambiguous2).first, 2u);
  EXPECT_THAT(F(ambiguous2).self, ElementsAre(12));
  EXPECT_EQ(stats_.ambiguous_functions, 2);
}

// Rule 4: instruction boundaries from code bytes decide between versions at a reused address.
TEST_F(InjectorTest, ReusedAddressChosenByInstructionBoundaries) {
  AddSource(kJit);
  Fn a = MakeFn(0x1000, 6, "five_byte_mov", "", 0);
  a.code = std::string("\xb8\x01\x00\x00\x00\xc3", 6);  // mov eax, 1; ret
  Fn b = MakeFn(0x1000, 6, "nops", "", 0);
  b.code = std::string("\x90\x90\x90\x90\x90\xc3", 6);  // nop x5; ret
  AddFn(a);
  AddFn(b);
  Run(R"(positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0x1000 1
0x1001 1
0x1002 1
0x1005 1
)");
  EXPECT_THAT(F("jit.map|???|nops").self, ElementsAre(4));
  EXPECT_EQ(out_.Find("jit.map|???|five_byte_mov"), nullptr) << out_.text();
}

// Issue 23 item 8: an address reused by two versions whose instructions start at the same
// offsets: at 0x5005 the earlier one (scan) has a mov, the later one (parse) a call. The block's
// lines fit both, so only its call line tells which ran: parse, the only one that can have made
// the 3 calls Callgrind recorded there. No call is given to scan.
TEST_F(InjectorTest, ReusedAddressCallLineGoesToTheVersionWithACall) {
  AddSource(kJit);
  Fn scan = MakeFn(0x5000, 11, "scan");
  scan.code = std::string("\x55\x90\x90\x90\x90\xb8\x01\x00\x00\x00\xc3", 11);
  Fn parse = MakeFn(0x5000, 11, "parse");
  parse.code = std::string("\x55\x90\x90\x90\x90\xe8\x00\x00\x00\x00\xc3", 11);
  AddFn(scan);
  AddFn(parse);
  Run(R"(positions: instr
events: Ir
ob=/bin/prog
fl=main.c
fn=helper
0x400 30
ob=???
fl=???
fn=0x0000000000005000
0x5000 3
0x5001 3
0x5005 3
cob=/bin/prog
cfi=main.c
cfn=helper
calls=3 0x400
0x5005 30
0x500a 3
)");
  const auto& p = F("jit.map|???|parse");
  ASSERT_EQ(p.calls.count("/bin/prog|main.c|helper"), 1u) << out_.text();
  EXPECT_EQ(p.calls.at("/bin/prog|main.c|helper").first, 3u);
  EXPECT_THAT(p.self, ElementsAre(12));
  if (const auto* s = out_.Find("jit.map|???|scan")) {
    EXPECT_TRUE(s->calls.empty()) << out_.text();
  }
  EXPECT_EQ(stats_.ambiguous_choices, 0);
}

// Two versions at 0x3000: v1 = lea rax, [rdi+1]; ret (5 bytes), v2 = 11 bytes of other code.
// main calls the block twice; the block holds instructions of both.
constexpr const char* kReusedHeader = "positions: instr\nevents: Ir\n";
constexpr const char* kCallsReusedBlock = R"(ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000003000
calls=2 0x3000
0x404 6
)";
constexpr const char* kReusedBlock = R"(ob=???
fl=???
fn=0x0000000000003000
0x3000 2
0x3003 1
0x3004 1
0x3006 1
0x300a 1
)";

void InjectorTest::AddReusedVersions() {
  AddSource(kJit);
  Fn v1 = MakeFn(0x3000, 5, "v1");
  v1.code = std::string("\x48\x8d\x47\x01\xc3", 5);
  Fn v2 = MakeFn(0x3000, 11, "v2");
  v2.code = std::string("\x48\x89\xf8\x48\x01\xc0\x48\x83\xc0\x07\xc3", 11);
  AddFn(v1);
  AddFn(v2);
}

void InjectorTest::ExpectReusedSplit() {
  EXPECT_THAT(F("jit.map|???|v1").self, ElementsAre(2));
  EXPECT_THAT(F("jit.map|???|v2").self, ElementsAre(4));
  const auto& main_fn = F("/bin/prog|main.c|main");
  ASSERT_EQ(main_fn.calls.count("jit.map|???|v1"), 1u) << out_.text();
  EXPECT_EQ(main_fn.calls.at("jit.map|???|v1").first, 1u);
  EXPECT_THAT(main_fn.calls.at("jit.map|???|v1").second, ElementsAre(2));
  ASSERT_EQ(main_fn.calls.count("jit.map|???|v2"), 1u) << out_.text();
  EXPECT_EQ(main_fn.calls.at("jit.map|???|v2").first, 1u);
  EXPECT_THAT(main_fn.calls.at("jit.map|???|v2").second, ElementsAre(4));
}

// Rule 4: an address reused without a dump in between: one block holds both versions' code.
// Each version gets its own instructions; the shared entry line and the call into the block are
// split by the versions' entry counts, the call's inclusive cost by their cost in the block.
TEST_F(InjectorTest, ReusedAddressInOneBlockIsSplit) {
  AddReusedVersions();
  Run(std::string(kReusedHeader) + kCallsReusedBlock + kReusedBlock);
  ExpectReusedSplit();
  EXPECT_EQ(F("jit.map|???|v2").calls.size(), 0u);
  EXPECT_EQ(stats_.reused_blocks_split, 1);
}

// The injector streams: a call into a reused block waits for that block when it comes later
// (the test above), and uses the block's split when it came first. Both orders read the same.
TEST_F(InjectorTest, ReusedSplitIsTheSameWhicheverBlockComesFirst) {
  AddReusedVersions();
  Run(std::string(kReusedHeader) + kReusedBlock + kCallsReusedBlock);
  ExpectReusedSplit();
}

// Issue 33 defect 1: a call into a reused block is split among the versions by their entry
// counts (v1 3, v2 1 here), but a call line of count 1 enters one version: it goes whole, with
// all its inclusive cost, to the version of larger count. Every call line written keeps at least
// one call and the counts add up to the input's. (Split 3:1 by proportion, the count-1 line gave
// v1 `calls=0` with three quarters of its cost, which callgrind_annotate reads as main's self
// cost; tsc under Node 20 had 27 such lines.)
TEST_F(InjectorTest, ReusedSplitKeepsACallOnEveryLine) {
  AddReusedVersions();
  Run(std::string(kReusedHeader) + R"(ob=/bin/prog
fl=main.c
fn=main
0x400 1
cob=???
cfi=???
cfn=0x0000000000003000
calls=3 0x3000
0x404 9
cob=???
cfi=???
cfn=0x0000000000003000
calls=1 0x3000
0x408 3
ob=???
fl=???
fn=0x0000000000003000
0x3000 4
0x3003 1
0x3004 3
0x3006 1
0x300a 1
)");
  EXPECT_EQ(out_.text().find("calls=0"), std::string::npos) << out_.text();
  const auto& main_fn = F("/bin/prog|main.c|main");
  ASSERT_EQ(main_fn.calls.count("jit.map|???|v1"), 1u) << out_.text();
  ASSERT_EQ(main_fn.calls.count("jit.map|???|v2"), 1u) << out_.text();
  // 0x404's 3 calls split 2:1 by proportion; 0x408's one call enters v1.
  EXPECT_EQ(main_fn.calls.at("jit.map|???|v1").first, 3u);
  EXPECT_EQ(main_fn.calls.at("jit.map|???|v2").first, 1u);
  // Nothing lost: the inclusive costs of the two input lines (9 + 3) are all there.
  EXPECT_EQ(
      main_fn.calls.at("jit.map|???|v1").second[0] + main_fn.calls.at("jit.map|???|v2").second[0],
      12u);
  // callgrind_annotate reads main's self cost as the input has it (a line after `calls=0` is
  // its caller's self cost there).
  EXPECT_EQ(Annotate(/*inclusive=*/false)["main.c:main"], 1u) << annotate_text_;
}

// A JIT block that runs the program's own code before any block of the program: the `cmd:`
// header names the program, so its code is known as such from the start, and its ELF symbol
// names the owner (Rule 9; without symbols the owner is known only once its block was seen).
TEST_F(InjectorTest, ProgramCodeIsKnownBeforeItsFirstBlock) {
  AddSource(kJit);
  Add(0x18c0000, 0x20, "Builtin:Call");
  Add(0x10000000, 0x100, "f");
  NodeExtentsWithSymbols extents;
  Run(R"(cmd: /usr/bin/node app.js
positions: instr
events: Ir
ob=???
fl=???
fn=0x0000000010000000
0x10000000 3
0x18c0004 7
ob=/usr/bin/node
fl=???
fn=Builtins_Call
0x18c0000 5
)",
      &extents);
  ExpectBuiltinCodeGivenBack();
}

TEST_F(InjectorTest, StatsRenderers) {
  AddSource(kJit);
  Add(0x1000, 0x100, "f", "", 0);
  Run(R"(positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 30
fn=0x0000000000009000
0 10
)");
  std::string text;
  AppendStatsText(stats_, &text);
  EXPECT_NE(text.find("100.00% before, 25.00% after"), std::string::npos) << text;
  EXPECT_NE(text.find("--dump-instr=yes"), std::string::npos) << text;
  EXPECT_NE(text.find("0x0000000000009000  10 Ir"), std::string::npos) << text;
  std::string json;
  AppendStatsJson(stats_, &json);
  EXPECT_NE(json.find("\"unnamed_jit_cost_before\":40"), std::string::npos) << json;
  EXPECT_NE(json.find("\"top_unresolved\":[{\"name\":\"0x0000000000009000\""), std::string::npos)
      << json;
  EXPECT_EQ(json.back(), '\n');
}

}  // namespace
}  // namespace cg_inject

namespace cg_inject {
namespace {

// PHP's tracing JIT jumps into execute_ex (Callgrind: a call that never returns), so the raw
// profile carries edges worth more than the whole part. Edges are summed over their calls= lines
// per part, as the consumers add them up.
TEST_F(InjectorTest, CallEdgesAboveThePartTotalAreCounted) {
  AddSource(kJit);
  Add(0x1000, 0x100, "jitted");
  Run(R"(positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 30
cob=/usr/bin/php
cfi=zend.c
cfn=execute_ex
calls=1 0
0 500
ob=/usr/bin/php
fl=zend.c
fn=main
0 5
cfn=helper
calls=1 0
0 30
cfn=helper
calls=1 0
0 30
cfn=execute_ex
calls=1 0
0 40
fn=execute_ex
0 10
fn=helper
0 5
)");
  // Total 50: jitted -> execute_ex (500) and main -> helper (30 + 30, each under 50) exceed it;
  // main -> execute_ex (40) does not.
  EXPECT_EQ(stats_.total_cost, 50u);
  EXPECT_EQ(stats_.overflowing_call_edges, 2);
  std::string text;
  AppendStatsText(stats_, &text);
  EXPECT_NE(text.find("call edges worth more than their whole part: 2 (Callgrind's call tracking "
                      "most likely broke: self costs are exact, inclusive costs and the call "
                      "graph may not be)"),
            std::string::npos)
      << text;
  std::string json;
  AppendStatsJson(stats_, &json);
  EXPECT_NE(json.find("\"overflowing_call_edges\":2"), std::string::npos) << json;
}

TEST_F(InjectorTest, CallEdgesAreCountedPerPart) {
  AddSource(kJit);
  Add(0x1000, 0x100, "jitted");
  // Each part alone: main -> helper is 30 of a part total of 40, under it; summed over both
  // parts it would be 60 of 80 and still under. Only part 2's own 90 counts.
  Run(R"(positions: line
events: Ir
part: 1
ob=/bin/x
fl=x.c
fn=main
0 30
cfn=helper
calls=1 0
0 30
fn=helper
0 10
positions: line
events: Ir
part: 2
ob=/bin/x
fl=x.c
fn=main
0 30
cfn=helper
calls=1 0
0 90
fn=helper
0 10
)");
  EXPECT_EQ(stats_.parts, 2);
  EXPECT_EQ(stats_.overflowing_call_edges, 1);
  std::string text;
  AppendStatsText(stats_, &text);
  EXPECT_NE(text.find("call edges worth more than their whole part: 1"), std::string::npos) << text;
}

// An edge's calls add up over every block of its caller, a JIT function's as an ordinary one's,
// and two callers of one target are two edges (the callers are told apart by the injector's
// indexes of them: a JIT-looking function's and the input sums').
TEST_F(InjectorTest, CallEdgesAddUpOverTheCallersBlocks) {
  AddSource(kJit);
  Add(0x1000, 0x100, "jitted");
  Run(R"(positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 10
cob=/bin/x
cfi=x.c
cfn=helper
calls=1 0
0 30
ob=/bin/x
fl=x.c
fn=main
0 10
cfn=helper
calls=1 0
0 30
fn=helper
0 10
ob=???
fl=???
fn=0x0000000000001000
0 5
cob=/bin/x
cfi=x.c
cfn=helper
calls=1 0
0 30
ob=/bin/x
fl=x.c
fn=main
0 5
cfn=helper
calls=1 0
0 30
)");
  // Total 40: jitted -> helper and main -> helper are 60 each over two blocks (30 each, under
  // 40, block by block; 120 if the two callers were one).
  EXPECT_EQ(stats_.total_cost, 40u);
  EXPECT_EQ(stats_.overflowing_call_edges, 2);
}

TEST_F(InjectorTest, SoundProfileReportsNoOverflowingEdge) {
  AddSource(kJit);
  Add(0x1000, 0x100, "jitted");
  Run(R"(positions: line
events: Ir
ob=/bin/x
fl=x.c
fn=main
0 30
cfn=helper
calls=1 0
0 10
fn=helper
0 10
)");
  EXPECT_EQ(stats_.overflowing_call_edges, 0);
  std::string text;
  AppendStatsText(stats_, &text);
  EXPECT_EQ(text.find("call edges worth more"), std::string::npos) << text;
}

}  // namespace
}  // namespace cg_inject
