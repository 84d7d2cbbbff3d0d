#include "rewrite/accounting.h"

#include <algorithm>

#include "callgrind/part_totals.h"
#include "cg_inject/error.h"

namespace cg_inject {
namespace {

// The reader refuses input whose part totals or per-function inclusive costs pass 2^64, so the
// input side cannot wrap; the output side can, when the pieces of one JIT function and their
// call edges are merged. A wrapped sum would make the invariant checks compare wrapped numbers,
// so every sum is checked.
[[noreturn, gnu::noinline, gnu::cold]] void ThrowSumOverflow() {
  throw SumOverflow(
      "expected cost sums below 2^64, got an overflow adding up the merged pieces of one "
      "function (the profile's costs are too large to merge)");
}

// Inline, the throw out of line: every record of a profile adds to two or three of these sums.
inline void Add(uint64_t* sum, uint64_t value) {
  if (__builtin_add_overflow(*sum, value, sum)) [[unlikely]]
    ThrowSumOverflow();
}

}  // namespace

void CostAccounting::Reset(size_t events) {
  events_ = events;
  totals_.assign(events, 0);
  zeros_.assign(events, 0);
  index_.clear();
  functions_.clear();
  sum_chunks_.clear();
  sums_used_ = 0;
  current_ = nullptr;
  current_sums_ = nullptr;
}

uint32_t CostAccounting::TouchIndex(const FunctionKey& key) {
  auto [index, inserted] = index_.insert(key, uint32_t(functions_.size()));
  // Sums come with the first block (Function): a call target that never has one needs none.
  if (inserted) functions_.emplace_back(FunctionEntry{key, Entry{}});
  return index;
}

uint32_t CostAccounting::NewSums() {
  if (sums_used_ % kChunkFunctions == 0)
    sum_chunks_.push_back(std::make_unique<uint64_t[]>(kChunkFunctions * 2 * events_));  // zeroed
  return ++sums_used_;
}

void CostAccounting::Function(const FunctionKey& key, bool sums) {
  current_index_ = TouchIndex(key);
  current_ = &functions_[current_index_].entry;
  current_->defined = true;
  if (sums && !current_->sums) current_->sums = NewSums();
  current_sums_ = current_->sums ? SumsOf(current_->sums) : nullptr;
}

void CostAccounting::TotalsOnly(const FunctionKey& key) {
  if (Entry* entry = Find(key)) entry->defined = true;
  totals_only_ = Entry{};
  current_ = &totals_only_;
  current_sums_ = nullptr;
}

void CostAccounting::Cost(std::span<const uint64_t> costs, bool in_totals) {
  if (!current_) return;
  size_t n = std::min(costs.size(), events_);
  if (uint64_t* self = current_sums_)
    for (size_t i = 0; i < n; ++i) Add(&self[i], costs[i]);
  if (in_totals)
    for (size_t i = 0; i < n; ++i) Add(&totals_[i], costs[i]);
}

CostAccounting::Entry& CostAccounting::Call(const FunctionKey& target,
                                            std::span<const uint64_t> inclusive, uint32_t* index) {
  uint32_t i = TouchIndex(target);
  if (index != nullptr) *index = i;
  Entry& callee = functions_[i].entry;
  callee.called = true;
  CallCost(inclusive);
  return callee;
}

void CostAccounting::CallCost(std::span<const uint64_t> inclusive) {
  if (!current_sums_) return;
  size_t n = std::min(inclusive.size(), events_);
  uint64_t* calls = current_sums_ + events_;
  for (size_t i = 0; i < n; ++i) Add(&calls[i], inclusive[i]);
}

void CostAccounting::AddTotals(std::span<const uint64_t> costs) {
  size_t n = std::min(costs.size(), events_);
  for (size_t i = 0; i < n; ++i) Add(&totals_[i], costs[i]);
}

std::vector<uint64_t> CostAccounting::Inclusive(const FunctionKey& key) const {
  std::vector<uint64_t> sum(events_, 0);
  const Entry* entry = Find(key);
  if (!entry || !entry->sums) return sum;
  const uint64_t* sums = SumsOf(entry->sums);
  for (size_t i = 0; i < events_; ++i) {
    sum[i] = sums[i];
    Add(&sum[i], sums[events_ + i]);
  }
  return sum;
}

namespace {

// in - removed + added, per event: what the output holds.
std::vector<uint64_t> After(std::vector<uint64_t> in, std::span<const uint64_t> removed,
                            std::span<const uint64_t> added) {
  for (size_t i = 0; i < in.size(); ++i) in[i] = in[i] - removed[i] + added[i];
  return in;
}

}  // namespace

std::vector<std::string> FindViolations(
    const CostAccounting& in, const CostAccounting& removed, const CostAccounting& added,
    const std::function<bool(const FunctionKey&)>& exempt,
    const std::function<std::string(const FunctionKey&)>& name) {
  std::vector<std::string> violations;
  if (removed.totals() != added.totals())
    violations.push_back("per-event totals changed: " + FormatCostList(in.totals()) + " -> " +
                         FormatCostList(After(in.totals(), removed.totals(), added.totals())));
  for (const auto& [key, entry] : in.functions()) {
    bool missing_before = entry.called && !entry.defined;
    if (!entry.out_defined && !missing_before && (entry.added_called || entry.pass_called))
      violations.push_back("call target " + name(key) + " has no function block");
  }
  // Only functions with records taken out or written can have changed.
  auto check_inclusive = [&](const FunctionKey& key) {
    const CostAccounting::Entry* entry = in.Find(key);
    if (!entry || !entry->defined || exempt(key)) return;
    std::vector<uint64_t> taken = removed.Inclusive(key);
    std::vector<uint64_t> given = added.Inclusive(key);
    if (taken == given) return;
    if (!entry->sums) {  // the input's own sum was not kept: say what moved
      violations.push_back("inclusive cost of " + name(key) + " changed: " + FormatCostList(taken) +
                           " taken out, " + FormatCostList(given) + " written instead");
      return;
    }
    std::vector<uint64_t> before = in.Inclusive(key);
    violations.push_back("inclusive cost of " + name(key) + " changed: " + FormatCostList(before) +
                         " -> " + FormatCostList(After(before, taken, given)));
  };
  for (const auto& [key, entry] : removed.functions()) check_inclusive(key);
  for (const auto& [key, entry] : added.functions())
    if (!removed.Find(key)) check_inclusive(key);
  return violations;
}

}  // namespace cg_inject
