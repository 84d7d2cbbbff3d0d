// Aggregation of profile records by position: the injector sums cost lines at one position and
// calls/jumps from one site to one target, so memory grows with distinct positions, not lines.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "cg_inject/error.h"
#include "cg_inject/profile.h"
#include "rewrite/accounting.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

inline uint64_t MixHash(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 27);
}

inline uint64_t HashPosition(const Position& p) {
  uint64_t h = 0;
  for (uint64_t v : p.values) h = MixHash(h, v);
  return h;
}

/// Column by column (std::array's operator< calls memcmp for each comparison of a sort).
inline bool PositionLess(const Position& a, const Position& b) {
  static_assert(kMaxPositionColumns == 3);
  if (a.values[0] != b.values[0]) return a.values[0] < b.values[0];
  if (a.values[1] != b.values[1]) return a.values[1] < b.values[1];
  return a.values[2] < b.values[2];
}

/// A cost line's key: position plus its fi=/fe= file id.
struct CostKey {
  Position pos;
  uint32_t file = 0;
  bool operator==(const CostKey&) const = default;
};
struct CostKeyHash {
  size_t operator()(const CostKey& k) const { return size_t(MixHash(HashPosition(k.pos), k.file)); }
};

/// A summed cost line as RecordAgg's table keeps it: its key, and its costs' place in the
/// CostPool counted in cost vectors, in the padding the key has anyway. 32 bytes a slot instead
/// of 40 with a separate value: the largest block of the tsc capture summed 133,747 lines in a
/// table of 10 MB (15 MB while it grew).
struct CostSlot {
  Position pos;
  uint32_t file = 0;
  uint32_t vector = 0;  // CostPool offset / events
};
static_assert(sizeof(CostSlot) == 32);
/// Hashes and compares a CostSlot as the CostKey it stands for.
struct CostSlotHash {
  size_t operator()(const CostKey& k) const { return CostKeyHash{}(k); }
  size_t operator()(const CostSlot& s) const { return CostKeyHash{}(CostKey{s.pos, s.file}); }
};
struct CostSlotEqual {
  bool operator()(const CostSlot& a, const CostKey& b) const {
    return a.file == b.file && a.pos == b.pos;
  }
  bool operator()(const CostSlot& a, const CostSlot& b) const {
    return a.file == b.file && a.pos == b.pos;
  }
};

struct CallKey {
  Position site;
  uint32_t site_file = 0;
  FunctionKey target;
  Position target_pos;
  bool operator==(const CallKey&) const = default;
};
struct CallKeyHash {
  size_t operator()(const CallKey& k) const {
    uint64_t h = MixHash(HashPosition(k.site), k.site_file);
    h = MixHash(h, FunctionKeyHash()(k.target));
    return size_t(MixHash(h, HashPosition(k.target_pos)));
  }
};
struct CallValue {
  uint64_t count = 0;
  size_t inclusive = 0;  // offset in the CostPool
  // The target is a function the injector named (a JIT OutFunction): known where the call is
  // added, so writing it needs no lookup of the target by key.
  bool named_target = false;
};

struct JumpKey {
  Position site;
  uint32_t site_file = 0;
  Position target;
  uint32_t target_file = 0, target_function = 0;
  bool conditional = false;
  bool operator==(const JumpKey&) const = default;
};
struct JumpKeyHash {
  size_t operator()(const JumpKey& k) const {
    uint64_t h = MixHash(HashPosition(k.site), k.site_file);
    h = MixHash(h, HashPosition(k.target));
    h = MixHash(h, (uint64_t{k.target_file} << 32) | k.target_function);
    return size_t(MixHash(h, k.conditional));
  }
};
struct JumpValue {
  uint64_t followed = 0, executed = 0;
};

/// `*sum += value`, throwing SumOverflow instead of wrapping past 2^64: merging call edges or
/// jumps can pass it even when no input sum does (the reader checks those).
inline void AddChecked(uint64_t* sum, uint64_t value) {
  if (__builtin_add_overflow(*sum, value, sum)) {
    throw SumOverflow(
        "expected cost and count sums below 2^64, got an overflow merging the records of one "
        "function (the profile's counts are too large to merge)");
  }
}

/// Empties a per-block vector for the next block. One that a large block grew gives its memory
/// back: kept, it would hold the largest block's size for the rest of the run.
template <typename T>
void ClearForNextBlock(std::vector<T>* v) {
  constexpr size_t kKeptBytes = 256 << 10;  // what the common small blocks need, many times over
  if (v->capacity() * sizeof(T) > kKeptBytes) {
    std::vector<T>().swap(*v);
  } else {
    v->clear();
  }
}

