// The injector's record callbacks: ordinary lines go straight downstream; a JIT block's records,
// and an ordinary block's records that touch JIT code, are kept until the block ends (summed by
// position, or a JIT block's cost lines in input order: CurrentBlock), then rewritten
// (block_rewriter.cc). Rules: include/cg_inject/inject.h.
#include <algorithm>
#include <charconv>

#include "cg_inject/diagnostics.h"
#include "cg_inject/symbols.h"
#include "resolve/jit_name.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

Injector::Injector(const SymbolIndex& index, const ObjectExtents* extents,
                   const InjectOptions& options, ProfileSink* downstream, Diagnostics* diagnostics)
    : impl_(std::make_unique<Impl>(index, extents, options, downstream, diagnostics)) {}
Injector::~Injector() = default;
void Injector::OnPartBegin(int part_index) { impl_->OnPartBegin(part_index); }
void Injector::OnHeader(std::string_view key, std::string_view value) {
  impl_->OnHeader(key, value);
}
void Injector::OnLayout(const PartLayout& layout) { impl_->OnLayout(layout); }
void Injector::OnFunction(const FunctionContext& function) { impl_->OnFunction(function); }
void Injector::OnCost(const CostRecord& cost) { impl_->OnCost(cost); }
void Injector::OnCall(const CallRecord& call) { impl_->OnCall(call); }
void Injector::OnJump(const JumpRecord& jump) { impl_->OnJump(jump); }
void Injector::OnPartEnd() { impl_->OnPartEnd(); }
void Injector::OnAbort() { impl_->OnAbort(); }
InjectStats Injector::stats() const { return impl_->stats(); }

Injector::Impl::Impl(const SymbolIndex& index, const ObjectExtents* extents,
                     const InjectOptions& options, ProfileSink* downstream,
                     Diagnostics* diagnostics)
    : index_(index),
      extents_(extents),
      options_(options),
      downstream_(downstream),
      diagnostics_(diagnostics),
      chooser_(index, options.arch) {
  for (size_t i = 0; i < index.size(); ++i) {
    index_min_ = std::min(index_min_, index.version(i).start());
    index_max_ = std::max(index_max_, index.version(i).end());
  }
  // Two passes over the versions, 8 bytes each instead of 24 (resolve/definition_names.h).
  definition_names_.Build(index.size(), [&](size_t i) { return SiteOf(index.version(i)); });
  for (const SymbolSourceInfo& s : index.sources())
    stats_.sources.push_back(
        {s.path, s.kind, s.object_name, s.records, s.damage, s.dropped_records, s.dropped_bytes});
  stats_.reused_ranges = index.reused_ranges();
  stats_.definitions_disambiguated = definition_names_.disambiguated_groups();
}

void Injector::Impl::OnPartBegin(int part_index) {
  part_index_ = part_index;
  part_number_ = part_index + 1;
  body_started_ = false;
  trailing_headers_.clear();
  in_layout_ = out_layout_ = PositionLayout{};
  instr_col_ = out_line_col_ = -1;
  line_col_ = 0;
  add_line_ = false;
  events_ = 0;
  pool_.Reset(0);
  in_acc_.Reset(0);
  resolved_jit_cost_before_ = 0;
  removed_acc_.Reset(0);
  added_acc_.Reset(0);
  in_functions_.clear();
  in_index_.clear();
  out_.clear();
  out_index_.clear();
  identity_cache_.clear();
  identity_by_version_.clear();
  splits_.clear();
  pending_calls_.clear();
  mode_ = Mode::kNone;
  block_.function = -1;
  ++stats_.parts;
  downstream_->OnPartBegin(part_index);
}

namespace {
// `positions:` lists instr/bb/line in any order; true when it has `instr` but no `line`.
bool HasInstrWithoutLine(std::string_view value) {
  bool instr = false, line = false;
  size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
    size_t j = i;
    while (j < value.size() && value[j] != ' ' && value[j] != '\t') ++j;
    std::string_view word = value.substr(i, j - i);
    if (word == "instr") instr = true;
    if (word == "line") line = true;
    i = j;
  }
  return instr && !line;
}
}  // namespace

