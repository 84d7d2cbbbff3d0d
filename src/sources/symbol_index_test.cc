#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

// Views into `name` and `code`: Add copies them, so they need to outlive only the full
// expression that adds the version.
CodeVersionSpec Version(uint64_t start, uint64_t size, std::string_view name, uint32_t source = 0,
                        std::string_view code = "") {
  CodeVersionSpec v;
  v.start = start;
  v.size = size;
  v.raw_name = name;
  v.function_name = name;
  v.source = source;
  v.code = code;
  return v;
}

std::vector<std::string> Names(const std::vector<const CodeVersion*>& versions) {
  std::vector<std::string> names;
  for (const CodeVersion* v : versions) names.push_back(v->raw_name());
  return names;
}

TEST(SymbolIndexTest, Empty) {
  SymbolIndex index;
  index.Finish();
  EXPECT_EQ(index.Lookup(0), nullptr);
  EXPECT_TRUE(index.LookupAll(123).empty());
  EXPECT_EQ(index.reused_ranges(), 0);
}

// Issue 33 defect 3: a perf map and a jitdump of one process (Node with --perf-prof and
// --perf-basic-prof, PHP) describe the same code. The map's entries that a jitdump load matches
// (start, size, name) are no versions of their own: the jitdump's, with code bytes, is the one
// lookups find, and the two are no reuse. Before, with the map loaded last (given last on the
// command line), every range was "reused" and the map's versions were found.
TEST(SymbolIndexTest, AMapEntryAJitdumpDescribesTooIsTheJitdumpsVersion) {
  SymbolIndex index;
  uint32_t dump = index.AddSource({"jit-7.dump", "jitdump", "jit-7.dump"});
  uint32_t map = index.AddSource({"perf-7.map", "perf-map", "perf-7.map"});
  const std::string code(0x10, '\x90');
  index.Add(Version(0x100, 0x10, "JS:~f a.js:1:1", dump, code));
  index.Add(Version(0x200, 0x10, "", dump, code));  // nameless in the dump
  index.Add(Version(0x300, 0x10, "JS:*g a.js:5:1", dump, code));
  index.Add(Version(0x100, 0x10, "JS:~f a.js:1:1", map));
  index.Add(Version(0x200, 0x10, "JS:~h a.js:9:1", map));
  index.Add(Version(0x300, 0x10, "JS:*other b.js:1:1", map));  // other code: stays
  index.Add(Version(0x400, 0x10, "JS:~only_in_map a.js:20:1", map));
  index.Finish();
  EXPECT_THAT(Names(index.LookupAll(0x104)), ElementsAre("JS:~f a.js:1:1"));
  EXPECT_EQ(index.Lookup(0x104)->source(), dump);
  EXPECT_FALSE(index.Lookup(0x104)->code().empty());
  // The nameless load takes the map's name; it keeps its code.
  ASSERT_THAT(Names(index.LookupAll(0x200)), ElementsAre("JS:~h a.js:9:1"));
  EXPECT_EQ(index.Lookup(0x200)->source(), dump);
  EXPECT_EQ(index.Lookup(0x200)->code(), code);
  // A map entry no load matches is a version of its own.
  EXPECT_THAT(Names(index.LookupAll(0x300)), ElementsAre("JS:*g a.js:5:1", "JS:*other b.js:1:1"));
  EXPECT_EQ(index.Lookup(0x404)->raw_name(), "JS:~only_in_map a.js:20:1");
  EXPECT_TRUE(index.Superseded(index.version(3)));
  EXPECT_TRUE(index.Superseded(index.version(4)));
  EXPECT_FALSE(index.Superseded(index.version(5)));
  EXPECT_FALSE(index.Superseded(index.version(0)));
  EXPECT_EQ(index.sources()[map].superseded, 2);
  EXPECT_EQ(index.sources()[dump].superseded, 0);
  // Only 0x300 holds two functions.
  EXPECT_EQ(index.reused_ranges(), 1);
  EXPECT_FALSE(index.Overlapped(*index.Lookup(0x104)));
}

// Two perf maps (a discovered one and one given) are not matched: the chooser's rule for them
// (the later source) stays; only a jitdump supersedes a map entry.
TEST(SymbolIndexTest, TwoMapsDoNotSupersedeEachOther) {
  SymbolIndex index;
  uint32_t a = index.AddSource({"/tmp/perf-7.map", "perf-map", "perf-7.map"});
  uint32_t b = index.AddSource({"mine.map", "perf-map", "mine.map"});
  index.Add(Version(0x100, 0x10, "f", a));
  index.Add(Version(0x100, 0x10, "f", b));
  index.Finish();
  EXPECT_EQ(index.LookupAll(0x100).size(), 2u);
  EXPECT_FALSE(index.Superseded(index.version(0)));
}

