#include "callgrind/callgrind_writer.h"

#include <string>

#include <gtest/gtest.h>

#include "callgrind/callgrind_reader.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

/// Formats every record by default: most tests here are about the writer's own rules; the
/// copying of input text has its own tests below.
std::string Rewrite(std::string_view text, CallgrindWriterOptions options = {.copy_input = false}) {
  auto in = OpenMemoryInput(text, "in.cg");
  StringSink out;
  CallgrindWriter writer(&out, options);
  ReadCallgrind(*in, writer);
  return out.data();
}

ProfileSummary Summary(std::string_view text) {
  auto in = OpenMemoryInput(text, "in.cg");
  ProfileSummary summary;
  ReadCallgrind(*in, summary);
  return summary;
}

/// Reads `text`, writes it (with each option combination, input text copied or not), reads the
/// output again and expects the same records, digest included; returns the output formatted
/// with compression.
std::string ExpectRoundTrip(std::string_view text) {
  ProfileSummary original = Summary(text);
  std::string written;
  for (bool copy : {false, true}) {
    for (bool names : {true, false}) {
      for (bool positions : {true, false}) {
        CallgrindWriterOptions options{
            .compress_names = names, .compress_positions = positions, .copy_input = copy};
        std::string out = Rewrite(text, options);
        SCOPED_TRACE(out);
        EXPECT_EQ(CompareSummaries(original, Summary(out)), "");
        EXPECT_EQ(Rewrite(out, options), out);
        if (names && positions && !copy) written = out;
      }
    }
  }
  return written;
}

TEST(CallgrindWriterTest, SpecExtendedExample) {
  // From cl-format.xml; the output uses name compression and keeps the structure.
  std::string out = ExpectRoundTrip(
      "# callgrind format\nevents: Instructions\n\n"
      "fl=file1.c\nfn=main\n16 20\ncfn=func1\ncalls=1 50\n16 400\n"
      "cfi=file2.c\ncfn=func2\ncalls=3 20\n16 400\n\n"
      "fn=func1\n51 100\ncfi=file2.c\ncfn=func2\ncalls=2 20\n51 300\n\n"
      "fl=file2.c\nfn=func2\n20 700\n");
  EXPECT_EQ(out,
            "# callgrind format\nevents: Instructions\n\n"
            "\nfl=(1) file1.c\nfn=(1) main\n16 20\ncfn=(2) func1\ncalls=1 50\n* 400\n"
            "cfi=(2) file2.c\ncfn=(3) func2\ncalls=3 20\n* 400\n"
            "\nfn=(2)\n51 100\ncfi=(2)\ncfn=(3)\ncalls=2 20\n* 300\n"
            "\nfl=(2)\nfn=(3)\n20 700\n");
}

TEST(CallgrindWriterTest, NoCompression) {
  EXPECT_EQ(Rewrite("# callgrind format\npositions: instr line\nevents: Ir\nob=(1) a.so\n"
                    "fl=(1) a.c\nfn=(1) f\n0x10 3 1\n0x11 3 2\ncob=(2) b.so\ncfn=(2) g\n"
                    "calls=1 0x20 9\n0x11 3 5\n",
                    {.compress_names = false, .compress_positions = false}),
            "# callgrind format\npositions: instr line\nevents: Ir\n\n"
            "\nob=a.so\nfl=a.c\nfn=f\n0x10 3 1\n0x11 3 2\ncob=b.so\ncfn=g\ncalls=1 0x20 9\n"
            "0x11 3 5\n");
}

TEST(CallgrindWriterTest, InlinedFilesUseFiAndFe) {
  std::string out = ExpectRoundTrip(
      "# callgrind format\nevents: Ir\nfl=a.c\nfn=f\n1 1\nfi=inl.h\n7 2\ncfn=g\ncalls=1 3\n7 4\n"
      "fe=a.c\n2 1\nfn=h\n3 3\n");
  EXPECT_EQ(out,
            "# callgrind format\nevents: Ir\n\n\nfl=(1) a.c\nfn=(1) f\n1 1\nfi=(2) inl.h\n7 2\n"
            "cfn=(2) g\ncalls=1 3\n* 4\nfe=(1)\n2 1\n\nfn=(3) h\n3 3\n");
}

