#include "sources/jitdump.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "sources/jitdump_builder_test_util.h"
#include "sources/sources_test_util.h"

namespace cg_inject {
namespace {

using testing::BuilderDebugEntry;
using ::testing::ElementsAre;
using testing::JitdumpBuilder;
using testing::Messages;
using testing::WarningCount;

constexpr uint64_t kCode = 0x7f0000001000;

class JitdumpTest : public ::testing::Test {
 protected:
  JitdumpStats Read(std::string_view bytes) {
    uint32_t source = index_.AddSource({"jit-1234.dump", "jitdump", "jit-1234.dump"});
    JitdumpStats stats = ReadJitdump(bytes, "jit-1234.dump", source, &index_, &diagnostics_);
    index_.Finish();
    return stats;
  }
  // The InputError message reading `bytes` gives, or "" when it loads.
  std::string ErrorOf(std::string_view bytes) {
    try {
      Read(bytes);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  SymbolIndex index_;
  Diagnostics diagnostics_;
};

TEST_F(JitdumpTest, CodeLoad) {
  JitdumpBuilder b;
  b.Header().CodeLoad(2000, kCode, "\x55\x48\x89\xe5\xc3", "LazyCompile:*fib /app/main.js:1", 7);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.loads, 1);
  EXPECT_EQ(stats.scan.records, 1);
  EXPECT_FALSE(stats.scan.truncated);
  EXPECT_EQ(stats.header.pid, 1234u);
  EXPECT_FALSE(stats.header.byte_swapped);
  EXPECT_EQ(index_.sources()[0].elf_machine, 62u);
  ASSERT_EQ(index_.size(), 1u);
  const CodeVersion& v = index_.version(0);
  EXPECT_EQ(v.start(), kCode);
  EXPECT_EQ(v.size(), 5u);
  EXPECT_EQ(v.raw_name(), "LazyCompile:*fib /app/main.js:1");
  EXPECT_EQ(v.function_name(), "fib");
  EXPECT_EQ(v.source_file(), "/app/main.js");
  EXPECT_EQ(v.source_line(), 1u);
  EXPECT_EQ(v.code(), "\x55\x48\x89\xe5\xc3");
  EXPECT_EQ(v.code_index(), 7u);
  EXPECT_EQ(v.timestamp(), 2000u);
  EXPECT_EQ(v.salted_code_tail(), 0u);
  EXPECT_EQ(diagnostics_.total(), 0);
}

TEST_F(JitdumpTest, ByteSwappedDumpReadsTheSame) {
  JitdumpBuilder b(/*swapped=*/true);
  b.Header(183)
      .DebugInfo(1999, kCode, {{kCode + 4, 12, 1, "a.c"}, {kCode + 8, 13, 0, "\xff"}})
      .CodeLoad(2000, kCode, std::string(16, '\0'), "f", 3)
      .CodeMove(3000, kCode, kCode + 0x100, 16, 3);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_TRUE(stats.header.byte_swapped);
  EXPECT_EQ(stats.header.elf_machine, 183u);
  EXPECT_EQ(stats.header.pid, 1234u);
  ASSERT_EQ(index_.size(), 2u);
  const CodeVersion& v = index_.version(0);
  EXPECT_EQ(v.start(), kCode);
  EXPECT_EQ(v.size(), 16u);
  EXPECT_EQ(v.code_index(), 3u);
  ASSERT_EQ(v.lines().size(), 2u);
  EXPECT_EQ(v.lines()[1].addr, kCode + 8);
  EXPECT_EQ(v.lines()[0].line_no, 12u);
  EXPECT_EQ(v.lines()[0].discriminator, 1u);
  EXPECT_EQ(index_.version(1).start(), kCode + 0x100);
}

TEST_F(JitdumpTest, LongerHeaderIsSkipped) {
  JitdumpBuilder b;
  b.Header(62, 1234, 0, 1, 56).CodeLoad(2000, kCode, "\xc3", "f", 1);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.header.header_size, 56u);
  ASSERT_EQ(index_.size(), 1u);
  EXPECT_EQ(index_.version(0).raw_name(), "f");
}

TEST_F(JitdumpTest, ArchTimestampFlagIsAccepted) {
  JitdumpBuilder b;
  b.Header(62, 1234, kJitdumpFlagArchTimestamp).CodeLoad(2000, kCode, "\xc3", "f", 1);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.header.flags, kJitdumpFlagArchTimestamp);
  EXPECT_EQ(stats.loads, 1);
}

/// CheckJitdumpHeader's message, or "ok".
std::string HeadErrorOf(std::string_view head) {
  try {
    CheckJitdumpHeader(head, "<stdin>");
  } catch (const InputError& e) {
    return e.what();
  }
  return "ok";
}

TEST(JitdumpHeadTest, TheHeaderIsCheckedFromItsFirst40Bytes) {
  // A stream is refused at its header, before the rest is read (issue 22: --jitdump /dev/zero).
  EXPECT_EQ(HeadErrorOf(std::string(40, '\0')),
            "<stdin>: offset 0: expected the jitdump magic 0x4a695444 (\"JiTD\") in either byte "
            "order, got 0x0");
  EXPECT_EQ(HeadErrorOf(JitdumpBuilder().Header(62, 1, 0, 2).bytes()),
            "<stdin>: offset 4: expected jitdump version 1, got 2 (newer than this reader)");
  EXPECT_EQ(HeadErrorOf(JitdumpBuilder().Header(62, 1, 0, 1, 39).bytes()),
            "<stdin>: offset 8: expected a header size of at least 40, got 39");
  // A header size past the bytes read so far is for the whole-file check to judge.
  EXPECT_EQ(HeadErrorOf(JitdumpBuilder().Header().PatchU32(8, 4096).bytes()), "ok");
  EXPECT_EQ(HeadErrorOf(JitdumpBuilder(/*swapped=*/true).Header().bytes() + "more"), "ok");
  EXPECT_EQ(HeadErrorOf(JitdumpBuilder().Header().bytes().substr(0, 20)),
            "<stdin>: offset 20: header cut off: expected 40 bytes, got 20");
}

TEST_F(JitdumpTest, HeaderErrors) {
  EXPECT_EQ(ErrorOf(JitdumpBuilder().Header(62, 1, 0, 2).bytes()),
            "jit-1234.dump: offset 4: expected jitdump version 1, got 2 (newer than this reader)");
  EXPECT_EQ(ErrorOf(JitdumpBuilder().Header(62, 1, 6).bytes()),
            "jit-1234.dump: offset 32: unknown header flags 0x6 (known: 0x1 arch timestamp)");
  EXPECT_EQ(ErrorOf(JitdumpBuilder().Header(62, 1, 0, 1, 39).bytes()),
            "jit-1234.dump: offset 8: expected a header size of at least 40, got 39");
  EXPECT_EQ(ErrorOf(std::string("\x7f"
                                "ELF\2\1\1\0",
                                8)),
            "jit-1234.dump: offset 0: expected the jitdump magic 0x4a695444 (\"JiTD\") in either "
            "byte order, got 0x464c457f");
  // "JiTD" on disk is the magic of a big-endian writer: recognized, then too short.
  EXPECT_EQ(ErrorOf("JiTD"), "jit-1234.dump: offset 4: header cut off: expected 40 bytes, got 4");
  EXPECT_EQ(ErrorOf(JitdumpBuilder().Header().bytes().substr(0, 20)),
            "jit-1234.dump: offset 20: header cut off: expected 40 bytes, got 20");
  std::string far_header = JitdumpBuilder().Header().PatchU32(8, 4096).bytes();
  EXPECT_EQ(ErrorOf(far_header),
            "jit-1234.dump: offset 8: header size 4096 is past the end of the 40-byte file");
}

TEST_F(JitdumpTest, HeaderOnlyIsEmpty) {
  JitdumpStats stats = Read(JitdumpBuilder().Header().bytes());
  EXPECT_EQ(stats.scan.records, 0);
  EXPECT_TRUE(index_.empty());
}

TEST_F(JitdumpTest, TruncatedLastRecordKeepsEverythingBefore) {
  JitdumpBuilder b;
  b.Header().CodeLoad(2000, kCode, "\xc3", "first", 1).CodeLoad(2001, kCode + 16, "abcd", "cut", 2);
  std::string bytes = b.bytes();
  bytes.resize(bytes.size() - 3);  // the writer is still writing the second load's code
  JitdumpStats stats = Read(bytes);
  EXPECT_TRUE(stats.scan.truncated);
  EXPECT_EQ(stats.loads, 1);
  ASSERT_EQ(index_.size(), 1u);
  EXPECT_EQ(index_.version(0).raw_name(), "first");
  EXPECT_THAT(Messages(diagnostics_),
              ElementsAre("jit-1234.dump: offset " + std::to_string(b.last_record_offset()) +
                          ": the file ends inside its last record (CODE_LOAD of 64 bytes, 61 "
                          "present; still being written?): dropped 1 record, 61 bytes"));
  EXPECT_EQ(stats.scan.dropped_bytes, 61u);
}

// A size in the middle that points past the end, while the record's own fields say it fits, is
// a corrupt size: treating it as a cut tail would drop every later record with exit 0.
TEST_F(JitdumpTest, CorruptSizeInTheMiddleIsAnError) {
  JitdumpBuilder b;
  b.Header().CodeLoad(2000, kCode, "\xc3", "first", 1);
  size_t second = b.bytes().size();
  b.CodeLoad(2001, kCode + 16, "abcd", "second", 2).CodeLoad(2002, kCode + 32, "ef", "third", 3);
  b.PatchU32(second + 4, 0x10000);
  EXPECT_EQ(ErrorOf(b.bytes()),
            "jit-1234.dump: offset " + std::to_string(second + 4) +
                ": expected a record size that fits the 131 bytes left, got 65536 for a "
                "CODE_LOAD record whose fields make it 67 bytes: a corrupt size in the middle of "
                "the file (the 64 bytes after it would be lost), not a cut-off tail");
  // The same size on the last record, with the file ending inside its code, is a cut tail.
  JitdumpBuilder tail;
  tail.Header().CodeLoad(2000, kCode, "\xc3", "first", 1);
  size_t last = tail.bytes().size();
  tail.CodeLoad(2001, kCode + 16, std::string(100, '\x90'), "long", 2);
  std::string bytes = tail.bytes().substr(0, last + 80);
  JitdumpStats stats = Read(bytes);
  EXPECT_TRUE(stats.scan.truncated);
  EXPECT_EQ(stats.scan.dropped_bytes, 80u);
  EXPECT_EQ(stats.loads, 1);
}

TEST_F(JitdumpTest, TruncatedRecordPrefix) {
  JitdumpBuilder b;
  b.Header().CodeLoad(2000, kCode, "\xc3", "first", 1);
  std::string bytes = b.bytes() + std::string("\0\0\0\0\x40\0", 6);
  JitdumpStats stats = Read(bytes);
  EXPECT_TRUE(stats.scan.truncated);
  EXPECT_EQ(stats.loads, 1);
  EXPECT_EQ(WarningCount(diagnostics_, "jitdump: truncated"), 1);
}

TEST_F(JitdumpTest, RecordSizeBelowPrefixIsAnError) {
  JitdumpBuilder b;
  b.Header().CodeLoad(2000, kCode, "\xc3", "f", 1);
  b.PatchU32(b.last_record_offset() + 4, 8);
  EXPECT_EQ(ErrorOf(b.bytes()),
            "jit-1234.dump: offset 44: expected a record size of at least 16, got 8 (record id "
            "0)");
}

TEST_F(JitdumpTest, LoadErrors) {
  {
    JitdumpBuilder b;
    b.Header().Record(0, 2000, std::string(30, '\0'));
    EXPECT_EQ(ErrorOf(b.bytes()),
              "jit-1234.dump: offset 40: CODE_LOAD of 46 bytes is shorter than its 56-byte fixed "
              "part");
  }
  {
    // The name runs to the end of the record without a NUL.
    JitdumpBuilder b;
    b.Header().CodeLoad(2000, kCode, "", "f", 1);
    std::string bytes = b.bytes();
    bytes.pop_back();
    bytes += "g";
    EXPECT_EQ(ErrorOf(bytes),
              "jit-1234.dump: offset 96: CODE_LOAD name is not NUL-terminated inside its record");
  }
  {
    JitdumpBuilder b;
    b.Header().CodeLoad(2000, kCode, "\xc3\xc3", "f", 1);
    b.PatchU64(b.last_record_offset() + 16 + 24, 3);
    EXPECT_EQ(ErrorOf(b.bytes()),
              "jit-1234.dump: offset 80: CODE_LOAD code_size 3 does not fit in the 2 bytes left "
              "in the record");
  }
  {
    JitdumpBuilder b;
    b.Header().CodeLoad(2000, ~0ull - 1, "\xc3\xc3\xc3", "f", 1);
    EXPECT_EQ(ErrorOf(b.bytes()),
              "jit-1234.dump: offset 72: CODE_LOAD code_addr 0xfffffffffffffffe + code_size 3 "
              "is beyond the 64-bit address space");
  }
}

TEST_F(JitdumpTest, DebugInfoErrors) {
  {
    JitdumpBuilder b;
    b.Header().DebugInfo(1, kCode, {{kCode, 1, 0, "a.c"}});
    b.PatchU64(b.last_record_offset() + 16 + 8, 1000000000000ull);
    EXPECT_EQ(ErrorOf(b.bytes()),
              "jit-1234.dump: offset 64: CODE_DEBUG_INFO nr_entry 1000000000000 cannot fit in a "
              "52-byte record (at most 1)");
  }
  {
    JitdumpBuilder b;
    b.Header().DebugInfo(1, kCode, {{kCode, 1, 0, "\xff"}});
    EXPECT_EQ(ErrorOf(b.bytes()),
              "jit-1234.dump: offset 88: CODE_DEBUG_INFO entry 0 repeats the previous file name "
              "(\"\\xff\"), but there is none");
  }
  {
    // Two entries promised; the second one's file name would start right at the record's end.
    JitdumpBuilder b;
    b.Header().DebugInfo(1, kCode, {{kCode, 1, 0, "a.c"}}, /*padding=*/16);
    b.PatchU64(b.last_record_offset() + 16 + 8, 2);
    EXPECT_EQ(ErrorOf(b.bytes()),
              "jit-1234.dump: offset 108: CODE_DEBUG_INFO file name is not NUL-terminated inside "
              "its record");
  }
}

TEST_F(JitdumpTest, PaddedRecordsAreWalkedByTotalSize) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode, 5, 0, "x.js"}}, /*padding=*/3)  // V8 rounds up to 8
      .CodeLoad(2, kCode, std::string(8, '\x90'), "g", 1, ~0ull, /*padding=*/5)
      .CodeLoad(3, kCode + 8, "\xc3", "h", 2);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.loads, 2);
  ASSERT_EQ(index_.size(), 2u);
  EXPECT_EQ(index_.version(0).lines().size(), 1u);
  EXPECT_EQ(index_.version(0).code().size(), 8u);
  EXPECT_EQ(index_.version(1).raw_name(), "h");
}

