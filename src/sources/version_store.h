// Where a SymbolIndex keeps its versions. CodeVersion records (48 bytes) sit in 1 MiB chunks
// aligned to 1 MiB; each chunk starts with a pointer to the store, so a record finds the names,
// files and side records from its own address, with no pointer of its own (8 bytes x 10 million
// versions). Chunks never move, so references stay valid and the store grows without the copy a
// vector makes (a growing 1.6 GB vector of versions peaked at 1.5 times that).
//
// Measured on a 10-million-line V8 perf map: 160 bytes of CodeVersion plus 48 of name per
// version became 48 plus 23 (the name without its ` FILE:LINE` suffix, which the interned file and
// the line number rebuild exactly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cg_inject/symbols.h"
#include "util/arena.h"

namespace cg_inject {

/// What only some versions have: jitdump fields, sizes of 4 GB or more, a source_line that differs
/// from the definition line. Perf-map versions have none.
struct VersionSide {
  uint64_t size = 0;
  uint64_t timestamp = 0, code_index = 0;
  std::string_view code;
  std::span<const std::string_view> files;
  std::span<const LineEntry> lines;
  uint32_t salted_code_tail = 0;
  uint32_t source_line = 0;
  uint32_t column = 0;
};

struct VersionStore {
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr size_t kHeaderBytes = 64;
  static constexpr size_t kPerChunk = (kChunkBytes - kHeaderBytes) / sizeof(CodeVersion);
  struct ChunkHeader {
    const VersionStore* store;
    size_t first;  // load order of the chunk's first record
  };

  VersionStore() = default;
  ~VersionStore();
  VersionStore(const VersionStore&) = delete;
  VersionStore& operator=(const VersionStore&) = delete;

  /// The store and load order of a record, from its address.
  static const ChunkHeader& HeaderOf(const CodeVersion& v) {
    return *reinterpret_cast<const ChunkHeader*>(reinterpret_cast<uintptr_t>(&v) &
                                                 ~uintptr_t{kChunkBytes - 1});
  }
  CodeVersion& at(size_t i) const {
    return reinterpret_cast<CodeVersion*>(chunks[i / kPerChunk] + kHeaderBytes)[i % kPerChunk];
  }
  /// A new record at load order `i` (= the number of records so far), filled from `spec`.
  CodeVersion* Append(size_t i, const CodeVersionSpec& spec, uint32_t function_id);
  /// The record at load order `i` (an existing one, when below the number of records) filled
  /// anew from `spec`. A side record it had is left unused.
  CodeVersion* Fill(size_t i, const CodeVersionSpec& spec, uint32_t function_id);
  /// The side record of `v`, made on first use (a raw name stored without its suffix is then
  /// stored whole: a side record may change the file and line the suffix is rebuilt from).
  VersionSide& SideOf(CodeVersion* v);

  /// Interned file and function names; id 0 is the empty string.
  uint32_t Intern(std::string_view text) { return strings.Intern(text); }

  bool IsAdopted(std::string_view bytes) const;
  std::string_view Keep(std::string_view bytes) {
    return IsAdopted(bytes) ? bytes : arena.Copy(bytes);
  }
  std::span<const std::string_view> KeepFiles(std::span<const std::string_view> files);
  /// Appends the location suffix of `kind` (CodeVersion::kSuffix*) to `*out`.
  static void AppendSuffix(std::string* out, uint8_t kind, std::string_view file, uint32_t line,
                           uint32_t column);

  std::vector<char*> chunks;  // kChunkBytes each, aligned to kChunkBytes
  Arena arena;
  StringPool strings{&arena};
  std::vector<VersionSide> sides{VersionSide()};  // by id; 0 is no side record
  struct Adopted {
    std::shared_ptr<const void> owner;
    std::string_view bytes;
    std::function<void()> give_back_pages;  // empty for a buffer in memory
  };
  std::vector<Adopted> adopted;

 private:
  std::string suffix_;  // Append's scratch, reused for every version
};

}  // namespace cg_inject
