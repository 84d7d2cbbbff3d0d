#include "rewrite/test_profile.h"

#include <charconv>
#include <stdexcept>

namespace cg_inject::testing {

namespace {

class Feeder {
 public:
  explicit Feeder(ProfileSink* sink) : sink_(sink) {}

  void Run(std::string_view text) {
    sink_->OnPartBegin(part_);
    while (!text.empty()) {
      size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      while (!line.empty() && (line.front() == ' ')) line.remove_prefix(1);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
      Line(line);
    }
    sink_->OnPartEnd();
  }

 private:
  Name Intern(std::string_view text) {
    auto it = ids_.find(std::string(text));
    if (it != ids_.end()) return Name{it->second, storage_[it->second - 1]};
    storage_.emplace_back(text);
    uint32_t id = uint32_t(storage_.size());
    ids_.emplace(std::string(text), id);
    return Name{id, storage_.back()};
  }

  static uint64_t Number(std::string_view word) {
    uint64_t v = 0;
    int base = 10;
    if (word.size() > 2 && word[0] == '0' && word[1] == 'x') {
      word.remove_prefix(2);
      base = 16;
    }
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v, base);
    if (ec != std::errc() || end != word.data() + word.size())
      throw std::runtime_error("bad number: " + std::string(word));
    return v;
  }

  static std::vector<std::string_view> Words(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && s[i] == ' ') ++i;
      size_t j = i;
      while (j < s.size() && s[j] != ' ') ++j;
      if (j > i) out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  }

  void StartBody() {
    if (in_body_) return;
    in_body_ = true;
    sink_->OnLayout(PartLayout{layout_, events_});
  }

  Position ReadPosition(const std::vector<std::string_view>& words, size_t* i) {
    Position p;
    for (int c = 0; c < layout_.count && *i < words.size(); ++c)
      p.values[size_t(c)] = Number(words[(*i)++]);
    return p;
  }

  void Line(std::string_view line) {
    if (line == "# part") {
      sink_->OnPartEnd();
      sink_->OnPartBegin(++part_);
      in_body_ = false;
      layout_ = PositionLayout{};
      return;
    }
    if (line.empty() || line[0] == '#') return;
    size_t colon = line.find(": ");
    size_t eq = line.find('=');
    if (colon != std::string_view::npos && (eq == std::string_view::npos || colon < eq)) {
      std::string_view key = line.substr(0, colon), value = line.substr(colon + 2);
      if (key == "events") {
        event_storage_.clear();
        for (std::string_view w : Words(value)) event_storage_.emplace_back(w);
        events_.assign(event_storage_.begin(), event_storage_.end());
      } else if (key == "positions") {
        layout_ = PositionLayout{};
        layout_.count = 0;
        for (std::string_view w : Words(value))
          layout_.kinds[layout_.count++] = w == "instr" ? PositionKind::kInstr
                                           : w == "bb"  ? PositionKind::kBb
                                                        : PositionKind::kLine;
      }
      sink_->OnHeader(key, value);
      return;
    }
    StartBody();
    if (eq != std::string_view::npos && eq < 6 && line[0] >= 'a' && line[0] <= 'z') {
      std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
      if (key == "ob")
        ctx_.object = Intern(value);
      else if (key == "fl")
        ctx_.file = source_file_ = Intern(value);
      else if (key == "fi" || key == "fe")
        source_file_ = Intern(value);
      else if (key == "fn") {
        ctx_.function = Intern(value);
        source_file_ = ctx_.file;
        sink_->OnFunction(ctx_);
      } else if (key == "cob")
        cob_ = Intern(value), has_cob_ = true;
      else if (key == "cfi" || key == "cfl")
        cfi_ = Intern(value), has_cfi_ = true;
      else if (key == "cfn")
        cfn_ = Intern(value);
      else if (key == "calls" || key == "jump" || key == "jcnd")
        pending_ = std::string(line);
      else
        throw std::runtime_error("unknown line: " + std::string(line));
      return;
    }
    std::vector<std::string_view> words = Words(line);
    size_t i = 0;
    Position pos = ReadPosition(words, &i);
    if (!pending_.empty()) {
      std::string spec = std::move(pending_);
      pending_.clear();
      std::string_view sv = spec;
      size_t e = sv.find('=');
      std::string_view kind = sv.substr(0, e);
      std::vector<std::string_view> w = Words(sv.substr(e + 1));
      if (kind == "calls") {
        CallRecord call;
        call.count = Number(w[0]);
        size_t j = 1;
        call.target = ReadPosition(w, &j);
        call.source = pos;
        call.source_file = source_file_;
        call.target_object = has_cob_ ? cob_ : ctx_.object;
        call.target_file = has_cfi_ ? cfi_ : ctx_.file;
        call.target_function = cfn_;
        costs_.assign(events_.size(), 0);
        for (size_t k = 0; i < words.size() && k < costs_.size(); ++k)
          costs_[k] = Number(words[i++]);
        call.inclusive = costs_;
        has_cob_ = has_cfi_ = false;
        sink_->OnCall(call);
      } else {
        JumpRecord jump;
        jump.conditional = kind == "jcnd";
        std::string_view counts = w[0];
        if (size_t slash = counts.find('/'); slash != std::string_view::npos) {
          jump.followed = Number(counts.substr(0, slash));
          jump.executed = Number(counts.substr(slash + 1));
        } else {
          jump.followed = jump.executed = Number(counts);
        }
        size_t j = 1;
        jump.target = ReadPosition(w, &j);
        jump.source = pos;
        jump.source_file = source_file_;
        jump.target_file = ctx_.file;
        jump.target_function = ctx_.function;
        sink_->OnJump(jump);
      }
      return;
    }
    costs_.assign(events_.size(), 0);
    for (size_t k = 0; i < words.size() && k < costs_.size(); ++k) costs_[k] = Number(words[i++]);
    sink_->OnCost(CostRecord{pos, source_file_, costs_});
  }

  ProfileSink* sink_;
  int part_ = 0;
  bool in_body_ = false;
  PositionLayout layout_;
  std::deque<std::string> event_storage_;
  std::vector<std::string_view> events_;
  std::deque<std::string> storage_;
  std::map<std::string, uint32_t> ids_;
  FunctionContext ctx_;
  Name source_file_, cob_, cfi_, cfn_;
  bool has_cob_ = false, has_cfi_ = false;
  std::string pending_;
  std::vector<uint64_t> costs_;
};

std::string Key(const Name& ob, const Name& fl, const Name& fn) {
  return std::string(ob.text) + "|" + std::string(fl.text) + "|" + std::string(fn.text);
}

void AddInto(std::vector<uint64_t>* sum, std::span<const uint64_t> v) {
  if (sum->size() < v.size()) sum->resize(v.size(), 0);
  for (size_t i = 0; i < v.size(); ++i) (*sum)[i] += v[i];
}

}  // namespace

void FeedProfile(std::string_view text, ProfileSink* sink) { Feeder(sink).Run(text); }

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
