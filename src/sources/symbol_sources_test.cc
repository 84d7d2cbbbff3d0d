#include "sources/symbol_sources.h"

#include <gmock/gmock.h>
#include <zstd.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "sources/jitdump_builder_test_util.h"
#include "sources/sources_test_util.h"

namespace cg_inject {
namespace {

using testing::JitdumpBuilder;

TEST(SymbolSourcesTest, ObjectName) {
  EXPECT_EQ(SourceObjectName("/tmp/perf-1234.map"), "perf-1234.map");
  EXPECT_EQ(SourceObjectName("jit-1234.dump"), "jit-1234.dump");
  EXPECT_EQ(SourceObjectName("/home/u/.debug/jit/llvm-x/jit-9.dump"), "jit-9.dump");
  EXPECT_EQ(SourceObjectName("data/jit-9.dump.zst"), "jit-9.dump");
  EXPECT_EQ(SourceObjectName(".zst"), ".zst");
}

TEST(SymbolSourcesTest, DetectsTheFormat) {
  SymbolIndex index;
  Diagnostics diagnostics;
  std::string dump = JitdumpBuilder().Header().CodeLoad(1, 0x1000, "\xc3", "f", 1).bytes();
  LoadedSource a =
      LoadSymbolSourceBytes(dump, "/x/jit-5.dump", SourceKind::kDetect, &index, &diagnostics);
  LoadedSource b = LoadSymbolSourceBytes("2000 10 g\n", "/tmp/perf-5.map", SourceKind::kDetect,
                                         &index, &diagnostics);
  index.Finish();
  EXPECT_EQ(a.kind, SourceKind::kJitdump);
  EXPECT_EQ(a.versions, 1);
  EXPECT_EQ(a.details, "1 code load");
  EXPECT_EQ(b.kind, SourceKind::kPerfMap);
  EXPECT_EQ(b.details, "1 entry");
  ASSERT_EQ(index.sources().size(), 2u);
  EXPECT_EQ(index.sources()[0].kind, "jitdump");
  EXPECT_EQ(index.sources()[0].object_name, "jit-5.dump");
  EXPECT_EQ(index.sources()[1].kind, "perf-map");
  EXPECT_EQ(index.sources()[1].object_name, "perf-5.map");
  EXPECT_EQ(index.Lookup(0x2005)->source(), b.source);
}

TEST(SymbolSourcesTest, CutOffJitdumpTailReachesStats) {
  // The dropped record and bytes go into the source's info, which --stats prints (text: damage,
  // JSON: dropped_records and dropped_bytes), not only into the warning and -v.
  SymbolIndex index;
  Diagnostics diagnostics;
  std::string dump = JitdumpBuilder()
                         .Header()
                         .CodeLoad(1, 0x1000, "\xc3", "f", 1)
                         .CodeLoad(2, 0x2000, "abcd", "cut", 2)
                         .bytes();
  dump.resize(dump.size() - 3);
  LoadedSource loaded =
      LoadSymbolSourceBytes(dump, "jit-7.dump", SourceKind::kDetect, &index, &diagnostics);
  EXPECT_EQ(loaded.details, "1 code load, last record cut off (1 record, 61 bytes dropped)");
  const SymbolSourceInfo& info = index.sources()[loaded.source];
  EXPECT_EQ(info.damage, "last record cut off (1 record, 61 bytes dropped)");
  EXPECT_EQ(info.dropped_records, 1);
  EXPECT_EQ(info.dropped_bytes, 61u);  // the 64-byte record less the 3 bytes cut off
}

TEST(SymbolSourcesTest, WholeJitdumpDropsNothing) {
  SymbolIndex index;
  Diagnostics diagnostics;
  std::string dump = JitdumpBuilder().Header().CodeLoad(1, 0x1000, "\xc3", "f", 1).bytes();
  LoadedSource loaded =
      LoadSymbolSourceBytes(dump, "jit-7.dump", SourceKind::kDetect, &index, &diagnostics);
  const SymbolSourceInfo& info = index.sources()[loaded.source];
  EXPECT_EQ(info.damage, "");
  EXPECT_EQ(info.dropped_records, 0);
  EXPECT_EQ(info.dropped_bytes, 0u);
}

TEST(SymbolSourcesTest, JitdumpDetailsNoteHeaderFlags) {
  SymbolIndex index;
  Diagnostics diagnostics;
  JitdumpBuilder swapped(/*swapped=*/true);
  swapped.Header(62, 1, /*flags=*/1)
      .CodeLoad(1, 0x1000, "\xc3", "f", 1)
      .CodeLoad(2, 0x1001, "", "g", 2);
  LoadedSource loaded = LoadSymbolSourceBytes(swapped.bytes(), "jit-1.dump", SourceKind::kDetect,
                                              &index, &diagnostics);
  EXPECT_EQ(loaded.details, "2 code loads, arch timestamps, byte-swapped");
}

TEST(SymbolSourcesTest, ExplicitKindIsChecked) {
  SymbolIndex index;
  Diagnostics diagnostics;
  std::string dump = JitdumpBuilder().Header().bytes();
  try {
    LoadSymbolSourceBytes(dump, "x.map", SourceKind::kPerfMap, &index, &diagnostics);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "x.map: expected a perf map, got a jitdump (pass it with --jitdump)");
  }
  try {
    LoadSymbolSourceBytes("10 1 f\n", "x.dump", SourceKind::kJitdump, &index, &diagnostics);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("x.dump: offset 0: expected the jitdump magic"));
  }
}

