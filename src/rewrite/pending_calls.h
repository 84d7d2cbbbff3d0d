// Calls into reused JIT code whose target has not had its block yet in this part. Which of the
// versions at a reused address a call enters depends on the target's block (which versions ran
// there, and how often), and that block may come later in the part. Only such calls wait: rare
// (reused addresses), and held at most until the part ends.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rewrite/accounting.h"
#include "rewrite/record_agg.h"

namespace cg_inject {

/// A waiting call. Its site is already placed (in its owner's output function).
struct PendingCall {
  int owner = -1, owner_base = -1;
  CallKey key;  // output site; target and target position still as read
  uint64_t count = 0;
  std::vector<uint64_t> inclusive;
  uint64_t target_addr = 0;
  uint32_t target_suffix = 0;
  bool from_other = false;  // its target is another input function than its caller
  // A misplaced target (Injector::Impl::MisplacedTarget): waits for its real block, not a JIT one.
  bool by_name = false;
};

/// Waiting calls by the input key of their target.
class PendingCalls {
 public:
  /// A new call waiting for `target`'s block, to be filled in.
  PendingCall& Add(const FunctionKey& target) { return calls_[target].emplace_back(); }
  /// The calls waiting for `target` (none, mostly), in the order they came; none wait for it
  /// afterwards.
  std::vector<PendingCall> Take(const FunctionKey& target);
  /// Every waiting call, by target in id order (so the output does not depend on the hash
  /// table's order), then in the order they came; none wait afterwards.
  std::vector<std::pair<FunctionKey, std::vector<PendingCall>>> TakeAll();
  void Clear() { calls_.clear(); }

 private:
  std::unordered_map<FunctionKey, std::vector<PendingCall>, FunctionKeyHash> calls_;
};

}  // namespace cg_inject
