// The jitdump reader on the real dumps of ../shared/corpus/jitdump: parca's decodings
// (parca-expected/*.json) are the oracle for every field of every record; the other dumps are
// checked against what SOURCES.md and a reading of the bytes say.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sanitizer/asan_interface.h>

#include <cstring>
#include <memory>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "sources/jitdump.h"
#include "sources/mini_json_test_util.h"
#include "sources/sources_test_util.h"

namespace cg_inject {
namespace {

using testing::CorpusPath;
using testing::DecodeBase64;
using testing::Json;
using testing::JsonParser;
using testing::ReadTestFile;

struct OwnedEntry {
  uint64_t addr;
  uint32_t line_no, discriminator;
  std::string file;
};
struct OwnedDebugInfo {
  JitdumpRecordPrefix prefix;
  uint64_t code_addr;
  std::vector<OwnedEntry> entries;
};

// Keeps every record (the views stay valid: the dump outlives the collector).
struct Collector : JitdumpVisitor {
  void OnHeader(const JitdumpHeader& h) override { header = h; }
  void OnCodeLoad(const JitdumpCodeLoad& load) override { loads.push_back(load); }
  void OnCodeMove(const JitdumpCodeMove& move) override { moves.push_back(move); }
  void OnDebugInfo(const JitdumpDebugInfo& info) override {
    OwnedDebugInfo owned{info.prefix, info.code_addr, {}};
    for (const JitdumpDebugEntry& e : info.entries) {
      owned.entries.push_back({e.addr, e.line_no, e.discriminator, std::string(e.file)});
    }
    debug.push_back(std::move(owned));
  }
  void OnUnwindingInfo(const JitdumpUnwindingInfo& info) override { unwinding.push_back(info); }
  JitdumpHeader header;
  std::vector<JitdumpCodeLoad> loads;
  std::vector<JitdumpCodeMove> moves;
  std::vector<OwnedDebugInfo> debug;
  std::vector<JitdumpUnwindingInfo> unwinding;
};

void ExpectPrefix(const Json& expected, const JitdumpRecordPrefix& prefix) {
  EXPECT_EQ(prefix.id, expected["ID"].u64());
  EXPECT_EQ(prefix.total_size, expected["TotalSize"].u64());
  EXPECT_EQ(prefix.timestamp, expected["Timestamp"].u64());
}

std::string Base64Field(const Json& value) {
  return value.type == Json::Type::kNull ? std::string() : DecodeBase64(value.text);
}

class ParcaDumpTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ParcaDumpTest, MatchesParcaDecoding) {
  const std::string name = GetParam();
  std::string dump_path = CorpusPath("jitdump/" + name + ".dump");
  std::string json_path = CorpusPath("jitdump/parca-expected/" + name + ".json");
  CG_SKIP_WITHOUT_CORPUS(dump_path);
  CG_SKIP_WITHOUT_CORPUS(json_path);
  const std::string dump = ReadTestFile(dump_path);
  const Json expected = JsonParser(ReadTestFile(json_path)).Parse();

  Diagnostics diagnostics;
  Collector got;
  JitdumpScanStats scan = ScanJitdump(dump, dump_path, &got, &diagnostics);
  EXPECT_FALSE(scan.truncated);
  EXPECT_EQ(scan.unknown_records, 0);

  const Json& h = expected["Header"];
  EXPECT_EQ(got.header.magic, h["Magic"].u64());
  EXPECT_EQ(got.header.version, h["Version"].u64());
  EXPECT_EQ(got.header.header_size, h["TotalSize"].u64());
  EXPECT_EQ(got.header.elf_machine, h["ElfMach"].u64());
  EXPECT_EQ(got.header.pad1, h["Pad1"].u64());
  EXPECT_EQ(got.header.pid, h["Pid"].u64());
  EXPECT_EQ(got.header.timestamp, h["Timestamp"].u64());
  EXPECT_EQ(got.header.flags, h["Flags"].u64());

