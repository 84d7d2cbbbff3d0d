// Call edges worth more than their whole part: the sign that Callgrind's call tracking broke.
// Callgrind takes any jump into another function's middle for a call and a return it never sees
// for none (PHP's tracing JIT jumps into execute_ex, BEAM switches Erlang processes inside JIT
// code); the calls then carry the inclusive cost of frames that never returned, counted again
// at every level. Self costs stay exact; inclusive costs and the call graph do not, and no
// rewrite can invent the missing returns. This counts such edges so the user is told.
#pragma once

#include <cstdint>
#include <span>

#include "rewrite/accounting.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

/// Sums the first event's inclusive cost per (caller, callee) edge of one part, as
/// callgrind_annotate and KCachegrind add up an edge's calls= lines. Memory grows with the
/// distinct edges of the part, not with its lines.
class CallOverflow {
 public:
  /// Forgets the edges (a new part).
  void Reset();
  /// The calls that follow are made by `caller` (a new fn= block).
  void Caller(const FunctionKey& caller) { caller_ = caller; }
  /// A calls= line of the current caller to `callee` with `inclusive` cost (every event).
  void Call(const FunctionKey& callee, std::span<const uint64_t> inclusive);
  /// Edges whose summed inclusive cost exceeds `total` (the part's total of the first event).
  int64_t CountAbove(uint64_t total) const;

 private:
  struct Edge {
    FunctionKey caller, callee;
    bool operator==(const Edge&) const = default;
  };
  struct EdgeHash {
    size_t operator()(const Edge& e) const {
      FunctionKeyHash h;
      return h(e.caller) ^ (h(e.callee) * 31);
    }
  };
  FunctionKey caller_;
  FlatHashMap<Edge, uint64_t, EdgeHash> edges_;  // saturating sums: one beyond 2^64 stays above
};

}  // namespace cg_inject
