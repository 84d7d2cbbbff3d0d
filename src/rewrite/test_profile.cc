#include "rewrite/test_profile.h"

#include <charconv>
#include <stdexcept>

#include "callgrind/callgrind_reader.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/io.h"

namespace cg_inject::testing {

namespace {

std::string Key(const Name& ob, const Name& fl, const Name& fn) {
  return std::string(ob.text) + "|" + std::string(fl.text) + "|" + std::string(fn.text);
}

void AddInto(std::vector<uint64_t>* sum, std::span<const uint64_t> v) {
  if (sum->size() < v.size()) sum->resize(v.size(), 0);
  for (size_t i = 0; i < v.size(); ++i) (*sum)[i] += v[i];
}

}  // namespace

void FeedProfile(std::string_view text, ProfileSink* sink) {
  // The real reader, so the injector tests see exactly what the CLI gives the injector. The
  // test profiles carry no `# callgrind format` line; their sums are not checked here (the
  // reader's own tests do that), so warnings go to a local sink.
  auto in = OpenMemoryInput(text, "test.cg");
  Diagnostics diagnostics;
  ReadCallgrind(*in, *sink, {.require_callgrind_marker = false, .diagnostics = &diagnostics});
}

void RecordingSink::CheckName(const Name& name) {
  if (name.id == 0) return;
  auto [it, inserted] = id_text_.emplace(name.id, std::string(name.text));
  if (!inserted && it->second != name.text) ids_consistent_ = false;
}

std::string RecordingSink::Pos(const Position& p) const {
  std::string out;
  char buf[32];
  for (int c = 0; c < layout_.count; ++c) {
    if (c) out += ' ';
    if (layout_.kinds[size_t(c)] == PositionKind::kInstr) {
      std::snprintf(buf, sizeof buf, "0x%llx",
                    static_cast<unsigned long long>(p.values[size_t(c)]));
    } else {
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(p.values[size_t(c)]));
    }
    out += buf;
  }
  return out;
}

FunctionSummary& RecordingSink::Current() {
  FunctionSummary& f = functions_[current_key_];
  if (f.self.size() < events_) f.self.resize(events_, 0);
  return f;
}

void RecordingSink::OnPartBegin(int part_index) {
  if (part_index == 0)
    text_ += "# callgrind format\nversion: 1\n";
  else
    text_ += "\n";
}

void RecordingSink::OnHeader(std::string_view key, std::string_view value) {
  text_ += std::string(key) + ": " + std::string(value) + "\n";
}

void RecordingSink::OnLayout(const PartLayout& layout) {
  layout_ = layout.positions;
  events_ = layout.events.size();
  text_ += "\n";
}

void RecordingSink::OnFunction(const FunctionContext& f) {
  CheckName(f.object);
  CheckName(f.file);
  CheckName(f.function);
  current_key_ = Key(f.object, f.file, f.function);
  current_file_ = std::string(f.file.text);
  text_ += "ob=" + std::string(f.object.text) + "\nfl=" + current_file_ +
           "\nfn=" + std::string(f.function.text) + "\n";
  Current();
}

void RecordingSink::OnCost(const CostRecord& cost) {
  CheckName(cost.source_file);
  if (cost.source_file.text != current_file_) {
    current_file_ = std::string(cost.source_file.text);
    text_ += "fi=" + current_file_ + "\n";
  }
  text_ += Pos(cost.position);
  for (uint64_t c : cost.costs) text_ += " " + std::to_string(c);
  text_ += "\n";
  FunctionSummary& f = Current();
  AddInto(&f.self, cost.costs);
  int line_col = layout_.IndexOf(PositionKind::kLine);
  std::string where = std::string(cost.source_file.text) + ":" +
                      (line_col >= 0 ? std::to_string(cost.position.values[size_t(line_col)]) : "");
  AddInto(&f.lines[where], cost.costs);
}

void RecordingSink::OnCall(const CallRecord& call) {
  CheckName(call.source_file);
  CheckName(call.target_object);
  CheckName(call.target_file);
  CheckName(call.target_function);
  if (call.source_file.text != current_file_) {
    current_file_ = std::string(call.source_file.text);
    text_ += "fi=" + current_file_ + "\n";
  }
  text_ += "cob=" + std::string(call.target_object.text) +
           "\ncfi=" + std::string(call.target_file.text) +
           "\ncfn=" + std::string(call.target_function.text) +
           "\ncalls=" + std::to_string(call.count) + " " + Pos(call.target) + "\n" +
           Pos(call.source);
  for (uint64_t c : call.inclusive) text_ += " " + std::to_string(c);
  text_ += "\n";
  auto& edge = Current().calls[Key(call.target_object, call.target_file, call.target_function)];
  edge.first += call.count;
  AddInto(&edge.second, call.inclusive);
}

void RecordingSink::OnJump(const JumpRecord& jump) {
  CheckName(jump.target_file);
  CheckName(jump.target_function);
  // Jumps are not rendered: callgrind_annotate ignores them and the tests check them through
  // the summary only.
  (void)jump;
}

void RecordingSink::OnPartEnd() { ++parts_ended_; }

std::vector<uint64_t> RecordingSink::totals() const {
  std::vector<uint64_t> sum;
  for (const auto& [key, f] : functions_) AddInto(&sum, f.self);
  return sum;
}

}  // namespace cg_inject::testing