/// Cost vectors of one block, `events` values each, addressed by offset. Offsets stay valid as
/// the pool grows (pointers do not).
class CostPool {
 public:
  void Reset(size_t events) {
    events_ = events;
    ClearForNextBlock(&data_);
  }
  // Value by value, not resize(n, 0) or insert: a profile has one to a few events, and the
  // calls to memset and memmove cost more than the values (tsc's capture: 359,000 new lines,
  // 43M of the injector thread's 1.9G instructions in memset).
  size_t Alloc() {
    size_t offset = data_.size();
    for (size_t i = 0; i < events_; ++i) data_.push_back(0);
    return offset;
  }
  /// Alloc, filled with `costs` (a JIT block's line, kept as read; a new summed line).
  size_t Append(std::span<const uint64_t> costs) {
    size_t offset = data_.size();
    size_t n = std::min(costs.size(), events_);
    for (size_t i = 0; i < n; ++i) data_.push_back(costs[i]);
    for (size_t i = n; i < events_; ++i) data_.push_back(0);
    return offset;
  }
  void Add(size_t offset, std::span<const uint64_t> costs) {
    size_t n = std::min(costs.size(), events_);
    for (size_t i = 0; i < n; ++i) AddChecked(&data_[offset + i], costs[i]);
  }
  std::span<const uint64_t> Get(size_t offset) const { return {data_.data() + offset, events_}; }
  /// An offset counted in cost vectors (every offset is a multiple of `events`), and back.
  uint32_t VectorAt(size_t offset) const { return events_ ? uint32_t(offset / events_) : 0; }
  size_t OffsetOf(uint32_t vector) const { return size_t{vector} * events_; }
  uint64_t First(size_t offset) const { return events_ ? data_[offset] : 0; }
  size_t events() const { return events_; }
  size_t size() const { return data_.size(); }  // the offset the next Alloc returns

 private:
  size_t events_ = 0;
  std::vector<uint64_t> data_;
};

/// Records summed by key. Costs and inclusive costs live in a CostPool.
struct RecordAgg {
  FlatHashMap<CostSlot, NoValue, CostSlotHash, CostSlotEqual> costs;
  FlatHashMap<CallKey, CallValue, CallKeyHash> calls;
  FlatHashMap<JumpKey, JumpValue, JumpKeyHash> jumps;

  bool empty() const { return costs.empty() && calls.empty() && jumps.empty(); }
  /// Empties the tables for the next block. clear() visits every slot, so a table that one
  /// large block grew is dropped instead.
  void Clear() {
    ClearTable(&costs);
    ClearTable(&calls);
    ClearTable(&jumps);
  }
  void AddCost(CostPool* pool, const CostKey& key, std::span<const uint64_t> costs_in) {
    auto [slot, inserted] =
        costs.insert_as(key, CostSlot{key.pos, key.file, pool->VectorAt(pool->size())});
    if (inserted) {
      pool->Append(costs_in);  // at the offset the slot names; nothing to add to yet
    } else {
      pool->Add(pool->OffsetOf(slot->key.vector), costs_in);
    }
  }
  /// Calls `f(pos, file, offset)` for each summed cost line, in the table's order.
  template <typename F>
  void ForEachCost(const CostPool& pool, F&& f) const {
    for (const auto& entry : costs)
      f(entry.key.pos, entry.key.file, pool.OffsetOf(entry.key.vector));
  }
  void AddCall(CostPool* pool, const CallKey& key, uint64_t count,
               std::span<const uint64_t> inclusive, bool named_target = false) {
    auto [value, inserted] = calls.try_emplace(key);
    if (inserted) {
      value->inclusive = pool->Alloc();
      value->named_target = named_target;  // the same key, the same target
    }
    AddChecked(&value->count, count);
    pool->Add(value->inclusive, inclusive);
  }
  void AddJump(const JumpKey& key, uint64_t followed, uint64_t executed) {
    JumpValue& v = jumps[key];
    AddChecked(&v.followed, followed);
    AddChecked(&v.executed, executed);
  }

 private:
  template <typename Table>
  static void ClearTable(Table* table) {
    if (table->empty()) return;
    if (table->capacity() > 1024) {
      *table = Table();
    } else {
      table->clear();
    }
  }
};

}  // namespace cg_inject
