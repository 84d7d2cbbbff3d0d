// The compact version records: every field comes back as it was added, whichever way it is
// stored (inline, in a side record, the name without its location suffix).
#include "sources/version_store.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

// A perf-map line as the reader gives it.
CodeVersionSpec PerfMapVersion(uint64_t start, uint64_t size, std::string_view raw,
                               std::string_view function, std::string_view file, uint32_t line = 0,
                               uint32_t column = 0) {
  CodeVersionSpec v;
  v.start = start;
  v.size = size;
  v.raw_name = raw;
  v.function_name = function;
  v.source_file = file;
  v.source_line = line;
  v.definition_line = line;
  v.definition_column = column;
  return v;
}

void ExpectSame(const CodeVersion& v, const CodeVersionSpec& spec) {
  EXPECT_EQ(v.start(), spec.start);
  EXPECT_EQ(v.size(), spec.size);
  EXPECT_EQ(v.raw_name(), spec.raw_name);
  EXPECT_EQ(v.function_name(), spec.function_name);
  EXPECT_EQ(v.source_file(), spec.source_file);
  EXPECT_EQ(v.source_line(), spec.source_line);
  EXPECT_EQ(v.definition_line(), spec.definition_line);
  EXPECT_EQ(v.definition_column(), spec.definition_column);
  EXPECT_EQ(v.source(), spec.source);
  EXPECT_EQ(v.timestamp(), spec.timestamp);
  EXPECT_EQ(v.code_index(), spec.code_index);
  EXPECT_EQ(v.salted_code_tail(), spec.salted_code_tail);
  EXPECT_EQ(v.code(), spec.code);
  ASSERT_EQ(v.files().size(), spec.files.size());
  for (size_t i = 0; i < spec.files.size(); ++i) EXPECT_EQ(v.files()[i], spec.files[i]);
  ASSERT_EQ(v.lines().size(), spec.lines.size());
  for (size_t i = 0; i < spec.lines.size(); ++i) {
    EXPECT_EQ(v.lines()[i].addr, spec.lines[i].addr);
    EXPECT_EQ(v.lines()[i].line_no, spec.lines[i].line_no);
    EXPECT_EQ(v.lines()[i].discriminator, spec.lines[i].discriminator);
    EXPECT_EQ(v.lines()[i].file_index, spec.lines[i].file_index);
  }
}

TEST(VersionStoreTest, RecordIs48Bytes) { EXPECT_EQ(sizeof(CodeVersion), 48u); }

TEST(VersionStoreTest, JitdumpVersionRoundTripsEveryField) {
  SymbolIndex index;
  index.AddSource({"a.map", "perf-map", "a.map"});
  index.AddSource({"jit-1.dump", "jitdump", "jit-1.dump"});
  const std::string_view files[] = {"/app/a.js", "/app/b.js"};
  const LineEntry lines[] = {{0x1000, 3, 1, 0}, {0x1004, 7, 0, 1}};
  CodeVersionSpec spec = PerfMapVersion(0x1000, 8, "JS:*f /app/a.js:2:5", "f", "/app/a.js", 3, 0);
  spec.definition_line = 2;
  spec.definition_column = 5;
  spec.source = 1;
  spec.timestamp = 123456789012345;
  spec.code_index = 77;
  spec.function_id = 9;
  spec.salted_code_tail = 8;
  spec.code = std::string_view("\x90\x90\x90\x90\x90\x90\x90\xc3", 8);
  spec.files = files;
  spec.lines = lines;
  EXPECT_EQ(index.Add(spec), 9u);
  ExpectSame(index.version(0), spec);
  EXPECT_EQ(index.version(0).function_id(), 9u);
  EXPECT_EQ(index.version(0).load_order(), 0u);
}

TEST(VersionStoreTest, PerfMapVersionHasNoSideData) {
  SymbolIndex index;
  CodeVersionSpec spec = PerfMapVersion(0x4000, 0x40, "LazyCompile:~fn12 /app/src/module3.js:41",
                                        "fn12", "/app/src/module3.js", 41);
  index.Add(spec);
  const CodeVersion& v = index.version(0);
  ExpectSame(v, spec);
  EXPECT_EQ(v.timestamp(), 0u);
  EXPECT_EQ(v.code_index(), 0u);
  EXPECT_TRUE(v.code().empty());
  EXPECT_TRUE(v.files().empty());
  EXPECT_TRUE(v.lines().empty());
  // Stored without the ` FILE:LINE` that the file and line rebuild.
  EXPECT_EQ(v.stored_name(), "LazyCompile:~fn12");
  EXPECT_EQ(v.display_name(), "fn12");
}

