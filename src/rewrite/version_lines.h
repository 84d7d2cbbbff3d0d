// Where a JIT code version's addresses are in the source, as output name ids: the line and file
// of an address (its line table's row, else the version's own line and file). Asked for every
// record the injector places in JIT code, mostly of the version asked last and of a few hundred
// files: both are cached, so a record costs neither a line-table fetch nor a name hash.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "cg_inject/symbols.h"

namespace cg_inject {

class NameTable;

/// The file a version's function is in: its own, else its line table's first, else `???`.
std::string_view FileText(const CodeVersion& version);

/// The function BEAM's `NAME-CodeInfoPrologue` helper `version` is the entry of: the version of
/// NAME from the same source that starts where it ends; null for any other version. ParseErlang
/// names the prologue as its function, but it has no line table of its own: by its own file
/// (`???`) it would be a second function of that name, to which its callers and Callgrind's
/// recursion copies (`'2`, entered at the prologue's last bytes) would go. It takes its function's
/// definition, file and line instead.
const CodeVersion* PrologueOwner(const SymbolIndex& index, const CodeVersion& version);

/// Lines and file ids of versions' addresses; file ids are `names`' (interned on first sight).
class VersionLines {
 public:
  VersionLines(const SymbolIndex& index, NameTable* names) : index_(index), names_(names) {}

  /// The source line and file id of `addr` in `version`: its line table's row when it has one
  /// for `addr`, else the version's own line and file (a BEAM prologue's: its function's).
  void LineOf(const CodeVersion& version, uint64_t addr, uint32_t* line, uint32_t* file);
  /// The file id of the version's function (FileText).
  uint32_t FileOf(const CodeVersion& version) { return FileId(FileText(version)); }

 private:
  /// The id of a file text of the index (whose texts never move).
  uint32_t FileId(std::string_view file);

  const SymbolIndex& index_;
  NameTable* names_;
  // Direct-mapped by the text's address: 64 KB, room for the files of a large program (the bench's
  // map names 700, which 256 slots kept missing: 4 cache misses per Intern).
  struct FileIdSlot {
    const char* data = nullptr;
    uint32_t size = 0;
    uint32_t id = 0;  // 0: empty
  };
  static constexpr int kFileIdBits = 12;
  std::array<FileIdSlot, size_t{1} << kFileIdBits> file_ids_{};
  // The version asked last: its tables, and its own line and file.
  const CodeVersion* version_ = nullptr;
  std::span<const LineEntry> lines_;
  std::span<const std::string_view> files_;
  uint32_t line_ = 0, file_ = 0;
  // The line table's row answered last, [begin, end) of its addresses: a block's lines come
  // mostly in address order, several to a source line (erlc + jitdump: 871,000 searches, 90%
  // of them for the row before).
  struct Row {
    uint64_t begin = 0, end = 0;
    uint32_t line = 0, file = 0;
  };
  Row row_;
};

}  // namespace cg_inject
