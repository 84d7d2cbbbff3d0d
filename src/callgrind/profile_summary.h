// A canonical, order-independent summary of a profile: what two files must agree on to be the
// same profile (per-event totals, per-function self and inclusive cost, call edges), plus an
// order-sensitive digest of every record for exact round-trip checks.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cg_inject/profile.h"

namespace cg_inject {

/// A function as Callgrind identifies it: object (ob=), file (fl= at fn=), name (fn=).
struct FunctionKey {
  std::string object, file, function;
  auto operator<=>(const FunctionKey&) const = default;
};

struct FunctionTotals {
  std::vector<uint64_t> self;  // sum of the function's cost lines
  /// self + the inclusive cost of every call the function makes: what callgrind_annotate
  /// --inclusive=yes reports for a function nobody calls.
  std::vector<uint64_t> inclusive;
  /// Sum of the inclusive cost of all calls to the function: what callgrind_annotate
  /// --inclusive=yes reports for a called function.
  std::vector<uint64_t> called_inclusive;
  uint64_t calls_in = 0;  // sum of the counts of calls to it
  bool operator==(const FunctionTotals&) const = default;
};

struct CallEdge {
  uint64_t count = 0;               // summed calls= counts
  uint64_t records = 0;             // number of calls= lines
  std::vector<uint64_t> inclusive;  // summed inclusive cost
  bool operator==(const CallEdge&) const = default;
};

struct PartSummary {
  std::vector<std::pair<std::string, std::string>> headers;  // in file order
  std::vector<std::string> events;
  PositionLayout positions;
  std::vector<uint64_t> totals;  // sum of all cost lines (self cost)
  std::map<FunctionKey, FunctionTotals> functions;
  std::map<std::pair<FunctionKey, FunctionKey>, CallEdge> calls;
  uint64_t cost_records = 0, call_records = 0, jump_records = 0;
  uint64_t jumps_followed = 0, jumps_executed = 0;
  /// FNV-1a over every record in order, positions and source files included.
  uint64_t record_digest = 0xcbf29ce484222325ULL;
};

/// A ProfileSink that builds PartSummary values. Costs are summed modulo 2^64.
class ProfileSummary : public ProfileSink {
 public:
  const std::vector<PartSummary>& parts() const { return parts_; }

  /// A deterministic text dump (sorted by function and edge), meant to be diffed.
  std::string ToText() const;
  /// The same content as JSON.
  std::string ToJson() const;

  void OnPartBegin(int part_index) override;
  void OnHeader(std::string_view key, std::string_view value) override;
  void OnLayout(const PartLayout& layout) override;
  void OnFunction(const FunctionContext& function) override;
  void OnCost(const CostRecord& cost) override;
  void OnCall(const CallRecord& call) override;
  void OnJump(const JumpRecord& jump) override;
  void OnPartEnd() override;

 private:
  void Mix(std::string_view bytes);
  void MixNumber(uint64_t value);
  void MixPosition(const Position& pos);
  FunctionTotals& Totals(const FunctionKey& key);

  std::vector<PartSummary> parts_;
  PartSummary* part_ = nullptr;
  FunctionKey current_key_;
  FunctionTotals* current_ = nullptr;
};

/// Describes how `b` differs from `a`, one difference per line, at most `max_lines` lines;
/// empty when they are the same profile (digest included).
std::string CompareSummaries(const ProfileSummary& a, const ProfileSummary& b,
                             size_t max_lines = 20);

}  // namespace cg_inject
