// ProfileSummary: the canonical view of a profile used by round-trip tests and, later, by the
// user-visible call-graph dump.
//
// Inclusive cost follows callgrind_annotate (valgrind callgrind/callgrind_annotate.in): while
// reading, a function's inclusive cost is its self cost plus the inclusive cost of each call it
// makes; with --inclusive=yes, a function that is called anywhere is then shown with the sum of
// the inclusive costs of the calls to it instead. Both numbers are kept, as `inclusive` and
// `called_inclusive`, because recursion makes them differ.
#include "callgrind/profile_summary.h"

#include <cstdio>

namespace cg_inject {
namespace {

void AddTo(std::vector<uint64_t>* sum, std::span<const uint64_t> costs) {
  if (sum->size() < costs.size()) sum->resize(costs.size(), 0);
  for (size_t i = 0; i < costs.size(); ++i) (*sum)[i] += costs[i];
}

std::string JoinNumbers(const std::vector<uint64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ' ';
    out += std::to_string(values[i]);
  }
  return out;
}

/// Costs padded to the event count, so [5] and [5 0] compare and print alike.
std::vector<uint64_t> Padded(std::vector<uint64_t> values, size_t n) {
  if (values.size() < n) values.resize(n, 0);
  return values;
}

std::string KeyText(const FunctionKey& key) {
  return "ob=" + key.object + " fl=" + key.file + " fn=" + key.function;
}

const char* KindName(PositionKind kind) {
  switch (kind) {
    case PositionKind::kLine:
      return "line";
    case PositionKind::kInstr:
      return "instr";
    case PositionKind::kBb:
      return "bb";
    case PositionKind::kOther:
      return "other";
  }
  return "?";
}

std::string LayoutText(const PositionLayout& layout) {
  std::string out;
  for (int i = 0; i < layout.count; ++i) {
    if (i > 0) out += ' ';
    out += KindName(layout.kinds[i]);
  }
  return out;
}

void AppendJsonString(std::string* out, std::string_view text) {
  *out += '"';
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

void AppendJsonNumbers(std::string* out, const std::vector<uint64_t>& values) {
  *out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    *out += std::to_string(values[i]);
  }
  *out += ']';
}

void AppendJsonKey(std::string* out, const FunctionKey& key) {
  *out += "{\"object\":";
  AppendJsonString(out, key.object);
  *out += ",\"file\":";
  AppendJsonString(out, key.file);
  *out += ",\"function\":";
  AppendJsonString(out, key.function);
  *out += '}';
}

}  // namespace

void ProfileSummary::Mix(std::string_view bytes) {
  uint64_t h = part_->record_digest;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  // A separator so that ("ab","c") and ("a","bc") differ.
  h ^= 0xff;
  h *= 0x100000001b3ULL;
  part_->record_digest = h;
}

void ProfileSummary::MixNumber(uint64_t value) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  Mix(std::string_view(bytes, 8));
}

void ProfileSummary::MixPosition(const Position& pos) {
  for (int i = 0; i < part_->positions.count; ++i) MixNumber(pos.values[i]);
}

FunctionTotals& ProfileSummary::Totals(const FunctionKey& key) { return part_->functions[key]; }

void ProfileSummary::OnPartBegin(int /*part_index*/) {
  parts_.emplace_back();
  part_ = &parts_.back();
  current_ = nullptr;
}

void ProfileSummary::OnHeader(std::string_view key, std::string_view value) {
  part_->headers.emplace_back(std::string(key), std::string(value));
}

void ProfileSummary::OnLayout(const PartLayout& layout) {
  part_->positions = layout.positions;
  part_->events.assign(layout.events.begin(), layout.events.end());
  part_->totals.assign(layout.events.size(), 0);
}

void ProfileSummary::OnFunction(const FunctionContext& function) {
  current_key_ = FunctionKey{std::string(function.object.text), std::string(function.file.text),
                             std::string(function.function.text)};
  current_ = &Totals(current_key_);
  Mix("F");
  Mix(function.object.text);
  Mix(function.file.text);
  Mix(function.function.text);
}

void ProfileSummary::OnCost(const CostRecord& cost) {
  if (current_ == nullptr) current_ = &Totals(current_key_);
  AddTo(&current_->self, cost.costs);
  AddTo(&current_->inclusive, cost.costs);
  AddTo(&part_->totals, cost.costs);
  ++part_->cost_records;
  Mix("C");
  MixPosition(cost.position);
  Mix(cost.source_file.text);
  for (uint64_t c : cost.costs) MixNumber(c);
}

