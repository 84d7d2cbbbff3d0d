// What the symbol sources (perf maps, jitdumps) know about JIT code, in one index that the
// resolver queries. Every reader pushes CodeVersion records into a SymbolIndex; the resolver never
// knows which format a version came from except through `source`.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cg_inject {

/// One row of a jitdump line table: code at `addr` and up to the next entry comes from
/// `file_index` (into CodeVersion::files) at `line_no`.
struct LineEntry {
  uint64_t addr = 0;
  uint32_t line_no = 0;
  uint32_t discriminator = 0;
  uint32_t file_index = 0;
};

/// One file the index was built from.
struct SymbolSourceInfo {
  std::string path;
  std::string kind;          // "perf-map" or "jitdump"
  std::string object_name;   // what `ob=` says for code from here, e.g. "jit-1234.dump"
  int64_t records = 0;       // versions it contributed
  uint32_t elf_machine = 0;  // jitdump header e_machine (62 x86-64, 183 AArch64); 0 = unknown
  /// Damage the reader recovered from, for --stats ("1 torn line (1 name cut off)"); empty when
  /// the file was clean.
  std::string damage = {};
  /// What a cut-off jitdump lost: its last record, which the file ends inside (a writer still at
  /// work). 0 and 0 when nothing was dropped.
  int64_t dropped_records = 0;
  uint64_t dropped_bytes = 0;
};

/// One piece of machine code that lived at [start, start + size) for a while: a perf-map line,
/// or a jitdump CODE_LOAD (a CODE_MOVE adds another version with the same function_id).
///
/// The text, code and line-table fields are views. A reader or test fills them with views into
/// anything that lives until SymbolIndex::Add returns; Add copies what they point to into
/// storage the index owns (names once per version, file names once per index, code bytes not at
/// all when they lie in bytes the index adopted), so a version in the index stays valid for
/// the index's lifetime and costs no allocation of its own: a 10-million-line perf map is 10
/// million of these, and per-entry strings took gigabytes.
struct CodeVersion {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string_view raw_name;       // as the source wrote it
  std::string_view function_name;  // readable name, a location suffix/prefix removed
  std::string_view source_file;    // from the line table or the name convention; empty if unknown
  uint32_t source_line = 0;        // first line of the function; 0 if unknown
  /// Where the name says the function is defined (V8 `file:line:col`, MoarVM `(file:line)`); 0 if
  /// the name does not say. Unlike source_line, a line table never changes it, so every version
  /// and tier of one definition agrees on it.
  uint32_t definition_line = 0, definition_column = 0;
  uint32_t source = 0;            // index into SymbolIndex::sources()
  uint64_t timestamp = 0;         // jitdump record timestamp; 0 for perf maps
  uint64_t code_index = 0;        // jitdump code_index; 0 for perf maps
  uint64_t load_order = 0;        // position in the index's load order (see SymbolIndex)
  uint32_t function_id = 0;       // the same for every version of one function (moves)
  uint32_t salted_code_tail = 0;  // trailing bytes of `code` that differ from the live code
                                  // (CPython overwrites the last 8 with a marker)
  std::string_view code;          // code bytes when the source has them (jitdump), else empty
  std::span<const std::string_view> files;  // line-table file names, by LineEntry::file_index
  std::span<const LineEntry> lines;         // sorted by addr; empty without a line table

  uint64_t end() const { return start + size; }
  bool Contains(uint64_t addr) const { return addr >= start && addr - start < size; }
  /// The line-table row covering `addr`, or null.
  const LineEntry* LookupLine(uint64_t addr) const;
};

/// Address -> the code versions that lived there, in load order. Load order is: jitdump records by
/// timestamp (ties and non-monotonic writers keep file order within one dump), perf-map lines in
/// file order, sources in the order they were added.
class SymbolIndex {
 public:
  SymbolIndex();
  ~SymbolIndex();
  SymbolIndex(const SymbolIndex&) = delete;
  SymbolIndex& operator=(const SymbolIndex&) = delete;

  /// Registers a source file; returns its index for CodeVersion::source.
  uint32_t AddSource(SymbolSourceInfo info);
  /// Adds a version; `function_id` 0 asks the index to assign a fresh one. Returns the version's
  /// function_id (so a reader can give later moves of the same function the same id). The
  /// version's views are copied into the index's storage (see CodeVersion); they need to live
  /// only until Add returns.
  uint32_t Add(CodeVersion version);
  /// Keeps `bytes` (a whole jitdump) for the index's lifetime and returns a view of it: code
  /// bytes that Add finds inside it are referenced, not copied. (Names are always copied: they
  /// are read for every version, code bytes only for the few the profile runs, so the rest of
  /// an adopted file mapping can leave memory.)
  std::string_view AdoptBuffer(std::string bytes);
  /// The same for `bytes` that `owner` keeps alive (a file mapping).
  void AdoptBytes(std::shared_ptr<const void> owner, std::string_view bytes);
  /// Copies `bytes` into the index's storage (for readers that set a field of a version already
  /// added, see mutable_version).
  std::string_view Store(std::string_view bytes);
  /// Optional: room for `versions` more Adds (a reader that knows its record count).
  void Reserve(size_t versions);
  /// Sorts and builds the lookup structure. Must be called once, after the last Add and before
  /// any query.
  void Finish();

  /// Every version whose range contains `addr`, in load order. O(log n + k).
  std::vector<const CodeVersion*> LookupAll(uint64_t addr) const;
  /// The latest-loaded version containing `addr`, or null.
  const CodeVersion* Lookup(uint64_t addr) const;
  const std::vector<SymbolSourceInfo>& sources() const { return sources_; }
  /// For readers that learn about their source while reading (a jitdump's e_machine).
  SymbolSourceInfo* mutable_source(uint32_t source) { return &sources_.at(source); }
  const std::vector<CodeVersion>& versions() const { return versions_; }
  /// For readers that add code bytes to versions already added (MoarVM's raw code files pair
  /// with perf-map lines). Requires: no query yet (decoded boundaries are cached on first use).
  CodeVersion* mutable_version(size_t i) { return &versions_.at(i); }
  /// Gives version `i` a line table, copied into the index's storage (file names interned). For
  /// readers that decide a table only after the version was added (a jitdump's +0x40 quirk is
  /// judged over the whole dump). Same requirement as mutable_version.
  void SetLineTable(size_t i, std::span<const std::string_view> files,
                    std::span<const LineEntry> lines);
  /// Addresses where two versions with different function_ids overlap (code reuse).
  int64_t reused_ranges() const { return reused_ranges_; }

 private:
  struct Tree;
  struct Storage;
  std::vector<SymbolSourceInfo> sources_;
  std::vector<CodeVersion> versions_;
  std::unique_ptr<Tree> tree_;
  std::unique_ptr<Storage> storage_;
  int64_t reused_ranges_ = 0;
  uint32_t next_function_id_ = 1;
};

}  // namespace cg_inject
