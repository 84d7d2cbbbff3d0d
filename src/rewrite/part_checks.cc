// The end of each part: the invariants (per-event totals, call targets, inclusive cost of every
// function no source covers) and the statistics. Rules: include/cg_inject/inject.h.
#include <algorithm>
#include <string>

#include "resolve/jit_name.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

namespace {
constexpr size_t kMaxViolationMessages = 20;
}  // namespace

void Injector::Impl::Violation(std::string message) {
  ++violations_total_;
  if (stats_.invariant_violations.size() < kMaxViolationMessages)
    stats_.invariant_violations.push_back("part " + std::to_string(part_number_) + ": " +
                                          std::move(message));
}

void Injector::Impl::CheckInvariants() {
  auto exempt = [&](const FunctionKey& key) {
    // JIT functions are renamed; functions that received JIT blocks' object code gain cost.
    int in = in_.Find(key);
    if (in >= 0 && in_[in].jit) return true;
    int out = out_.Find(key);
    return out >= 0 && out_[out].moved_in;
  };
  auto name = [&](const FunctionKey& key) { return std::string(names_.Text(key.function)); };
  for (std::string& message : FindViolations(in_acc_, removed_acc_, added_acc_, exempt, name))
    Violation(std::move(message));
  for (const OutFunction& f : out_)
    if (f.called && !f.emitted) Violation("call target " + name(f.key) + " has no function block");
}

void Injector::Impl::CollectStats() {
  auto unnamed = [&](const FunctionKey& key) {
    if (!in_.UnknownObject(key.object) || !in_.JitLooking(key.function)) return false;
    // A real object's stub that Callgrind put in `???` (a PLT slot in .plt.got) is no JIT code,
    // named or not (issue 23 item 7).
    JitName jit;
    return ParseJitFunctionName(names_.Text(key.function), &jit) && !objects_.StubAt(jit.addr);
  };
  auto self_in = [](const CostAccounting& acc, const FunctionKey& key) -> uint64_t {
    const CostAccounting::Entry* entry = acc.Find(key);
    return entry ? acc.Self(*entry)[0] : 0;
  };
  for (const OutFunction& f : out_) {
    if (f.jit && f.emitted) ++stats_.functions_resolved;
    if (f.ambiguous && f.emitted) ++stats_.ambiguous_functions;
  }
  if (events_ == 0) return;
  stats_.total_cost += in_acc_.totals()[0];
  stats_.overflowing_call_edges += call_overflow_.CountAbove(in_acc_.totals()[0]);
  stats_.unnamed_jit_cost_before += resolved_jit_cost_before_;
  for (const auto& [key, entry] : in_acc_.functions()) {
    if (!unnamed(key)) continue;
    uint64_t before = in_acc_.Self(entry)[0];
    stats_.unnamed_jit_cost_before += before;
    // A resolved JIT block's records were all rewritten (the block keeps nothing); any other
    // block kept what it did not give away.
    int in = in_.Find(key);
    bool renamed = in >= 0 && in_[in].jit;
    if (JitName jit; !renamed && ParseJitFunctionName(names_.Text(key.function), &jit)) {
      // Named by its place (a Mono trampoline): its whole block went out under that name.
      auto gap = gap_names_.find(jit.addr);
      renamed = gap != gap_names_.end() && gap->second != 0;
    }
    uint64_t after = renamed ? 0 : before - self_in(removed_acc_, key) + self_in(added_acc_, key);
    stats_.unnamed_jit_cost_after += after;
    if (after > 0) unresolved_cost_[std::string(names_.Text(key.function))] += after;
  }
}

InjectStats Injector::Impl::stats() const {
  InjectStats s = stats_;
  s.ran_code_kept_in_block = int64_t(applied_ran_by_other_.size());
  s.reused_addresses_seen = chooser_.reused_addresses();
  s.ambiguous_choices = chooser_.ambiguous_choices();
  s.object_code_lines = owners_.object_code_lines();
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
