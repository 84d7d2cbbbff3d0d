// Storage that never moves, for names (reader, injector, writer) and what the symbol index keeps
// per code version: names, code bytes, line tables. One allocation per block instead of one per
// string (a 10-million-line perf map made 30 million allocations, each with its own header and
// rounding), and views handed out stay valid for the arena's lifetime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace cg_inject {

/// Bump allocator over blocks (1 MB unless told); nothing is freed before the arena.
class Arena {
 public:
  /// `block_size`: the memory taken at a time (a pool that stays small wants small blocks).
  explicit Arena(size_t block_size = size_t{1} << 20) : block_size_(block_size) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// Room for `size` bytes aligned to `align` (a power of two, at most 16).
  void* Allocate(size_t size, size_t align);
  /// A copy of `bytes`; empty input gives an empty view without allocating.
  std::string_view Copy(std::string_view bytes);
  /// A copy of `items` (trivially copyable, so a byte copy is a copy).
  template <typename T>
  std::span<const T> CopyArray(std::span<const T> items) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 16);
    if (items.empty()) return {};
    T* out = static_cast<T*>(Allocate(items.size_bytes(), alignof(T)));
    for (size_t i = 0; i < items.size(); ++i) new (out + i) T(items[i]);
    return {out, items.size()};
  }
  /// Bytes held in blocks (for tests and benchmarks).
  size_t bytes_reserved() const { return reserved_; }

 private:
  size_t block_size_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
  size_t reserved_ = 0;
};

/// One copy of each distinct string, in an arena, numbered: file names repeat across versions (a
/// module's every function names its file), and a 4-byte id is half a view.
class StringPool {
 public:
  explicit StringPool(Arena* arena) : arena_(arena) {}
  /// The id of `text`, copied in on first sight. The empty string is id 0.
  uint32_t Intern(std::string_view text);
  /// Requires: `id` came from Intern.
  std::string_view Text(uint32_t id) const { return strings_[id]; }
  /// Distinct non-empty strings.
  size_t size() const { return strings_.size() - 1; }

 private:
  Arena* arena_;
  std::vector<std::string_view> strings_{std::string_view()};  // by id; views into *arena_
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace cg_inject
