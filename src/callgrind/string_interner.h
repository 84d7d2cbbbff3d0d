// One stored copy of each distinct name text, for the reader's and the writer's name tables.
// A profile may name millions of functions: one std::string or hash node per name cost an
// allocation and ~50 bytes each, and freeing them at exit was a visible share of a run.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "util/flat_hash_map.h"

namespace cg_inject {

/// Interns texts: ids start at 1 and are dense (0 = none); each text is copied once into blocks
/// that never move, so the views Text() returns stay valid for the interner's lifetime.
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
  /// The stored text of an id from Intern. An empty text still points at a byte: consumers
  /// memcpy from data(), and null is UB even for 0 bytes (callgrind_reader_fuzzer).
  std::string_view Text(uint32_t id) const { return texts_[id]; }
  /// Number of distinct texts.
  size_t size() const { return texts_.size() - 1; }

 private:
  struct Hash {
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;
  size_t left_ = 0;
  std::vector<std::string_view> texts_{std::string_view()};  // by id
  FlatHashMap<std::string_view, uint32_t, Hash> ids_;        // keys are views into blocks_
};

}  // namespace cg_inject