void ProfileSummary::OnCall(const CallRecord& call) {
  if (current_ == nullptr) current_ = &Totals(current_key_);
  FunctionKey callee{std::string(call.target_object.text), std::string(call.target_file.text),
                     std::string(call.target_function.text)};
  AddTo(&current_->inclusive, call.inclusive);
  FunctionTotals& target = Totals(callee);  // std::map: current_ stays valid
  AddTo(&target.called_inclusive, call.inclusive);
  target.calls_in += call.count;
  CallEdge& edge = part_->calls[{current_key_, callee}];
  edge.count += call.count;
  ++edge.records;
  AddTo(&edge.inclusive, call.inclusive);
  ++part_->call_records;
  Mix("K");
  MixNumber(call.count);
  MixPosition(call.target);
  MixPosition(call.source);
  Mix(call.source_file.text);
  Mix(call.target_object.text);
  Mix(call.target_file.text);
  Mix(call.target_function.text);
  for (uint64_t c : call.inclusive) MixNumber(c);
}

void ProfileSummary::OnJump(const JumpRecord& jump) {
  ++part_->jump_records;
  part_->jumps_followed += jump.followed;
  part_->jumps_executed += jump.executed;
  Mix(jump.conditional ? "J" : "j");
  MixNumber(jump.followed);
  MixNumber(jump.executed);
  MixPosition(jump.target);
  MixPosition(jump.source);
  Mix(jump.source_file.text);
  Mix(jump.target_file.text);
  Mix(jump.target_function.text);
}

void ProfileSummary::OnPartEnd() {
  // Pad every vector to the event count so that the dump and comparisons do not depend on how
  // many trailing zeros a writer left out.
  size_t n = part_->events.size();
  for (auto& [key, totals] : part_->functions) {
    totals.self = Padded(std::move(totals.self), n);
    totals.inclusive = Padded(std::move(totals.inclusive), n);
    totals.called_inclusive = Padded(std::move(totals.called_inclusive), n);
  }
  for (auto& [key, edge] : part_->calls) edge.inclusive = Padded(std::move(edge.inclusive), n);
  current_ = nullptr;
}

std::string ProfileSummary::ToText() const {
  std::string out;
  for (size_t p = 0; p < parts_.size(); ++p) {
    const PartSummary& part = parts_[p];
    out += "part " + std::to_string(p) + "\n";
    for (const auto& [key, value] : part.headers) out += "header " + key + ": " + value + "\n";
    out += "positions " + LayoutText(part.positions) + "\n";
    out += "events";
    for (const std::string& e : part.events) out += " " + e;
    out += "\ntotals " + JoinNumbers(part.totals) + "\n";
    out += "records cost=" + std::to_string(part.cost_records) +
           " call=" + std::to_string(part.call_records) +
           " jump=" + std::to_string(part.jump_records) +
           " followed=" + std::to_string(part.jumps_followed) +
           " executed=" + std::to_string(part.jumps_executed) + "\n";
    for (const auto& [key, totals] : part.functions) {
      out += "function " + KeyText(key) + "\n";
      out += "  self " + JoinNumbers(totals.self) + "\n";
      out += "  inclusive " + JoinNumbers(totals.inclusive) + "\n";
      out += "  called " + std::to_string(totals.calls_in) + " inclusive " +
             JoinNumbers(totals.called_inclusive) + "\n";
    }
    for (const auto& [key, edge] : part.calls) {
      out += "call " + KeyText(key.first) + " -> " + KeyText(key.second) + "\n";
      out += "  count " + std::to_string(edge.count) + " lines " + std::to_string(edge.records) +
             " inclusive " + JoinNumbers(edge.inclusive) + "\n";
    }
  }
  return out;
}

