// What the symbol sources (perf maps, jitdumps) know about JIT code, in one index that the
// resolver queries. Every reader pushes CodeVersionSpec records into a SymbolIndex; the resolver
// never knows which format a version came from except through `source`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cg_inject {

struct VersionStore;

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
  /// A perf map's entries that a jitdump of the index describes too (SymbolIndex::Superseded).
  int64_t superseded = 0;
};

/// What a reader knows about one piece of machine code that lived at [start, start + size) for a
/// while: a perf-map line, or a jitdump CODE_LOAD (a CODE_MOVE adds another version with the same
/// function_id). Handed to SymbolIndex::Add, which keeps it as a CodeVersion.
///
/// The text, code and line-table fields are views into anything that lives until Add returns;
/// Add copies what they point to into storage the index owns (code bytes not at all when they
/// lie in bytes the index adopted).
struct CodeVersionSpec {
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
  /// What tells apart definitions of one name where the name has no position (JavaScriptCore's
  /// `#hash`, NameLocation::definition_tag): a view into raw_name that ends it, or empty.
  std::string_view definition_tag;
  uint32_t source = 0;            // index into SymbolIndex::sources()
  uint64_t timestamp = 0;         // jitdump record timestamp; 0 for perf maps
  uint64_t code_index = 0;        // jitdump code_index; 0 for perf maps
  uint32_t function_id = 0;       // the same for every version of one function (moves)
  uint32_t salted_code_tail = 0;  // trailing bytes of `code` that differ from the live code
                                  // (CPython overwrites the last 8 with a marker)
  std::string_view code;          // code bytes when the source has them (jitdump), else empty
  std::span<const std::string_view> files;  // line-table file names, by LineEntry::file_index
  std::span<const LineEntry> lines;         // sorted by addr; empty without a line table
};

/// A code version as a SymbolIndex keeps it (the fields of CodeVersionSpec, read through
/// accessors). 48 bytes, because a 10-million-line perf map is 10 million of these: the name is
/// stored once, without a ` FILE:LINE` suffix that the interned file and line repeat; the file is
/// an interned id; what only jitdumps have (code, line table, timestamps) sits in a side record.
///
/// A CodeVersion exists only inside its index, which hands out references that stay valid (and
/// identify the version) for the index's lifetime. It finds the index's tables from its own
/// address (see sources/version_store.h), so it cannot be copied.
class CodeVersion {
 public:
  CodeVersion(const CodeVersion&) = delete;
  CodeVersion& operator=(const CodeVersion&) = delete;

  uint64_t start() const { return start_; }
  uint64_t size() const { return size_ != kSizeInSide ? size_ : SideSize(); }
  uint64_t end() const { return start() + size(); }
  bool Contains(uint64_t addr) const { return addr >= start_ && addr - start_ < size(); }
  /// The name as the source wrote it (rebuilt when it was stored without its location suffix).
  std::string raw_name() const;
  std::string_view function_name() const;
  /// function_name, or the raw name when the source gave no readable one (such names are stored
  /// whole, so this is a view).
  std::string_view display_name() const;
  std::string_view source_file() const;
  uint32_t source_line() const;
  uint32_t definition_line() const { return line_; }
  uint32_t definition_column() const;
  /// CodeVersionSpec::definition_tag (the stored name's end), or empty.
  std::string_view definition_tag() const;
  uint32_t source() const { return source_; }
  uint32_t function_id() const { return function_id_; }
  /// Position in the index's load order (see SymbolIndex); SymbolIndex::version(load_order())
  /// is this version.
  uint32_t load_order() const;
  uint64_t timestamp() const;
  uint64_t code_index() const;
  uint32_t salted_code_tail() const;
  std::string_view code() const;
  std::span<const std::string_view> files() const;
  std::span<const LineEntry> lines() const;
  /// The line-table row covering `addr`, or null.
  const LineEntry* LookupLine(uint64_t addr) const;
  /// LookupLine in `table` (this version's lines(), kept by a caller that asks for many
  /// addresses: fetching it is a lookup of its own), for an `addr` the version contains.
  static const LineEntry* RowAt(std::span<const LineEntry> table, uint64_t addr);
  /// The name bytes as stored: the raw name, or its head when the location suffix is rebuilt
  /// (for tests).
  std::string_view stored_name() const { return {name_, name_size_}; }
  /// The fields as a spec (for a reader that adds a moved copy). Views into the index, and into
  /// `*raw_name` for the raw name.
  CodeVersionSpec Spec(std::string* raw_name) const;

 private:
  friend class SymbolIndex;
  friend struct VersionStore;
  static constexpr uint32_t kSizeInSide = UINT32_MAX;
  // flags_
  static constexpr uint8_t kHasSide = 1;           // column_or_side_ is a side record id
  static constexpr uint8_t kFunctionInterned = 2;  // function_offset_/size_ hold a string id
  static constexpr uint8_t kSuffixMask = 12;       // how the raw name continues after name_
  static constexpr uint8_t kSuffixSpace = 4;       //   ` FILE:LINE[:COLUMN]`
  static constexpr uint8_t kSuffixColon = 8;       //   `:FILE[:LINE[:COLUMN]]`
  static constexpr uint8_t kSuffixFileUrl = 12;    //   ` file://FILE:LINE[:COLUMN]` (Deno)
  static constexpr uint8_t kHasTag = 16;  // the stored name ends with its definition tag, which
                                          // starts at its last '#'

  CodeVersion() = default;
  uint64_t SideSize() const;