TEST(CallgrindWriterTest, CallTargetsNeedCobAndCfiOnlyWhenTheyDiffer) {
  std::string out = ExpectRoundTrip(
      "# callgrind format\nevents: Ir\nob=o1\nfl=a.c\nfn=f\ncob=o1\ncfi=a.c\ncfn=g\ncalls=1 3\n"
      "4 9\ncob=o2\ncfi=b.c\ncfn=h\ncalls=1 5\n4 1\n");
  EXPECT_EQ(out,
            "# callgrind format\nevents: Ir\n\n\nob=(1) o1\nfl=(1) a.c\nfn=(1) f\ncfn=(2) g\n"
            "calls=1 3\n4 9\ncob=(2) o2\ncfi=(2) b.c\ncfn=(3) h\ncalls=1 5\n* 1\n");
}

TEST(CallgrindWriterTest, JumpsAndConditionalJumps) {
  std::string out = ExpectRoundTrip(
      "# callgrind format\npositions: instr line\nevents: Ir\nfl=a.c\nfn=f\n0x10 3 1\n"
      "jcnd=120/130 +18 +1\n* *\njfi=b.c\njfn=g\njump=5 0x400 9\n+2 *\njcnd=7 3 0x10 3\n* *\n");
  EXPECT_EQ(out,
            "# callgrind format\npositions: instr line\nevents: Ir\n\n\nfl=(1) a.c\nfn=(1) f\n"
            "0x10 3 1\njcnd=120/130 +18 4\n* *\njfi=(2) b.c\njfn=(2) g\njump=5 0x400 9\n+2 *\n"
            "jcnd=3/7 -2 *\n* *\n");
}

TEST(CallgrindWriterTest, PartsHeadersAndTrailingTotals) {
  std::string out = ExpectRoundTrip(
      "# callgrind format\nversion: 1\ncreator: x\npart: 1\ndesc: I1 cache: \nevents: Ir\n"
      "fn=(1) main\n1 5\ntotals: 5\n\npart: 2\nevents: Ir Dr\nfn=(1)\n1 6 1\ntotals: 6 1\n");
  EXPECT_EQ(out,
            "# callgrind format\nversion: 1\ncreator: x\npart: 1\ndesc: I1 cache: \nevents: Ir\n\n"
            "\nfn=(1) main\n1 5\ntotals: 5\n"
            "\npart: 2\nevents: Ir Dr\n\n\nfn=(1) main\n1 6 1\ntotals: 6 1\n");
}

TEST(CallgrindWriterTest, EveryPartDefinesItsIdsAgain) {
  // KCachegrind empties its id tables at each part (prepareNewPart -> clearCompression), so a
  // part must not refer to an id that an earlier part defined; Callgrind names everything again.
  std::string out = ExpectRoundTrip(
      "# callgrind format\nevents: Ir\nob=(1) a.so\nfl=(1) a.c\nfn=(1) f\n1 1\ncfn=(2) g\n"
      "calls=1 2\n1 3\nfn=(2)\n2 3\n\npart: 2\nob=(1)\nfl=(1)\nfn=(2)\n2 4\ncfn=(1)\ncalls=1 1\n"
      "2 5\n");
  EXPECT_EQ(out,
            "# callgrind format\nevents: Ir\n\n"
            "\nob=(1) a.so\nfl=(1) a.c\nfn=(1) f\n1 1\ncfn=(2) g\ncalls=1 2\n* 3\n"
            "\nfn=(2)\n2 3\n"
            "\npart: 2\n\n"
            "\nob=(1) a.so\nfl=(1) a.c\nfn=(1) g\n2 4\ncfn=(2) f\ncalls=1 1\n* 5\n");
}

