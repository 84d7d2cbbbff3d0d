// What a part's costs add up to, for the reader's summary:/totals: checks and overflow checks.
// Callgrind writes `summary:` in each part's header and `totals:` as the part's last line (see
// valgrind callgrind/dump.c); the spec (cl-format.xml) says totals: "must give the total of all
// cost lines, to allow for a consistency check". A profile cut off by a killed process or a full
// disk lacks totals: and its costs fall short of summary:, which is how the reader notices.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

/// Per-part sums with overflow checks: the per-event total of every cost line, and per function
/// (by interned object/file/function ids) its inclusive cost, self plus outgoing calls, the way
/// callgrind_annotate and the injector's checks add it up. Memory: one entry per distinct
/// function of the part.
class PartTotals {
 public:
  void Reset(size_t events);
  /// Makes (object, file, function) the function later costs and calls add to.
  void Function(uint32_t object, uint32_t file, uint32_t function);
  /// Adds a cost line. Returns false (sums unchanged past the failing event) when a sum would
  /// pass 2^64; *event is then the event index, *inclusive whether it was the function's sum.
  bool AddCost(std::span<const uint64_t> costs, size_t* event, bool* inclusive);
  /// Adds a call's inclusive cost to the current function's inclusive sum; false on overflow.
  bool AddCall(std::span<const uint64_t> costs, size_t* event);

  const std::vector<uint64_t>& sums() const { return sums_; }

 private:
  struct Key {
    uint32_t object, file, function;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (uint64_t{k.object} << 42) ^ (uint64_t{k.file} << 21) ^ uint64_t { k.function };
      h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
      return size_t(h ^ (h >> 31));
    }
  };
  size_t events_ = 0;
  std::vector<uint64_t> sums_;
  // Inclusive sums live in one flat vector (events_ values per function), not one vector per
  // function: a million functions then cost one allocation, not a million. A function is found
  // by its name id first (ids are dense: the reader interns names), costing 16 bytes per
  // function; only a name that recurs with another object or file goes to the hash map.
  ChunkedVector<uint32_t> slot_by_function_;               // slot + 1, 0 = none yet
  std::vector<std::pair<uint32_t, uint32_t>> slot_owner_;  // object, file of each slot
  FlatHashMap<Key, uint32_t, KeyHash> other_slots_;
  std::vector<uint64_t> inclusive_;
  size_t current_ = SIZE_MAX;  // offset of the current function in inclusive_
};

/// Parses the numbers of a `summary:`/`totals:` value (decimal or 0x hex, blank-separated).
/// Missing trailing values are 0. Returns nullopt when a token is not a number or there are
/// more values than `events`.
std::optional<std::vector<uint64_t>> ParseCostList(std::string_view value, size_t events);

/// "1 2 3": the values as a Callgrind cost list.
std::string FormatCostList(std::span<const uint64_t> values);

}  // namespace cg_inject