TEST_F(JitdumpTest, RepeatedFileMarker) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode,
                 {{kCode, 10, 0, "/src/a.js"},
                  {kCode + 2, 11, 0, "\xff"},
                  {kCode + 4, 20, 0, "/src/b.js"},
                  {kCode + 6, 21, 0, "\xff"}})
      .CodeLoad(2, kCode, std::string(8, '\x90'), "f", 1);
  Read(b.bytes());
  const CodeVersion& v = index_.version(0);
  EXPECT_THAT(v.files(), ElementsAre("/src/a.js", "/src/b.js"));
  ASSERT_EQ(v.lines().size(), 4u);
  EXPECT_EQ(v.lines()[1].file_index, 0u);
  EXPECT_EQ(v.lines()[3].file_index, 1u);
  EXPECT_EQ(v.LookupLine(kCode + 3)->line_no, 11u);
  EXPECT_EQ(v.LookupLine(kCode + 7)->line_no, 21u);
  EXPECT_EQ(v.source_file(), "/src/a.js");  // the line table wins over the name
  EXPECT_EQ(v.source_line(), 10u);
}

TEST_F(JitdumpTest, UnknownRecordsAreSkippedAndCounted) {
  JitdumpBuilder b;
  b.Header().Record(99, 1, "whatever").CodeLoad(2, kCode, "\xc3", "f", 1);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.scan.unknown_records, 1);
  EXPECT_EQ(stats.loads, 1);
  EXPECT_THAT(Messages(diagnostics_),
              ElementsAre("jit-1234.dump: offset 40: skipped record with unknown id 99"));
}