TEST(CallgrindWriterTest, FunctionIdsAreBoundToObjectAndFile) {
  // KCachegrind binds a function id to the object and file in force where it is defined, and a
  // bare reference means that function wherever it appears. One name in two objects (libc's and
  // ld.so's mprotect) or two files (two static helpers) therefore needs two ids, on the callee
  // and on the caller side.
  std::string out = ExpectRoundTrip(
      "# callgrind format\nevents: Ir\n"
      "ob=ld.so\nfl=dl.c\nfn=mprotect\n1 1\n"
      "ob=libc.so\nfl=m.c\nfn=mprotect\n2 2\n"
      "fl=a.c\nfn=helper\n3 3\nfl=b.c\nfn=helper\n4 4\n"
      "ob=main\nfl=main.c\nfn=main\n5 5\n"
      "cob=ld.so\ncfi=dl.c\ncfn=mprotect\ncalls=1 1\n5 1\n"
      "cob=libc.so\ncfi=m.c\ncfn=mprotect\ncalls=1 2\n5 2\n"
      "cob=libc.so\ncfi=b.c\ncfn=helper\ncalls=1 4\n5 4\n");
  EXPECT_EQ(out,
            "# callgrind format\nevents: Ir\n\n"
            "\nob=(1) ld.so\nfl=(1) dl.c\nfn=(1) mprotect\n1 1\n"
            "\nob=(2) libc.so\nfl=(2) m.c\nfn=(2) mprotect\n2 2\n"
            "\nfl=(3) a.c\nfn=(3) helper\n3 3\n"
            "\nfl=(4) b.c\nfn=(4) helper\n4 4\n"
            "\nob=(3) main\nfl=(5) main.c\nfn=(5) main\n5 5\n"
            "cob=(1)\ncfi=(1)\ncfn=(1)\ncalls=1 1\n* 1\n"
            "cob=(2)\ncfi=(2)\ncfn=(2)\ncalls=1 2\n* 2\n"
            "cob=(2)\ncfi=(4)\ncfn=(4)\ncalls=1 4\n* 4\n");
}

/// Feeds `writer` records directly (no reader): parts with one event, Ir, and functions of one
/// cost line each, named by the caller's Names (ids and views as a producer would give them).
class OneEventParts {
 public:
  explicit OneEventParts(CallgrindWriter* writer) : writer_(writer) {
    record_.costs = cost_;
    layout_.events = events_;
  }
  void Begin(int part) {
    writer_->OnPartBegin(part);
    writer_->OnHeader("events", "Ir");
    writer_->OnLayout(layout_);
  }
  void Function(Name object, Name file, Name function) {
    writer_->OnFunction(FunctionContext{object, file, function});
    writer_->OnCost(record_);
  }
  void End() { writer_->OnPartEnd(); }

 private:
  CallgrindWriter* writer_;
  std::string_view events_[1] = {"Ir"};
  uint64_t cost_[1] = {1};
  CostRecord record_;
  PartLayout layout_;
};

