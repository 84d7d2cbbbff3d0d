// Calls waiting for their target's block (see pending_calls.h).
#include "rewrite/pending_calls.h"

#include <algorithm>
#include <tuple>

namespace cg_inject {

std::vector<PendingCall> PendingCalls::Take(const FunctionKey& target) {
  auto it = calls_.find(target);
  if (it == calls_.end()) return {};
  std::vector<PendingCall> calls = std::move(it->second);
  calls_.erase(it);
  return calls;
}

std::vector<std::pair<FunctionKey, std::vector<PendingCall>>> PendingCalls::TakeAll() {
  std::vector<std::pair<FunctionKey, std::vector<PendingCall>>> all;
  all.reserve(calls_.size());
  for (auto& [key, calls] : calls_) all.emplace_back(key, std::move(calls));
  calls_.clear();
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.object, a.first.file, a.first.function) <
           std::tie(b.first.object, b.first.file, b.first.function);
  });
  return all;
}

}  // namespace cg_inject
