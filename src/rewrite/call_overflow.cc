#include "rewrite/call_overflow.h"

#include <limits>

namespace cg_inject {

void CallOverflow::Reset() {
  for (auto& shard : small_) shard.clear();
  large_.clear();
  caller_ = kNoCaller;
}

namespace {
uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}
}  // namespace

void CallOverflow::Call(uint32_t callee, std::span<const uint64_t> inclusive) {
  if (inclusive.empty() || inclusive[0] == 0) return;  // a zero-cost edge can exceed nothing
  const Edge edge{caller_, callee};
  uint32_t& small = *small_[EdgeHash{}(edge) % kShards].try_emplace(edge).first;
  if (small != kInLarge) {
    uint64_t sum = SaturatingAdd(small, inclusive[0]);
    if (sum < kInLarge) {
      small = uint32_t(sum);
      return;
    }
    small = kInLarge;
    large_[edge] = sum;
    return;
  }
  uint64_t& sum = large_[edge];
  sum = SaturatingAdd(sum, inclusive[0]);
}

int64_t CallOverflow::CountAbove(uint64_t total) const {
  int64_t count = 0;
  for (const auto& shard : small_)
    for (const auto& slot : shard)
      if (slot.value != kInLarge && slot.value > total) ++count;
  for (const auto& slot : large_)
    if (slot.value > total) ++count;
  return count;
}

}  // namespace cg_inject
