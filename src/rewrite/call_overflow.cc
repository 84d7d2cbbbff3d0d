#include "rewrite/call_overflow.h"

#include <limits>

namespace cg_inject {

void CallOverflow::Reset() {
  edges_.clear();
  caller_ = {};
}

void CallOverflow::Call(const FunctionKey& callee, std::span<const uint64_t> inclusive) {
  if (inclusive.empty() || inclusive[0] == 0) return;  // a zero-cost edge can exceed nothing
  uint64_t& sum = *edges_.try_emplace(Edge{caller_, callee}).first;
  sum = sum > std::numeric_limits<uint64_t>::max() - inclusive[0]
            ? std::numeric_limits<uint64_t>::max()
            : sum + inclusive[0];
}

int64_t CallOverflow::CountAbove(uint64_t total) const {
  int64_t count = 0;
  for (const auto& slot : edges_)
    if (slot.value > total) ++count;
  return count;
}

}  // namespace cg_inject
