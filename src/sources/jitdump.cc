// Jitdump reader, after linux tools/perf/Documentation/jitdump-specification.txt and the way
// tools/perf/util/jitdump.c applies records.
//
// Layout: a header (magic, version, header size, e_machine, pad, pid, timestamp, flags; 40 bytes
// in version 1, longer headers have extra fields we skip), then records, each starting with
// {id, total_size, timestamp}. Every field is in the writer's byte order, which the magic tells:
// 0x4A695444 read back as 0x4454694A means swap every field. Records are walked by total_size
// because writers pad (V8 rounds DEBUG_INFO up to 8 bytes); unknown ids are skipped.
//
// Nothing in the file is trusted: every size and count is checked against the bytes left with
// overflow-free arithmetic before anything is sliced, names must end in NUL inside their record.
// A file still being written ends in a cut-off record: that is a warning (saying how many bytes
// were dropped) and everything before it is kept. A record whose size points past the end but
// whose own fields say it fits in the bytes left is not a cut tail but a corrupt size in the
// middle of the file, which would silently drop every later record: an error. Anything else
// malformed is an InputError naming the byte offset.
#include "sources/jitdump.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"

namespace cg_inject {
namespace {

constexpr uint32_t kHeaderSizeV1 = 40;
constexpr uint32_t kPrefixSize = 16;
constexpr uint64_t kLoadFixedSize = 40;  // after the prefix
constexpr uint64_t kMoveFixedSize = 48;
constexpr uint64_t kDebugInfoFixedSize = 16;
constexpr uint64_t kDebugEntryFixedSize = 16;  // addr, lineno, discrim; then the NUL-ended file
constexpr uint64_t kUnwindingFixedSize = 24;

std::string Hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

// Reads fixed-width fields in the file's byte order.
class FieldReader {
 public:
  FieldReader(std::string_view bytes, bool swap) : bytes_(bytes), swap_(swap) {}
  uint32_t U32(uint64_t offset) const {
    uint32_t value;
    std::memcpy(&value, bytes_.data() + offset, sizeof value);
    return swap_ ? __builtin_bswap32(value) : value;
  }
  uint64_t U64(uint64_t offset) const {
    uint64_t value;
    std::memcpy(&value, bytes_.data() + offset, sizeof value);
    return swap_ ? __builtin_bswap64(value) : value;
  }

 private:
  std::string_view bytes_;
  bool swap_;
};

const char* RecordName(uint32_t id) {
  switch (static_cast<JitdumpRecordId>(id)) {
    case JitdumpRecordId::kCodeLoad:
      return "CODE_LOAD";
    case JitdumpRecordId::kCodeMove:
      return "CODE_MOVE";
    case JitdumpRecordId::kCodeDebugInfo:
      return "CODE_DEBUG_INFO";
    case JitdumpRecordId::kCodeClose:
      return "CODE_CLOSE";
    case JitdumpRecordId::kCodeUnwindingInfo:
      return "CODE_UNWINDING_INFO";
  }
  return "unknown";
}

class Scanner {
 public:
  Scanner(std::string_view bytes, std::string_view path, JitdumpVisitor* visitor,
          Diagnostics* diagnostics)
      : bytes_(bytes), path_(path), visitor_(visitor), diagnostics_(diagnostics) {}

  JitdumpScanStats Run();
  /// Checks the header's fixed fields (magic, version, header size, flags) in the bytes read
  /// so far, without the records (a stream is checked before the rest of it is read).
  void CheckHead() {
    head_only_ = true;
    ReadHeader();
  }