TEST(SymbolIndexTest, RangesAreHalfOpen) {
  SymbolIndex index;
  index.Add(Version(0x100, 0x10, "a"));
  index.Add(Version(0x110, 0x10, "b"));
  index.Add(Version(0x200, 0, "empty"));
  index.Finish();
  EXPECT_EQ(index.Lookup(0xff), nullptr);
  EXPECT_EQ(index.Lookup(0x100)->raw_name(), "a");
  EXPECT_EQ(index.Lookup(0x10f)->raw_name(), "a");
  EXPECT_EQ(index.Lookup(0x110)->raw_name(), "b");
  EXPECT_EQ(index.Lookup(0x120), nullptr);
  EXPECT_EQ(index.Lookup(0x200), nullptr);  // a zero-size entry covers nothing
}

// Issue 33 item 6: code no source lists is named after the listed code it follows.
TEST(SymbolIndexTest, NeighborsAreTheNearestVersionsThatDoNotContainTheAddress) {
  SymbolIndex index;
  index.Add(Version(0x100, 0x10, "a"));
  index.Add(Version(0x120, 0x10, "b"));
  index.Add(Version(0x200, 0x40, "c"));
  index.Add(Version(0x200, 0x40, "c again"));  // overlapping: in the tree
  index.Add(Version(0x210, 0x8, "inside c"));
  index.Add(Version(0x300, 0, "empty"));
  index.Finish();
  auto names = [&](uint64_t addr) {
    SymbolIndex::Neighbors n = index.LookupNeighbors(addr);
    return std::make_pair(n.before ? n.before->raw_name() : "-",
                          n.after ? n.after->raw_name() : "-");
  };
  EXPECT_EQ(names(0x50), std::make_pair(std::string("-"), std::string("a")));
  EXPECT_EQ(names(0x110), std::make_pair(std::string("a"), std::string("b")));
  EXPECT_EQ(names(0x115), std::make_pair(std::string("a"), std::string("b")));
  EXPECT_EQ(names(0x105), std::make_pair(std::string("-"), std::string("b")));  // inside a
  EXPECT_EQ(names(0x130), std::make_pair(std::string("b"), std::string("c")));  // ties: earliest
  EXPECT_EQ(names(0x218), std::make_pair(std::string("inside c"), std::string("-")));
  EXPECT_EQ(names(0x240), std::make_pair(std::string("c again"), std::string("-")));  // latest
  EXPECT_EQ(names(0x400), std::make_pair(std::string("c again"), std::string("-")));
}

TEST(SymbolIndexTest, OverlapsComeInLoadOrder) {
  SymbolIndex index;
  index.Add(Version(0x100, 0x100, "outer"));
  index.Add(Version(0x180, 0x10, "inner, later"));
  index.Add(Version(0x100, 0x100, "outer again"));
  index.Add(Version(0x50, 0x200, "wide"));
  index.Finish();
  EXPECT_THAT(Names(index.LookupAll(0x185)),
              ElementsAre("outer", "inner, later", "outer again", "wide"));
  EXPECT_EQ(index.Lookup(0x185)->raw_name(), "wide");
  EXPECT_THAT(Names(index.LookupAll(0x60)), ElementsAre("wide"));
  EXPECT_EQ(index.version(2).load_order(), 2u);
  EXPECT_EQ(&index.version(2), index.LookupAll(0x185)[2]);
}

TEST(SymbolIndexTest, TopOfAddressSpace) {
  SymbolIndex index;
  index.Add(Version(UINT64_MAX - 0x10, 0x10, "top"));
  index.Finish();
  EXPECT_EQ(index.Lookup(UINT64_MAX - 1)->raw_name(), "top");
  EXPECT_EQ(index.Lookup(UINT64_MAX), nullptr);
}

TEST(SymbolIndexTest, RangePastTheTopEndsThere) {
  // A size that would wrap is cut at the top of the address space, whether the lookup node holds
  // the size or refers to the version for it (4 GB and more).
  for (uint64_t size : {uint64_t{0x10}, uint64_t{1} << 33}) {
    SymbolIndex index;
    index.Add(Version(UINT64_MAX - 1, size, "top"));
    index.Finish();
    EXPECT_EQ(index.Lookup(UINT64_MAX - 1)->raw_name(), "top");
    EXPECT_EQ(index.Lookup(UINT64_MAX), nullptr);
    EXPECT_TRUE(index.LookupAll(UINT64_MAX).empty());
  }
}

