#include "sources/perf_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "sources/sources_test_util.h"

namespace cg_inject {
namespace {

using testing::CorpusPath;
using ::testing::ElementsAre;
using testing::Messages;
using testing::ReadTestFile;

class PerfMapTest : public ::testing::Test {
 protected:
  PerfMapStats Read(std::string_view text, std::string_view path = "perf-1.map") {
    uint32_t source = index_.AddSource({std::string(path), "perf-map", "perf-1.map"});
    PerfMapStats stats = ReadPerfMap(text, path, source, &index_, &diagnostics_);
    index_.Finish();
    return stats;
  }
  // Parses one line and returns the error ("" on success).
  static std::string LineError(std::string_view line, PerfMapLine* out = nullptr) {
    PerfMapLine scratch;
    std::string error;
    if (ParsePerfMapLine(line, out ? out : &scratch, &error)) return "";
    return error;
  }
  SymbolIndex index_;
  Diagnostics diagnostics_;
};

TEST_F(PerfMapTest, PlainLine) {
  PerfMapLine line;
  EXPECT_EQ(LineError("7f0012 2a my_function", &line), "");
  EXPECT_EQ(line.start, 0x7f0012u);
  EXPECT_EQ(line.size, 0x2au);
  EXPECT_EQ(line.name, "my_function");
}

TEST_F(PerfMapTest, HexSpellings) {
  PerfMapLine line;
  EXPECT_EQ(LineError("0x7F0012 0X2A f", &line), "");  // HotSpot agents write 0x
  EXPECT_EQ(line.start, 0x7f0012u);
  EXPECT_EQ(line.size, 0x2au);
  EXPECT_EQ(LineError("00007FB06149E6A0 1b0 f", &line), "");  // .NET: padded upper case
  EXPECT_EQ(line.start, 0x7FB06149E6A0u);
  EXPECT_EQ(LineError("ffffffffffffff00 ff f", &line), "");  // the very top still fits
  EXPECT_EQ(line.start, 0xffffffffffffff00u);
}

TEST_F(PerfMapTest, NameIsRestOfLine) {
  PerfMapLine line;
  EXPECT_EQ(LineError("10 8 stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>", &line), "");
  EXPECT_EQ(line.name, "stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>");
  EXPECT_EQ(LineError("10 8 LazyCompile:~f  file.js:110 ", &line), "");
  EXPECT_EQ(line.name, "LazyCompile:~f  file.js:110 ");  // inner and trailing blanks kept
  EXPECT_EQ(LineError("10 8 name\r", &line), "");        // CRLF files
  EXPECT_EQ(line.name, "name");
}

TEST_F(PerfMapTest, TabsAndRunsOfBlanksSeparateFields) {
  PerfMapLine line;
  EXPECT_EQ(LineError("10\t8\tf g", &line), "");
  EXPECT_EQ(line.size, 8u);
  EXPECT_EQ(line.name, "f g");
  EXPECT_EQ(LineError("10   8  f", &line), "");
  EXPECT_EQ(line.name, "f");
}

TEST_F(PerfMapTest, MalformedLines) {
  EXPECT_EQ(LineError("00007FB0614AABEG 130 bool Ignored"),
            "expected hex start address, got '00007FB0614AABEG'");
  EXPECT_EQ(LineError("FAAFFFFFFFFFFFFFF 300 f"),
            "expected a start address of at most 64 bits, got 'FAAFFFFFFFFFFFFFF'");
  EXPECT_EQ(LineError("FFFFFFFFFFFFFFFE 100 TooBig(char)"),
            "start FFFFFFFFFFFFFFFE + size 100 is beyond the 64-bit address space");
  EXPECT_EQ(LineError("10 zz f"), "expected hex size, got 'zz'");
  EXPECT_EQ(LineError("10 0x f"), "expected hex size, got '0x'");
  EXPECT_EQ(LineError("10 8"), "expected a symbol name after the size, got nothing");
  EXPECT_EQ(LineError("10 8   "), "expected a symbol name after the size, got nothing");
  EXPECT_EQ(LineError(" Script:~ evalmachine.<anonymous>:1"),
            "expected hex start address, got ' Script:~ evalmachine.<anonymous>:1' (a name "
            "continued from the previous line?)");
  EXPECT_EQ(LineError("-10 8 f"), "expected hex start address, got '-10'");
}

TEST_F(PerfMapTest, TornLineKeepsBothEntries) {
  PerfMapLine line;
  std::string error;
  ASSERT_TRUE(ParsePerfMapLine(
      "7fbf1fc215ee b py::joinuser:<frozen sitej7fbf1fc215f9 b py::expanduser:<frozen posixpath>",
      &line, &error));
  EXPECT_EQ(line.start, 0x7fbf1fc215eeu);
  EXPECT_EQ(line.size, 0xbu);
  EXPECT_EQ(line.name, "py::joinuser:<frozen sitej");  // as far as it goes
  EXPECT_EQ(line.torn_column, 42u);
  EXPECT_EQ(line.torn_tail, "7fbf1fc215f9 b py::expanduser:<frozen posixpath>");
}

TEST_F(PerfMapTest, ThreeInterleavedWritersGiveThreeEntries) {
  PerfMapStats stats = Read("1000 10 first_cut0000000000002000 10 second_cut00003000 10 third\n");
  EXPECT_EQ(stats.entries, 3);
  EXPECT_EQ(stats.torn_lines, 1);
  EXPECT_EQ(stats.cut_names, 2);
  EXPECT_EQ(stats.recovered, 2);
  EXPECT_EQ(stats.bad_lines, 0);
  EXPECT_EQ(index_.Lookup(0x1000)->raw_name(), "first_cut");
  EXPECT_EQ(index_.Lookup(0x2000)->raw_name(), "second_cut");
  EXPECT_EQ(index_.Lookup(0x3000)->raw_name(), "third");
}

TEST_F(PerfMapTest, NumbersInNamesAreNotTornLines) {
  // Short hex-looking words followed by numbers are ordinary names, not a second entry.
  EXPECT_EQ(LineError("10 8 cafe 12 babe"), "");
  EXPECT_EQ(LineError("10 8 stub<12> 1 2 x"), "");
  EXPECT_EQ(LineError("10 8 [System.Private.CoreLib] Foo::Bar(int32 1 2)"), "");
}

TEST_F(PerfMapTest, ReadKeepsFileOrderAndCountsBadLines) {
  PerfMapStats stats = Read(
      "20 10 second\n"
      "10 10 first\n"
      "zz 1 bad\n"
      "\n"
      "20 10 second again\n");
  EXPECT_EQ(stats.lines, 5);
  EXPECT_EQ(stats.entries, 3);
  EXPECT_EQ(stats.bad_lines, 1);
  EXPECT_EQ(stats.blank_lines, 1);
  EXPECT_THAT(Messages(diagnostics_),
              ElementsAre("perf-1.map:3: expected hex start address, got 'zz'"));
  ASSERT_EQ(index_.size(), 3u);
  auto all = index_.LookupAll(0x25);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->raw_name(), "second");  // duplicates stay, in file order
  EXPECT_EQ(all[1]->raw_name(), "second again");
  EXPECT_EQ(index_.Lookup(0x25)->raw_name(), "second again");
  EXPECT_EQ(index_.sources()[0].records, 3);
}

TEST_F(PerfMapTest, LastLineWithoutNewline) {
  PerfMapStats stats = Read("10 10 a\n20 10 b");
  EXPECT_EQ(stats.entries, 2);
  EXPECT_EQ(index_.Lookup(0x21)->raw_name(), "b");
}

TEST_F(PerfMapTest, NameConventionsFillLocation) {
  Read("59ed4102 26 LazyCompile:~REPLServer.self.writer repl.js:514\n");
  const CodeVersion* v = index_.Lookup(0x59ed4102);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->function_name(), "REPLServer.self.writer");
  EXPECT_EQ(v->source_file(), "repl.js");
  EXPECT_EQ(v->source_line(), 514u);
}

