// An array that only grows (or is cleared), in fixed chunks, for per-function tables that may hold
// millions of entries: growing never copies what is there (a vector's doubling holds the old and
// the new array at once, and moves every entry), elements never move (references stay valid across
// appends), and indexing is a shift and a mask. std::deque has the first two properties, but
// its blocks are 512 bytes (25 entries of 20 bytes), so every index is a division and a walk
// through its iterator arithmetic: KeyIndex compares keys through operator[] on every lookup.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace cg_inject {

template <typename T, size_t kChunkBits = 12>
class ChunkedVector {
 public:
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;

  ChunkedVector() = default;
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunkSize - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunkSize - 1)]; }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if ((size_ & (kChunkSize - 1)) == 0 && (size_ >> kChunkBits) == chunks_.size())
      chunks_.push_back(std::make_unique<T[]>(kChunkSize));
    T& slot = (*this)[size_++];
    slot = T{std::forward<Args>(args)...};
    return slot;
  }
  void push_back(const T& value) { emplace_back(value); }
  /// Grows to `n` entries, the new ones T{} (tables indexed by an id that grows), or shrinks.
  /// Growing allocates only the chunks up to `n`: no slack past it and no copy.
  void resize(size_t n) {
    while ((chunks_.size() << kChunkBits) < n) chunks_.push_back(std::make_unique<T[]>(kChunkSize));
    for (size_t i = size_; i < n; ++i) (*this)[i] = T{};
    size_ = n;
  }

  /// Empties the array; keeps the first chunk, so a table cleared per part does not allocate it
  /// again (emplace_back assigns every entry it hands out).
  void clear() {
    if (chunks_.size() > 1) chunks_.resize(1);
    size_ = 0;
  }

  /// Iteration in index order.
  template <typename Ref, typename Owner>
  class Iterator {
   public:
    Iterator(Owner* owner, size_t i) : owner_(owner), i_(i) {}
    Ref operator*() const { return (*owner_)[i_]; }
    auto operator->() const { return &(*owner_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }

   private:
    Owner* owner_;
    size_t i_;
  };
  using iterator = Iterator<T&, ChunkedVector>;
  using const_iterator = Iterator<const T&, const ChunkedVector>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace cg_inject
