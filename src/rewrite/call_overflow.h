// Call edges worth more than their whole part: the sign that Callgrind's call tracking broke.
// Callgrind takes any jump into another function's middle for a call and a return it never sees
// for none (PHP's tracing JIT jumps into execute_ex, BEAM switches Erlang processes inside JIT
// code); the calls then carry the inclusive cost of frames that never returned, counted again
// at every level. Self costs stay exact; inclusive costs and the call graph do not, and no
// rewrite can invent the missing returns. This counts such edges so the user is told.
#pragma once

#include <cstdint>
#include <span>

#include "util/flat_hash_map.h"

namespace cg_inject {

/// Sums the first event's inclusive cost per (caller, callee) edge of one part, as
/// callgrind_annotate and KCachegrind add up an edge's calls= lines. Memory grows with the
/// distinct edges of the part, not with its lines.
///
/// Functions come as dense ids the injector already has (its tables' indexes), one per function
/// of the part on each side. Keyed by two (object, file, function) triples an edge took a 32-byte
/// slot, and the 407,000 distinct edges of a generated 100 MB profile 24 MB at the peak of a run
/// that needs 57 MB without them. Now an edge is 8 bytes of ids and a 32-bit sum, in kShards
/// tables chosen by its hash (a table's doubling holds two arrays of one shard at once, not of
/// every edge); the few edges that reach 2^32 - 1 move to a table of 64-bit sums. Exact.
class CallOverflow {
 public:
  /// The caller of calls made before any fn= line.
  static constexpr uint32_t kNoCaller = UINT32_MAX;
  /// Forgets the edges (a new part).
  void Reset();
  /// The calls that follow are made by the function `caller` (a new fn= block).
  void Caller(uint32_t caller) { caller_ = caller; }
  /// A calls= line of the current caller to the function `callee` with `inclusive` cost (every
  /// event).
  void Call(uint32_t callee, std::span<const uint64_t> inclusive);
  /// Edges whose summed inclusive cost exceeds `total` (the part's total of the first event).
  int64_t CountAbove(uint64_t total) const;
  /// Calls `visit(caller, callee)` for every edge with a cost (a zero-cost edge is not kept), in
  /// no particular order.
  template <typename Visit>
  void ForEachEdge(Visit&& visit) const {
    for (const auto& shard : small_)
      for (const auto& slot : shard) visit(slot.key.caller, slot.key.callee);
  }

 private:
  struct Edge {
    uint32_t caller = 0, callee = 0;
    bool operator==(const Edge&) const = default;
  };
  struct EdgeHash {
    size_t operator()(const Edge& edge) const {
      // splitmix64's finalizer: ids are small dense integers (see FunctionKeyHash).
      uint64_t h = (uint64_t{edge.caller} << 32 | edge.callee) + 0x9E3779B97F4A7C15ull;
      h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
      h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
      return size_t(h ^ (h >> 31));
    }
  };
  static constexpr size_t kShards = 64;
  // A small sum of kInLarge: the edge's sum is in large_.
  static constexpr uint32_t kInLarge = UINT32_MAX;
  uint32_t caller_ = kNoCaller;
  // Sums below 2^32 - 1, 12 bytes a slot; the shard is chosen by the low bits of the edge's
  // hash, FlatHashMap places it by the high bits of its own mix.
  FlatHashMap<Edge, uint32_t, EdgeHash> small_[kShards];
  // Saturating sums of the edges past that: one beyond 2^64 stays above.
  FlatHashMap<Edge, uint64_t, EdgeHash> large_;
};

}  // namespace cg_inject