// The writer keys its tables by its own copy of each text; a record's Name::id and view only
// speed the lookup. Two producers (the reader and the injector's name table) number names
// independently, so one id may stand for two texts and one text have two ids and two copies.
TEST(CallgrindWriterTest, FunctionIdsFollowTextsNotProducerIds) {
  StringSink out;
  CallgrindWriter writer(&out, {.copy_input = false});
  OneEventParts parts(&writer);
  std::string other_f = "f", other_lib = "a.so";  // the same texts, stored elsewhere
  for (int part = 0; part < 2; ++part) {
    parts.Begin(part);
    parts.Function(Name{1, "a.so"}, Name{2, "a.c"}, Name{3, "f"});
    parts.Function(Name{1, "a.so"}, Name{2, "a.c"}, Name{3, "g"});         // id 3: another text
    parts.Function(Name{9, other_lib}, Name{2, "a.c"}, Name{8, other_f});  // f again
    parts.Function(Name{1, "a.so"}, Name{4, "b.c"}, Name{3, "f"});         // f of another file
    parts.Function(Name{5, "b.so"}, Name{4, "b.c"}, Name{3, "f"});         // and of another object
    parts.End();
  }
  std::string part =
      "ob=(1) a.so\nfl=(1) a.c\nfn=(1) f\n0 1\n\nfn=(2) g\n0 1\n\nfn=(1)\n0 1\n"
      "\nfl=(2) b.c\nfn=(3) f\n0 1\n\nob=(2) b.so\nfn=(4) f\n0 1\n";
  EXPECT_EQ(out.data(),
            "# callgrind format\nevents: Ir\n\n\n" + part + "\nevents: Ir\n\n\n" + part);
}

// Names from symbol sources are any bytes: a line break inside one (a fuzzed jitdump's file
// name) must not end the line. A \n, and a \r that ends a name (readers drop it), are written
// escaped; a \r inside a name is written as itself.
TEST(CallgrindWriterTest, LineBreaksInNamesAreEscaped) {
  for (bool compress : {true, false}) {
    StringSink out;
    CallgrindWriter writer(&out, {.compress_names = compress, .copy_input = false});
    OneEventParts parts(&writer);
    parts.Begin(0);
    parts.Function(Name{1, "jit"}, Name{2, "a\nb.js"}, Name{3, "f\r\nof\nthree\r"});
    parts.End();
    const std::string& text = out.data();
    SCOPED_TRACE(text);
    EXPECT_NE(text.find("a\\nb.js\n"), std::string::npos);
    EXPECT_NE(text.find("f\r\\nof\\nthree\\r\n"), std::string::npos);
    ProfileSummary summary = Summary(text);  // throws if a name broke a line
    EXPECT_EQ(CompareSummaries(summary, Summary(Rewrite(text))), "");
  }
  // An input name with a \r inside reads back as it was (callgrind_reader_fuzzer found one).
  ExpectRoundTrip("# callgrind format\nevents: Ir\nfl=a\rb.c\nfn=f\r\r\x01g\n1 1\n");
}

TEST(CallgrindWriterTest, FlIsWrittenWhenAFileSwitchIsLeftOpen) {
  // gprof2dot-bool.callgrind: a function's fi= is still open at the next fn=, whose file is that
  // fi= file for callgrind_annotate (and so for our reader). KCachegrind goes back to the last
  // fl= file instead, so the writer must say fl= explicitly even though fi= already named it.
  std::string out = ExpectRoundTrip(
      "# callgrind format\nevents: Ir\nfl=crti.S\nfn=_init\n1 1\nfi=???\n2 2\n"
      "fn=0x00000DB0\n3 3\n");
  EXPECT_EQ(out,
            "# callgrind format\nevents: Ir\n\n"
            "\nfl=(1) crti.S\nfn=(1) _init\n1 1\nfi=(2) ???\n2 2\n"
            "\nfl=(2)\nfn=(2) 0x00000DB0\n3 3\n");
}

TEST(CallgrindWriterTest, PartWithoutRecordsStaysAPart) {
  // Fuzzer find: a part whose body is only a name line must not merge with the next part.
  std::string out =
      ExpectRoundTrip("# callgrind format\nevents: A\nfl=x\n\nevents: A B\nfn=f\n1 2 3\n");
  EXPECT_EQ(out, "# callgrind format\nevents: A\n\nfl=\n\nevents: A B\n\n\nfn=(1) f\n1 2 3\n");
  EXPECT_EQ(Summary(out).parts().size(), 2u);
}