void Injector::Impl::OnHeader(std::string_view key, std::string_view value) {
  if (body_started_) {
    // `totals:` comes after the body; the JIT blocks are emitted at part end, so keep trailing
    // header lines until after them.
    trailing_headers_.emplace_back(std::string(key), std::string(value));
    return;
  }
  if (key == "part") {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec == std::errc() && end == value.data() + value.size() && n > 0) part_number_ = n;
  }
  if (key == "cmd") {
    // The program: the one object that can have fixed addresses (an ET_EXEC executable such as
    // Node's), known before the first block, so JIT blocks before its own blocks see its code.
    std::string_view program = value.substr(std::min(value.size(), value.find_first_not_of(" \t")));
    program = program.substr(0, program.find_first_of(" \t"));
    if (program.starts_with('/')) NoteObject(names_.Intern(program).id);
  }
  if (key == "positions" && !index_.empty() && HasInstrWithoutLine(value)) {
    std::string extended(value);
    extended += " line";
    downstream_->OnHeader(key, extended);
    return;
  }
  downstream_->OnHeader(key, value);
}

void Injector::Impl::OnLayout(const PartLayout& layout) {
  body_started_ = true;
  in_layout_ = layout.positions;
  instr_col_ = in_layout_.IndexOf(PositionKind::kInstr);
  line_col_ = in_layout_.IndexOf(PositionKind::kLine);
  add_line_ =
      instr_col_ >= 0 && line_col_ < 0 && in_layout_.count < kMaxPositionColumns && !index_.empty();
  out_layout_ = in_layout_;
  out_line_col_ = line_col_;
  if (add_line_) {
    out_line_col_ = out_layout_.count;
    out_layout_.kinds[out_layout_.count++] = PositionKind::kLine;
    stats_.added_line_column = true;
  }
  events_ = layout.events.size();
  first_event_is_ir_ = !layout.events.empty() && layout.events[0] == "Ir";
  if (stats_.first_event.empty() && !layout.events.empty())
    stats_.first_event = std::string(layout.events[0]);
  if (instr_col_ >= 0) stats_.has_instr_positions = true;
  pool_.Reset(events_);
  in_acc_.Reset(events_);
  removed_acc_.Reset(events_);
  added_acc_.Reset(events_);
  PartLayout out_layout{out_layout_, layout.events};
  downstream_->OnLayout(out_layout);
}

int Injector::Impl::InFunctionFor(const FunctionKey& key) {
  // A JIT function's later blocks: found by key, without parsing its name again.
  if (const uint32_t* known = in_index_.find(key)) return int(*known);
  JitName jit;
  if (!IsUnknownObject(names_.Text(key.object)) ||
      !ParseJitFunctionName(names_.Text(key.function), &jit)) {
    // Nothing looks an ordinary function up after its block (call targets, the invariants'
    // exemptions and the report ask about JIT-looking ones only): one scratch entry serves
    // them all, so the native functions of a profile (there may be millions) take no memory.
    ordinary_ = InFunction{};
    ordinary_.key = key;
    return kOrdinary;
  }
  uint32_t index = uint32_t(in_functions_.size());
  in_index_.insert(key, index);
  InFunction& f = in_functions_.emplace_back();
  f.key = key;
  f.unnamed = true;
  ++stats_.jit_blocks;
  if (index_.Lookup(jit.addr) && !IsObjectCode(jit.addr)) {
    f.jit = true;
    f.entry = jit.addr;
    f.lone_entry = index_.LookupAll(jit.addr).size() == 1;
    f.suffix = jit.suffix.empty() ? 0 : names_.Intern(jit.suffix).id;
    ++stats_.jit_blocks_resolved;
  }
  return int(index);
}

void Injector::Impl::FinishBlock() {
  if (mode_ == Mode::kNone) return;
  // An ordinary block with no records at all still passes through (it declares the function);
  // one whose records all moved to JIT code is dropped: it reappears with its synthesized edges.
  if (mode_ == Mode::kPass && pending_header_ && !cur_deferred_) EmitPassHeader();
  if (mode_ == Mode::kJit || !block_.agg.empty()) RewriteBlock();
  mode_ = Mode::kNone;
}