TEST_F(JitdumpTest, CloseStopsTheWalk) {
  JitdumpBuilder b;
  b.Header().CodeLoad(2, kCode, "\xc3", "f", 1).Close(3);
  std::string bytes = b.bytes() + "garbage after close";
  JitdumpStats stats = Read(bytes);
  EXPECT_TRUE(stats.scan.closed);
  EXPECT_EQ(stats.scan.records, 2);
  EXPECT_EQ(index_.size(), 1u);
}

TEST_F(JitdumpTest, UnwindingInfo) {
  JitdumpBuilder b;
  b.Header().UnwindingInfo(1, std::string(20, 'u'), 8).CodeLoad(2, kCode, "\xc3", "f", 1);
  struct Collect : JitdumpVisitor {
    void OnUnwindingInfo(const JitdumpUnwindingInfo& info) override {
      size = info.unwinding_size;
      hdr = info.eh_frame_hdr_size;
      data = std::string(info.data);
    }
    uint64_t size = 0, hdr = 0;
    std::string data;
  } collect;
  ScanJitdump(b.bytes(), "x.dump", &collect, &diagnostics_);
  EXPECT_EQ(collect.size, 20u);
  EXPECT_EQ(collect.hdr, 8u);
  EXPECT_EQ(collect.data, std::string(20, 'u'));

  JitdumpBuilder bad;
  bad.Header().UnwindingInfo(1, std::string(20, 'u'));
  bad.PatchU64(bad.last_record_offset() + 16, 21);
  EXPECT_EQ(ErrorOf(bad.bytes()),
            "jit-1234.dump: offset 56: CODE_UNWINDING_INFO unwinding_size 21 does not fit in the "
            "20 bytes left in the record");
}

