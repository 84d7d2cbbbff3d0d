// One stored copy of each distinct name text, for the reader's and the writer's name tables.
// A profile may name millions of functions: one std::string or hash node per name cost an
// allocation and ~50 bytes each, and freeing them at exit was a visible share of a run.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "util/flat_hash_map.h"

namespace cg_inject {

/// Interns texts: ids start at 1 and are dense (0 = none); each text is copied once into blocks
/// that never move, so the views Text() returns stay valid for the interner's lifetime. Texts
/// must be shorter than 4 GB (input lines are at most 64 MB, line_reader.h).
///
/// Memory per text: its bytes plus 4, a 16-byte table slot (at 44-88% load) and 8 bytes in
/// the id vector. A string_view key and a view per id were 40; the reader interns every name of
/// a profile, so for 1M functions that was 20 MB more, and more again while the table grows.
class StringInterner {
 public:
  StringInterner() = default;
  StringInterner(const StringInterner&) = delete;
  StringInterner& operator=(const StringInterner&) = delete;

  /// The id of `text`, copying the text on first sight.
  uint32_t Intern(std::string_view text);
  /// The id of `text`, or 0 when it was never interned.
  uint32_t Find(std::string_view text) const {
    const uint32_t* id = ids_.find(text);
    return id == nullptr ? 0 : *id;
  }
  /// The stored text of an id from Intern (0: empty). An empty text still points at a byte:
  /// consumers memcpy from data(), and null is UB even for 0 bytes (callgrind_reader_fuzzer).
  std::string_view Text(uint32_t id) const { return View(records_[id]); }
  /// Number of distinct texts.
  size_t size() const { return records_.size() - 1; }

 private:
  // A stored text is a record: its size as 4 unaligned bytes, then the bytes.
  static std::string_view View(const char* record) {
    uint32_t size;
    std::memcpy(&size, record, 4);
    return std::string_view(record + 4, size);
  }
  // Table keys are records; lookups pass the caller's view.
  struct Hash {
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    size_t operator()(const char* record) const { return (*this)(View(record)); }
  };
  struct Equal {
    bool operator()(const char* record, std::string_view s) const { return View(record) == s; }
    bool operator()(const char* a, const char* b) const { return a == b; }
  };

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;
  size_t left_ = 0;
  static constexpr char kEmptyRecord[4] = {};       // id 0: the empty text
  std::vector<const char*> records_{kEmptyRecord};  // by id
  FlatHashMap<const char*, uint32_t, Hash, Equal> ids_;
};

}  // namespace cg_inject
