// Test helpers for the rewrite stage (test-only, not in the library): FeedProfile runs Callgrind
// text through the real reader into a ProfileSink, and a sink renders records back to plain
// Callgrind text (readable by callgrind_annotate) and sums them per function.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cg_inject/profile.h"

namespace cg_inject::testing {

/// Feeds Callgrind `text` to `sink` through ReadCallgrind (header lines after a body start the
/// next part, as in real files). Throws InputError on malformed text.
void FeedProfile(std::string_view text, ProfileSink* sink);

/// Per-function sums of what a sink received.
struct FunctionSummary {
  std::vector<uint64_t> self;
  std::map<std::string, std::pair<uint64_t, std::vector<uint64_t>>> calls;  // target -> count, incl
  std::map<std::string, std::vector<uint64_t>> lines;  // "file:line" (line column) -> costs
};

/// Renders what it receives as plain Callgrind text and sums it per function. Functions are
/// named "ob|fl|fn".
class RecordingSink : public ProfileSink {
 public:
  void OnPartBegin(int part_index) override;
  void OnHeader(std::string_view key, std::string_view value) override;
  void OnLayout(const PartLayout& layout) override;
  void OnFunction(const FunctionContext& function) override;
  void OnCost(const CostRecord& cost) override;
  void OnCall(const CallRecord& call) override;
  void OnJump(const JumpRecord& jump) override;
  void OnPartEnd() override;

  const std::string& text() const { return text_; }
  /// Summaries of all parts together.
  const std::map<std::string, FunctionSummary>& functions() const { return functions_; }
  const FunctionSummary* Find(const std::string& key) const {
    auto it = functions_.find(key);
    return it == functions_.end() ? nullptr : &it->second;
  }
  std::vector<uint64_t> totals() const;
  int parts_ended() const { return parts_ended_; }
  /// Every (id, text) pair seen: ids must be unique per text.
  bool IdsConsistent() const { return ids_consistent_; }

 private:
  void CheckName(const Name& name);
  std::string Pos(const Position& p) const;
  FunctionSummary& Current();

  std::string text_;
  PositionLayout layout_;
  size_t events_ = 0;
  std::string current_key_, current_file_;
  std::map<std::string, FunctionSummary> functions_;
  std::unordered_map<uint32_t, std::string> id_text_;
  bool ids_consistent_ = true;
  int parts_ended_ = 0;
};

}  // namespace cg_inject::testing
