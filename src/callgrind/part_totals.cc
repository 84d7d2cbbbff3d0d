// Per-part cost sums for the reader's checks (see part_totals.h).
#include "callgrind/part_totals.h"

#include <algorithm>
#include <charconv>

namespace cg_inject {

void PartTotals::Reset(size_t events) {
  events_ = events;
  sums_.assign(events, 0);
  slot_by_function_.clear();
  slot_owner_.clear();
  other_slots_.clear();
  inclusive_.clear();
  current_ = SIZE_MAX;
}

void PartTotals::Function(uint32_t object, uint32_t file, uint32_t function) {
  if (function >= slot_by_function_.size()) slot_by_function_.resize(size_t{function} + 1);
  uint32_t& by_name = slot_by_function_[function];
  uint32_t slot;
  if (by_name == 0) {
    slot = static_cast<uint32_t>(slot_owner_.size());
    by_name = slot + 1;
    slot_owner_.emplace_back(object, file);
    inclusive_.resize(inclusive_.size() + events_, 0);
  } else if (slot_owner_[by_name - 1] == std::pair(object, file)) {
    slot = by_name - 1;
  } else {
    auto [other, inserted] = other_slots_.try_emplace(Key{object, file, function});
    if (inserted) {
      *other = static_cast<uint32_t>(slot_owner_.size());
      slot_owner_.emplace_back(object, file);
      inclusive_.resize(inclusive_.size() + events_, 0);
    }
    slot = *other;
  }
  current_ = size_t{slot} * events_;
}

bool PartTotals::AddCost(std::span<const uint64_t> costs, size_t* event, bool* inclusive) {
  const size_t n = std::min(costs.size(), events_);
  uint64_t* sums = sums_.data();
  uint64_t* function = current_ == SIZE_MAX ? nullptr : inclusive_.data() + current_;
  // Every line of a profile comes here: add without reporting, and only when some sum would
  // pass 2^64 take the additions back and find the first that does, as the contract says.
  bool overflow = false;
  for (size_t i = 0; i < n; ++i) {
    overflow |= __builtin_add_overflow(sums[i], costs[i], &sums[i]);
    if (function) overflow |= __builtin_add_overflow(function[i], costs[i], &function[i]);
  }
  if (!overflow) return true;
  for (size_t i = 0; i < n; ++i) {  // wrapping subtraction undoes a wrapping addition
    sums[i] -= costs[i];
    if (function) function[i] -= costs[i];
  }
  for (size_t i = 0; i < n; ++i) {
    *event = i;
    *inclusive = false;
    if (__builtin_add_overflow(sums[i], costs[i], &sums[i])) return false;
    if (!function) continue;
    *inclusive = true;
    if (__builtin_add_overflow(function[i], costs[i], &function[i])) return false;
  }
  return true;  // not reached: some addition overflowed above
}

bool PartTotals::AddCall(std::span<const uint64_t> costs, size_t* event) {
  if (current_ == SIZE_MAX) return true;
  size_t n = std::min(costs.size(), events_);
  for (size_t i = 0; i < n; ++i) {
    *event = i;
    if (__builtin_add_overflow(inclusive_[current_ + i], costs[i], &inclusive_[current_ + i]))
      return false;
  }
  return true;
}

std::optional<std::vector<uint64_t>> ParseCostList(std::string_view value, size_t events) {
  std::vector<uint64_t> values;
  size_t i = 0;
  while (i < value.size()) {
    if (value[i] == ' ' || value[i] == '\t') {
      ++i;
      continue;
    }
    size_t end = value.find_first_of(" \t", i);
    if (end == std::string_view::npos) end = value.size();
    std::string_view token = value.substr(i, end - i);
    int base = 10;
    if (token.size() > 2 && token[0] == '0' && token[1] == 'x') {
      token.remove_prefix(2);
      base = 16;
    }
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v, base);
    if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
    values.push_back(v);
    i = end;
  }
  if (values.size() > events) return std::nullopt;
  values.resize(events, 0);
  return values;
}

std::string FormatCostList(std::span<const uint64_t> values) {
  std::string out;
  for (uint64_t v : values) {
    if (!out.empty()) out += ' ';
    out += std::to_string(v);
  }
  return out;
}

}  // namespace cg_inject