TEST_F(JitdumpTest, MoveKeepsTheFunction) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode, 3, 0, "m.js"}, {kCode + 4, 4, 0, "m.js"}})
      .CodeLoad(2, kCode, std::string(8, '\x90'), "JS:*f m.js:3", 5)
      .CodeLoad(3, kCode + 0x40, std::string(8, '\x90'), "other", 6)
      .CodeMove(4, kCode, kCode + 0x1000, 8, 5);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.moves, 1);
  ASSERT_EQ(index_.size(), 3u);
  const CodeVersion& original = index_.version(0);
  const CodeVersion& moved = index_.version(2);
  EXPECT_EQ(moved.function_id(), original.function_id());
  EXPECT_NE(index_.version(1).function_id(), original.function_id());
  EXPECT_EQ(moved.start(), kCode + 0x1000);
  EXPECT_EQ(moved.raw_name(), "JS:*f m.js:3");
  EXPECT_EQ(moved.timestamp(), 4u);
  EXPECT_EQ(moved.code(), original.code());
  ASSERT_EQ(moved.lines().size(), 2u);
  EXPECT_EQ(moved.lines()[1].addr, kCode + 0x1004);
  EXPECT_EQ(moved.LookupLine(kCode + 0x1005)->line_no, 4u);
  EXPECT_EQ(index_.Lookup(kCode + 0x1000), &moved);
  EXPECT_EQ(index_.Lookup(kCode), &original);  // the old range still names what ran there
  EXPECT_GT(moved.load_order(), original.load_order());
}

