// A table indexed by a Callgrind compression id. Callgrind numbers names over the whole run, not
// per file, so real files have sparse ids: a Bun profile defines 5,244 functions with ids up to
// 223,140, the first of them 134,916. Ids near the ones in use live in an array; ids far past
// them in a hash map, so a hostile "(16000000)" costs one entry, not sixteen million.
#pragma once

#include <cstdint>
#include <utility>

#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

/// `T{}` is an unbound slot; callers tell bound from unbound by T's own fields.
template <typename T>
class IdSlots {
 public:
  IdSlots() = default;
  IdSlots(const IdSlots&) = delete;
  IdSlots& operator=(const IdSlots&) = delete;

  /// The slot of `id`, or null when `id` was never bound (a slot in the array may be T{}).
  const T* Find(uint32_t id) const {
    if (id < dense_.size()) return &dense_[id];
    return sparse_.find(id);
  }
  T* Find(uint32_t id) {
    if (id < dense_.size()) return &dense_[id];
    return sparse_.find(id);
  }
  /// The slot of a bound id.
  const T& operator[](uint32_t id) const { return *Find(id); }

  /// The slot of `id`, made if needed, for the caller to fill in.
  T& Bind(uint32_t id) {
    ++bound_;
    if (id < dense_.size()) return dense_[id];
    if (id < 2 * bound_ + 65536) {
      Grow(size_t{id} + id / 2 + 64);
      return dense_[id];
    }
    return sparse_[id];
  }

  void clear() {
    dense_.clear();
    sparse_.clear();
    bound_ = 0;
  }

 private:
  // Find reads only the array for an id below its size, so the ids bound far ahead that the
  // larger array now covers move into it.
  void Grow(size_t size) {
    dense_.resize(size);
    if (sparse_.empty()) return;
    FlatHashMap<uint32_t, T> still_sparse;
    for (auto& entry : sparse_) {
      if (entry.key < size) {
        dense_[entry.key] = std::move(entry.value);
      } else {
        still_sparse[entry.key] = std::move(entry.value);
      }
    }
    sparse_ = std::move(still_sparse);
  }

  ChunkedVector<T> dense_;
  FlatHashMap<uint32_t, T> sparse_;
  uint64_t bound_ = 0;
};

}  // namespace cg_inject
