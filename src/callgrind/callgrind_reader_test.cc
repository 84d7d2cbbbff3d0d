#include "callgrind/callgrind_reader.h"

#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/profile.h"

namespace cg_inject {
namespace {

std::string Join(std::span<const uint64_t> values) {
  std::string out;
  for (uint64_t v : values) out += " " + std::to_string(v);
  return out;
}

/// Renders every record as one line of text, so tests state the expected records literally.
class RecordingSink : public ProfileSink {
 public:
  std::string text;

  void OnPartBegin(int part_index) override { text += "part " + std::to_string(part_index) + "\n"; }
  void OnHeader(std::string_view key, std::string_view value) override {
    text += "header " + std::string(key) + "=" + std::string(value) + "\n";
  }
  void OnLayout(const PartLayout& layout) override {
    layout_ = layout.positions;
    text += "layout";
    for (int i = 0; i < layout.positions.count; ++i) {
      static const char* const kNames[] = {"line", "instr", "bb", "other"};
      text += std::string(" ") + kNames[static_cast<int>(layout.positions.kinds[i])];
    }
    text += " |";
    for (std::string_view e : layout.events) text += " " + std::string(e);
    text += "\n";
  }
  void OnFunction(const FunctionContext& f) override {
    text += "fn " + Name3(f.object, f.file, f.function) + "\n";
  }
  void OnCost(const CostRecord& c) override {
    text += "cost " + Pos(c.position) + " [" + std::string(c.source_file.text) + "]" +
            Join(c.costs) + "\n";
  }
  void OnCall(const CallRecord& c) override {
    text += "call " + std::to_string(c.count) + " -> " +
            Name3(c.target_object, c.target_file, c.target_function) + " @" + Pos(c.target) +
            " from " + Pos(c.source) + " [" + std::string(c.source_file.text) + "]" +
            Join(c.inclusive) + "\n";
  }
  void OnJump(const JumpRecord& j) override {
    text += std::string(j.conditional ? "jcnd " : "jump ") + std::to_string(j.followed) + "/" +
            std::to_string(j.executed) + " -> " + std::string(j.target_file.text) + "|" +
            std::string(j.target_function.text) + " @" + Pos(j.target) + " from " + Pos(j.source) +
            " [" + std::string(j.source_file.text) + "]\n";
  }
  void OnPartEnd() override { text += "end\n"; }