// Deno's V8 names a module's lines by its URL, as it names the module in the code's name: the
// line table's file is the path too, so a function is one file (issue 34: `fib` came out twice,
// under file:///w/prog.js from its lines and /w/prog.js from its name).
TEST_F(JitdumpTest, FileUrlsInLineTablesArePaths) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode,
                 {{kCode, 2, 0, "file:///w/prog.js"},
                  {kCode + 4, 3, 0, "file:///w/a%20b.js"},
                  {kCode + 6, 4, 0, "ext:core/01_core.js"}})
      .CodeLoad(2, kCode, std::string(8, '\x90'), "JS:*'fib file:///w/prog.js:2:13", 5);
  Read(b.bytes());
  const CodeVersion& v = index_.version(0);
  EXPECT_EQ(v.source_file(), "/w/prog.js");
  EXPECT_EQ(v.function_name(), "fib");
  EXPECT_EQ(v.raw_name(), "JS:*'fib file:///w/prog.js:2:13");
  ASSERT_EQ(v.lines().size(), 3u);
  ASSERT_EQ(v.files().size(), 3u);
  EXPECT_EQ(v.files()[v.lines()[0].file_index], "/w/prog.js");
  EXPECT_EQ(v.files()[v.lines()[1].file_index], "/w/a b.js");
  EXPECT_EQ(v.files()[v.lines()[2].file_index], "ext:core/01_core.js");
}

TEST_F(JitdumpTest, MoveOfUnknownCodeIsAWarning) {
  JitdumpBuilder b;
  b.Header().CodeMove(4, kCode, kCode + 0x1000, 8, 5);
  Read(b.bytes());
  EXPECT_TRUE(index_.empty());
  EXPECT_EQ(WarningCount(diagnostics_, "jitdump: move of unknown code"), 1);
}

