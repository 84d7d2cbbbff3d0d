// Minimal per-part cost accounting for the injector's invariant checks: the per-event totals, and
// per function (by interned (ob, fl, fn) ids) flags, its self cost and the summed inclusive cost
// of its outgoing calls (for the functions that ask for sums), plus the set of call targets.
// Inclusive cost is computed as callgrind_annotate does: self + calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cg_inject/error.h"
#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

/// A sum of the injector's past 2^64 where it merges records. Thrown without a location: the
/// Injector adds the input's PATH:LINE (the block it was rewriting) on its way out.
class SumOverflow : public InputError {
 public:
  using InputError::InputError;
};

/// A function identity in the injector's name table.
struct FunctionKey {
  uint32_t object = 0, file = 0, function = 0;
  bool operator==(const FunctionKey&) const = default;
};

struct FunctionKeyHash {
  size_t operator()(const FunctionKey& k) const {
    // splitmix64 finalizer over the packed ids: ids are small dense integers, so a weak mix
    // leaves long bucket chains (measured: 9% of the injector's time in bucket walks).
    uint64_t h = (uint64_t{k.object} << 42) ^ (uint64_t{k.file} << 21) ^ uint64_t { k.function };
    h += 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return size_t(h ^ (h >> 31));
  }
};

/// Every sum is checked: one past 2^64 throws InputError instead of wrapping.
class CostAccounting {
 public:
  /// Per function: where its sums are, no allocation of its own (a profile may name millions).
  struct Entry {
    // 1 + the number of its sums in the chunks (SumsOf: self for each event, then the calls'
    // inclusive sum); 0: not summed (all zero). A number, not a pointer: 20 bytes an entry.
    uint32_t sums = 0;
    bool defined : 1 = false;  // has an fn= block
    bool called : 1 = false;   // is a call target
    // For the injector's own bookkeeping of what reached its output.
    bool out_defined : 1 = false, pass_called : 1 = false, added_called : 1 = false;
  };

  void Reset(size_t events);
  /// Starts a block of `key` (blocks may repeat; costs add up). With `sums` false its own costs
  /// and calls count only in the totals: the injector sums every input function, but needs the
  /// sums of few (per function they were the largest part of its memory).
  void Function(const FunctionKey& key, bool sums = true);
  /// Starts a block of `key` whose costs count in the totals only and that needs no entry (an
  /// existing one, made by a call to it, is marked defined).
  void TotalsOnly(const FunctionKey& key);
  /// Adds self cost to the current function and, unless `in_totals` is false (costs already
  /// counted there by AddTotals), to the totals.
  void Cost(std::span<const uint64_t> costs, bool in_totals = true);
  /// Adds a call of the current function; returns the target's entry, and its index in
  /// functions() in `*index` when asked.
  Entry& Call(const FunctionKey& target, std::span<const uint64_t> inclusive,
              uint32_t* index = nullptr);
  /// Adds to the calls' inclusive sum of the current function, without an entry for the target.
  void CallCost(std::span<const uint64_t> inclusive);
  /// Adds to the per-event totals only: for records whose function needs no sums of its own.
  void AddTotals(std::span<const uint64_t> costs);
  /// The entry of `key`, made (all zero) when new.
  Entry& At(const FunctionKey& key) { return Touch(key); }
  /// The entry of `key`, or null.
  Entry* Find(const FunctionKey& key) {
    const uint32_t* i = index_.find(key);
    return i ? &functions_[*i].entry : nullptr;
  }
  const Entry* Find(const FunctionKey& key) const {
    return const_cast<CostAccounting*>(this)->Find(key);
  }
  /// The index in functions() of `key`, or null.
  const uint32_t* IndexOf(const FunctionKey& key) const { return index_.find(key); }
  /// The entry of the current block's function, or null before the first.
  Entry* current() { return current_; }
  /// The index in functions() of the function of the last Function call.
  uint32_t current_index() const { return current_index_; }

  struct FunctionEntry {
    FunctionKey key;
    Entry entry;
  };
  size_t events() const { return events_; }
  const std::vector<uint64_t>& totals() const { return totals_; }
  /// Every function with an entry, in the order of their first sight.
  const ChunkedVector<FunctionEntry>& functions() const { return functions_; }
  /// self + calls of `key`, or all zero when unknown.
  std::vector<uint64_t> Inclusive(const FunctionKey& key) const;
  /// The self cost of a function of functions() (all zero when it is not summed).
  std::span<const uint64_t> Self(const Entry& entry) const {
    return {entry.sums ? SumsOf(entry.sums) : zeros_.data(), events_};
  }
  /// Whether `key` has sums of its own (see Function).
  bool HasSums(const FunctionKey& key) const {
    const Entry* entry = Find(key);
    return entry && entry->sums;
  }

 private:
  Entry& Touch(const FunctionKey& key) { return functions_[TouchIndex(key)].entry; }
  uint32_t TouchIndex(const FunctionKey& key);
  size_t events_ = 0;
  std::vector<uint64_t> totals_;
  std::vector<uint64_t> zeros_;  // events_ zeros: Self of a function without sums
  // Entries in chunks, found through a flat index: adding one never moves the others, so
  // current_ and the references Call and At return stay valid, and no entry has a heap node.
  static FunctionKey KeyOf(const ChunkedVector<FunctionEntry>& t, uint32_t i) { return t[i].key; }
  ChunkedVector<FunctionEntry> functions_;
  KeyIndex<FunctionKey, FunctionKeyHash, ChunkedVector<FunctionEntry>, KeyOf> index_{&functions_};
  // 2 * events_ values per function, in chunks: growing never copies them (a vector's doubling
  // held both copies at once) and Entry::sums stays valid.
  static constexpr uint32_t kChunkFunctions = 4096;
  uint32_t NewSums();
  uint64_t* SumsOf(uint32_t sums) const {
    uint32_t n = sums - 1;
    return sum_chunks_[n / kChunkFunctions].get() + 2 * events_ * (n % kChunkFunctions);
  }
  std::vector<std::unique_ptr<uint64_t[]>> sum_chunks_;
  uint32_t sums_used_ = 0;  // functions with sums
  Entry* current_ = nullptr;
  uint32_t current_index_ = 0;
  Entry totals_only_;                 // current_ of a TotalsOnly block
  uint64_t* current_sums_ = nullptr;  // SumsOf(current_->sums), or null
};

/// The injector's invariants for one part, from the sums of every input record (`in`), of the
/// records it took out of the stream (`removed`) and of what it wrote instead (`added`); records
/// that passed through count in `in` only, so the output is in - removed + added. Checked: the
/// per-event totals are unchanged; every call target that passed through or was written has a
/// block in the output (the entries' out_defined, pass_called, added_called flags) unless it had
/// none in the input either; the inclusive cost of every function the input defines is unchanged
/// unless `exempt` says it was renamed or received moved cost. One message per violation.
std::vector<std::string> FindViolations(const CostAccounting& in, const CostAccounting& removed,
                                        const CostAccounting& added,
                                        const std::function<bool(const FunctionKey&)>& exempt,
                                        const std::function<std::string(const FunctionKey&)>& name);

}  // namespace cg_inject