void Injector::Impl::Defer() {
  if (cur_deferred_) return;
  cur_deferred_ = true;
  removed_acc_.Function(In(block_.function).key);
}

void Injector::Impl::EmitPassHeader() {
  if (!pending_header_) return;
  pending_header_ = false;
  FunctionContext out = cur_out_;
  out.raw = cur_raw_;  // the input text of the fn= lines, unless the layout changed
  downstream_->OnFunction(out);
  in_acc_.current()->out_defined = true;
}

void Injector::Impl::OnFunction(const FunctionContext& function) {
  FinishBlock();
  cur_out_.object = names_.Map(function.object);
  cur_out_.file = names_.Map(function.file);
  cur_out_.function = names_.Map(function.function);
  // Copied: the header goes out with the block's first passed record, after the reader's
  // buffer has moved on. A profile gaining a line column is formatted, not copied.
  cur_raw_.assign(add_line_ ? std::string_view() : function.raw);
  FunctionKey key{cur_out_.object.id, cur_out_.file.id, cur_out_.function.id};
  block_.function = InFunctionFor(key);
  // The input's own per-function sums serve the unnamed-JIT-cost report only: other functions
  // count in the totals, and their changes are checked from what was taken out and written. A
  // resolved JIT function is renamed, so the report needs only its cost before, summed for all
  // of them (OnCost), and the checks nothing: no entry (500K JIT functions took 22 MB).
  if (In(block_.function).jit)
    in_acc_.TotalsOnly(key);
  else
    in_acc_.Function(key, In(block_.function).unnamed);
  block_.agg.Clear();
  block_.lines.clear();
  block_.own.clear();
  block_.has_kept = false;
  pool_.Reset(events_);
  if (In(block_.function).jit) {
    mode_ = Mode::kJit;
    block_.in_order = instr_col_ >= 0 && In(block_.function).lone_entry;
    return;
  }
  block_.in_order = false;
  mode_ = Mode::kPass;
  pending_header_ = true;
  cur_deferred_ = false;
  // Known before any JIT block that runs its code is rewritten, wherever its blocks are.
  NoteObject(key.object);
  // The file Callgrind gave this object's function, for SymbolOwner (which looks only in objects
  // with absolute addresses: one entry per function of a profile's whole program was 17 MB at
  // 1M functions).
  if (std::find(absolute_objects_.begin(), absolute_objects_.end(), key.object) !=
      absolute_objects_.end()) {
    auto [file, inserted] =
        function_files_.try_emplace((uint64_t{key.object} << 32) | key.function);
    if (inserted) *file = key.file;
  }
}

const FunctionKey* Injector::Impl::SymbolOwner(uint64_t addr) {
  for (uint32_t object : absolute_objects_) {
    std::optional<bool> own = extents_->Contains(names_.Text(object), addr);
    if (!own || !*own) continue;
    std::optional<std::string> symbol = extents_->FunctionAt(names_.Text(object), addr);
    if (!symbol) return nullptr;
    uint32_t function = names_.Intern(*symbol).id;
    uint64_t packed = (uint64_t{object} << 32) | function;
    auto [it, inserted] = symbol_owners_.try_emplace(packed);
    if (inserted) {
      const uint32_t* file = function_files_.find(packed);
      it->second = FunctionKey{object, file ? *file : names_.Intern("???").id, function};
    }
    return &it->second;
  }
  return nullptr;
}

void Injector::Impl::NoteObject(uint32_t object) {
  if (object < object_noted_.size() && object_noted_[object]) return;
  if (object >= object_noted_.size()) object_noted_.resize(size_t{object} * 2 + 16, 0);
  object_noted_[object] = 1;
  if (!extents_ || index_.empty() || IsUnknownObject(names_.Text(object))) return;
  if (extents_->AddressesAreAbsolute(names_.Text(object))) absolute_objects_.push_back(object);
}

bool Injector::Impl::IsObjectCode(uint64_t addr, const FunctionKey** owner) const {
  if (owner) *owner = nullptr;
  if (!object_code_.empty()) {
    if (const CodeVersion* v = index_.Lookup(addr)) {
      if (auto it = object_code_.find(v); it != object_code_.end()) {
        if (owner) *owner = &it->second;
        return true;
      }
    }
  }
  for (uint32_t object : absolute_objects_) {
    std::optional<bool> own = extents_->Contains(names_.Text(object), addr);
    if (own && *own) return true;
  }
  return false;
}