TEST_F(JitdumpTest, ElfHeaderOffsetInDebugEntriesIsRemoved) {
  // V8 and LLVM writers place entries 0x40 past the code (where perf inject's ELF puts it).
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode + 0x40, 1, 0, "a.jl"}, {kCode + 0x43, 2, 0, "a.jl"}})
      .CodeLoad(2, kCode, std::string(4, '\x90'), "julia_f_1", 1, /*vma=*/0);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.debug_infos_shifted, 1);
  const CodeVersion& v = index_.version(0);
  EXPECT_EQ(v.start(), kCode);  // vma = 0 (Julia): code_addr is the address
  ASSERT_EQ(v.lines().size(), 2u);
  EXPECT_EQ(v.lines()[0].addr, kCode);
  EXPECT_EQ(v.lines()[1].addr, kCode + 3);
  EXPECT_EQ(v.LookupLine(kCode + 3)->line_no, 2u);
}

TEST_F(JitdumpTest, UnshiftedDebugEntriesStay) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode, 1, 0, "a.c"}, {kCode + 0x10, 2, 0, "a.c"}})
      .CodeLoad(2, kCode, std::string(0x20, '\x90'), "f", 1);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.debug_infos_shifted, 0);
  EXPECT_EQ(index_.version(0).lines()[1].addr, kCode + 0x10);
}

TEST_F(JitdumpTest, AmbiguousLineTablesFollowTheDump) {
  // The big function's entries fit both readings; the small one proves this writer shifts.
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode + 0x50, 1, 0, "a"}, {kCode + 0x60, 2, 0, "a"}})
      .CodeLoad(2, kCode, std::string(0x100, '\x90'), "big", 1)
      .DebugInfo(3, kCode + 0x100, {{kCode + 0x140, 7, 0, "a"}})
      .CodeLoad(4, kCode + 0x100, std::string(4, '\x90'), "small", 2);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.debug_infos_shifted, 2);
  EXPECT_EQ(index_.version(0).lines()[0].addr, kCode + 0x10);
}

TEST_F(JitdumpTest, UndecidedDumpUsesWhereTablesStart) {
  // No table is decisive; none has an entry in the first 0x40 bytes and one starts at +0x40.
  JitdumpBuilder shifted;
  shifted.Header()
      .DebugInfo(1, kCode, {{kCode + 0x40, 1, 0, "a"}, {kCode + 0x50, 2, 0, "a"}})
      .CodeLoad(2, kCode, std::string(0x100, '\x90'), "f", 1)
      .DebugInfo(3, kCode + 0x100, {{kCode + 0x143, 1, 0, "a"}})
      .CodeLoad(4, kCode + 0x100, std::string(0x100, '\x90'), "g", 2);
  EXPECT_EQ(Read(shifted.bytes()).debug_infos_shifted, 2);
  EXPECT_EQ(index_.version(1).lines()[0].addr, kCode + 0x103);
}

TEST(JitdumpUndecidedTest, EntryNearTheStartMeansNoShift) {
  JitdumpBuilder plain;
  plain.Header()
      .DebugInfo(1, kCode, {{kCode + 0x40, 1, 0, "a"}})
      .CodeLoad(2, kCode, std::string(0x100, '\x90'), "f", 1)
      .DebugInfo(3, kCode + 0x100, {{kCode + 0x104, 1, 0, "a"}})
      .CodeLoad(4, kCode + 0x100, std::string(0x100, '\x90'), "g", 2);
  SymbolIndex index;
  Diagnostics diagnostics;
  uint32_t source = index.AddSource({"x.dump", "jitdump", "x.dump"});
  // g's table is decisive (raw only: +4 < 0x40), so f's follows it.
  EXPECT_EQ(ReadJitdump(plain.bytes(), "x.dump", source, &index, &diagnostics).debug_infos_shifted,
            0);
  EXPECT_EQ(index.version(0).lines()[0].addr, kCode + 0x40);
}

TEST_F(JitdumpTest, LineTableOutsideTheCodeIsDroppedAndReported) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode + 0x1000, 1, 0, "a"}})
      .CodeLoad(2, kCode, std::string(4, '\x90'), "f", 1);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(WarningCount(diagnostics_, "jitdump: line table outside code"), 1);
  EXPECT_EQ(stats.debug_infos_dropped, 1);
  EXPECT_TRUE(index_.version(0).lines().empty());
}