TEST(CallgrindWriterTest, TrailingZeroCostsAreLeftOut) {
  // (A relative position is used only when strictly shorter: "+1" is not shorter than "2".)
  EXPECT_EQ(Rewrite("# callgrind format\nevents: A B C\nfn=f\n1 5 0 0\n2 0 0 0\n3 0 7\n"),
            "# callgrind format\nevents: A B C\n\n\nfn=(1) f\n1 5\n2 0\n3 0 7\n");
  EXPECT_EQ(Rewrite("# callgrind format\nevents: A\nfn=f\n1000 5\n1001 0\n1001 2\n1000 1\n"),
            "# callgrind format\nevents: A\n\n\nfn=(1) f\n1000 5\n+1 0\n* 2\n-1 1\n");
}

TEST(CallgrindWriterTest, OddNamesRoundTrip) {
  ExpectRoundTrip(
      "# callgrind format\nevents: Ir\nfl=\nfn=(7) (3) looks compressed\n1 1\n"
      "fn=<method 'read' of 'file' objects>\n1 1\nfn=f'2\n1 1\nfn=puts [PLT]\n1 1\n"
      "fn=trailing blank \n1 1\ncfl=\ncfn=\ncalls=1 1\n1 1\n");
  // Without compression a name that looks compressed is still written compressed.
  EXPECT_EQ(
      Rewrite("# callgrind format\nevents: Ir\nfn=(7) (3) x\n1 1\n", {.compress_names = false}),
      "# callgrind format\nevents: Ir\n\n\nfn=(1) (3) x\n1 1\n");
}

TEST(CallgrindWriterTest, UnknownPositionColumnsStayHex) {
  std::string out = ExpectRoundTrip(
      "# callgrind format\npositions: line memAddr\nevents: Ir\nfn=f\n1 0x04 1\n1 0x3 2\n"
      "cfn=g\ncalls=1 1 0x04\n* 0x05 3\n");
  EXPECT_EQ(out,
            "# callgrind format\npositions: line memAddr\nevents: Ir\n\n\nfn=(1) f\n1 0x4 1\n"
            "* 0x3 2\ncfn=(2) g\ncalls=1 * 0x4\n* 0x5 3\n");
}

TEST(CallgrindWriterTest, LargeOutputIsFlushedInBlocks) {
  std::string text = "# callgrind format\npositions: instr\nevents: Ir\nfn=f\n";
  for (int i = 0; i < 200000; ++i) text += "0x" + std::to_string(1000000 + i * 7) + " 3\n";
  struct CountingSink : ByteSink {
    size_t writes = 0, bytes = 0;
    void Write(std::string_view b) override {
      ++writes;
      bytes += b.size();
    }
    void Finish() override {}
  } sink;
  auto in = OpenMemoryInput(text, "big");
  CallgrindWriter writer(&sink);
  ReadCallgrind(*in, writer);
  EXPECT_GT(sink.bytes, 1000000u);
  EXPECT_GE(sink.writes, 2u);
  EXPECT_LE(sink.writes, sink.bytes / (1 << 20) + 2);
}

// --- copying input text -----------------------------------------------------------------------

// Callgrind's own shapes: ids defined once and referenced after, fe= closing an inlined file
// before a blank line and the next fn=, relative positions, a jump, two parts, free-text headers
// with odd spacing, totals: last.
constexpr std::string_view kCallgrindShaped =
    "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd:  ./a --x \n"
    "part: 1\n\n\ndesc: I1 cache: \n\npositions: instr line\nevents: Ir Dr\nsummary: 33 2\n\n\n"
    "ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n0x10 3 5 1\n+2 * 5\nfi=(2) inl.h\n+4 7 5 1\n"
    "fe=(1)\n+3 4 5\ncob=(2) /lib/libc.so\ncfi=(3) m.c\ncfn=(2) malloc\ncalls=1 0x900 10 \n"
    "* 4 10 1\njcnd=1/2 +6 * \n* 4 \n\n"
    "ob=(2)\nfl=(3)\nfn=(2)\n0x900 10 10\n# a comment\n\nob=(1)\nfl=(1)\nfn=(3) "
    "0x0000000000000444\n"
    "0x444 0 3\ncob=(2)\ncfi=(3)\ncfn=(2)\ncalls=2 0x900 10\n+1 0 5 2\ntotals: 33 2\n"
    "\npart: 2\npositions: instr line\nevents: Ir Dr\n\nob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n"
    "0x10 3 1\n"
    "totals: 1 0\n";