 private:
  [[noreturn]] void Fail(uint64_t offset, const std::string& what) const {
    ThrowAtOffset(path_, offset, what);
  }
  /// Fails unless a record's body holds its fixed-size fields (`body_size` bytes after the prefix).
  void RequireFixedPart(const JitdumpRecordPrefix& prefix, std::string_view body,
                        uint64_t body_size, const char* record) const {
    if (body.size() < body_size) {
      Fail(prefix.file_offset, std::string(record) + " of " + std::to_string(prefix.total_size) +
                                   " bytes is shorter than its " +
                                   std::to_string(body_size + kPrefixSize) + "-byte fixed part");
    }
  }
  void ReadHeader();
  void DecodeLoad(const JitdumpRecordPrefix& prefix, FieldReader body, std::string_view bytes);
  void DecodeMove(const JitdumpRecordPrefix& prefix, FieldReader body, std::string_view bytes);
  void DecodeDebugInfo(const JitdumpRecordPrefix& prefix, FieldReader body, std::string_view bytes);
  void DecodeUnwindingInfo(const JitdumpRecordPrefix& prefix, FieldReader body,
                           std::string_view bytes);
  /// The size a record's own fields imply (prefix included), read from the `avail` bytes at its
  /// start, or 0 when those bytes do not tell (an unknown id, a name cut before its NUL).
  uint64_t ImpliedSize(uint32_t id, std::string_view avail) const;
  // The NUL-terminated string at `offset` of a record body, or a located error.
  std::string_view CString(std::string_view body, uint64_t offset, uint64_t record_offset,
                           const char* what) const;