// The shape Node 20 wrote under Valgrind (tests/data/node/prof): real entries with a garbage file
// name alternate with entries parsed out of freed memory at heap-looking addresses. The function
// keeps the file and line its V8 name gives.
TEST_F(JitdumpTest, CorruptNodeLineTableFallsBackToTheName) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode,
                 {{kCode + 0x40, 4, 13, "Y"},
                  {0xea6b900000000000, 2451628147, 1631675748, "/workload.js"},
                  {kCode + 0x67, 5, 12, "Y"}})
      .CodeLoad(2, kCode, std::string(0x100, '\x90'), "JS:*fib /tmp/t/workload.js:4:13", 1);
  Read(b.bytes());
  ASSERT_EQ(index_.size(), 1u);
  const CodeVersion& v = index_.version(0);
  EXPECT_TRUE(v.lines().empty());
  EXPECT_EQ(v.function_name(), "fib");
  EXPECT_EQ(v.source_file(), "/tmp/t/workload.js");
  EXPECT_EQ(v.source_line(), 4u);
}

// BEAMJIT (erl +JPperf true, OTP 25; fibm:fib/1 of tests/data/fidelity/erlang): the first
// entry sits in the -CodeInfoPrologue helper before code_addr, the last closes the table with
// line 0 and no file at the end of the code.
TEST_F(JitdumpTest, BeamLineTableLeadEntryCoversTheStart) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode,
                 {{kCode - 50, 4, 0, "fibm.erl"},
                  {kCode + 53, 6, 0, "fibm.erl"},
                  {kCode + 238, 8, 0, "fibm.erl"},
                  {kCode + 240, 0, 0, ""}})
      .CodeLoad(2, kCode, std::string(240, '\x90'), "fibm:fib/1", 1)
      .DebugInfo(3, kCode + 0x100,
                 {{kCode + 0x100 - 50, 8, 0, "fibm.erl"},
                  {kCode + 0x100, 9, 0, "fibm.erl"},
                  {kCode + 0x100 + 144, 0, 0, ""}})
      .CodeLoad(4, kCode + 0x100, std::string(144, '\x90'), "fibm:main/0", 2);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.debug_infos_dropped, 0);
  EXPECT_EQ(stats.debug_infos_shifted, 0);
  EXPECT_EQ(WarningCount(diagnostics_, "jitdump: line table outside code"), 0);
  const CodeVersion& fib = index_.version(0);
  EXPECT_EQ(fib.source_file(), "fibm.erl");
  EXPECT_EQ(fib.source_line(), 4u);
  ASSERT_NE(fib.LookupLine(kCode), nullptr);
  EXPECT_EQ(fib.LookupLine(kCode)->line_no, 4u);
  EXPECT_EQ(fib.LookupLine(kCode + 52)->line_no, 4u);
  EXPECT_EQ(fib.LookupLine(kCode + 53)->line_no, 6u);
  EXPECT_EQ(fib.LookupLine(kCode + 239)->line_no, 8u);
  for (const LineEntry& line : fib.lines()) EXPECT_GE(line.addr, kCode);
  EXPECT_EQ(fib.files().size(), 1u);  // the closing entry adds no nameless file
  // An entry of the code's own at the start replaces the lead one.
  const CodeVersion& main = index_.version(1);
  EXPECT_EQ(main.source_line(), 9u);
  EXPECT_EQ(main.LookupLine(kCode + 0x100)->line_no, 9u);
}

TEST_F(JitdumpTest, OnlyOneNearLeadEntryIsAccepted) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode - 0x101, 4, 0, "a"}, {kCode + 8, 6, 0, "a"}})
      .CodeLoad(2, kCode, std::string(16, '\x90'), "far", 1)
      .DebugInfo(3, kCode + 0x100, {{kCode + 0x100 - 8, 4, 0, "a"}, {kCode + 0x100 - 4, 5, 0, "a"}})
      .CodeLoad(4, kCode + 0x100, std::string(16, '\x90'), "two", 2)
      .DebugInfo(5, kCode + 0x200, {{kCode + 0x208, 4, 0, "a"}, {kCode + 0x200 - 8, 5, 0, "a"}})
      .CodeLoad(6, kCode + 0x200, std::string(16, '\x90'), "not_first", 3);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.debug_infos_dropped, 3);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(index_.version(i).lines().empty()) << i;
}

TEST_F(JitdumpTest, TableFittingWithoutALeadKeepsItsReading) {
  // Shifted, its first entry would be a lead 0x10 before the code; unshifted it fits as it is.
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode, {{kCode + 0x30, 1, 0, "a"}, {kCode + 0x80, 2, 0, "a"}})
      .CodeLoad(2, kCode, std::string(0x100, '\x90'), "f", 1);
  EXPECT_EQ(Read(b.bytes()).debug_infos_shifted, 0);
  EXPECT_EQ(index_.version(0).lines()[0].addr, kCode + 0x30);
}

