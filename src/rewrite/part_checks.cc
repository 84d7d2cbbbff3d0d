// The end of each part: the invariants (per-event totals, call targets, inclusive cost of every
// function no source covers) and the statistics. Rules: include/cg_inject/inject.h.
#include <algorithm>
#include <string>

#include "resolve/jit_name.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

namespace {
constexpr size_t kMaxViolationMessages = 20;

std::string FormatCosts(std::span<const uint64_t> costs) {
  std::string out;
  for (uint64_t c : costs) {
    if (!out.empty()) out += ' ';
    out += std::to_string(c);
  }
  return out;
}
}  // namespace

void Injector::Impl::Violation(std::string message) {
  ++violations_total_;
  if (stats_.invariant_violations.size() < kMaxViolationMessages)
    stats_.invariant_violations.push_back("part " + std::to_string(part_number_) + ": " +
                                          std::move(message));
}

void Injector::Impl::CheckInvariants() {
  if (in_acc_.totals() != out_acc_.totals())
    Violation("per-event totals changed: " + FormatCosts(in_acc_.totals()) + " -> " +
              FormatCosts(out_acc_.totals()));
  for (const FunctionKey& key : out_acc_.MissingTargets()) {
    auto it = in_acc_.functions().find(key);
    if (it != in_acc_.functions().end() && !it->second.defined) continue;  // missing before too
    Violation("call target " + std::string(names_.Text(key.function)) + " has no function block");
  }
  for (const auto& [key, entry] : in_acc_.functions()) {
    if (!entry.defined) continue;
    auto in = in_index_.find(key);
    if (in != in_index_.end() && in_functions_[size_t(in->second)].jit) continue;
    auto out = out_index_.find(key);
    if (out != out_index_.end() && out_[size_t(out->second)].moved_in) continue;
    std::vector<uint64_t> before = in_acc_.Inclusive(key);
    std::vector<uint64_t> after = out_acc_.Inclusive(key);
    if (before != after)
      Violation("inclusive cost of " + std::string(names_.Text(key.function)) +
                " changed: " + FormatCosts(before) + " -> " + FormatCosts(after));
  }
}

void Injector::Impl::CollectStats() {
  auto unnamed = [&](const FunctionKey& key) {
    JitName jit;
    return IsUnknownObject(names_.Text(key.object)) &&
           ParseJitFunctionName(names_.Text(key.function), &jit);
  };
  if (events_ == 0) return;
  stats_.total_cost += in_acc_.totals()[0];
  for (const auto& [key, entry] : in_acc_.functions())
    if (unnamed(key)) stats_.unnamed_jit_cost_before += in_acc_.Self(entry)[0];
  for (const auto& [key, entry] : out_acc_.functions()) {
    if (!unnamed(key)) continue;
    uint64_t self = out_acc_.Self(entry)[0];
    stats_.unnamed_jit_cost_after += self;
    if (self > 0) unresolved_cost_[std::string(names_.Text(key.function))] += self;
  }
}

InjectStats Injector::Impl::stats() const {
  InjectStats s = stats_;
  s.functions_resolved = int64_t(resolved_functions_.size());
  s.reused_addresses_seen = chooser_.reused_addresses();
  s.ambiguous_choices = chooser_.ambiguous_choices();
  std::vector<InjectStats::Unresolved> top;
  for (const auto& [name, cost] : unresolved_cost_) {
    JitName jit;
    ParseJitFunctionName(name, &jit);
    top.push_back({jit.addr, name, cost});
  }
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.cost != b.cost ? a.cost > b.cost : a.addr < b.addr;
  });
  if (top.size() > size_t(std::max(0, options_.top_unresolved)))
    top.resize(size_t(std::max(0, options_.top_unresolved)));
  s.top_unresolved = std::move(top);
  return s;
}

}  // namespace cg_inject
