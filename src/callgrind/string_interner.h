// One stored copy of each distinct name text, for the reader's and the writer's name tables.
// A profile may name millions of functions: one std::string or hash node per name cost an
// allocation and ~50 bytes each, and freeing them at exit was a visible share of a run.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "cg_inject/profile.h"
#include "util/arena.h"
#include "util/flat_hash_map.h"
#include "util/text_hash.h"

namespace cg_inject {

/// Interns texts: ids start at 1 and are dense (0 = none); each text is copied once into blocks
/// that never move, so the views handed out stay valid for the interner's lifetime. Texts must
/// be shorter than 4 GB (input lines are at most 64 MB, line_reader.h).
///
/// Memory per text: its bytes plus 8, and an 8-byte table slot (at 44-88% load). A string_view
/// key and a view per id were 40; the reader interns every name of a profile, so for 1M
/// functions that was 30 MB more, and more again while the table grows.
class StringInterner {
 public:
  StringInterner() = default;
  StringInterner(const StringInterner&) = delete;
  StringInterner& operator=(const StringInterner&) = delete;

  /// The id of `text` and the stored copy, made on first sight.
  Name Intern(std::string_view text);
  /// The id and copy of `text`, or Name{} when it was never interned.
  Name Find(std::string_view text) const {
    const char* const* record = records_.find_key(text);
    return record == nullptr ? Name{} : NameOf(*record);
  }
  /// Number of distinct texts.
  size_t size() const { return records_.size(); }

 private:
  // A stored text is a record: its id and its size as 4 unaligned bytes each, then the bytes.
  // An empty text still points at a byte: consumers memcpy from data(), and null is UB even for
  // 0 bytes (callgrind_reader_fuzzer).
  static uint32_t Field(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static std::string_view View(const char* record) {
    return std::string_view(record + 8, Field(record + 4));
  }
  static Name NameOf(const char* record) { return Name{Field(record), View(record)}; }
  // Table keys are records; lookups pass the caller's view.
  struct Hash {
    size_t operator()(std::string_view s) const { return TextHash{}(s); }
    size_t operator()(const char* record) const { return (*this)(View(record)); }
  };
  struct Equal {
    bool operator()(const char* record, std::string_view s) const { return View(record) == s; }
    bool operator()(const char* a, const char* b) const { return a == b; }
  };

  // Blocks of 256 KB: few allocations, little slack at the end of a small profile.
  Arena records_storage_{size_t{256} << 10};
  // A set of records: 8 bytes per slot.
  FlatHashMap<const char*, NoValue, Hash, Equal> records_;
};

}  // namespace cg_inject