TEST(CallgrindWriterTest, UntouchedInputIsCopiedByteForByte) {
  EXPECT_EQ(Rewrite(kCallgrindShaped, {}), kCallgrindShaped);
  ExpectRoundTrip(kCallgrindShaped);
  // Without compression the names are written in full, as asked.
  EXPECT_NE(Rewrite(kCallgrindShaped, {.compress_names = false}), kCallgrindShaped);
}

/// Changes records on their way to the writer the way the injector does: renames the function
/// `from` (its block and the calls and jumps into it, whose input text no longer applies) and moves
/// the cost lines at instruction `move` 100 lines down (so the next relative position has another
/// base in the output than in the input).
class Editor : public ProfileSink {
 public:
  Editor(ProfileSink* out, std::string_view from, std::string_view to, uint64_t move)
      : out_(out), from_(from), to_(to), move_(move) {}
  void OnPartBegin(int part) override { out_->OnPartBegin(part); }
  void OnHeader(std::string_view key, std::string_view value) override {
    out_->OnHeader(key, value);
  }
  void OnRawHeader(std::string_view key, std::string_view value, std::string_view raw) override {
    out_->OnRawHeader(key, value, raw);
  }
  void OnLayout(const PartLayout& layout) override { out_->OnLayout(layout); }
  void OnFunction(const FunctionContext& f) override {
    FunctionContext out = f;
    if (Rename(&out.function)) out.raw = {};
    out_->OnFunction(out);
  }
  void OnCost(const CostRecord& cost) override {
    CostRecord out = cost;
    if (cost.position.values[0] == move_) {
      out.position.values[1] += 100;
      out.raw = {};
    }
    out_->OnCost(out);
  }
  void OnCall(const CallRecord& call) override {
    CallRecord out = call;
    if (Rename(&out.target_function)) out.raw = {};
    out_->OnCall(out);
  }
  void OnJump(const JumpRecord& jump) override {
    JumpRecord out = jump;
    if (Rename(&out.target_function)) out.raw = {};
    out_->OnJump(out);
  }
  void OnPartEnd() override { out_->OnPartEnd(); }

 private:
  bool Rename(Name* name) const {
    if (name->text != from_) return false;
    *name = Name{1000, to_};
    return true;
  }
  ProfileSink* out_;
  std::string_view from_, to_;
  uint64_t move_;
};

std::string Edit(std::string_view text, std::string_view from, std::string_view to, uint64_t move,
                 bool copy) {
  auto in = OpenMemoryInput(text, "in.cg");
  StringSink out;
  CallgrindWriter writer(&out, {.copy_input = copy});
  Editor editor(&writer, from, to, move);
  ReadCallgrind(*in, editor);
  return out.data();
}

TEST(CallgrindWriterTest, CopiedAndFormattedRecordsReadAsTheRecords) {
  // Renaming a function defined with id (1), (2) or (3), and moving a cost line so that the next
  // relative position has another base: copying what still applies must read exactly as
  // formatting everything does.
  for (std::string_view from : {"malloc", "0x0000000000000444", "main"}) {
    for (uint64_t move : {uint64_t{0x12}, uint64_t{0x900}, uint64_t{0}}) {
      SCOPED_TRACE(std::string(from) + " move " + std::to_string(move));
      std::string formatted = Edit(kCallgrindShaped, from, "Resolved::name()", move, false);
      std::string copied = Edit(kCallgrindShaped, from, "Resolved::name()", move, true);
      SCOPED_TRACE(copied);
      EXPECT_EQ(CompareSummaries(Summary(formatted), Summary(copied)), "");
      EXPECT_NE(copied, formatted);  // something was copied
      EXPECT_TRUE(copied.starts_with("# callgrind format\nversion: 1\n"));
    }
  }
}