TEST_F(PerfMapTest, NothingParsesIsAnError) {
  try {
    Read("hello world\nfoo bar baz\n", "perf-9.map");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "perf-9.map: not a perf map: none of its 2 non-empty lines is `START SIZE name` "
                 "(first: perf-9.map:1: expected hex start address, got 'hello')");
  }
}

TEST_F(PerfMapTest, EmptyFileIsNotAnError) {
  PerfMapStats stats = Read("");
  EXPECT_EQ(stats.entries, 0);
  EXPECT_EQ(stats.lines, 0);
}

TEST_F(PerfMapTest, OnlyFirstFewBadLinesKeptVerbatim) {
  std::string text = "10 1 good\n";
  for (int i = 0; i < 8; ++i) text += "bad line\n";
  PerfMapStats stats = Read(text);
  EXPECT_EQ(stats.bad_lines, 8);
  EXPECT_EQ(testing::WarningCount(diagnostics_, "perf-map: bad line"), 8);
  EXPECT_EQ(Messages(diagnostics_).size(), static_cast<size_t>(Diagnostics::kKeptPerKind));
}

// --- The shared corpus -------------------------------------------------------------------

TEST_F(PerfMapTest, CorpusDdprofEdgeCases) {
  std::string path = CorpusPath("perfmap/ddprof-perf-1.map");
  CG_SKIP_WITHOUT_CORPUS(path);
  PerfMapStats stats = Read(ReadTestFile(path), "perf-1.map");
  // Lines 1-2 are good (line 1 is 1425 bytes long, 1404 of them the name); 3 has a 'G' in its
  // address, 4 has 17
  // digits, 5 runs past 2^64.
  EXPECT_EQ(stats.lines, 5);
  EXPECT_EQ(stats.entries, 2);
  EXPECT_EQ(stats.bad_lines, 3);
  EXPECT_THAT(
      Messages(diagnostics_),
      ElementsAre("perf-1.map:3: expected hex start address, got '00007FB0614AABEG'",
                  "perf-1.map:4: expected a start address of at most 64 bits, got "
                  "'FAAFFFFFFFFFFFFFF'",
                  "perf-1.map:5: start FFFFFFFFFFFFFFFE + size 100 is beyond the 64-bit address "
                  "space"));
  const CodeVersion* first = index_.Lookup(0x7FB06149E6A0 + 0x1af);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->size(), 0x1b0u);
  EXPECT_EQ(first->raw_name().size(), 1425u - 21);  // minus "00007FB06149E6A0 1b0 "
  EXPECT_TRUE(first->raw_name().starts_with("int32 [System.Private.CoreLib] System.SpanHelpers::"));
  EXPECT_EQ(index_.Lookup(0x7FB06149E6A0 + 0x1b0), nullptr);
  const CodeVersion* second = index_.Lookup(0x7FB0614A7BE0);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->raw_name(),
            "bool [System.Private.CoreLib] System.SpanHelpers::Contains(char&,char,int32)"
            "[OptimizedTier1]");
}