TEST(SymbolIndexTest, AgreesWithBruteForce) {
  std::mt19937_64 random(42);
  for (size_t n : {1u, 2u, 3u, 7u, 8u, 9u, 31u, 32u, 33u, 100u, 1000u, 3000u}) {
    SymbolIndex index;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (size_t i = 0; i < n; ++i) {
      uint64_t start = random() % 10000;
      // Mostly small ranges, a few huge ones, to exercise the max-end augmentation.
      uint64_t size = random() % 20 == 0 ? random() % 5000 : random() % 30;
      ranges.push_back({start, size});
      index.Add(Version(start, size, std::to_string(i)));
    }
    index.Finish();
    for (uint64_t addr = 0; addr < 15000; addr += 7) {
      std::vector<std::string> expected;
      for (size_t i = 0; i < n; ++i) {
        if (addr >= ranges[i].first && addr < ranges[i].first + ranges[i].second) {
          expected.push_back(std::to_string(i));
        }
      }
      ASSERT_EQ(Names(index.LookupAll(addr)), expected) << "n=" << n << " addr=" << addr;
    }
    for (size_t i = 0; i < n; ++i) {
      auto [start, size] = ranges[i];
      bool overlapped = false;
      for (size_t j = 0; j < n; ++j) {
        auto [other_start, other_size] = ranges[j];
        overlapped |= j != i && size != 0 && other_size != 0 && other_start < start + size &&
                      start < other_start + other_size;
      }
      ASSERT_EQ(index.Overlapped(index.version(i)), overlapped) << "n=" << n << " i=" << i;
    }
  }
}

TEST(SymbolIndexTest, FunctionIds) {
  SymbolIndex index;
  uint32_t a = index.Add(Version(0, 1, "a"));
  uint32_t b = index.Add(Version(1, 1, "b"));
  CodeVersionSpec moved = Version(2, 1, "a");
  moved.function_id = a;
  EXPECT_EQ(index.Add(moved), a);
  EXPECT_NE(a, b);
  EXPECT_NE(a, 0u);
  CodeVersionSpec explicit_id = Version(3, 1, "c");
  explicit_id.function_id = 100;
  EXPECT_EQ(index.Add(explicit_id), 100u);
  EXPECT_EQ(index.Add(Version(4, 1, "d")), 101u);  // fresh ids never collide with given ones
}

TEST(SymbolIndexTest, SourcesCountTheirRecords) {
  SymbolIndex index;
  uint32_t map = index.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map"});
  uint32_t dump = index.AddSource({"jit-1.dump", "jitdump", "jit-1.dump"});
  index.Add(Version(0, 1, "a", map));
  index.Add(Version(1, 1, "b", dump));
  index.Add(Version(2, 1, "c", dump));
  index.Finish();
  EXPECT_EQ(index.sources()[map].records, 1);
  EXPECT_EQ(index.sources()[dump].records, 2);
}

TEST(SymbolIndexTest, ReusedRanges) {
  SymbolIndex index;
  uint32_t f = index.Add(Version(0x100, 0x20, "f"));
  index.Add(Version(0x110, 0x20, "g"));  // overlaps f: code reuse
  CodeVersionSpec f_again = Version(0x100, 0x20, "f");
  f_again.function_id = f;
  index.Add(f_again);
  uint32_t h = index.Add(Version(0x400, 0x20, "h"));
  CodeVersionSpec h_again = Version(0x400, 0x20, "h");
  h_again.function_id = h;  // the same function loaded twice is not reuse
  index.Add(h_again);
  index.Add(Version(0x800, 0x20, "alone"));
  index.Finish();
  EXPECT_EQ(index.reused_ranges(), 1);
}