  uint64_t start_ = 0;
  const char* name_ = nullptr;  // the raw name, or its head when flags_ has a suffix kind
  uint32_t name_size_ = 0;
  uint32_t size_ = 0;  // kSizeInSide: the side record has it
  uint32_t function_id_ = 0;
  uint32_t file_ = 0;  // interned id; 0: no file
  uint32_t line_ = 0;  // definition_line (source_line too, unless the side record differs)
  uint32_t column_or_side_ = 0;
  // function_name: name_[offset, offset + size), or interned string (offset << 16 | size).
  uint16_t function_offset_ = 0, function_size_ = 0;
  uint16_t source_ = 0;
  uint8_t flags_ = 0;
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

  /// Registers a source file; returns its index for CodeVersionSpec::source (at most 65535).
  uint32_t AddSource(SymbolSourceInfo info);
  /// Adds a version; `function_id` 0 asks the index to assign a fresh one. Returns the version's
  /// function_id (so a reader can give later moves of the same function the same id). The
  /// spec's views are copied into the index's storage; they need to live only until Add returns.
  uint32_t Add(const CodeVersionSpec& version);
  /// Keeps `bytes` (a whole jitdump) for the index's lifetime and returns a view of it: code
  /// bytes that Add finds inside it are referenced, not copied. (Names are always copied: they
  /// are read for every version, code bytes only for the few the profile runs, so the rest of
  /// an adopted file mapping can leave memory.)
  std::string_view AdoptBuffer(std::string bytes);
  /// The same for `bytes` that `owner` keeps alive (a file mapping); `give_back_pages`, when
  /// given, lets the mapping's pages leave memory (they come back from the file when read).
  void AdoptBytes(std::shared_ptr<const void> owner, std::string_view bytes,
                  std::function<void()> give_back_pages = {});
  /// Lets the pages of every adopted file mapping leave memory: writing the ELF images reads
  /// much of a dump's code (tsc's 14 MB, twice). Safe while other threads read code bytes:
  /// the mappings are private and never written, so their pages come back from the file.
  void GiveBackAdoptedPages() const;
  /// Sorts and builds the lookup structure. Must be called once, after the last Add and before
  /// any query.
  void Finish();

  /// Every version whose range contains `addr`, in load order. O(log n + k).
  std::vector<const CodeVersion*> LookupAll(uint64_t addr) const;
  /// The same into `*out` (cleared first), which keeps its capacity: no allocation per query.
  void LookupAll(uint64_t addr, std::vector<const CodeVersion*>* out) const;
  /// The latest-loaded version containing `addr`, or null.
  const CodeVersion* Lookup(uint64_t addr) const;
  /// Whether another version's range overlaps `version`'s (code reuse, or one function loaded
  /// twice): without one, every address of its range has it as the only candidate.
  bool Overlapped(const CodeVersion& version) const;
  /// The versions nearest to `addr` on either side, for naming code no source lists by where it
  /// lies: `before` ends last at or below `addr` (ties: the latest loaded), `after` starts first
  /// above it (ties: the earliest loaded); null when there is none. Versions containing `addr`
  /// are neither. O(log n).
  struct Neighbors {
    const CodeVersion* before = nullptr;
    const CodeVersion* after = nullptr;
  };
  Neighbors LookupNeighbors(uint64_t addr) const;
  const std::vector<SymbolSourceInfo>& sources() const { return sources_; }
  /// For readers that learn about their source while reading (a jitdump's e_machine).
  SymbolSourceInfo* mutable_source(uint32_t source) { return &sources_.at(source); }
  /// The versions in load order: version(i) for i below size().
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const CodeVersion& version(size_t i) const;

  // For readers that complete versions already added. Requires: no query yet (decoded
  // boundaries are cached on first use).
  /// Gives version `i` code bytes (MoarVM's raw code files pair with perf-map lines), copied
  /// unless they lie in adopted bytes.
  void SetCode(size_t i, std::string_view code);
  /// Gives version `i` a line table, copied into the index's storage (file names interned). For
  /// readers that decide a table only after the version was added (a jitdump's +0x40 quirk is
  /// judged over the whole dump).
  void SetLineTable(size_t i, std::span<const std::string_view> files,
                    std::span<const LineEntry> lines);
  /// Sets version `i`'s source_file and source_line (the line table's first row).
  void SetSourceLine(size_t i, std::string_view file, uint32_t line);
  /// Addresses where two versions with different function_ids overlap (code reuse).
  int64_t reused_ranges() const { return reused_ranges_; }
  /// Whether `version` is a perf-map entry that a jitdump version describes too (Finish): the
  /// same start, size and name, or a nameless jitdump version, which then takes the map's name
  /// and the location it gives. A runtime that writes both (Node with --perf-prof and
  /// --perf-basic-prof, PHP's opcache.jit_debug) describes all its code twice; the jitdump's
  /// version, with its code bytes and lines, is the one lookups return, and the two are no
  /// reuse. A superseded version is no lookup's answer.
  bool Superseded(const CodeVersion& version) const;

 private:
  struct Tree;
  CodeVersion* mutable_version(size_t i);
  // Finish's: marks superseded map entries and takes them out of `nodes` (sorted by start).
  template <typename Node>
  void SupersedeMapEntries(std::vector<Node>* nodes);
  void TakeName(uint32_t dump_version, const CodeVersion& map_version);
  std::vector<SymbolSourceInfo> sources_;
  std::unique_ptr<VersionStore> store_;
  size_t size_ = 0;
  std::unique_ptr<Tree> tree_;
  std::vector<bool> overlapped_;  // by load order (Finish)
  std::vector<bool> superseded_;  // by load order (Finish)
  int64_t reused_ranges_ = 0;
  uint32_t next_function_id_ = 1;
};

}  // namespace cg_inject