TEST_F(PerfMapTest, CorpusDotnet) {
  std::string path = CorpusPath("perfmap/ddprof-perf-42.map");
  CG_SKIP_WITHOUT_CORPUS(path);
  PerfMapStats stats = Read(ReadTestFile(path), "perf-42.map");
  EXPECT_EQ(stats.lines, 2268);
  EXPECT_EQ(stats.entries, 2268);
  EXPECT_EQ(stats.bad_lines, 0);
  EXPECT_EQ(diagnostics_.total(), 0);
  // Lines 1416 and 1418 both claim 00007FB0619D21F8 (8 bytes); line 1417 sits just after.
  auto all = index_.LookupAll(0x7FB0619D21F8 + 7);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->raw_name(), "stub<1324> AllocateTemporaryEntryPoints<PRECODE_FIXUP>");
  EXPECT_EQ(all[1]->raw_name(), "stub<1326> AllocateTemporaryEntryPoints<PRECODE_FIXUP>");
  EXPECT_EQ(index_.Lookup(0x7FB0619D2208)->raw_name(),
            "stub<1325> AllocateTemporaryEntryPoints<PRECODE_FIXUP>");
  const CodeVersion* first = index_.Lookup(0x7FB061490018);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->size(), 0x48u);
  EXPECT_EQ(first->raw_name(), "stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>");
  EXPECT_EQ(first->function_name(), first->raw_name());  // no location convention
}