  std::string_view bytes_;
  std::string_view path_;
  JitdumpVisitor* visitor_;
  Diagnostics* diagnostics_;
  JitdumpHeader header_;
  JitdumpScanStats stats_;
  JitdumpDebugInfo debug_info_;  // reused: its entries vector keeps its capacity
  bool head_only_ = false;       // CheckHead: the bytes are the header's first 40
};

void Scanner::ReadHeader() {
  if (bytes_.size() < 4) {
    ThrowForFile(path_, "not a jitdump: " + std::to_string(bytes_.size()) +
                            " bytes, too short for the magic");
  }
  uint32_t magic;
  std::memcpy(&magic, bytes_.data(), sizeof magic);
  header_.magic = magic;
  if (magic == kJitdumpMagic) {
    header_.byte_swapped = false;
  } else if (magic == __builtin_bswap32(kJitdumpMagic)) {
    header_.byte_swapped = true;
  } else {
    Fail(0, "expected the jitdump magic 0x4a695444 (\"JiTD\") in either byte order, got " +
                Hex(magic));
  }
  if (bytes_.size() < kHeaderSizeV1) {
    Fail(bytes_.size(), "header cut off: expected " + std::to_string(kHeaderSizeV1) +
                            " bytes, got " + std::to_string(bytes_.size()));
  }
  FieldReader r(bytes_, header_.byte_swapped);
  header_.version = r.U32(4);
  header_.header_size = r.U32(8);
  header_.elf_machine = r.U32(12);
  header_.pad1 = r.U32(16);
  header_.pid = r.U32(20);
  header_.timestamp = r.U64(24);
  header_.flags = r.U64(32);
  if (header_.version != 1) {
    Fail(4, "expected jitdump version 1, got " + std::to_string(header_.version) +
                (header_.version > 1 ? " (newer than this reader)" : ""));
  }
  if (header_.header_size < kHeaderSizeV1) {
    Fail(8, "expected a header size of at least 40, got " + std::to_string(header_.header_size));
  }
  if (!head_only_ && header_.header_size > bytes_.size()) {
    Fail(8, "header size " + std::to_string(header_.header_size) + " is past the end of the " +
                std::to_string(bytes_.size()) + "-byte file");
  }
  if ((header_.flags & ~kJitdumpFlagArchTimestamp) != 0) {
    Fail(32, "unknown header flags " + Hex(header_.flags & ~kJitdumpFlagArchTimestamp) +
                 " (known: 0x1 arch timestamp)");
  }
  if (!head_only_) visitor_->OnHeader(header_);
}

std::string_view Scanner::CString(std::string_view body, uint64_t offset, uint64_t record_offset,
                                  const char* what) const {
  if (offset > body.size()) {
    Fail(record_offset, std::string(what) + " starts past the end of the record");
  }
  const void* nul = std::memchr(body.data() + offset, '\0', body.size() - offset);
  if (nul == nullptr) {
    Fail(record_offset + kPrefixSize + offset,
         std::string(what) + " is not NUL-terminated inside its record");
  }
  return body.substr(offset,
                     static_cast<size_t>(static_cast<const char*>(nul) - (body.data() + offset)));
}

void Scanner::DecodeLoad(const JitdumpRecordPrefix& prefix, FieldReader r, std::string_view body) {
  RequireFixedPart(prefix, body, kLoadFixedSize, "CODE_LOAD");
  JitdumpCodeLoad load;
  load.prefix = prefix;
  load.pid = r.U32(0);
  load.tid = r.U32(4);
  load.vma = r.U64(8);
  load.code_addr = r.U64(16);
  load.code_size = r.U64(24);
  load.code_index = r.U64(32);
  load.name = CString(body, kLoadFixedSize, prefix.file_offset, "CODE_LOAD name");
  uint64_t code_offset = kLoadFixedSize + load.name.size() + 1;
  uint64_t room = body.size() - code_offset;
  if (load.code_size > room) {
    Fail(prefix.file_offset + kPrefixSize + 24,
         "CODE_LOAD code_size " + std::to_string(load.code_size) + " does not fit in the " +
             std::to_string(room) + " bytes left in the record");
  }
  if (load.code_size > UINT64_MAX - load.code_addr) {
    Fail(prefix.file_offset + kPrefixSize + 16,
         "CODE_LOAD code_addr " + Hex(load.code_addr) + " + code_size " +
             std::to_string(load.code_size) + " is beyond the 64-bit address space");
  }
  load.code = body.substr(code_offset, load.code_size);
  visitor_->OnCodeLoad(load);
}

void Scanner::DecodeMove(const JitdumpRecordPrefix& prefix, FieldReader r, std::string_view body) {
  RequireFixedPart(prefix, body, kMoveFixedSize, "CODE_MOVE");
  JitdumpCodeMove move;
  move.prefix = prefix;
  move.pid = r.U32(0);
  move.tid = r.U32(4);
  move.vma = r.U64(8);
  move.old_code_addr = r.U64(16);
  move.new_code_addr = r.U64(24);
  move.code_size = r.U64(32);
  move.code_index = r.U64(40);
  if (move.code_size > UINT64_MAX - move.new_code_addr) {
    Fail(prefix.file_offset + kPrefixSize + 24,
         "CODE_MOVE new_code_addr " + Hex(move.new_code_addr) + " + code_size " +
             std::to_string(move.code_size) + " is beyond the 64-bit address space");
  }
  visitor_->OnCodeMove(move);
}

void Scanner::DecodeDebugInfo(const JitdumpRecordPrefix& prefix, FieldReader r,
                              std::string_view body) {
  RequireFixedPart(prefix, body, kDebugInfoFixedSize, "CODE_DEBUG_INFO");
  debug_info_.prefix = prefix;
  debug_info_.code_addr = r.U64(0);
  uint64_t nr_entry = r.U64(8);
  // Each entry takes at least 17 bytes (fixed part + the file's NUL); checking the count first
  // keeps a corrupt count from reserving gigabytes.
  uint64_t max_entries = (body.size() - kDebugInfoFixedSize) / (kDebugEntryFixedSize + 1);
  if (nr_entry > max_entries) {
    Fail(prefix.file_offset + kPrefixSize + 8,
         "CODE_DEBUG_INFO nr_entry " + std::to_string(nr_entry) + " cannot fit in a " +
             std::to_string(prefix.total_size) + "-byte record (at most " +
             std::to_string(max_entries) + ")");
  }
  debug_info_.entries.clear();
  debug_info_.entries.reserve(nr_entry);
  uint64_t offset = kDebugInfoFixedSize;
  for (uint64_t i = 0; i < nr_entry; ++i) {
    if (body.size() - offset < kDebugEntryFixedSize) {
      Fail(prefix.file_offset + kPrefixSize + offset, "CODE_DEBUG_INFO entry " + std::to_string(i) +
                                                          " of " + std::to_string(nr_entry) +
                                                          " runs past the end of its record");
    }
    JitdumpDebugEntry entry;
    entry.addr = r.U64(offset);
    entry.line_no = r.U32(offset + 8);
    entry.discriminator = r.U32(offset + 12);
    entry.file = CString(body, offset + kDebugEntryFixedSize, prefix.file_offset,
                         "CODE_DEBUG_INFO file name");
    offset += kDebugEntryFixedSize + entry.file.size() + 1;
    if (entry.file == "\xff") {
      // "Same file as the previous entry" (the spec's compression of repeated names).
      if (debug_info_.entries.empty()) {
        Fail(prefix.file_offset + kPrefixSize + offset - 2,
             "CODE_DEBUG_INFO entry 0 repeats the previous file name (\"\\xff\"), but there is "
             "none");
      }
      entry.file = debug_info_.entries.back().file;
    }
    debug_info_.entries.push_back(entry);
  }
  visitor_->OnDebugInfo(debug_info_);
}

void Scanner::DecodeUnwindingInfo(const JitdumpRecordPrefix& prefix, FieldReader r,
                                  std::string_view body) {
  RequireFixedPart(prefix, body, kUnwindingFixedSize, "CODE_UNWINDING_INFO");
  JitdumpUnwindingInfo info;
  info.prefix = prefix;
  info.unwinding_size = r.U64(0);
  info.eh_frame_hdr_size = r.U64(8);
  info.mapped_size = r.U64(16);
  uint64_t room = body.size() - kUnwindingFixedSize;
  if (info.unwinding_size > room) {
    Fail(prefix.file_offset + kPrefixSize,
         "CODE_UNWINDING_INFO unwinding_size " + std::to_string(info.unwinding_size) +
             " does not fit in the " + std::to_string(room) + " bytes left in the record");
  }
  info.data = body.substr(kUnwindingFixedSize, info.unwinding_size);
  visitor_->OnUnwindingInfo(info);
}

uint64_t Scanner::ImpliedSize(uint32_t id, std::string_view avail) const {
  FieldReader r(avail, header_.byte_swapped);
  auto saturating_add = [](uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; };
  switch (static_cast<JitdumpRecordId>(id)) {
    case JitdumpRecordId::kCodeLoad: {
      if (avail.size() < kPrefixSize + kLoadFixedSize) return 0;
      size_t nul = avail.find('\0', kPrefixSize + kLoadFixedSize);
      if (nul == std::string_view::npos) return 0;
      return saturating_add(nul + 1, r.U64(kPrefixSize + 24));  // code_size
    }
    case JitdumpRecordId::kCodeMove:
      return kPrefixSize + kMoveFixedSize;
    case JitdumpRecordId::kCodeClose:
      return kPrefixSize;
    case JitdumpRecordId::kCodeDebugInfo: {
      if (avail.size() < kPrefixSize + kDebugInfoFixedSize) return 0;
      uint64_t entries = r.U64(kPrefixSize + 8);
      uint64_t at = kPrefixSize + kDebugInfoFixedSize;
      for (uint64_t i = 0; i < entries; ++i) {
        if (avail.size() - at < kDebugEntryFixedSize) return 0;
        size_t nul = avail.find('\0', at + kDebugEntryFixedSize);
        if (nul == std::string_view::npos) return 0;
        at = nul + 1;
      }
      return at;
    }
    case JitdumpRecordId::kCodeUnwindingInfo:
      if (avail.size() < kPrefixSize + kUnwindingFixedSize) return 0;
      return saturating_add(kPrefixSize + kUnwindingFixedSize, r.U64(kPrefixSize));
  }
  return 0;
}

JitdumpScanStats Scanner::Run() {
  ReadHeader();
  FieldReader file(bytes_, header_.byte_swapped);
  uint64_t offset = header_.header_size;
  uint64_t previous_timestamp = 0;
  while (offset < bytes_.size()) {
    uint64_t left = bytes_.size() - offset;
    if (left < kPrefixSize) {
      stats_.truncated = true;
      stats_.dropped_bytes = left;
      diagnostics_->Warn("jitdump: truncated",
                         std::string(path_) + ": offset " + std::to_string(offset) +
                             ": the file ends inside its last record (cut off after " +
                             std::to_string(left) +
                             " bytes; still being written?): dropped 1 record, " +
                             std::to_string(left) + " bytes");
      break;
    }
    JitdumpRecordPrefix prefix;
    prefix.id = file.U32(offset);
    prefix.total_size = file.U32(offset + 4);
    prefix.timestamp = file.U64(offset + 8);
    prefix.file_offset = offset;
    if (prefix.total_size < kPrefixSize) {
      Fail(offset + 4, std::string("expected a record size of at least 16, got ") +
                           std::to_string(prefix.total_size) + " (record id " +
                           std::to_string(prefix.id) + ")");
    }
    if (prefix.total_size > left) {
      // Writers pad records to 8 bytes (V8's DEBUG_INFO, CODE_UNWINDING_INFO), so a cut inside
      // the padding leaves a few bytes past the implied end: only room for another record
      // prefix after it makes this a corrupt size.
      uint64_t implied = ImpliedSize(prefix.id, bytes_.substr(offset));
      if (implied >= kPrefixSize && implied <= left && left - implied >= kPrefixSize) {
        Fail(offset + 4, std::string("expected a record size that fits the ") +
                             std::to_string(left) + " bytes left, got " +
                             std::to_string(prefix.total_size) + " for a " + RecordName(prefix.id) +
                             " record whose fields make it " + std::to_string(implied) +
                             " bytes: a corrupt size in the middle of the file (the " +
                             std::to_string(left - implied) +
                             " bytes after it would be lost), not a cut-off tail");
      }
      stats_.truncated = true;
      stats_.dropped_bytes = left;
      diagnostics_->Warn("jitdump: truncated",
                         std::string(path_) + ": offset " + std::to_string(offset) +
                             ": the file ends inside its last record (" + RecordName(prefix.id) +
                             " of " + std::to_string(prefix.total_size) + " bytes, " +
                             std::to_string(left) +
                             " present; still being written?): dropped 1 record, " +
                             std::to_string(left) + " bytes");
      break;
    }
    ++stats_.records;
    if (prefix.timestamp < previous_timestamp) ++stats_.timestamp_decreases;
    previous_timestamp = prefix.timestamp;
    std::string_view body = bytes_.substr(offset + kPrefixSize, prefix.total_size - kPrefixSize);
    FieldReader r(body, header_.byte_swapped);
    switch (static_cast<JitdumpRecordId>(prefix.id)) {
      case JitdumpRecordId::kCodeLoad:
        DecodeLoad(prefix, r, body);
        break;
      case JitdumpRecordId::kCodeMove:
        DecodeMove(prefix, r, body);
        break;
      case JitdumpRecordId::kCodeDebugInfo:
        DecodeDebugInfo(prefix, r, body);
        break;
      case JitdumpRecordId::kCodeUnwindingInfo:
        DecodeUnwindingInfo(prefix, r, body);
        break;
      case JitdumpRecordId::kCodeClose:
        stats_.closed = true;
        visitor_->OnClose(prefix);
        return stats_;
      default:
        ++stats_.unknown_records;
        diagnostics_->Warn("jitdump: unknown record",
                           std::string(path_) + ": offset " + std::to_string(offset) +
                               ": skipped record with unknown id " + std::to_string(prefix.id));
        break;
    }
    offset += prefix.total_size;
  }
  return stats_;
}

}  // namespace

bool LooksLikeJitdump(std::string_view bytes) {
  if (bytes.size() < 4) return false;
  uint32_t magic;
  std::memcpy(&magic, bytes.data(), sizeof magic);
  return magic == kJitdumpMagic || magic == __builtin_bswap32(kJitdumpMagic);
}

void CheckJitdumpHeader(std::string_view head, std::string_view path) {
  Scanner scanner(head.substr(0, kHeaderSizeV1), path, nullptr, nullptr);
  scanner.CheckHead();
}

JitdumpScanStats ScanJitdump(std::string_view bytes, std::string_view path, JitdumpVisitor* visitor,
                             Diagnostics* diagnostics) {
  Scanner scanner(bytes, path, visitor, diagnostics);
  return scanner.Run();
}

}  // namespace cg_inject
