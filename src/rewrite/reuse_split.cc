#include "rewrite/reuse_split.h"

#include <algorithm>
#include <map>

namespace cg_inject {

namespace {
__extension__ typedef unsigned __int128 Uint128;  // products of two 64-bit costs
}  // namespace

std::vector<uint64_t> SplitProportionally(uint64_t total, std::span<const uint64_t> weights) {
  std::vector<uint64_t> shares(weights.size(), 0);
  if (weights.empty()) return shares;
  Uint128 sum = 0;
  for (uint64_t w : weights) sum += w;
  uint64_t given = 0;
  for (size_t i = 0; i + 1 < weights.size(); ++i) {
    Uint128 share = sum ? Uint128(total) * weights[i] / sum : Uint128(total) / weights.size();
    shares[i] = uint64_t(share);
    given += shares[i];
  }
  shares.back() = total - given;
  return shares;
}

std::vector<size_t> CalledVersions(uint64_t count, std::span<const uint64_t> weights) {
  std::vector<size_t> order(weights.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (count >= weights.size()) return order;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weights[a] > weights[b]; });
  order.resize(std::max<size_t>(size_t(count), 1));
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<uint64_t> SplitCallCount(uint64_t count, std::span<const uint64_t> weights) {
  std::vector<uint64_t> shares(weights.size(), 0);
  const std::vector<size_t> called = CalledVersions(count, weights);
  std::vector<uint64_t> chosen;
  for (size_t i : called) chosen.push_back(weights[i]);
  std::vector<uint64_t> split = SplitProportionally(count, chosen);
  // Rounding can leave a chosen version 0 calls; each such one takes a call from the largest
  // share, which has more than one (the shares add up to count >= called.size()).
  for (uint64_t& share : split) {
    if (share != 0 || count == 0) continue;
    *std::max_element(split.begin(), split.end()) -= 1;
    share = 1;
  }
  for (size_t k = 0; k < called.size(); ++k) shares[called[k]] = split[k];
  return shares;
}

void VersionsAt(const ReuseSplit& split, uint64_t addr, const FitsFn& fits,
                std::vector<size_t>* out) {
  out->clear();
  for (size_t i = 0; i < split.versions.size(); ++i)
    if (fits(*split.versions[i], addr)) out->push_back(i);
}

ReuseSplit FindReuseSplit(std::span<const CodeVersion* const> candidates,
                          std::span<const BlockLine> lines, size_t events, const FitsFn& fits) {
  ReuseSplit split;
  if (candidates.size() < 2) return split;
  // First-event count per cost-line address, ascending: a version's first address that only it
  // fits is its lowest own instruction, whose count estimates how often it was entered.
  std::map<uint64_t, uint64_t> counts;
  for (const BlockLine& line : lines)
    if (!line.is_call) counts[line.addr] += line.costs.empty() ? 0 : line.costs[0];
  std::vector<bool> active(candidates.size(), false);
  std::vector<uint64_t> entry_counts(candidates.size(), 0);
  for (const auto& [addr, count] : counts) {
    size_t fitting = 0, only = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (fits(*candidates[i], addr)) {
        ++fitting;
        only = i;
      }
    }
    if (fitting == 1 && !active[only]) {
      active[only] = true;
      entry_counts[only] = count;
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!active[i]) continue;
    split.versions.push_back(candidates[i]);
    split.entry_counts.push_back(std::max<uint64_t>(entry_counts[i], 1));
  }
  if (split.versions.size() < 2) return ReuseSplit{};
  split.weights.assign(split.versions.size(), std::vector<uint64_t>(events, 0));
  std::vector<size_t> at;
  std::vector<uint64_t> weights;
  for (const BlockLine& line : lines) {
    VersionsAt(split, line.addr, fits, &at);
    if (at.empty()) continue;
    weights.clear();
    for (size_t i : at) weights.push_back(split.entry_counts[i]);
    for (size_t e = 0; e < events && e < line.costs.size(); ++e) {
      std::vector<uint64_t> shares = SplitProportionally(line.costs[e], weights);
      for (size_t k = 0; k < at.size(); ++k) split.weights[at[k]][e] += shares[k];
    }
  }
  return split;
}

}  // namespace cg_inject
