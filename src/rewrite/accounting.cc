#include "rewrite/accounting.h"

#include <algorithm>

namespace cg_inject {

void CostAccounting::Reset(size_t events) {
  events_ = events;
  totals_.assign(events, 0);
  functions_.clear();
  current_ = nullptr;
}

CostAccounting::Entry& CostAccounting::Touch(const FunctionKey& key) {
  auto [it, inserted] = functions_.try_emplace(key);
  if (inserted) {
    it->second.self.assign(events_, 0);
    it->second.calls.assign(events_, 0);
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
  for (size_t i = 0; i < n; ++i) {
    current_->self[i] += costs[i];
    totals_[i] += costs[i];
  }
}

void CostAccounting::Call(const FunctionKey& target, std::span<const uint64_t> inclusive) {
  if (!current_) return;
  Entry* caller = current_;
  Touch(target);
  size_t n = std::min(inclusive.size(), events_);
  for (size_t i = 0; i < n; ++i) caller->calls[i] += inclusive[i];
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
  for (size_t i = 0; i < events_; ++i) sum[i] = it->second.self[i] + it->second.calls[i];
  return sum;
}

}  // namespace cg_inject