TEST_F(PerfMapTest, CorpusCpythonTornLine) {
  std::string path = CorpusPath("perfmap/blazesym-python312-sample.map");
  CG_SKIP_WITHOUT_CORPUS(path);
  PerfMapStats stats = Read(ReadTestFile(path), "perf-7.map");
  // 30 lines; line 24 holds a cut-off entry for 7fbf1fc215ee and the complete 7fbf1fc215f9 one:
  // both are kept, the first with the name as far as it goes.
  EXPECT_EQ(stats.lines, 30);
  EXPECT_EQ(stats.bad_lines, 0);
  EXPECT_EQ(stats.torn_lines, 1);
  EXPECT_EQ(stats.cut_names, 1);
  EXPECT_EQ(stats.recovered, 1);
  EXPECT_EQ(stats.entries, 31);
  EXPECT_THAT(Messages(diagnostics_),
              ElementsAre("perf-7.map:24: torn line: another entry starts at column 64 (two "
                          "writers interleaved); kept 2 entries, the first with its name cut "
                          "off"));
  const CodeVersion* cut = index_.Lookup(0x7fbf1fc215ee);
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->size(), 0xbu);
  EXPECT_EQ(cut->raw_name(), "py::_getuserbase.<locals>.joinuser:<frozen sitej");
  EXPECT_EQ(cut->function_name(), "_getuserbase.<locals>.joinuser");
  const CodeVersion* salvaged = index_.Lookup(0x7fbf1fc215f9);
  ASSERT_NE(salvaged, nullptr);
  EXPECT_EQ(salvaged->size(), 0xbu);
  EXPECT_EQ(salvaged->function_name(), "expanduser");
  EXPECT_EQ(salvaged->source_file(), "<frozen posixpath>");
  const CodeVersion* first = index_.Lookup(0x7fbf1fc21000);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->raw_name(), "py::_find_and_load:<frozen importlib._bootstrap>");
  EXPECT_EQ(first->function_name(), "_find_and_load");
  EXPECT_EQ(first->source_file(), "<frozen importlib._bootstrap>");
  EXPECT_EQ(index_.Lookup(0x7fbf1fc21000 + 0xb)->function_name(), "_ModuleLockManager.__init__");
}

TEST_F(PerfMapTest, CorpusNodeUnsorted) {
  std::string path = CorpusPath("perfmap/parca-nodejs-perf-map.map");
  CG_SKIP_WITHOUT_CORPUS(path);
  PerfMapStats stats = Read(ReadTestFile(path), "perf-8.map");
  EXPECT_EQ(stats.entries, 28);
  EXPECT_EQ(stats.bad_lines, 0);
  const CodeVersion* regexp = index_.Lookup(0x3ef414c0 + 0x397);
  ASSERT_NE(regexp, nullptr);
  EXPECT_EQ(regexp->raw_name(), "RegExp:[{(]");
  EXPECT_EQ(regexp->source_file(), "");
  const CodeVersion* native = index_.Lookup(0x4edd30ea);
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(native->function_name(), "lastIndexOf");
  EXPECT_EQ(native->source_file(), "native array.js");
  EXPECT_EQ(native->source_line(), 618u);
  const CodeVersion* last = index_.Lookup(0x4edd7132);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->function_name(), "process.kill");
  EXPECT_EQ(last->source_file(), "internal/process/per_thread.js");
  EXPECT_EQ(last->source_line(), 173u);
}

TEST_F(PerfMapTest, CorpusNodeNameWithNewline) {
  std::string path = CorpusPath("perfmap/parca-nodejs-perf-map-regression.map");
  CG_SKIP_WITHOUT_CORPUS(path);
  PerfMapStats stats = Read(ReadTestFile(path), "perf-9.map");
  EXPECT_EQ(stats.entries, 2);
  EXPECT_EQ(stats.bad_lines, 1);
  ASSERT_EQ(Messages(diagnostics_).size(), 1u);
  EXPECT_TRUE(Messages(diagnostics_)[0].starts_with("perf-9.map:2: expected hex start address"));
  const CodeVersion* script = index_.Lookup(0xd63be533e90);
  ASSERT_NE(script, nullptr);
  EXPECT_EQ(script->function_name(), "(script)");
  EXPECT_EQ(script->source_file(), "evalmachine.<anonymous>");
  EXPECT_EQ(script->source_line(), 1u);
  const CodeVersion* optimized = index_.Lookup(0x7235dc0 + 0x337);
  ASSERT_NE(optimized, nullptr);
  EXPECT_EQ(optimized->function_name(), "getPotentialParent");
  EXPECT_EQ(optimized->source_line(), 764u);
}

}  // namespace
}  // namespace cg_inject