TEST(SymbolSourcesTest, LoadsFilesAndFinishes) {
  std::string map = testing::CorpusPath("perfmap/parca-nodejs-perf-map.map");
  std::string dump = testing::CorpusPath("jitdump/parca-php.dump");
  CG_SKIP_WITHOUT_CORPUS(map);
  CG_SKIP_WITHOUT_CORPUS(dump);
  SymbolIndex index;
  Diagnostics diagnostics;
  std::vector<LoadedSource> loaded = LoadSymbolSources(
      {{map, SourceKind::kDetect, true}, {dump, SourceKind::kDetect, true}}, &index, &diagnostics);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].versions, 28);
  EXPECT_EQ(loaded[1].versions, 39);
  EXPECT_EQ(loaded[0].details, "28 entries");
  EXPECT_EQ(loaded[1].details, "39 code loads");
  EXPECT_NE(index.Lookup(0x3ef414c0), nullptr);  // Finish() was called
}

/// Resident kB of the mapping that holds `addr` (/proc/self/smaps), or -1 when none does.
int64_t ResidentKbOfMappingAt(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(addr);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(':') > 8) {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

// A mapped jitdump's pages leave memory when the index gives them back (the ELF images read
// much of its code), and its code bytes read the same afterwards, from the file.
TEST(SymbolSourcesTest, AMappedJitdumpsPagesAreGivenBack) {
  std::string code(64 << 10, '\0');
  for (size_t i = 0; i < code.size(); ++i) code[i] = char(i * 7 + i / 4096);
  std::string dump = JitdumpBuilder().Header().CodeLoad(2000, 0x5000, code, "big_fn", 1).bytes();
  std::string path = ::testing::TempDir() + "/cg_inject_give_back.dump";
  std::ofstream(path, std::ios::binary) << dump;
  SymbolIndex index;
  Diagnostics diagnostics;
  LoadSymbolSources({{path, SourceKind::kJitdump, true}}, &index, &diagnostics);
  std::remove(path.c_str());  // the mapping keeps the file
  const CodeVersion* v = index.Lookup(0x5000);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->code(), code);  // reads every page in
  EXPECT_GE(ResidentKbOfMappingAt(v->code().data()), 60);
  index.GiveBackAdoptedPages();
  EXPECT_EQ(ResidentKbOfMappingAt(v->code().data()), 0);
  EXPECT_EQ(v->code(), code);
}