TEST(SymbolIndexTest, AddCopiesViewsIntoItsStorage) {
  SymbolIndex index;
  {
    std::string raw = "LazyCompile:~f /app/a.js:3";
    std::string function = "LazyCompile:~f";  // equal to a piece of raw, stored elsewhere
    std::string made_up = "(anonymous)";
    std::string file = "/app/a.js";
    std::string code = "\x90\xc3";
    std::vector<std::string> files = {"/app/a.js", "/app/b.js"};
    std::vector<std::string_view> file_views(files.begin(), files.end());
    std::vector<LineEntry> lines = {{0x100, 3, 0, 0}, {0x101, 4, 0, 1}};
    CodeVersionSpec v;
    v.start = 0x100;
    v.size = 2;
    v.raw_name = raw;
    v.function_name = function;
    v.source_file = file;
    v.code = code;
    v.files = file_views;
    v.lines = lines;
    index.Add(v);
    v.start = 0x200;
    v.function_name = made_up;
    v.files = {};
    v.lines = {};
    index.Add(v);
    index.Add(v);
    // Everything the versions viewed is overwritten, then freed.
    for (std::string* s : {&raw, &function, &made_up, &file, &code, &files[0], &files[1]})
      s->assign(s->size(), '#');
  }
  index.Finish();
  ASSERT_EQ(index.size(), 3u);
  const CodeVersion* v[] = {&index.version(0), &index.version(1), &index.version(2)};
  EXPECT_EQ(v[0]->raw_name(), "LazyCompile:~f /app/a.js:3");
  EXPECT_EQ(v[0]->function_name(), "LazyCompile:~f");
  EXPECT_EQ(v[0]->function_name().data(), v[0]->stored_name().data());  // a piece of the name
  EXPECT_EQ(v[0]->source_file(), "/app/a.js");
  EXPECT_EQ(v[0]->code(), std::string_view("\x90\xc3", 2));
  ASSERT_EQ(v[0]->files().size(), 2u);
  EXPECT_EQ(v[0]->files()[1], "/app/b.js");
  EXPECT_EQ(v[0]->files()[0].data(), v[0]->source_file().data());  // file names interned
  ASSERT_EQ(v[0]->lines().size(), 2u);
  EXPECT_EQ(v[0]->lines()[1].line_no, 4u);
  EXPECT_EQ(v[0]->LookupLine(0x101)->file_index, 1u);
  EXPECT_EQ(v[1]->function_name(), "(anonymous)");
  EXPECT_EQ(v[1]->function_name().data(), v[2]->function_name().data());  // made-up: interned
  EXPECT_TRUE(v[1]->lines().empty());
}

TEST(SymbolIndexTest, AdoptedBufferIsReferencedNotCopied) {
  SymbolIndex index;
  std::string_view dump = index.AdoptBuffer(std::string("f\0\x90\x90\xc3", 5));
  CodeVersionSpec v;
  v.start = 0x100;
  v.size = 3;
  v.raw_name = dump.substr(0, 1);
  v.code = dump.substr(2);
  index.Add(v);
  index.Add(v);
  EXPECT_EQ(index.version(0).code().data(), dump.data() + 2);
  // Names are copied all the same: every version's is read, so they should not keep an adopted
  // file mapping resident.
  EXPECT_EQ(index.version(0).raw_name(), "f");
  EXPECT_NE(index.version(0).stored_name().data(), dump.data());
  // SetCode references adopted bytes too, and copies others.
  index.SetCode(1, dump.substr(3));
  EXPECT_EQ(index.version(1).code().data(), dump.data() + 3);
  std::string elsewhere = "\x90\xc3";
  index.SetCode(1, elsewhere);
  elsewhere.assign(2, '#');
  EXPECT_EQ(index.version(1).code(), "\x90\xc3");
}

TEST(SymbolIndexTest, LookupLine) {
  SymbolIndex index;
  CodeVersionSpec spec = Version(0x100, 0x20, "f");
  const std::string_view files[] = {"a.js"};
  const LineEntry lines[] = {{0x100, 1, 0, 0}, {0x108, 2, 0, 0}, {0x110, 3, 0, 0}};
  spec.files = files;
  spec.lines = lines;
  index.Add(spec);
  const CodeVersion& v = index.version(0);
  EXPECT_EQ(v.LookupLine(0xff), nullptr);
  EXPECT_EQ(v.LookupLine(0x100)->line_no, 1u);
  EXPECT_EQ(v.LookupLine(0x107)->line_no, 1u);
  EXPECT_EQ(v.LookupLine(0x108)->line_no, 2u);
  EXPECT_EQ(v.LookupLine(0x11f)->line_no, 3u);
  EXPECT_EQ(v.LookupLine(0x120), nullptr);
  const LineEntry late[] = {{0x104, 9, 0, 0}};
  index.SetLineTable(0, files, late);
  EXPECT_EQ(v.LookupLine(0x102), nullptr);  // before the first row
}

}  // namespace
}  // namespace cg_inject