  const Json& loads = expected["CodeLoads"];
  ASSERT_EQ(got.loads.size(), loads.size());
  for (size_t i = 0; i < loads.size(); ++i) {
    SCOPED_TRACE("CodeLoads[" + std::to_string(i) + "]");
    const Json& e = loads[i];
    const JitdumpCodeLoad& l = got.loads[i];
    ExpectPrefix(e["Prefix"], l.prefix);
    EXPECT_EQ(l.pid, e["PID"].u64());
    EXPECT_EQ(l.tid, e["TID"].u64());
    EXPECT_EQ(l.vma, e["VMA"].u64());
    EXPECT_EQ(l.code_addr, e["CodeAddr"].u64());
    EXPECT_EQ(l.code_size, e["CodeSize"].u64());
    EXPECT_EQ(l.code_index, e["CodeIndex"].u64());
    EXPECT_EQ(l.name, e["Name"].text);
    EXPECT_EQ(l.code, Base64Field(e["Code"]));
  }
  EXPECT_EQ(got.moves.size(), expected["CodeMoves"].size());

  const Json& debug = expected["DebugInfo"];
  ASSERT_EQ(got.debug.size(), debug.size());
  for (size_t i = 0; i < debug.size(); ++i) {
    SCOPED_TRACE("DebugInfo[" + std::to_string(i) + "]");
    const Json& e = debug[i];
    const OwnedDebugInfo& d = got.debug[i];
    ExpectPrefix(e["Prefix"], d.prefix);
    EXPECT_EQ(d.code_addr, e["CodeAddr"].u64());
    ASSERT_EQ(d.entries.size(), e["NREntry"].u64());
    ASSERT_EQ(d.entries.size(), e["Entries"].size());
    for (size_t j = 0; j < d.entries.size(); ++j) {
      const Json& ee = e["Entries"][j];
      EXPECT_EQ(d.entries[j].addr, ee["Addr"].u64());
      EXPECT_EQ(d.entries[j].line_no, ee["Lineno"].u64());
      EXPECT_EQ(d.entries[j].discriminator, ee["Discrim"].u64());
      EXPECT_EQ(d.entries[j].file, ee["Name"].text);
    }
  }

  const Json& unwinding = expected["UnwindingInfo"];
  ASSERT_EQ(got.unwinding.size(), unwinding.size());
  for (size_t i = 0; i < unwinding.size(); ++i) {
    const Json& e = unwinding[i];
    const JitdumpUnwindingInfo& u = got.unwinding[i];
    ExpectPrefix(e["Prefix"], u.prefix);
    EXPECT_EQ(u.unwinding_size, e["UnwindingSize"].u64());
    EXPECT_EQ(u.eh_frame_hdr_size, e["EHFrameHDRSize"].u64());
    EXPECT_EQ(u.mapped_size, e["MappedSize"].u64());
    EXPECT_EQ(u.data, Base64Field(e["UnwindingData"]));
  }

