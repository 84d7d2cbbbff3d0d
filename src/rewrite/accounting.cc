#include "rewrite/accounting.h"

#include <algorithm>

#include "cg_inject/error.h"

namespace cg_inject {
namespace {

// The reader refuses input whose part totals or per-function inclusive costs pass 2^64, so the
// input side cannot wrap; the output side can, when the pieces of one JIT function and their
// call edges are merged. A wrapped sum would make the invariant checks compare wrapped numbers,
// so every sum is checked.
void Add(uint64_t* sum, uint64_t value) {
  if (__builtin_add_overflow(*sum, value, sum)) {
    throw InputError(
        "expected cost sums below 2^64, got an overflow adding up the merged pieces of one "
        "function (the profile's costs are too large to merge)");
  }
}

}  // namespace

void CostAccounting::Reset(size_t events) {
  events_ = events;
  totals_.assign(events, 0);
  functions_.clear();
  sums_.clear();
  current_ = nullptr;
}

CostAccounting::Entry& CostAccounting::Touch(const FunctionKey& key) {
  auto [it, inserted] = functions_.try_emplace(key);
  if (inserted) {
    it->second.sums = sums_.size();
    sums_.resize(sums_.size() + 2 * events_, 0);
  }
  return it->second;
}

void CostAccounting::Function(const FunctionKey& key) {
  current_ = &Touch(key);
  current_->defined = true;
}

void CostAccounting::Cost(std::span<const uint64_t> costs) {
  if (!current_) return;
  size_t n = std::min(costs.size(), events_);
  uint64_t* self = sums_.data() + current_->sums;
  for (size_t i = 0; i < n; ++i) {
    Add(&self[i], costs[i]);
    Add(&totals_[i], costs[i]);
  }
}

void CostAccounting::Call(const FunctionKey& target, std::span<const uint64_t> inclusive) {
  if (!current_) return;
  Entry* caller = current_;
  Touch(target);  // may grow sums_: index it afterwards
  size_t n = std::min(inclusive.size(), events_);
  uint64_t* calls = sums_.data() + caller->sums + events_;
  for (size_t i = 0; i < n; ++i) Add(&calls[i], inclusive[i]);
}

std::vector<FunctionKey> CostAccounting::MissingTargets() const {
  std::vector<FunctionKey> missing;
  for (const auto& [key, entry] : functions_)
    if (!entry.defined) missing.push_back(key);
  return missing;
}

std::vector<uint64_t> CostAccounting::Inclusive(const FunctionKey& key) const {
  std::vector<uint64_t> sum(events_, 0);
  auto it = functions_.find(key);
  if (it == functions_.end()) return sum;
  const uint64_t* sums = sums_.data() + it->second.sums;
  for (size_t i = 0; i < events_; ++i) {
    sum[i] = sums[i];
    Add(&sum[i], sums[events_ + i]);
  }
  return sum;
}

}  // namespace cg_inject