TEST_F(JitdumpTest, DebugInfoWaitsForItsLoad) {
  JitdumpBuilder b;
  b.Header()
      .DebugInfo(1, kCode + 0x100, {{kCode + 0x100, 9, 0, "b"}})
      .CodeLoad(2, kCode, std::string(4, '\x90'), "a", 1)
      .CodeLoad(3, kCode + 0x100, std::string(4, '\x90'), "b", 2)
      .DebugInfo(4, kCode + 0x900, {{kCode + 0x900, 1, 0, "c"}});
  JitdumpStats stats = Read(b.bytes());
  EXPECT_TRUE(index_.version(0).lines().empty());
  ASSERT_EQ(index_.version(1).lines().size(), 1u);
  EXPECT_EQ(index_.version(1).lines()[0].line_no, 9u);
  EXPECT_EQ(stats.debug_infos_unmatched, 1);
  EXPECT_EQ(WarningCount(diagnostics_, "jitdump: unmatched debug info"), 1);
}

TEST_F(JitdumpTest, CpythonSaltedTail) {
  JitdumpBuilder b;
  b.Header()
      .CodeLoad(1, kCode, std::string(32, '\x90'), "py::f:/a.py", 1)
      .CodeLoad(2, kCode + 32, std::string(5, '\x90'), "py::g:/a.py", 2);
  Read(b.bytes());
  EXPECT_EQ(index_.version(0).salted_code_tail(), 8u);
  EXPECT_EQ(index_.version(1).salted_code_tail(), 5u);
  EXPECT_EQ(index_.version(0).function_name(), "f");
  EXPECT_EQ(index_.version(0).source_file(), "/a.py");
}

TEST_F(JitdumpTest, NonMonotonicTimestampsKeepFileOrder) {
  JitdumpBuilder b;
  b.Header()
      .CodeLoad(50, kCode, std::string(4, '\x90'), "first", 1)
      .CodeLoad(10, kCode, std::string(4, '\x90'), "second", 2);
  JitdumpStats stats = Read(b.bytes());
  EXPECT_EQ(stats.scan.timestamp_decreases, 1);
  EXPECT_EQ(WarningCount(diagnostics_, "jitdump: timestamps not monotonic"), 1);
  EXPECT_EQ(index_.Lookup(kCode)->raw_name(), "second");
}

TEST_F(JitdumpTest, LooksLikeJitdump) {
  EXPECT_TRUE(LooksLikeJitdump(JitdumpBuilder().Header().bytes()));
  EXPECT_TRUE(LooksLikeJitdump(JitdumpBuilder(true).Header().bytes()));
  EXPECT_FALSE(LooksLikeJitdump("7f00 10 f\n"));
  EXPECT_FALSE(LooksLikeJitdump("JiT"));
}

}  // namespace
}  // namespace cg_inject

namespace cg_inject {
namespace {

// A record whose declared size leaves no room for its fixed fields is corrupt, not truncated.
TEST(JitdumpFixedPartTest, ShortRecordsNameTheirFixedSize) {
  struct Case {
    uint32_t id;
    const char* message;
  };
  for (const Case& c :
       {Case{0,
             "jit-1.dump: offset 40: CODE_LOAD of 24 bytes is shorter than its 56-byte fixed part"},
        Case{1,
             "jit-1.dump: offset 40: CODE_MOVE of 24 bytes is shorter than its 64-byte fixed part"},
        Case{2,
             "jit-1.dump: offset 40: CODE_DEBUG_INFO of 24 bytes is shorter than its 32-byte "
             "fixed part"},
        Case{4,
             "jit-1.dump: offset 40: CODE_UNWINDING_INFO of 24 bytes is shorter than its "
             "40-byte fixed part"}}) {
    std::string bytes = testing::JitdumpBuilder().Header().bytes();
    auto put32 = [&bytes](uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
    put32(c.id);
    put32(24);               // total_size: prefix + 8 bytes
    bytes.append(8, '\0');   // timestamp
    bytes.append(8, '\0');   // 8 bytes of body
    bytes.append(16, '\0');  // a CODE_CLOSE-sized tail so the record is not the file's last bytes
    SymbolIndex index;
    Diagnostics diagnostics;
    uint32_t source = index.AddSource({"jit-1.dump", "jitdump", "jit-1.dump"});
    try {
      ReadJitdump(bytes, "jit-1.dump", source, &index, &diagnostics);
      ADD_FAILURE() << "record id " << c.id << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
}

}  // namespace
}  // namespace cg_inject
