// Reader for jitdump files (jit-PID.dump), the binary format JIT runtimes write for
// `perf inject --jit` (linux tools/perf/Documentation/jitdump-specification.txt).
// ScanJitdump validates and decodes records and hands them to a visitor in file order;
// ReadJitdump applies perf's semantics on top and fills a SymbolIndex.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace cg_inject {

class Diagnostics;
class SymbolIndex;

inline constexpr uint32_t kJitdumpMagic = 0x4A695444;     // "JiTD" as a native uint32_t
inline constexpr uint64_t kJitdumpFlagArchTimestamp = 1;  // JITDUMP_FLAGS_ARCH_TIMESTAMP

enum class JitdumpRecordId : uint32_t {
  kCodeLoad = 0,
  kCodeMove = 1,
  kCodeDebugInfo = 2,
  kCodeClose = 3,
  kCodeUnwindingInfo = 4,
};

struct JitdumpHeader {
  uint32_t magic = 0;  // as stored, before byte swapping
  uint32_t version = 0;
  uint32_t header_size = 0;
  uint32_t elf_machine = 0;
  uint32_t pad1 = 0;
  uint32_t pid = 0;
  uint64_t timestamp = 0;
  uint64_t flags = 0;
  bool byte_swapped = false;  // the writer's byte order differs from ours
};

/// Fields common to every record. Views in records point into the scanned bytes.
struct JitdumpRecordPrefix {
  uint32_t id = 0;
  uint32_t total_size = 0;
  uint64_t timestamp = 0;
  uint64_t file_offset = 0;  // where the record starts
};

struct JitdumpCodeLoad {
  JitdumpRecordPrefix prefix;
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, code_addr = 0, code_size = 0, code_index = 0;
  std::string_view name;  // without its NUL
  std::string_view code;  // code_size bytes
};

struct JitdumpCodeMove {
  JitdumpRecordPrefix prefix;
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, old_code_addr = 0, new_code_addr = 0, code_size = 0, code_index = 0;
};

struct JitdumpDebugEntry {
  uint64_t addr = 0;  // as written (V8 and LLVM writers add 0x40; ReadJitdump corrects that)
  uint32_t line_no = 0;
  uint32_t discriminator = 0;
  std::string_view file;  // a "\xff" file ("same as before") is already replaced
};

struct JitdumpDebugInfo {
  JitdumpRecordPrefix prefix;
  uint64_t code_addr = 0;
  std::vector<JitdumpDebugEntry> entries;
};

struct JitdumpUnwindingInfo {
  JitdumpRecordPrefix prefix;
  uint64_t unwinding_size = 0, eh_frame_hdr_size = 0, mapped_size = 0;
  std::string_view data;  // unwinding_size bytes
};

/// Receives decoded records in file order.
class JitdumpVisitor {
 public:
  virtual ~JitdumpVisitor() = default;
  virtual void OnHeader(const JitdumpHeader&) {}
  virtual void OnCodeLoad(const JitdumpCodeLoad&) {}
  virtual void OnCodeMove(const JitdumpCodeMove&) {}
  virtual void OnDebugInfo(const JitdumpDebugInfo&) {}
  virtual void OnUnwindingInfo(const JitdumpUnwindingInfo&) {}
  virtual void OnClose(const JitdumpRecordPrefix&) {}
};

struct JitdumpScanStats {
  int64_t records = 0;          // records decoded, unknown ones included
  int64_t unknown_records = 0;  // skipped ids (warned, kind "jitdump: unknown record")
  bool truncated = false;       // the last record was cut off (warned, kind "jitdump: truncated")
  uint64_t dropped_bytes = 0;   // bytes of that cut-off record (1 record dropped when truncated)
  bool closed = false;          // a CODE_CLOSE ended the walk
  int64_t timestamp_decreases = 0;  // records older than the one before (LLVM JITLink)
};

/// True when `bytes` starts with the jitdump magic in either byte order.
bool LooksLikeJitdump(std::string_view bytes);

/// Checks a jitdump's header (magic, version, header size, flags) from its first 40 bytes, so a
/// stream that is no jitdump is refused before the rest of it is read. Throws InputError as
/// ScanJitdump does; `head` shorter than 40 bytes is a cut-off header.
void CheckJitdumpHeader(std::string_view head, std::string_view path);

/// Validates and decodes a whole jitdump. Throws InputError ("PATH: offset N: ...") for a bad
/// header or a malformed record; a cut-off last record (the file ends inside it) is only a
/// warning, and every record before it is delivered. A record whose size points past the end
/// although its own fields fit in the bytes left is a corrupt size, an error.
JitdumpScanStats ScanJitdump(std::string_view bytes, std::string_view path, JitdumpVisitor* visitor,
                             Diagnostics* diagnostics);

struct JitdumpStats {
  JitdumpScanStats scan;
  JitdumpHeader header;
  int64_t loads = 0;
  int64_t moves = 0;
  int64_t debug_infos = 0;
  int64_t debug_infos_shifted = 0;  // line tables moved back by the writers' 0x40 offset
  int64_t debug_infos_dropped = 0;  // line tables that fit their code under neither reading
  int64_t debug_infos_unmatched = 0;
};

/// Reads a jitdump into `index` with CodeVersion::source = `source`, as perf applies it: a
/// DEBUG_INFO belongs to the next CODE_LOAD of the same code_addr; a CODE_MOVE adds a version of
/// the same function (same function_id, name, code and line table) at the new address. Versions
/// are added in file order. Writer quirks handled: debug-entry addresses 0x40 too high (V8,
/// LLVM/Julia, JITLink), vma = 0 (Julia; code_addr is used), salted code tails (CPython),
/// non-monotonic timestamps (JITLink; file order is kept).
/// `done_with(n)` (optional) is called every few megabytes: the reader will not read bytes before
/// offset n again, except the code bytes and line tables it keeps views of (which the index
/// reads later, from wherever `bytes` lives).
JitdumpStats ReadJitdump(std::string_view bytes, std::string_view path, uint32_t source,
                         SymbolIndex* index, Diagnostics* diagnostics,
                         const std::function<void(size_t)>& done_with = {});

}  // namespace cg_inject