std::string ProfileSummary::ToJson() const {
  std::string out = "{\"parts\":[";
  for (size_t p = 0; p < parts_.size(); ++p) {
    const PartSummary& part = parts_[p];
    if (p > 0) out += ',';
    out += "{\"headers\":[";
    for (size_t i = 0; i < part.headers.size(); ++i) {
      if (i > 0) out += ',';
      out += '[';
      AppendJsonString(&out, part.headers[i].first);
      out += ',';
      AppendJsonString(&out, part.headers[i].second);
      out += ']';
    }
    out += "],\"positions\":";
    AppendJsonString(&out, LayoutText(part.positions));
    out += ",\"events\":[";
    for (size_t i = 0; i < part.events.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonString(&out, part.events[i]);
    }
    out += "],\"totals\":";
    AppendJsonNumbers(&out, part.totals);
    out += ",\"records\":{\"cost\":" + std::to_string(part.cost_records) +
           ",\"call\":" + std::to_string(part.call_records) +
           ",\"jump\":" + std::to_string(part.jump_records) +
           ",\"followed\":" + std::to_string(part.jumps_followed) +
           ",\"executed\":" + std::to_string(part.jumps_executed) + "},\"functions\":[";
    bool first = true;
    for (const auto& [key, totals] : part.functions) {
      if (!first) out += ',';
      first = false;
      out += "{\"key\":";
      AppendJsonKey(&out, key);
      out += ",\"self\":";
      AppendJsonNumbers(&out, totals.self);
      out += ",\"inclusive\":";
      AppendJsonNumbers(&out, totals.inclusive);
      out += ",\"called\":" + std::to_string(totals.calls_in) + ",\"called_inclusive\":";
      AppendJsonNumbers(&out, totals.called_inclusive);
      out += '}';
    }
    out += "],\"calls\":[";
    first = true;
    for (const auto& [key, edge] : part.calls) {
      if (!first) out += ',';
      first = false;
      out += "{\"caller\":";
      AppendJsonKey(&out, key.first);
      out += ",\"callee\":";
      AppendJsonKey(&out, key.second);
      out += ",\"count\":" + std::to_string(edge.count) +
             ",\"lines\":" + std::to_string(edge.records) + ",\"inclusive\":";
      AppendJsonNumbers(&out, edge.inclusive);
      out += '}';
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

std::string CompareSummaries(const ProfileSummary& a, const ProfileSummary& b, size_t max_lines) {
  std::string out;
  size_t lines = 0;
  auto report = [&](const std::string& line) {
    if (lines < max_lines) out += line + "\n";
    ++lines;
  };
  if (a.parts().size() != b.parts().size()) {
    report("parts: " + std::to_string(a.parts().size()) + " vs " +
           std::to_string(b.parts().size()));
  }
  size_t n = std::min(a.parts().size(), b.parts().size());
  for (size_t p = 0; p < n; ++p) {
    const PartSummary& x = a.parts()[p];
    const PartSummary& y = b.parts()[p];
    std::string where = "part " + std::to_string(p) + ": ";
    if (x.headers != y.headers) report(where + "header lines differ");
    if (x.events != y.events) report(where + "events differ");
    if (!(x.positions == y.positions)) {
      report(where + "positions " + LayoutText(x.positions) + " vs " + LayoutText(y.positions));
    }
    if (x.totals != y.totals)
      report(where + "totals " + JoinNumbers(x.totals) + " vs " + JoinNumbers(y.totals));
    if (x.cost_records != y.cost_records || x.call_records != y.call_records ||
        x.jump_records != y.jump_records || x.jumps_followed != y.jumps_followed ||
        x.jumps_executed != y.jumps_executed) {
      report(where + "record counts differ");
    }
    for (const auto& [key, totals] : x.functions) {
      auto it = y.functions.find(key);
      if (it == y.functions.end()) {
        report(where + "function missing: " + KeyText(key));
      } else if (!(it->second == totals)) {
        report(where + "function differs: " + KeyText(key) + ": self " + JoinNumbers(totals.self) +
               " vs " + JoinNumbers(it->second.self) + ", inclusive " +
               JoinNumbers(totals.inclusive) + " vs " + JoinNumbers(it->second.inclusive));
      }
    }
    for (const auto& [key, totals] : y.functions) {
      if (!x.functions.count(key)) report(where + "function added: " + KeyText(key));
    }
    for (const auto& [key, edge] : x.calls) {
      auto it = y.calls.find(key);
      if (it == y.calls.end()) {
        report(where + "call missing: " + KeyText(key.first) + " -> " + KeyText(key.second));
      } else if (!(it->second == edge)) {
        report(where + "call differs: " + KeyText(key.first) + " -> " + KeyText(key.second) +
               ": count " + std::to_string(edge.count) + " vs " + std::to_string(it->second.count));
      }
    }
    for (const auto& [key, edge] : y.calls) {
      if (!x.calls.count(key))
        report(where + "call added: " + KeyText(key.first) + " -> " + KeyText(key.second));
    }
    if (x.record_digest != y.record_digest) report(where + "record digests differ");
  }
  if (lines > max_lines) out += "... and " + std::to_string(lines - max_lines) + " more\n";
  return out;
}

}  // namespace cg_inject