TEST(VersionStoreTest, LocationSuffixesRebuildExactly) {
  SymbolIndex index;
  const std::vector<CodeVersionSpec> specs = {
      PerfMapVersion(0, 1, "JS:~g /a.js:3:17", "g", "/a.js", 3, 17),             // column
      PerfMapVersion(1, 1, "py::h:/srv/app.py", "h", "/srv/app.py"),             // CPython, no line
      PerfMapVersion(2, 1, "LazyCompile:~ /a.js:1", "(anonymous)", "/a.js", 1),  // made-up name
      PerfMapVersion(3, 1, "TRACE_1::x.lua:5", "TRACE_1", "x.lua", 5),           // the second colon
      PerfMapVersion(4, 1, "f /a.js:007", "f", "/a.js", 7),  // the number is not as written
      PerfMapVersion(5, 1, "/a.js:1", "", "/a.js", 1),       // no readable name: kept whole
  };
  for (const CodeVersionSpec& spec : specs) index.Add(spec);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i].raw_name);
    ExpectSame(index.version(i), specs[i]);
  }
  EXPECT_EQ(index.version(0).stored_name(), "JS:~g");
  EXPECT_EQ(index.version(1).stored_name(), "py::h");
  EXPECT_EQ(index.version(2).stored_name(), "LazyCompile:~");
  EXPECT_EQ(index.version(3).stored_name(), "TRACE_1:");
  EXPECT_EQ(index.version(4).stored_name(), "f /a.js:007");
  EXPECT_EQ(index.version(5).stored_name(), "/a.js:1");
  EXPECT_EQ(index.version(5).display_name(), "/a.js:1");
}

TEST(VersionStoreTest, NamesLongerThanSixteenBitFields) {
  SymbolIndex index;
  const std::string long_function(70000, 'f');
  const std::string raw = "LazyCompile:~" + long_function + " /a.js:1";
  const std::string prefix(70000, 'p');
  const std::string late_raw = prefix + "g /a.js:2";  // the function starts past 65535
  index.Add(PerfMapVersion(0, 1, raw, long_function, "/a.js", 1));
  index.Add(PerfMapVersion(1, 1, late_raw, "g", "/a.js", 2));
  EXPECT_EQ(index.version(0).raw_name(), raw);
  EXPECT_EQ(index.version(0).function_name(), long_function);
  EXPECT_EQ(index.version(1).raw_name(), late_raw);
  EXPECT_EQ(index.version(1).function_name(), "g");
}

TEST(VersionStoreTest, AddressesAndSizesPast32Bits) {
  SymbolIndex index;
  CodeVersionSpec crossing = PerfMapVersion(0xfffffff0, 0x20, "crossing", "crossing", "");
  CodeVersionSpec huge = PerfMapVersion(uint64_t{1} << 40, uint64_t{5} << 32, "huge", "huge", "");
  CodeVersionSpec just_below = PerfMapVersion(0x7f0000000000, 0xfffffffe, "below", "below", "");
  index.Add(crossing);
  index.Add(huge);
  index.Add(just_below);
  index.Finish();
  ExpectSame(index.version(0), crossing);
  ExpectSame(index.version(1), huge);
  ExpectSame(index.version(2), just_below);
  EXPECT_EQ(index.Lookup(0x100000000)->raw_name(), "crossing");
  EXPECT_EQ(index.Lookup(0xffffffef), nullptr);
  EXPECT_EQ(index.Lookup((uint64_t{1} << 40) + (uint64_t{5} << 32) - 1)->raw_name(), "huge");
  EXPECT_EQ(index.Lookup((uint64_t{1} << 40) + (uint64_t{5} << 32)), nullptr);
}

TEST(VersionStoreTest, LaterCompletionKeepsTheRebuiltName) {
  // A line table or code bytes given later (jitdump, MoarVM) do not change the raw name, even
  // when it was stored without its suffix.
  SymbolIndex index;
  CodeVersionSpec spec = PerfMapVersion(0x100, 4, "JS:~f /a.js:3:4", "f", "/a.js", 3, 4);
  index.Add(spec);
  const std::string_view files[] = {"/b.js"};
  const LineEntry lines[] = {{0x100, 9, 0, 0}};
  index.SetLineTable(0, files, lines);
  index.SetSourceLine(0, "/b.js", 9);
  index.SetCode(0, "\x90\x90\x90\xc3");
  const CodeVersion& v = index.version(0);
  EXPECT_EQ(v.raw_name(), "JS:~f /a.js:3:4");
  EXPECT_EQ(v.function_name(), "f");
  EXPECT_EQ(v.source_file(), "/b.js");
  EXPECT_EQ(v.source_line(), 9u);
  EXPECT_EQ(v.definition_line(), 3u);
  EXPECT_EQ(v.definition_column(), 4u);
  EXPECT_EQ(v.size(), 4u);
  EXPECT_EQ(v.code(), "\x90\x90\x90\xc3");
  ASSERT_EQ(v.lines().size(), 1u);
  EXPECT_EQ(v.LookupLine(0x102)->line_no, 9u);
}

TEST(VersionStoreTest, ManyChunksKeepLoadOrderAndReferences) {
  SymbolIndex index;
  const size_t n = 3 * VersionStore::kPerChunk + 5;
  for (size_t i = 0; i < n; ++i) {
    const std::string name = "fn" + std::to_string(i);
    index.Add(PerfMapVersion(i * 16, 16, name, name, ""));
  }
  const CodeVersion* first = &index.version(0);
  index.Finish();
  EXPECT_EQ(&index.version(0), first);
  ASSERT_EQ(index.size(), n);
  for (size_t i : {size_t{0}, VersionStore::kPerChunk - 1, VersionStore::kPerChunk, n - 1}) {
    const CodeVersion& v = index.version(i);
    EXPECT_EQ(v.load_order(), i);
    EXPECT_EQ(v.raw_name(), "fn" + std::to_string(i));
    EXPECT_EQ(index.Lookup(i * 16 + 3), &v);
  }
}

}  // namespace
}  // namespace cg_inject