bool Injector::Impl::IsJitAddress(uint32_t object, uint64_t addr) const {
  if (addr < index_min_ || addr >= index_max_) return false;
  std::string_view ob = names_.Text(object);
  if (extents_ && !IsUnknownObject(ob)) {
    std::optional<bool> own = extents_->Contains(ob, addr);
    if (own && *own) return false;
  }
  return index_.Lookup(addr) != nullptr && !IsObjectCode(addr);
}

bool Injector::Impl::IsJitTarget(const FunctionKey& key, uint64_t* addr, uint32_t* suffix,
                                 const uint32_t** known) {
  if (!IsUnknownObject(names_.Text(key.object))) return false;
  // A target with a block of its own in this part was parsed then: the answer is that entry's,
  // without parsing the name and querying the index again. Only IsObjectCode can change since
  // (it only turns true: the objects' code seen grows).
  if (const uint32_t* index = in_index_.find(key)) {
    if (known != nullptr) *known = index;
    const InFunction& f = in_functions_[*index];
    *addr = f.entry;
    *suffix = f.suffix;
    return f.jit && !IsObjectCode(f.entry);
  }
  JitName jit;
  if (!ParseJitFunctionName(names_.Text(key.function), &jit)) return false;
  if (!index_.Lookup(jit.addr) || IsObjectCode(jit.addr)) return false;
  *addr = jit.addr;
  *suffix = jit.suffix.empty() ? 0 : names_.Intern(jit.suffix).id;
  return true;
}

Position Injector::Impl::ConvertPlain(const Position& in) const {
  Position out = in;
  if (add_line_) out.values[size_t(out_line_col_)] = 0;
  return out;
}

Position Injector::Impl::Convert(const Position& in, uint32_t line) const {
  Position out = in;
  if (out_line_col_ >= 0) out.values[size_t(out_line_col_)] = line;
  return out;
}

void Injector::Impl::OnCost(const CostRecord& cost) {
  in_acc_.Cost(cost.costs);
  // Cost lines mostly stay in one file: the last one's mapping is kept.
  if (cost.source_file.id != cost_file_in_ || cost_file_in_ == 0) {
    cost_file_in_ = cost.source_file.id;
    cost_file_ = names_.Map(cost.source_file);
  }
  const Name file = cost_file_;
  if (mode_ == Mode::kNone) {  // a cost line before any fn= (tolerated by the reader)
    CostRecord out{ConvertPlain(cost.position), file, cost.costs};
    downstream_->OnCost(out);
    return;
  }
  const InFunction& b = In(block_.function);
  if (mode_ == Mode::kJit) {
    if (!cost.costs.empty()) resolved_jit_cost_before_ += cost.costs[0];  // below totals[0]
    if (block_.in_order) {
      block_.lines.push_back({cost.position, file.id, pool_.Append(cost.costs)});
    } else {
      block_.agg.AddCost(&pool_, CostKey{cost.position, file.id}, cost.costs);
    }
    // A JIT function is renamed: its input sums are not compared, only the totals.
    removed_acc_.AddTotals(cost.costs);
    return;
  }
  if (instr_col_ >= 0) {
    uint64_t addr = cost.position.values[size_t(instr_col_)];
    if (IsJitAddress(b.key.object, addr)) {
      block_.agg.AddCost(&pool_, CostKey{cost.position, file.id}, cost.costs);
      Defer();
      removed_acc_.Cost(cost.costs);
      return;
    }
    // The object's own code at an address a source also lists (V8 builtins in /usr/bin/node):
    // remember whose it is, so JIT blocks that ran it give the cost back to this function.
    if (addr >= index_min_ && addr < index_max_ &&
        std::find(absolute_objects_.begin(), absolute_objects_.end(), b.key.object) !=
            absolute_objects_.end()) {
      if (const CodeVersion* v = index_.Lookup(addr)) object_code_.try_emplace(v, b.key);
    }
  }
  EmitPassHeader();
  CostRecord out{ConvertPlain(cost.position), file, cost.costs};
  if (!add_line_) {  // unchanged: the writer may copy its input text
    out.raw = cost.raw;
    out.raw_base = cost.raw_base;
  }
  if (instr_col_ >= 0) {
    size_t c = size_t(instr_col_);
    if (!block_.has_kept || out.position.values[c] > block_.max_kept.values[c]) {
      block_.has_kept = true;
      block_.max_kept = out.position;
      block_.max_kept_file = file.id;
    }
  }
  downstream_->OnCost(out);
}