TEST(SymbolSourcesTest, ZstdCompressedFilesAreRecognizedByContent) {
  // A jitdump and a perf map, compressed, under names that say nothing about it.
  std::string dump = JitdumpBuilder()
                         .Header()
                         .CodeLoad(2000, 0x5000, std::string(0x40, '\x90'), "zjit_fn", 1)
                         .bytes();
  std::string map = "6000 20 zmap_fn\n";
  auto compress = [](const std::string& bytes) {
    std::string out(ZSTD_compressBound(bytes.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3));
    return out;
  };
  std::string dir = ::testing::TempDir();
  std::string dump_path = dir + "/cg_inject_zdump", map_path = dir + "/cg_inject_zmap";
  std::ofstream(dump_path, std::ios::binary) << compress(dump);
  std::ofstream(map_path, std::ios::binary) << compress(map);
  SymbolIndex index;
  Diagnostics diagnostics;
  std::vector<LoadedSource> loaded = LoadSymbolSources(
      {{dump_path, SourceKind::kJitdump, true}, {map_path, SourceKind::kDetect, true}}, &index,
      &diagnostics);
  std::remove(dump_path.c_str());
  std::remove(map_path.c_str());
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].kind, SourceKind::kJitdump);
  EXPECT_EQ(loaded[1].kind, SourceKind::kPerfMap);
  ASSERT_NE(index.Lookup(0x5010), nullptr);
  EXPECT_EQ(index.Lookup(0x5010)->function_name(), "zjit_fn");
  ASSERT_NE(index.Lookup(0x6000), nullptr);
  EXPECT_EQ(index.Lookup(0x6000)->function_name(), "zmap_fn");
}

TEST(SymbolSourcesTest, SameContentIsLoadedOnce) {
  // /tmp/jit-PID.dump found by discovery, its copy in the working directory, and a link to the
  // copy named with --jitdump: one source, reported once, as the last (explicit) spec.
  std::string dump = JitdumpBuilder()
                         .Header()
                         .CodeLoad(1, 0x5000, std::string(0x40, '\x90'), "f", 1)
                         .CodeLoad(2, 0x6000, std::string(0x40, '\x90'), "g", 2)
                         .bytes();
  std::string dir = ::testing::TempDir();
  std::string found = dir + "/cg_inject_same_a", copy = dir + "/cg_inject_same_b";
  std::string link = dir + "/cg_inject_same_c", other = dir + "/cg_inject_same_d";
  std::ofstream(found, std::ios::binary) << dump;
  std::ofstream(copy, std::ios::binary) << dump;
  std::remove(link.c_str());
  ASSERT_EQ(::link(copy.c_str(), link.c_str()), 0);
  std::string different = dump;
  different[different.size() - 1] ^= 1;  // same size, one byte of g's code differs
  std::ofstream(other, std::ios::binary) << different;
  SymbolIndex index;
  Diagnostics diagnostics;
  std::vector<LoadedSource> loaded = LoadSymbolSources({{found, SourceKind::kJitdump, false},
                                                        {copy, SourceKind::kJitdump, false},
                                                        {other, SourceKind::kDetect, false},
                                                        {link, SourceKind::kJitdump, true}},
                                                       &index, &diagnostics);
  for (const std::string& p : {found, copy, link, other}) std::remove(p.c_str());
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].path, other);
  EXPECT_TRUE(loaded[0].copies.empty());
  EXPECT_EQ(loaded[1].path, link);
  EXPECT_THAT(loaded[1].copies, ::testing::ElementsAre(found, copy));
  EXPECT_EQ(loaded[1].details,
            "2 code loads; same content as " + found + ", " + copy + ", not loaded again");
  EXPECT_EQ(index.sources().size(), 2u);
  EXPECT_EQ(index.size(), 4u);  // two versions from each distinct content
}

TEST(SymbolSourcesTest, MissingFileIsAnInputError) {
  SymbolIndex index;
  Diagnostics diagnostics;
  EXPECT_THROW(LoadSymbolSources({{"/nonexistent/perf-1.map", SourceKind::kDetect, true}}, &index,
                                 &diagnostics),
               InputError);
}

}  // namespace
}  // namespace cg_inject