TEST(CallgrindWriterTest, CopiedReferencesUseIdsTheWriterDefined) {
  // main's block is formatted (renamed) and defines ob (1) and fl (1) for the same names as the
  // input did, so the later lines that refer to them are copied.
  std::string out = Edit(kCallgrindShaped, "main", "renamed", 0, true);
  EXPECT_NE(out.find("ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) renamed\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ob=(1)\nfl=(1)\nfn=(3) 0x0000000000000444\n"), std::string::npos) << out;
}

TEST(CallgrindWriterTest, RefusedTextLendsItsIdsToTheFormattedRecord) {
  // The cost line after the moved one has another base, so it is formatted; its fi=(2)
  // definition keeps id 2, and the copied fe=(1) and cfi=(3) after it still read right.
  std::string out = Edit(kCallgrindShaped, "", "", 0x12, true);
  EXPECT_NE(out.find("+2 103 5\nfi=(2) inl.h\n+4 7 5 1\nfe=(1)\n+3 4 5\ncob=(2) /lib/libc.so\n"),
            std::string::npos)
      << out;
}

TEST(CallgrindWriterTest, InputThatConsumersReadDifferentlyIsFormatted) {
  // A fi= left open before fn= (KCachegrind: a.c, callgrind_annotate: inl.h) and a function id
  // referenced under another object than the one it was defined in.
  constexpr std::string_view kText =
      "# callgrind format\nevents: Ir\nob=(1) a\nfl=(1) a.c\nfn=(1) f\n1 1\nfi=(2) inl.h\n2 2\n"
      "fn=(2) g\n3 3\nob=(2) b\nfn=(1)\n4 4\n";
  std::string out = Rewrite(kText, {});
  EXPECT_NE(out, kText);
  EXPECT_EQ(CompareSummaries(Summary(kText), Summary(out)), "");
  EXPECT_NE(out.find("fl=(2)\nfn=(2) g\n"), std::string::npos) << out;
}

TEST(CallgrindWriterTest, IdsFarAboveTheOnesInUseAreAdopted) {
  // Callgrind numbers names over the whole run, so a file may start with ob=(4) and fn=(134916)
  // (Bun's and Elixir's profiles do), and a hostile id may be larger still: each is copied.
  constexpr std::string_view kText =
      "# callgrind format\npositions: instr line\nevents: Ir\n\nob=(4) /lib/libm.so.6\nfl=(345) "
      "w.c\nfn=(134916) log2\n"
      "0x10 3 1\ncob=(1) /bin/a\ncfi=(2) a.c\ncfn=(134920) f\ncalls=1 0x20 4\n* * 2\n\n"
      "ob=(1)\nfl=(2)\nfn=(134920)\n0x20 4 2\nfn=(9000000) g\n0x30 5 1\n\n"
      "ob=(4)\nfl=(345)\nfn=(134916)\n0x11 3 1\ntotals: 5\n";
  EXPECT_EQ(Rewrite(kText, {}), kText);
  ExpectRoundTrip(kText);
}

TEST(CallgrindWriterTest, ClosingFeBeforeTotalsIsCopied) {
  // Callgrind closes the part's last inlined file with fe= right before totals:.
  constexpr std::string_view kText =
      "# callgrind format\nevents: Ir\n\nfl=(1) a.c\nfn=(1) f\n1 1\nfi=(2) inl.h\n2 1\n"
      "fe=(1)\n\ntotals: 2\n";
  EXPECT_EQ(Rewrite(kText, {}), kText);
  ExpectRoundTrip(kText);
}

}  // namespace
}  // namespace cg_inject