void Injector::Impl::OnCall(const CallRecord& call) {
  Name target_object = names_.Map(call.target_object);
  Name target_file = names_.Map(call.target_file);
  Name target_function = names_.Map(call.target_function);
  FunctionKey target{target_object.id, target_file.id, target_function.id};
  NoteObject(target.object);
  CostAccounting::Entry& target_entry = in_acc_.Call(target, call.inclusive);
  Name file = names_.Map(call.source_file);
  auto forward = [&] {
    CallRecord out = call;
    out.source = ConvertPlain(call.source);
    out.target = ConvertPlain(call.target);
    out.source_file = file;
    out.target_object = target_object;
    out.target_file = target_file;
    out.target_function = target_function;
    if (add_line_) out.raw = {};  // positions changed: format
    downstream_->OnCall(out);
    target_entry.pass_called = true;
  };
  if (mode_ == Mode::kNone) {
    forward();
    return;
  }
  const InFunction& b = In(block_.function);
  CallKey key{call.source, file.id, target, call.target};
  if (mode_ == Mode::kJit) {
    block_.agg.AddCall(&pool_, key, call.count, call.inclusive);
    return;
  }
  uint64_t target_addr = 0;
  uint32_t suffix = 0;
  if ((instr_col_ >= 0 && IsJitAddress(b.key.object, call.source.values[size_t(instr_col_)])) ||
      IsJitTarget(target, &target_addr, &suffix)) {
    block_.agg.AddCall(&pool_, key, call.count, call.inclusive);
    Defer();
    removed_acc_.CallCost(call.inclusive);
    return;
  }
  EmitPassHeader();
  forward();
}

void Injector::Impl::OnJump(const JumpRecord& jump) {
  Name file = names_.Map(jump.source_file);
  Name target_file = names_.Map(jump.target_file);
  Name target_function = names_.Map(jump.target_function);
  auto forward = [&] {
    JumpRecord out = jump;
    out.source = ConvertPlain(jump.source);
    out.target = ConvertPlain(jump.target);
    out.source_file = file;
    out.target_file = target_file;
    out.target_function = target_function;
    if (add_line_) out.raw = {};  // positions changed: format
    downstream_->OnJump(out);
  };
  if (mode_ == Mode::kNone) {
    forward();
    return;
  }
  const InFunction& b = In(block_.function);
  JumpKey key{jump.source,        file.id,         jump.target, target_file.id,
              target_function.id, jump.conditional};
  if (mode_ == Mode::kJit) {
    block_.agg.AddJump(key, jump.followed, jump.executed);
    return;
  }
  if (instr_col_ >= 0 && (IsJitAddress(b.key.object, jump.source.values[size_t(instr_col_)]) ||
                          IsJitAddress(b.key.object, jump.target.values[size_t(instr_col_)]))) {
    block_.agg.AddJump(key, jump.followed, jump.executed);
    Defer();
    return;
  }
  EmitPassHeader();
  forward();
}

void Injector::Impl::OnPartEnd() {
  FinishBlock();
  FlushPending();
  for (const auto& [key, value] : trailing_headers_) downstream_->OnHeader(key, value);
  trailing_headers_.clear();
  int64_t before = violations_total_;
  CheckInvariants();
  CollectStats();
  downstream_->OnPartEnd();
  if (violations_total_ > before && !options_.force) {
    std::string message = "internal check failed after injection: ";
    message += stats_.invariant_violations.empty() ? "" : stats_.invariant_violations.back();
    message += " (--force writes the output anyway)";
    throw InvariantError(message);
  }
  in_functions_.clear();
  in_index_.clear();
  out_.clear();
  out_index_.clear();
  pool_.Reset(events_);
}

}  // namespace cg_inject