  // The index: one version per load, at code_addr, with the line table moved back by the 0x40
  // these LLVM-based writers add (every entry of theirs lies 0x40..size+0x40 past the code).
  SymbolIndex index;
  uint32_t source = index.AddSource({dump_path, "jitdump", name + ".dump"});
  JitdumpStats stats = ReadJitdump(dump, dump_path, source, &index, &diagnostics);
  index.Finish();
  EXPECT_EQ(stats.debug_infos_unmatched, 0);
  ASSERT_EQ(index.size(), loads.size());
  for (size_t i = 0; i < loads.size(); ++i) {
    const CodeVersion& v = index.version(i);
    EXPECT_EQ(v.raw_name(), loads[i]["Name"].text);
    EXPECT_EQ(v.start(), loads[i]["CodeAddr"].u64());
    EXPECT_EQ(v.size(), loads[i]["CodeSize"].u64());
    EXPECT_EQ(index.Lookup(v.start()), &v) << v.raw_name();
  }
  for (size_t i = 0; i < debug.size(); ++i) {
    const Json& e = debug[i];
    const CodeVersion* v = index.Lookup(e["CodeAddr"].u64());
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(v->lines().size(), e["Entries"].size());
    std::vector<uint64_t> want;
    for (const Json& ee : e["Entries"].items) want.push_back(ee["Addr"].u64() - 0x40);
    std::stable_sort(want.begin(), want.end());
    for (size_t j = 0; j < want.size(); ++j) EXPECT_EQ(v->lines()[j].addr, want[j]);
    EXPECT_TRUE(v->Contains(v->lines().front().addr));
  }
  EXPECT_EQ(stats.debug_infos_shifted, static_cast<int64_t>(debug.size()));
}

INSTANTIATE_TEST_SUITE_P(Corpus, ParcaDumpTest,
                         ::testing::Values("parca-dotnet", "parca-jitlink", "parca-julia",
                                           "parca-php", "parca-wasmtime"));

struct DumpCounts {
  const char* file;
  int64_t records, loads, debug_infos, unwinding;
};

class CorpusDumpTest : public ::testing::TestWithParam<DumpCounts> {};

// Record counts from SOURCES.md's table (its own python decoding of the same bytes).
TEST_P(CorpusDumpTest, LoadsWithExpectedCounts) {
  const DumpCounts& want = GetParam();
  std::string path = CorpusPath(std::string("jitdump/") + want.file);
  CG_SKIP_WITHOUT_CORPUS(path);
  std::string dump = ReadTestFile(path);
  Diagnostics diagnostics;
  Collector got;
  JitdumpScanStats scan = ScanJitdump(dump, path, &got, &diagnostics);
  EXPECT_EQ(scan.records, want.records);
  EXPECT_FALSE(scan.truncated);
  EXPECT_EQ(static_cast<int64_t>(got.loads.size()), want.loads);
  EXPECT_EQ(static_cast<int64_t>(got.debug.size()), want.debug_infos);
  EXPECT_EQ(static_cast<int64_t>(got.unwinding.size()), want.unwinding);
  SymbolIndex index;
  uint32_t source = index.AddSource({path, "jitdump", want.file});
  JitdumpStats stats = ReadJitdump(dump, path, source, &index, &diagnostics);
  index.Finish();
  EXPECT_EQ(static_cast<int64_t>(index.size()), want.loads);
  EXPECT_EQ(stats.debug_infos_unmatched, 0);
  for (size_t i = 0; i < index.size(); ++i) {
    const CodeVersion& v = index.version(i);
    for (const LineEntry& line : v.lines()) {
      EXPECT_TRUE(line.addr >= v.start() && line.addr <= v.end()) << v.raw_name();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusDumpTest,
                         ::testing::Values(DumpCounts{"ddprof-jit-simple-julia.dump", 21, 13, 8, 0},
                                           DumpCounts{"ddprof-llvm-jit-1560413.dump", 33, 20, 13,
                                                      0},
                                           DumpCounts{"parca-nodejs.dump", 3496, 1740, 16, 1740}));

TEST(CorpusDumpTest, JuliaPartialIsAClearError) {
  std::string path = CorpusPath("jitdump/ddprof-jit-julia-partial.dump");
  CG_SKIP_WITHOUT_CORPUS(path);
  std::string dump = ReadTestFile(path);
  SymbolIndex index;
  Diagnostics diagnostics;
  uint32_t source = index.AddSource({path, "jitdump", "jit-julia-partial.dump"});
  // Bytes >= 0x80 became EF BF BD, so the header's flags (offset 32) hold text garbage:
  // d6 bd bf ef 81 ef bf bd read little-endian, bit 0 (arch timestamp) excluded.
  try {
    ReadJitdump(dump, path, source, &index, &diagnostics);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": offset 32: unknown header flags 0xbdbfef81d6bdbfee (known: 0x1 arch "
                  "timestamp)");
  }
  // Past the flags, the first record's total_size is 0 (SOURCES.md): an error, not a loop.
  std::string fixed = dump;
  std::fill(fixed.begin() + 32, fixed.begin() + 40, '\0');
  try {
    ReadJitdump(fixed, path, source, &index, &diagnostics);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with(
        path + ": offset 44: expected a record size of at least 16, got 0"))
        << e.what();
  }
}

TEST(CorpusDumpTest, NodeFunctionsAndLines) {
  std::string path = CorpusPath("jitdump/parca-nodejs.dump");
  CG_SKIP_WITHOUT_CORPUS(path);
  std::string dump = ReadTestFile(path);
  SymbolIndex index;
  Diagnostics diagnostics;
  uint32_t source = index.AddSource({path, "jitdump", "jit-1.dump"});
  JitdumpStats stats = ReadJitdump(dump, path, source, &index, &diagnostics);
  index.Finish();
  EXPECT_EQ(stats.header.pad1, 0xDEADBEEFu);  // V8 writes it
  EXPECT_EQ(stats.debug_infos_shifted, 16);
  // Two optimized versions of fib, each with its own line table.
  const CodeVersion* fib = index.Lookup(0x7f5830a45e40);
  ASSERT_NE(fib, nullptr);
  EXPECT_EQ(fib->raw_name(), "LazyCompile:*fib /usr/src/app/main.js:1");
  EXPECT_EQ(fib->function_name(), "fib");
  EXPECT_EQ(fib->source_file(), "/usr/src/app/main.js");
  ASSERT_FALSE(fib->lines().empty());
  EXPECT_EQ(fib->lines().front().addr, 0x7f5830a45e40u);
  // SafeMap's table starts 3 bytes in (raw +67): only the dump's majority says it is shifted.
  const CodeVersion* safe_map = index.Lookup(0x7f5830a450c0);
  ASSERT_NE(safe_map, nullptr);
  EXPECT_EQ(safe_map->function_name(), "SafeMap");
  ASSERT_FALSE(safe_map->lines().empty());
  EXPECT_EQ(safe_map->lines().front().addr, 0x7f5830a450c0u + 3);
  EXPECT_EQ(index.sources()[source].elf_machine, 62u);
}

// Every real dump cut anywhere inside a record (a live writer's tail, a full disk) reads as the
// records before the cut plus a warning saying how many bytes were dropped, never as the corrupt
// size in the middle that it resembles: V8 pads DEBUG_INFO, so a cut inside the padding must
// still count as a tail.
struct Boundaries : JitdumpVisitor {
  void OnCodeLoad(const JitdumpCodeLoad& r) override { Add(r.prefix); }
  void OnCodeMove(const JitdumpCodeMove& r) override { Add(r.prefix); }
  void OnDebugInfo(const JitdumpDebugInfo& r) override { Add(r.prefix); }
  void OnUnwindingInfo(const JitdumpUnwindingInfo& r) override { Add(r.prefix); }
  void OnClose(const JitdumpRecordPrefix& p) override { Add(p); }
  void Add(const JitdumpRecordPrefix& p) { records.push_back({p.file_offset, p.total_size}); }
  std::vector<std::pair<uint64_t, uint64_t>> records;  // offset, size
};

TEST(JitdumpCorpusTest, EveryCutInsideARecordIsATail) {
  int64_t cuts = 0;
  for (const char* name : {"ddprof-jit-simple-julia.dump", "ddprof-llvm-jit-1560413.dump",
                           "parca-dotnet.dump", "parca-jitlink.dump", "parca-julia.dump",
                           "parca-nodejs.dump", "parca-php.dump", "parca-wasmtime.dump"}) {
    SCOPED_TRACE(name);
    const std::string path = CorpusPath(std::string("jitdump/") + name);
    CG_SKIP_WITHOUT_CORPUS(path);
    const std::string bytes = ReadTestFile(path);
    Boundaries whole;
    Diagnostics ignored;
    ScanJitdump(bytes, name, &whole, &ignored);
    ASSERT_FALSE(whole.records.empty());
    // One copy of the dump, its bytes past each cut poisoned for AddressSanitizer while the cut
    // is read: a read past the cut still fails (a copy per cut allowed one byte more, the
    // string's terminator), and no prefix is copied per cut, which made the test quadratic in
    // the dump's size (165 s of ASan build on parca-nodejs.dump's 1.5 MB, over Meson's 300 s
    // on a loaded machine). Without ASan the poisoning is a no-op.
    std::unique_ptr<char[]> buffer(new char[bytes.size()]);
    std::memcpy(buffer.get(), bytes.data(), bytes.size());
    for (size_t i = 0; i < whole.records.size(); ++i) {
      auto [offset, size] = whole.records[i];
      std::vector<uint64_t> inside = {1, 8, 15, 16, 17, 40, 56, 57, size / 2, size - 8, size - 1};
      for (uint64_t at : inside) {
        if (at == 0 || at >= size) continue;
        const size_t end = offset + at;
        ASAN_POISON_MEMORY_REGION(buffer.get() + end, bytes.size() - end);
        Boundaries seen;
        Diagnostics diagnostics;
        JitdumpScanStats stats;
        std::string thrown;  // asserted once the bytes are unpoisoned again
        try {
          stats = ScanJitdump(std::string_view(buffer.get(), end), name, &seen, &diagnostics);
        } catch (const std::exception& e) {
          thrown = e.what();
        }
        ASAN_UNPOISON_MEMORY_REGION(buffer.get() + end, bytes.size() - end);
        ASSERT_EQ(thrown, "") << offset << "+" << at;
        EXPECT_EQ(seen.records.size(), i) << offset << "+" << at;
        EXPECT_TRUE(stats.truncated);
        EXPECT_EQ(stats.dropped_bytes, at);
        ++cuts;
      }
    }
  }
  EXPECT_GT(cuts, 1000);
}

}  // namespace
}  // namespace cg_inject