 private:
  static std::string Name3(const Name& ob, const Name& fl, const Name& fn) {
    return std::string(ob.text) + "|" + std::string(fl.text) + "|" + std::string(fn.text);
  }
  std::string Pos(const Position& p) const {
    std::string out;
    for (int i = 0; i < layout_.count; ++i) {
      if (i > 0) out += ",";
      out += std::to_string(p.values[i]);
    }
    return out;
  }
  PositionLayout layout_;
};

std::string Parse(std::string_view text) {
  auto in = OpenMemoryInput(text, "t.cg");
  RecordingSink sink;
  ReadCallgrind(*in, sink);
  return sink.text;
}

std::string ErrorOf(std::string_view text) {
  auto in = OpenMemoryInput(text, "t.cg");
  RecordingSink sink;
  try {
    ReadCallgrind(*in, sink);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

constexpr std::string_view kHead = "# callgrind format\nevents: Ir\n";

TEST(CallgrindReaderTest, SpecExample) {
  EXPECT_EQ(Parse("# callgrind format\n"
                  "events: Cycles Instructions Flops\n"
                  "fl=file.f\n"
                  "fn=main\n"
                  "15 90 14 2\n"
                  "16 20 12\n"),
            "part 0\n"
            "header events=Cycles Instructions Flops\n"
            "layout line | Cycles Instructions Flops\n"
            "fn |file.f|main\n"
            "cost 15 [file.f] 90 14 2\n"
            "cost 16 [file.f] 20 12 0\n"
            "end\n");
}

// Values lose leading blanks; trailing ones only where the value is parsed. The free-text desc:
// and cmd: keep them, because callgrind_annotate prints them verbatim ("desc: I1 cache: ").
TEST(CallgrindReaderTest, HeaderLinesAreKeptVerbatimAndTrimmed) {
  EXPECT_EQ(Parse("version: 1\ncreator: callgrind-3.19.0\npid: 42\ncmd:  ./a.out  x \n"
                  "part: 1\n\ndesc: I1 cache: \nevent: Ir : Instruction Fetches\n"
                  "thread: 2\ntimeframe (BB): what ever\npositions: line\nevents: Ir\n"
                  "summary: 7\nfn=f\n1 7\ntotals: 7\n"),
            "part 0\nheader version=1\nheader creator=callgrind-3.19.0\nheader pid=42\n"
            "header cmd=./a.out  x \nheader part=1\nheader desc=I1 cache: \n"
            "header event=Ir : Instruction Fetches\nheader thread=2\n"
            "header timeframe (BB)=what ever\nheader positions=line\nheader events=Ir\n"
            "header summary=7\nlayout line | Ir\nfn ||f\ncost 1 [] 7\nheader totals=7\nend\n");
}

TEST(CallgrindReaderTest, PositionsInGivenOrder) {
  EXPECT_EQ(Parse("# callgrind format\npositions: instr line\nevents: Ir\nfn=f\n0x10 3 1\n"),
            "part 0\nheader positions=instr line\nheader events=Ir\nlayout instr line | Ir\n"
            "fn ||f\ncost 16,3 [] 1\nend\n");
  EXPECT_EQ(Parse("# callgrind format\npositions: line instr bb\nevents: Ir\nfn=f\n3 0x10 0x8 1\n"),
            "part 0\nheader positions=line instr bb\nheader events=Ir\n"
            "layout line instr bb | Ir\nfn ||f\ncost 3,16,8 [] 1\nend\n");
  // qt-creator's tests name a column memAddr; it is kept as an opaque column.
  EXPECT_EQ(Parse("# callgrind format\npositions: line memAddr\nevents: Ir\nfn=f\n1 0x04 5\n"),
            "part 0\nheader positions=line memAddr\nheader events=Ir\n"
            "layout line other | Ir\nfn ||f\ncost 1,4 [] 5\nend\n");
}

TEST(CallgrindReaderTest, SubpositionCompressionInEveryColumn) {
  EXPECT_EQ(Parse("# callgrind format\npositions: instr line\nevents: ticks\nfn=func\n"
                  "0x80001234 90 1\n+3 * 5\n+1 +1 6\n-4 -11 7\n* * 8\n+0x10 +0 9\n"),
            "part 0\nheader positions=instr line\nheader events=ticks\n"
            "layout instr line | ticks\nfn ||func\n"
            "cost 2147488308,90 [] 1\ncost 2147488311,90 [] 5\ncost 2147488312,91 [] 6\n"
            "cost 2147488308,80 [] 7\ncost 2147488308,80 [] 8\ncost 2147488324,80 [] 9\nend\n");
}

TEST(CallgrindReaderTest, ShortCostLinesArePaddedAndCostsAre64Bit) {
  EXPECT_EQ(Parse("# callgrind format\nevents: A B C\nfn=f\n1 18446744073709551615 0x10\n2\n"
                  "3 0 2 3   \n4\t0\t6\n"),
            "part 0\nheader events=A B C\nlayout line | A B C\nfn ||f\n"
            "cost 1 [] 18446744073709551615 16 0\ncost 2 [] 0 0 0\ncost 3 [] 0 2 3\n"
            "cost 4 [] 0 6 0\nend\n");
}

TEST(CallgrindReaderTest, NumberForms) {
  // Leading zeros do not count towards the 64 bits; hex digits in either case after "0x".
  EXPECT_EQ(Parse("# callgrind format\nevents: A B\nfn=f\n"
                  "000000000000000000000000042 0x0000000000000000000000fF 0x0\n"
                  "0xFFFFFFFFFFFFFFFF 0x0 00018446744073709551615\n-0xFFFFFFFFFFFFFFEF 0009\n"),
            "part 0\nheader events=A B\nlayout line | A B\nfn ||f\n"
            "cost 42 [] 255 0\ncost 18446744073709551615 [] 0 18446744073709551615\n"
            "cost 16 [] 9 0\nend\n");
  // A position at the top of the range, and jump counts in hex.
  EXPECT_EQ(Parse("# callgrind format\nevents: A\nfn=f\n18446744073709551614 1\n+1 2\n"
                  "jcnd=0x3/0x4 *\n* \njump=0xA -1\n*\n"),
            "part 0\nheader events=A\nlayout line | A\nfn ||f\n"
            "cost 18446744073709551614 [] 1\ncost 18446744073709551615 [] 2\n"
            "jcnd 3/4 -> |f @18446744073709551615 from 18446744073709551615 []\n"
            "jump 10/10 -> |f @18446744073709551614 from 18446744073709551615 []\nend\n");
}

TEST(CallgrindNumberTest, Forms) {
  uint64_t v = 7;
  EXPECT_TRUE(ParseCallgrindNumber("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseCallgrindNumber("1234567890123456789", &v));  // 19 digits: the fast loop
  EXPECT_EQ(v, 1234567890123456789u);
  EXPECT_TRUE(ParseCallgrindNumber("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_TRUE(ParseCallgrindNumber("0000000000000000000000000018446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_TRUE(ParseCallgrindNumber("10000000000000000000", &v));
  EXPECT_EQ(v, 10000000000000000000u);
  EXPECT_TRUE(ParseCallgrindNumber("0xffffffffffffffff", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_TRUE(ParseCallgrindNumber("0x00000000000000000000DeadBeef", &v));
  EXPECT_EQ(v, 0xdeadbeefu);
  EXPECT_TRUE(ParseCallgrindNumber("0x0", &v));
  EXPECT_EQ(v, 0u);
  for (std::string_view bad : {"",
                               "x",
                               "0x",
                               "0X1",
                               "0xg",
                               "0x1g",
                               "0x10000000000000000",
                               "0x1fffffffffffffffff",
                               "18446744073709551616",
                               "18446744073709551620",
                               "99999999999999999999",
                               "184467440737095516150",
                               "+1",
                               "-1",
                               "*",
                               "1 ",
                               " 1",
                               "1x",
                               "1.5",
                               "0x1 ",
                               "\xff"}) {
    EXPECT_FALSE(ParseCallgrindNumber(bad, &v)) << bad;
  }
}

TEST(CallgrindNumberTest, EveryLength) {
  // Short numbers take a word-at-a-time path, long ones a loop: each length, with and without
  // leading zeros, and with what follows a token on a line.
  std::string digits = "98765432109876543210";
  for (size_t n = 1; n <= 19; ++n) {
    for (std::string token : {digits.substr(0, n), std::string(n, '0') + digits.substr(0, n),
                              "0" + digits.substr(20 - n)}) {
      uint64_t want = std::stoull(token), v = 0;
      EXPECT_TRUE(ParseCallgrindNumber(token, &v)) << token;
      EXPECT_EQ(v, want) << token;
      EXPECT_FALSE(ParseCallgrindNumber(token + "a", &v)) << token;
      EXPECT_FALSE(ParseCallgrindNumber(token + "\n", &v)) << token;
      EXPECT_FALSE(ParseCallgrindNumber("-" + token, &v)) << token;
    }
  }
}

TEST(CallgrindReaderErrorTest, BadNumbers) {
  std::string head(kHead);
  const char kCost[] = "t.cg:4: expected a cost (a decimal or 0x hex number), got ";
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 0x\n"), kCost + std::string("'0x'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 0X1\n"), kCost + std::string("'0X1'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 0x1g\n"), kCost + std::string("'0x1g'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 0x10000000000000000\n"),
            kCost + std::string("'0x10000000000000000'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 99999999999999999999\n"),
            kCost + std::string("'99999999999999999999'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 +1\n"), kCost + std::string("'+1'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1,\n"), kCost + std::string("'1,'"));
  EXPECT_EQ(ErrorOf(head + "fn=f\n18446744073709551616 1\n"),
            "t.cg:4: expected a position (number, +N, -N or *), got '18446744073709551616'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1\n+18446744073709551615 1\n"),
            "t.cg:5: expected a position below 2^64, got '+18446744073709551615'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1\n+18446744073709551616 1\n"),
            "t.cg:5: expected a position (number, +N, -N or *), got '+18446744073709551616'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1\n+ 1\n"),
            "t.cg:5: expected a position (number, +N, -N or *), got '+'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1\n-x 1\n"),
            "t.cg:5: expected a position (number, +N, -N or *), got '-x'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1\n*1 1\n"),
            "t.cg:5: expected a position (number, +N, -N or *), got '*1'");
  EXPECT_EQ(ErrorOf(head + "fn=f\njump=18446744073709551616 1\n1\n"),
            "t.cg:4: expected a count after jump=, got '18446744073709551616'");
  EXPECT_EQ(ErrorOf(head + "fn=f\njump=1/2 1\n1\n"),
            "t.cg:4: expected a count after jump=, got '1/2'");
  EXPECT_EQ(ErrorOf(head + "fn=f\njcnd=0x 1\n1\n"),
            "t.cg:4: expected a count after jcnd=, got '0x'");
  EXPECT_EQ(ErrorOf(head + "fn=(18446744073709551616) f\n"),
            "t.cg:3: expected a name id like (12), got '(18446744073709551616) f'");
  EXPECT_EQ(ErrorOf(head + "fn=(0x1) f\n"), "t.cg:3: expected a name id like (12), got '(0x1) f'");
}

TEST(CallgrindReaderErrorTest, AnErrorOnALastLineWithoutLineEndSaysTheFileIsCut) {
  // A killed writer or a full disk cuts a profile inside a line (issue 36 item 7): `fn=(40` was
  // only "expected a name id like (12)".
  std::string head(kHead);
  const std::string cut =
      " (the file ends inside this line, without a line end: the profile is cut off)";
  EXPECT_EQ(ErrorOf(head + "fn=(40"), "t.cg:3: expected a name id like (12), got '(40'" + cut);
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 0x"),
            "t.cg:4: expected a cost (a decimal or 0x hex number), got '0x'" + cut);
  EXPECT_EQ(ErrorOf(head + "fn=f\ncfn=g\ncalls=1"),
            "t.cg:5: expected a target position after the call count, got end of line" + cut);
  // The same lines with their line end: no cut, only what is wrong.
  EXPECT_EQ(ErrorOf(head + "fn=(40\n"), "t.cg:3: expected a name id like (12), got '(40'");
  // An error on an earlier line of a cut file is that line's.
  EXPECT_EQ(ErrorOf(head + "fn=(40\n1 2"), "t.cg:3: expected a name id like (12), got '(40'");
}

TEST(CallgrindReaderTest, ANameWithALineBreakIsReadAsCallgrindAnnotateReadsIt) {
  // Callgrind writes a program path with a line break raw (issue 36 item 10): the line after a
  // name line is its rest, ignored with a warning; the name is its first line.
  auto in = OpenMemoryInput(
      "# callgrind format\ncmd: /tmp/odd\nname --x\nevents: Ir\nob=(1) /tmp/odd\nname\n"
      "fn=(2) main\n1 5\n",
      "t.cg");
  RecordingSink sink;
  Diagnostics diagnostics;
  ReadCallgrind(*in, sink, {.diagnostics = &diagnostics});
  EXPECT_NE(sink.text.find("fn /tmp/odd||main"), std::string::npos) << sink.text;
  ASSERT_EQ(diagnostics.kinds().size(), 1u);
  EXPECT_EQ(diagnostics.kinds()[0].count, 2);
  EXPECT_EQ(diagnostics.kinds()[0].first_messages[1],
            "t.cg:6: expected a header line, a name line, calls=, jump=, jcnd= or a cost line, "
            "got 'name': taken for the rest of the name on line 5, which holds a line break; "
            "ignored, as callgrind_annotate and KCachegrind do");
  // Anywhere else such a line is an error.
  EXPECT_EQ(ErrorOf(std::string(kHead) + "fn=f\n1 1\nname\n"),
            "t.cg:5: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
            "jcnd= or a cost line, got 'name'");
}

TEST(CallgrindReaderTest, KeysAndHeaderKeys) {
  // Name ids up to 2^64 - 1 are ids; "(x" and "(" are names; a name may follow ")" directly.
  EXPECT_EQ(Parse("# callgrind format\nevents: A\nfl=(18446744073709551615) a.c\n"
                  "fn=(007)f\n1 1\nfn=(x\n2 1\nfn=(\n3 1\nfi=(18446744073709551615)\n"
                  "fn=(7)\n4 1\ncfl=(3) c.c\ncfn=(7)\ncalls=1 2\n5 1\n"),
            "part 0\nheader events=A\nlayout line | A\nfn |a.c|f\ncost 1 [a.c] 1\nfn |a.c|(x\n"
            "cost 2 [a.c] 1\nfn |a.c|(\ncost 3 [a.c] 1\nfn |a.c|f\ncost 4 [a.c] 1\n"
            "call 1 -> |c.c|f @2 from 5 [a.c] 1\nend\n");
  // Old writers' header keys; unknown header keys are kept.
  EXPECT_EQ(Parse("# callgrind format\ntimeframe (BB): 1-2\nx_9-a: b\nevents: A\nfn=f\n"),
            "part 0\nheader timeframe (BB)=1-2\nheader x_9-a=b\nheader events=A\n"
            "layout line | A\nfn ||f\nend\n");
  for (const char* line : {"fnx=a", "fn =a", "Fn=a", "calls 1", "cf=a", "jumps=1", "ob"}) {
    EXPECT_EQ(ErrorOf(std::string(kHead) + line + "\n"),
              "t.cg:3: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
              "jcnd= or a cost line, got '" +
                  std::string(line) + "'")
        << line;
  }
}

TEST(CallgrindReaderTest, NameCompressionSharesIdsPerSpace) {
  EXPECT_EQ(Parse("# callgrind format\nevents: Ir\n"
                  "ob=(1) /lib/x.so\nfl=(1) a.c\nfn=(1) main\n1 1\n"
                  "cob=(1)\ncfi=(2) b.c\ncfn=(2) helper\ncalls=2 5\n1 10\n"
                  "fl=(2)\nfn=(2)\n5 10\n"
                  "jfi=(1)\njfn=(1)\njump=1 7\n5\n"
                  "fi=(1)\n6 1\nfe=(2)\n7 1\n"
                  "fn=(3)name with (parens)\n8 1\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\n"
            "fn /lib/x.so|a.c|main\ncost 1 [a.c] 1\n"
            "call 2 -> /lib/x.so|b.c|helper @5 from 1 [a.c] 10\n"
            "fn /lib/x.so|b.c|helper\ncost 5 [b.c] 10\n"
            "jump 1/1 -> a.c|main @7 from 5 [b.c]\n"
            "cost 6 [a.c] 1\ncost 7 [b.c] 1\n"
            "fn /lib/x.so|b.c|name with (parens)\ncost 8 [b.c] 1\nend\n");
}

TEST(CallgrindReaderTest, IdDefinedFarAheadResolvesAfterTheTableGrowsPastIt) {
  // Issue 23 item 0: (70000) is defined before the dense range reaches it, then ids 1..2300
  // grow the table past 70000; every later use of (70000) must still name it.
  std::string text = "# callgrind format\nevents: Ir\nfn=(70000) far\n1 1\n";
  for (int id = 1; id <= 2300; ++id) text += "fn=(" + std::to_string(id) + ") f\n1 1\n";
  text += "fn=(70001) after\n1 1\ncfn=(70000)\ncalls=1 1\n1 1\nfn=(70000)\n2 1\n";
  std::string records = Parse(text);
  EXPECT_NE(records.find("call 1 -> ||far @1 from 1 [] 1\nfn ||far\ncost 2 [] 1\nend\n"),
            std::string::npos)
      << records.substr(records.size() - 200);
}

/// Random id orders and gaps in every name space: ids from a dense band, a band just past the
/// reader's dense range (which a later definition grows over) and a band past 2^32, defined
/// in random order by fn=/fl=/ob= and by cfn=/cfi=/cob=, used bare by both. Each record must
/// carry the name its id was defined with, whatever came before.
TEST(CallgrindReaderTest, EveryIdResolvesWhateverTheOrderOfDefinition) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 random(seed);
    auto random_id = [&random]() -> uint64_t {
      switch (random() % 3) {
        case 0:
          return 1 + random() % 3000;
        case 1:  // a few hundred ids, used again after the table grew past them
          return 30000 + random() % 300 * 577;
        default:
          return (uint64_t{1} << 32) - 8 + random() % 16;
      }
    };
    std::map<uint64_t, std::string> defined[3];  // objects, files, functions
    static const char* const kPrefix[] = {"ob", "fl", "fn"};
    // "(id) name" the first time an id of `space` appears, "(id)" afterwards.
    auto use = [&](int space, std::string* expected_name) {
      uint64_t id = random_id();
      std::string ref = "(" + std::to_string(id) + ")";
      auto [it, is_new] =
          defined[space].try_emplace(id, std::string(kPrefix[space]) + std::to_string(id));
      *expected_name = it->second;
      return is_new ? ref + " " + it->second : ref;
    };
    std::string text = "# callgrind format\nevents: Ir\n";
    std::string expected = "part 0\nheader events=Ir\nlayout line | Ir\n";
    for (int block = 0; block < 400; ++block) {
      std::string ob, fl, fn;
      text += "ob=" + use(0, &ob) + "\n";
      text += "fl=" + use(1, &fl) + "\n";
      text += "fn=" + use(2, &fn) + "\n1 1\n";
      expected += "fn " + ob + "|" + fl + "|" + fn + "\ncost 1 [" + fl + "] 1\n";
      for (int call = random() % 3; call > 0; --call) {
        std::string cob, cfi, cfn;
        text += "cob=" + use(0, &cob) + "\n";
        text += "cfi=" + use(1, &cfi) + "\n";
        text += "cfn=" + use(2, &cfn) + "\ncalls=1 2\n1 1\n";
        expected += "call 1 -> " + cob + "|" + cfi + "|" + cfn + " @2 from 1 [" + fl + "] 1\n";
      }
    }
    expected += "end\n";
    ASSERT_EQ(Parse(text), expected) << "seed " << seed;
  }
}

TEST(CallgrindReaderTest, NamesAreVerbatim) {
  EXPECT_EQ(Parse("# callgrind format\nevents: Ir\n"
                  "fn=(1) _dl_catch_error'2\n1 1\n"
                  "fn=(2) puts [PLT]\n1 1\n"
                  "fn=<method 'read' of 'file' objects>\n1 1\n"
                  "fn=  std::map<int, \"x\">::operator[](int const&) \n1 1\n"
                  "fn=0x000038D7\n1 1\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\n"
            "fn ||_dl_catch_error'2\ncost 1 [] 1\n"
            "fn ||puts [PLT]\ncost 1 [] 1\n"
            "fn ||<method 'read' of 'file' objects>\ncost 1 [] 1\n"
            "fn ||std::map<int, \"x\">::operator[](int const&) \ncost 1 [] 1\n"
            "fn ||0x000038D7\ncost 1 [] 1\nend\n");
}

TEST(CallgrindReaderTest, CallTargetsDefaultToCurrentObjectAndSourceFile) {
  EXPECT_EQ(Parse("# callgrind format\nevents: Ir\nob=o1\nfl=a.c\nfn=f\n"
                  "fi=inl.h\ncfn=g\ncalls=1 3\n4 9\n"
                  "cob=o2\ncfl=b.c\ncfn=h\ncalls=1 5\n4 1\n"
                  "cfn=g\ncalls=1 3\n4 2\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\nfn o1|a.c|f\n"
            "call 1 -> o1|inl.h|g @3 from 4 [inl.h] 9\n"
            "call 1 -> o2|b.c|h @5 from 4 [inl.h] 1\n"
            "call 1 -> o1|inl.h|g @3 from 4 [inl.h] 2\nend\n");
}

TEST(CallgrindReaderTest, RelativeTargetsDoNotMoveTheBase) {
  // The call target and jump target are relative to the last position line; the line after
  // calls= and jump= is itself a position line.
  EXPECT_EQ(Parse("# callgrind format\nevents: Ir\nfn=f\n10 1\ncfn=g\ncalls=1 +5\n* 2\n+1 3\n"
                  "jump=4 -2\n+1\n+1 1\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\nfn ||f\ncost 10 [] 1\n"
            "call 1 -> ||g @15 from 10 [] 2\ncost 11 [] 3\n"
            "jump 4/4 -> |f @9 from 12 []\ncost 13 [] 1\nend\n");
}

TEST(CallgrindReaderTest, CallTargetMayOmitColumns) {
  EXPECT_EQ(Parse("# callgrind format\npositions: instr line\nevents: Ir\nfn=f\n0x10 3 1\n"
                  "cfn=g\ncalls=61 0xe0f0 +34 \n+4 +2 7\ncfn=g\ncalls=1 0x20\n* * 1\n"),
            "part 0\nheader positions=instr line\nheader events=Ir\nlayout instr line | Ir\n"
            "fn ||f\ncost 16,3 [] 1\ncall 61 -> ||g @57584,37 from 20,5 [] 7\n"
            "call 1 -> ||g @32,0 from 20,5 [] 1\nend\n");
}

TEST(CallgrindReaderTest, ConditionalJumpsInBothForms) {
  EXPECT_EQ(Parse("# callgrind format\npositions: instr line\nevents: Ir\nfn=f\n0x10 3 1\n"
                  "jcnd=120/130 +18 +1\n* *\n"
                  "jfi=other.c\njfn=g\njcnd=130 120 0x40 9\n+2 *\n"),
            "part 0\nheader positions=instr line\nheader events=Ir\nlayout instr line | Ir\n"
            "fn ||f\ncost 16,3 [] 1\njcnd 120/130 -> |f @34,4 from 16,3 []\n"
            "jcnd 120/130 -> other.c|g @64,9 from 18,3 []\nend\n");
}

TEST(CallgrindReaderTest, CommentsBlankLinesCrlfAndNoFinalNewline) {
  EXPECT_EQ(Parse("# callgrind format\r\n# a comment\r\n\r\nevents: Ir\r\n   \r\n"
                  "fn=f\r\n# inside\r\n\t\r\n1 2\r\n  2 3"),
            "part 0\nheader events=Ir\nlayout line | Ir\nfn ||f\ncost 1 [] 2\ncost 2 [] 3\nend\n");
}

TEST(CallgrindReaderTest, SeveralPartsKeepIds) {
  EXPECT_EQ(Parse("# callgrind format\nversion: 1\npart: 1\nevents: Ir\nfn=(1) main\n1 5\n"
                  "totals: 5\n\npart: 2\nevents: Ir Dr\nfn=(1)\n1 6 1\ntotals: 6 1\n"),
            "part 0\nheader version=1\nheader part=1\nheader events=Ir\nlayout line | Ir\n"
            "fn ||main\ncost 1 [] 5\nheader totals=5\nend\n"
            "part 1\nheader part=2\nheader events=Ir Dr\nlayout line | Ir Dr\nfn ||main\n"
            "cost 1 [] 6 1\nheader totals=6 1\nend\n");
}

TEST(CallgrindReaderTest, HeaderOnlyPart) {
  EXPECT_EQ(Parse("version: 1\npart: 2\npositions: instr line\nevents: Ir Dr\nsummary: 0\n\n\n"
                  "totals: 0\n"),
            "part 0\nheader version=1\nheader part=2\nheader positions=instr line\n"
            "header events=Ir Dr\nheader summary=0\nlayout instr line | Ir Dr\n"
            // totals: is delivered at the part's end, with what the part adds up to.
            "header totals=0\nend\n");
}

TEST(CallgrindReaderTest, FiLeftOpenCarriesIntoTheNextFunction) {
  // As callgrind_annotate reads it: a fi= the previous function left open is the file of the
  // next fn=; a closing fe= returns to the fl= file.
  EXPECT_EQ(Parse("# callgrind format\nevents: Ir\nfl=a.c\nfn=f\n1 1\nfi=b.h\n2 2\nfn=g\n3 3\n"
                  "fe=a.c\nfn=h\nfi=b.h\nfe=a.c\n4 4\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\nfn |a.c|f\ncost 1 [a.c] 1\n"
            "cost 2 [b.h] 2\nfn |b.h|g\ncost 3 [b.h] 3\nfn |a.c|h\ncost 4 [a.c] 4\nend\n");
}

TEST(CallgrindReaderTest, LsprofcalltreeStyle) {
  // No marker but summary: in the header; fi= before fn= names the function's file.
  EXPECT_EQ(Parse("events: Ticks\nsummary: 9\nfi=~\nfn=<built-in method x>\n0  586773\n\n"
                  "fi=~\nfn=main\n0 1\ncfi=~\ncfn=<built-in method x>\ncalls=1 0\n0  7\n"),
            "part 0\nheader events=Ticks\nheader summary=9\nlayout line | Ticks\n"
            "fn |~|<built-in method x>\ncost 0 [~] 586773\nfn |~|main\ncost 0 [~] 1\n"
            // summary: 9 is not what the costs add up to: kept, the part's only summary:.
            "call 1 -> |~|<built-in method x> @0 from 0 [~] 7\nend\n");
}

TEST(CallgrindReaderTest, EmptyCflIsAnEmptyName) {
  EXPECT_EQ(Parse("# callgrind format\nevents: Ir\nfl=a.c\nfn=f\ncfl=\ncfn=g\ncalls=1 1\n1 1\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\nfn |a.c|f\n"
            "call 1 -> ||g @1 from 1 [a.c] 1\nend\n");
}

// --- errors: the whole message, line number included -----------------------------------------

TEST(CallgrindReaderErrorTest, CachegrindIsRefused) {
  EXPECT_EQ(ErrorOf("desc: I1 cache: 32768 B\ncmd: ./a.out\nevents: Ir\n\nfl=a.c\nfn=main\n1 2\n"
                    "summary: 2\n"),
            "t.cg:5: expected a Callgrind header (# callgrind format, version:, creator:, "
            "positions: or summary:) before the first record, got 'fl=a.c' (Cachegrind output "
            "is not a Callgrind profile)");
}

TEST(CallgrindReaderErrorTest, EmptyAndHeaderless) {
  EXPECT_EQ(ErrorOf(""), "t.cg: expected a Callgrind profile, got an empty file");
  // A file without records says what it holds (issue 22: comments and CR-only line ends were
  // "an empty file").
  EXPECT_EQ(ErrorOf("\n \n\r\n"), "t.cg: expected a Callgrind profile, got only blank lines");
  EXPECT_EQ(ErrorOf("\n# only a comment\n"),
            "t.cg: expected a Callgrind profile, got only comments (1 line)");
  EXPECT_EQ(ErrorOf("# callgrind format\n  # indented\n"),
            "t.cg: expected a Callgrind profile, got only comments (2 lines)");
  EXPECT_EQ(ErrorOf("# callgrind format\revents: Ir\rfn=f\r1 1\r"),
            "t.cg: expected a Callgrind profile, got only comments, with carriage returns inside "
            "them: its lines end in CR alone, which Callgrind never writes (convert them to LF)");
  // A byte-order mark is escaped and named.
  EXPECT_EQ(ErrorOf("\xef\xbb\xbf# callgrind format\nevents: Ir\n"),
            "t.cg:1: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
            "jcnd= or a cost line, got '\\xef\\xbb\\xbf# callgrind format' (it starts with a "
            "UTF-8 byte-order mark)");
  EXPECT_EQ(ErrorOf("# callgrind format\nfn=main\n"),
            "t.cg:2: expected an events: header line before the first record, got 'fn=main'");
  EXPECT_EQ(ErrorOf("# callgrind format\nversion: 1\n"),
            "t.cg:2: expected an events: header line, got end of file");
  EXPECT_EQ(ErrorOf("version: 2\n"), "t.cg:1: expected version: 1 (or 0), got '2'");
}

TEST(CallgrindReaderErrorTest, BadCostLines) {
  std::string head(kHead);
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 2 3\n"),
            "t.cg:4: expected at most 1 cost (one per event), got another one, '3'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 x\n"),
            "t.cg:4: expected a cost (a decimal or 0x hex number), got 'x'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 -5\n"),
            "t.cg:4: expected a cost (a decimal or 0x hex number), got '-5'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 18446744073709551616\n"),
            "t.cg:4: expected a cost (a decimal or 0x hex number), got '18446744073709551616'");
  EXPECT_EQ(ErrorOf(head + "fn=f\n5 1\n-6 1\n"),
            "t.cg:5: expected a relative position that stays >= 0, got '-6' after 5");
  EXPECT_EQ(ErrorOf(head + "fn=f\n1x 1\n"),
            "t.cg:4: expected a position (number, +N, -N or *), got '1x'");
  EXPECT_EQ(ErrorOf(head + "1 1\n"),
            "t.cg:3: expected fn= before the first cost or call line, got '1 1'");
  EXPECT_EQ(ErrorOf("# callgrind format\npositions: instr line\nevents: Ir\nfn=f\n0x10\n"),
            "t.cg:5: expected a cost line with 2 position columns, got 1");
}

TEST(CallgrindReaderErrorTest, BadNames) {
  std::string head(kHead);
  EXPECT_EQ(ErrorOf(head + "fn=(3)\n"),
            "t.cg:3: expected a function id defined earlier, got '(3)'");
  EXPECT_EQ(ErrorOf(head + "fl=(1) a.c\nfn=(1)\n"),
            "t.cg:4: expected a function id defined earlier, got '(1)'");
  EXPECT_EQ(ErrorOf(head + "ob=(2 x\n"), "t.cg:3: expected a name id like (12), got '(2 x'");
  EXPECT_EQ(ErrorOf(head + "fx=a\n"),
            "t.cg:3: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
            "jcnd= or a cost line, got 'fx=a'");
  EXPECT_EQ(ErrorOf(head + "%%%\n"),
            "t.cg:3: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
            "jcnd= or a cost line, got '%%%'");
}

TEST(CallgrindReaderErrorTest, HighBytesAreNotLetters) {
  // Fuzzer find: x3::alpha asserted on bytes >= 0x80.
  std::string head(kHead);
  EXPECT_EQ(ErrorOf(head + "\xC3\xA9t\xC3\xA9: x\n"),
            "t.cg:3: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
            "jcnd= or a cost line, got '\xC3\xA9t\xC3\xA9: x'");
  EXPECT_EQ(ErrorOf(head + "ab\xFF: x\n"),
            "t.cg:3: expected a header line (key: value), a name line (fn=...), calls=, jump=, "
            "jcnd= or a cost line, got 'ab\xFF: x'");
  EXPECT_EQ(
      Parse(head + "fn=\xC3\xA9t\xC3\xA9\n1 1\n"),
      "part 0\nheader events=Ir\nlayout line | Ir\nfn ||\xC3\xA9t\xC3\xA9\ncost 1 [] 1\nend\n");
}

TEST(CallgrindReaderErrorTest, BadCalls) {
  std::string head(kHead);
  EXPECT_EQ(ErrorOf(head + "fn=f\ncalls=1 2\n1 1\n"),
            "t.cg:4: expected cfn= before calls=, got 'calls=1 2'");
  EXPECT_EQ(ErrorOf(head + "fn=f\ncfn=g\ncalls=1\n1 1\n"),
            "t.cg:5: expected a target position after the call count, got end of line");
  EXPECT_EQ(ErrorOf(head + "fn=f\ncfn=g\ncalls=x 1\n1 1\n"),
            "t.cg:5: expected a call count after calls=, got 'x'");
  EXPECT_EQ(ErrorOf(head + "fn=f\ncfn=g\ncalls=1 2\n"),
            "t.cg:6: expected the call's cost line (position and inclusive costs) after calls=, "
            "got end of file");
  EXPECT_EQ(ErrorOf(head + "fn=f\ncfn=g\ncalls=1 2\n# comment\nfn=h\n"),
            "t.cg:7: expected the call's cost line (position and inclusive costs) after calls=, "
            "got 'fn=h'");
  EXPECT_EQ(ErrorOf(head + "fn=f\ncfn=g\ncalls=1 2 3\n1 1\n"),
            "t.cg:5: expected end of line after the call target, got '3'");
}

TEST(CallgrindReaderErrorTest, BadJumps) {
  std::string head(kHead);
  EXPECT_EQ(ErrorOf(head + "fn=f\njump=1 2\n1 5\n"),
            "t.cg:5: expected only a position on the line after jump=, got '1 5'");
  EXPECT_EQ(ErrorOf(head + "fn=f\njcnd=1/x 2\n1\n"),
            "t.cg:4: expected an execution count after jcnd=N/, got 'x'");
  EXPECT_EQ(ErrorOf(head + "fn=f\njcnd=5 2\n1\n"),
            "t.cg:4: expected a jump target with 1 position column, got 0");
}

TEST(CallgrindReaderErrorTest, SpeedscopeRelativeCostsAreRefused) {
  EXPECT_EQ(ErrorOf("# callgrind format\nevents: Instructions\nfl=file1.c\nfn=main\n16 20\n"
                    "cfn=func2\ncalls=3 20\n* *\n"),
            "t.cg:8: expected a cost (a decimal or 0x hex number), got '*'");
}

// --- summary:/totals:, overflow and tolerated oddities ---------------------------------------

constexpr std::string_view kValgrindHead =
    "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\npositions: line\n"
    "events: Ir Dr\nsummary: 10 4\nfn=f\n1 6 4\n";

/// Parses with diagnostics; returns the records plus "warning: ..." lines.
std::string ParseWarned(std::string_view text, bool force = false) {
  auto in = OpenMemoryInput(text, "t.cg");
  RecordingSink sink;
  Diagnostics diagnostics;
  ReadCallgrind(*in, sink, {.diagnostics = &diagnostics, .force = force});
  std::string warnings;
  diagnostics.AppendSummary(&warnings);
  return sink.text + warnings;
}

std::string WarnedErrorOf(std::string_view text) {
  try {
    return ParseWarned(text);
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(CallgrindReaderTotalsTest, CompleteValgrindPartPasses) {
  std::string text(kValgrindHead);
  EXPECT_EQ(ParseWarned(text + "fn=g\n2 4\ntotals: 10 4\n"),
            "part 0\nheader version=1\nheader creator=callgrind-3.19.0\nheader pid=7\n"
            "header positions=line\nheader events=Ir Dr\nheader summary=10 4\nlayout line | Ir Dr\n"
            "fn ||f\ncost 1 [] 6 4\nfn ||g\ncost 2 [] 4 0\nheader totals=10 4\nend\n");
}

TEST(CallgrindReaderTotalsTest, CutOffValgrindProfileIsAnError) {
  std::string text(kValgrindHead);
  // Cut at a line boundary: no totals:.
  EXPECT_EQ(WarnedErrorOf(text),
            "t.cg:9: expected totals: at the end of part 1 (Callgrind writes it last), got end "
            "of file: the profile is cut off; its costs add up to 6 4, its summary: says '10 4' "
            "(the profile is cut off or was changed; --force writes it anyway)");
  // Cut mid-line: "2 4" became "2"; the totals: line itself lost its last digit.
  EXPECT_EQ(WarnedErrorOf(text + "fn=g\n2\ntotals: 10 4\n"),
            "t.cg:12: expected totals: equal to what the part's costs add up to (6 4), got '10 4' "
            "(the profile is cut off or was changed; --force writes it anyway)");
  // The totals: line without its line end: the message says where the file ends (issue 36 item 7).
  EXPECT_EQ(WarnedErrorOf(text + "fn=g\n2 4\ntotals: 1"),
            "t.cg:12: expected totals: equal to what the part's costs add up to (10 4), got '1' "
            "(the file ends inside this line, without a line end: the profile is cut off; "
            "--force writes it anyway)");
  // The next part's header ends a part too.
  EXPECT_EQ(WarnedErrorOf(text + "part: 2\nfn=g\n2 4\ntotals: 4 0\n"),
            "t.cg:10: expected totals: at the end of part 1 (Callgrind writes it last), got the "
            "next part's part: line: the profile is cut off; its costs add up to 6 4, its "
            "summary: says '10 4' (the profile is cut off or was changed; --force writes it "
            "anyway)");
}

TEST(CallgrindReaderTotalsTest, ForceWritesTheTrueSumsWithAWarning) {
  std::string text(kValgrindHead);
  EXPECT_EQ(ParseWarned(text, /*force=*/true),
            "part 0\nheader version=1\nheader creator=callgrind-3.19.0\nheader pid=7\n"
            "header positions=line\nheader events=Ir Dr\nheader summary=10 4\nlayout line | Ir Dr\n"
            "fn ||f\ncost 1 [] 6 4\nheader totals=6 4\nend\n"
            "warning: t.cg:9: expected totals: at the end of part 1 (Callgrind writes it last), "
            "got end of file: the profile is cut off; its costs add up to 6 4, its summary: says "
            "'10 4'; written anyway (--force)\n");
}

TEST(CallgrindReaderTotalsTest, OtherWritersAndOldCallgrindsAreWarnedAbout) {
  // No creator: a wrong summary: is a warning and stays the part's only summary: (issue 23:
  // a second, corrected one changed callgrind_annotate's percentages); totals: is corrected.
  EXPECT_EQ(ParseWarned("# callgrind format\nevents: Ir\nsummary: 5\nfn=f\n1 3\ntotals: 4\n"),
            "part 0\nheader events=Ir\nheader summary=5\nlayout line | Ir\nfn ||f\ncost 1 [] 3\n"
            "header totals=3\nend\n"
            "warning: t.cg:6: expected totals: equal to what the part's costs add up to (3), got "
            "'4'; the output says what the costs add up to\n"
            "warning: t.cg:3: expected summary: equal to what the part's costs add up to (3), got "
            "'5'; the output keeps it, so its percentages read as the input's\n");
  // Callgrind before 3.10 (and files that claim to be it) need no totals:.
  EXPECT_EQ(ParseWarned("version: 1\ncreator: callgrind-3.6.0.SVN-Debian\nevents: Ir\n"
                        "summary: 3\nfn=f\n1 3\n"),
            "part 0\nheader version=1\nheader creator=callgrind-3.6.0.SVN-Debian\n"
            "header events=Ir\nheader summary=3\nlayout line | Ir\nfn ||f\ncost 1 [] 3\nend\n");
  // A complete Valgrind part (right totals:) whose summary: is off: a warning, not an error.
  std::string text(kValgrindHead);
  EXPECT_EQ(ParseWarned(text + "totals: 6 4\n"),
            "part 0\nheader version=1\nheader creator=callgrind-3.19.0\nheader pid=7\n"
            "header positions=line\nheader events=Ir Dr\nheader summary=10 4\nlayout line | Ir Dr\n"
            "fn ||f\ncost 1 [] 6 4\nheader totals=6 4\nend\n"
            "warning: t.cg:7: expected summary: equal to what the part's costs add up to (6 4), "
            "got '10 4'; the output keeps it, so its percentages read as the input's\n");
}

TEST(CallgrindReaderTotalsTest, SumsPast64BitsAreRefused) {
  std::string head(kHead);
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 18446744073709551615\nfn=g\n2 1\n"),
            "t.cg:6: expected costs whose sums stay below 2^64, got '2 1', which takes the "
            "part's Ir total past it");
  // A function's inclusive cost (self + calls) wraps although the part total does not.
  EXPECT_EQ(ErrorOf(head + "fn=f\n1 1\ncfn=g\ncalls=1 1\n1 18446744073709551615\n"),
            "t.cg:7: expected call costs whose sums stay below 2^64, got a call that takes the "
            "inclusive Ir cost of 'f' past it");
}

TEST(CallgrindReaderWarningTest, RedefinedIdsRepeatedEventsAndUnknownPositions) {
  EXPECT_EQ(ParseWarned("# callgrind format\npositions: line bogus\nevents: Ir\nevents: Dr\n"
                        "fn=(1) a\n1 0 1\nfn=(1) b\n2 0 1\n"),
            "part 0\nheader positions=line bogus\nheader events=Ir\nheader events=Dr\n"
            "layout line other | Dr\nfn ||a\ncost 1,0 [] 1\nfn ||b\ncost 2,0 [] 1\nend\n"
            "warning: t.cg:2: expected position names instr, line or bb, got 'bogus' (its "
            "column is carried through unchanged)\n"
            "warning: t.cg:4: expected one events: line per part, got a second one ('Dr' "
            "replaces 'Ir')\n"
            "warning: t.cg:7: expected function id (1) to keep its name 'a', got 'b' (the new "
            "name is used from here on)\n");
  // A later part may define ids afresh: no warning.
  EXPECT_EQ(ParseWarned("# callgrind format\nevents: Ir\nfn=(1) a\n1 1\npart: 2\nfn=(1) b\n2 1\n"),
            "part 0\nheader events=Ir\nlayout line | Ir\nfn ||a\ncost 1 [] 1\nend\npart 1\n"
            "header part=2\nlayout line | Ir\nfn ||b\ncost 2 [] 1\nend\n");
}

TEST(CallgrindReaderWarningTest, MalformedPidIsWarnedAbout) {
  // Issue 22: `pid: 3999991abc` named process 3999991; now it names none, with a warning.
  EXPECT_EQ(ParseWarned("# callgrind format\npid: 3999991abc\nevents: Ir\nfn=f\n1 1\n"),
            "part 0\nheader pid=3999991abc\nheader events=Ir\nlayout line | Ir\nfn ||f\n"
            "cost 1 [] 1\nend\n"
            "warning: t.cg:2: expected pid: with a process id (a decimal number), got "
            "'3999991abc'; no symbol source is discovered for it\n");
  EXPECT_EQ(ParseWarned("# callgrind format\npid: 42\nevents: Ir\nfn=f\n1 1\n"),
            "part 0\nheader pid=42\nheader events=Ir\nlayout line | Ir\nfn ||f\n"
            "cost 1 [] 1\nend\n");
}

TEST(CallgrindReaderErrorTest, C1ControlsAreEscapedAndUtf8Kept) {
  constexpr char kText[] =
      "# callgrind format\nevents: Ir\nfn=f\n1 5\xc3\xa9\xc4\x80\x9b[2J\xc2\x9b[0m\n";
  EXPECT_EQ(ErrorOf(kText),
            "t.cg:4: expected a cost (a decimal or 0x hex number), got "
            "'5\xc3\xa9\xc4\x80\\x9b[2J\\xc2\\x9b[0m'");
}

TEST(CallgrindReaderErrorTest, ControlBytesAreEscaped) {
  constexpr char kText[] = "# callgrind format\nevents: Ir\nfn=f\n1 \x1b[2J\0x\\\n";
  EXPECT_EQ(ErrorOf(std::string(kText, sizeof kText - 1)),
            "t.cg:4: expected a cost (a decimal or 0x hex number), got '\\x1b[2J\\x00x\\\\'");
}

}  // namespace
}  // namespace cg_inject
