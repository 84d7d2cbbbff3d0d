// The injector's record callbacks: ordinary lines go straight downstream; a JIT block's records,
// and an ordinary block's records that touch JIT code, are kept until the block ends (summed by
// position, or a JIT block's cost lines in input order: CurrentBlock), then rewritten
// (block_rewriter.cc). Rules: include/cg_inject/inject.h.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <string>

#include "cg_inject/symbols.h"
#include "resolve/jit_name.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

std::string_view CommandProgram(std::string_view cmd) {
  cmd.remove_prefix(std::min(cmd.size(), cmd.find_first_not_of(" \t")));
  return cmd.substr(0, cmd.find_first_of(" \t"));
}

Injector::Injector(const SymbolIndex& index, const ObjectExtents* extents, InjectOptions options,
                   ProfileSink* downstream)
    : impl_(std::make_unique<Impl>(index, extents, std::move(options), downstream)) {}
Injector::~Injector() = default;
void Injector::OnPartBegin(int part_index) { impl_->OnPartBegin(part_index); }
void Injector::OnHeader(std::string_view key, std::string_view value) {
  impl_->OnHeader(key, value);
}
void Injector::OnLayout(const PartLayout& layout) { impl_->OnLayout(layout); }
// Records that merge (a block's, at its end or the part's) may pass 2^64: the error says where.
void Injector::OnFunction(const FunctionContext& function) {
  impl_->Located([&] { impl_->OnFunction(function); });
}
void Injector::OnCost(const CostRecord& cost) {
  impl_->Located([&] { impl_->OnCost(cost); });
}
void Injector::OnCall(const CallRecord& call) {
  impl_->Located([&] { impl_->OnCall(call); });
}
void Injector::OnJump(const JumpRecord& jump) {
  impl_->Located([&] { impl_->OnJump(jump); });
}
void Injector::OnPartEnd() {
  impl_->Located([&] { impl_->OnPartEnd(); });
}
void Injector::OnAbort() { impl_->OnAbort(); }
InjectStats Injector::stats() const { return impl_->stats(); }
const std::vector<bool>& Injector::touched_versions() const { return impl_->touched_versions(); }
const KeptApart& Injector::must_keep_apart() const { return impl_->must_keep_apart(); }

Injector::Impl::Impl(const SymbolIndex& index, const ObjectExtents* extents, InjectOptions options,
                     ProfileSink* downstream)
    : index_(index),
      options_(std::move(options)),  // a version's image names, one string each: moved, not copied
      downstream_(downstream),
      chooser_(index, options_.arch),
      objects_(index, extents, &names_),
      in_(index, objects_, &names_),
      out_(index, options_.version_objects, &names_, &objects_),
      found_apart_(options_.kept_apart) {
  for (const SymbolSourceInfo& s : index.sources())
    stats_.sources.push_back({s.path, s.kind, s.object_name, s.records, s.damage, s.dropped_records,
                              s.dropped_bytes, s.superseded});
  stats_.reused_ranges = index.reused_ranges();
  stats_.definitions_disambiguated = out_.disambiguated_groups();
  unknown_name_ = names_.Intern("???").id;
}

void Injector::Impl::OnPartBegin(int part_index) {
  part_number_ = part_index + 1;
  several_parts_ = part_index > 0;
  part_index_ = part_index;
  ran_by_other_.clear();
  ran_by_other_index_.clear();
  last_ran_key_ = UINT64_MAX;
  ran_by_other_calls_.clear();
  cur_shift_object_ = 0;
  cur_shift_extent_ = ShiftExtent::kNotAsked;
  body_started_ = false;
  trailing_headers_.clear();
  columns_.Reset();
  events_ = 0;
  pool_.Reset(0);
  in_acc_.Reset(0);
  resolved_jit_cost_before_ = 0;
  removed_acc_.Reset(0);
  added_acc_.Reset(0);
  in_.Clear();
  out_.Clear();
  pending_.Clear();
  real_by_name_.clear();
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
    if (part_number_ > 1) several_parts_ = true;
  }
  // Callgrind says what ended the part: only the program's end leaves no part after it.
  if (key == "desc" && value.starts_with("Trigger:") &&
      value.find("Program termination") == std::string_view::npos)
    several_parts_ = true;
  if (key == "cmd") {
    // The program: the one object that can have fixed addresses (an ET_EXEC executable such as
    // Node's), known before the first block, so JIT blocks before its own blocks see its code.
    const std::string_view program = CommandProgram(value);
    // Its stubs in `???` can come before any block or call that names its object (a PIE's
    // .plt.got slots), so it is looked for now: run from a directory or found in PATH, and
    // under the name Callgrind gives its object, which is the file's, links resolved (the
    // kernel maps the file: `cmd: /usr/bin/mono` runs `ob=/usr/bin/mono-sgen`, and one file is
    // one object, issue 33 item 5). A program that is not on this machine keeps its name; one
    // found in PATH may be another build than the one that ran, and gives way to the object the
    // profile names by its file name (NoteProgram).
    if (!program.empty()) {
      const std::string& object = objects_.ProgramObject(program);
      if (!object.empty()) {
        objects_.NoteProgram(names_.Intern(object).id, !program.starts_with('/'));
      } else if (program.starts_with('/')) {
        objects_.NoteObject(names_.Intern(program).id);
      }
    }
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
  columns_.Set(layout.positions, /*may_add_line=*/!index_.empty());
  // Final: later header lines are the part's trailing ones.
  ties_named_ = !several_parts_;
  owners_.StartPart(part_number_, ties_named_);
  if (columns_.adds_line()) stats_.added_line_column = true;
  events_ = layout.events.size();
  first_event_is_ir_ = !layout.events.empty() && layout.events[0] == "Ir";
  if (stats_.first_event.empty() && !layout.events.empty())
    stats_.first_event = std::string(layout.events[0]);
  if (columns_.has_instr()) stats_.has_instr_positions = true;
  pool_.Reset(events_);
  in_acc_.Reset(events_);
  removed_acc_.Reset(events_);
  added_acc_.Reset(events_);
  call_overflow_.Reset();
  PartLayout out_layout{columns_.out_layout(), layout.events};
  downstream_->OnLayout(out_layout);
}

void Injector::Impl::FinishBlock() {
  if (mode_ == Mode::kNone) return;
  SettleStub();
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
  block_.fn_line = function.line;
  cur_unnamed_entry_ = 0;
  cur_out_.object = names_.Map(function.object);
  cur_out_.file = names_.Map(function.file);
  cur_out_.function = names_.Map(function.function);
  // Copied: the header goes out with the block's first passed record, after the reader's
  // buffer has moved on. A profile gaining a line column is formatted, not copied.
  cur_raw_.assign(columns_.adds_line() ? std::string_view() : function.raw);
  FunctionKey key{cur_out_.object.id, cur_out_.file.id, cur_out_.function.id};
  // A nameless function of the program's PIE that a source names (V8's builtins in Deno's
  // stripped binary): read as that JIT code, at runtime addresses. A JIT block may run that
  // object's code too (the bundled Callgrind keeps a jump from JIT code into a builtin in the
  // JIT block), at its ELF addresses.
  const uint32_t in_object = key.object;
  cur_shift_object_ = 0;
  cur_shift_own_ = false;
  cur_shift_extent_ = ShiftExtent::kNotAsked;
  if (uint64_t bias = ShiftedKey(&key); bias != 0) {
    cur_shift_object_ = in_object;
    cur_shift_bias_ = bias;
    cur_shift_own_ = true;
  } else if (key.object == unknown_name_ || in_.UnknownObject(key.object)) {
    if (!objects_.SoleShiftedObject(&cur_shift_object_, &cur_shift_bias_)) cur_shift_object_ = 0;
  }
  bool added = false;
  block_.function = in_.ForBlock(key, &added);
  if (added) {
    ++stats_.jit_blocks;
    if (In(block_.function).jit) ++stats_.jit_blocks_resolved;
  }
  // The input's own per-function sums serve the unnamed-JIT-cost report only: other functions
  // count in the totals, and their changes are checked from what was taken out and written. A
  // resolved JIT function is renamed, so the report needs only its cost before, summed for all
  // of them (OnCost), and the checks nothing: no entry (500K JIT functions took 22 MB).
  if (In(block_.function).jit)
    in_acc_.TotalsOnly(key);
  else
    in_acc_.Function(key, In(block_.function).unnamed);
  // The call edges' caller, by an index the block has anyway: a JIT-looking function's entry
  // (whether or not its code is covered, which ResolveBlock may still change), else its entry in
  // the input's sums. A key always takes the same branch.
  call_overflow_.Caller(block_.function >= 0 ? uint32_t(block_.function) | 1u << 31
                                             : in_acc_.current_index());
  block_.agg.Clear();
  block_.lines.clear();
  block_.own.clear();
  block_.has_kept = false;
  pool_.Reset(events_);
  if (In(block_.function).jit) {
    mode_ = Mode::kJit;
    block_.in_order = columns_.has_instr() && In(block_.function).lone_entry;
    return;
  }
  block_.in_order = false;
  mode_ = Mode::kPass;
  cur_stub_ = false;
  // Only a block of `???` can be a shared library's stub: a stripped object's own `0x...`
  // functions (mono-sgen's) are at its ELF addresses and would place nothing right.
  if (JitName jit; block_.function >= 0 &&
                   (key.object == unknown_name_ || in_.UnknownObject(key.object)) &&
                   ParseJitFunctionName(names_.Text(key.function), &jit))
    cur_unnamed_entry_ = jit.addr;
  if (FunctionKey stub; StubKey(key, &stub, &cur_stub_bias_)) {
    // A real object's stub in `???`: written under the object's name for it, at its ELF
    // addresses (issue 23 item 7).
    cur_stub_ = true;
    cur_stub_unsettled_ = true;
    cur_unstubbed_ = cur_out_;
    cur_unstubbed_.raw = {};  // formatted if it is written after all
    JitName stub_name;
    ParseJitFunctionName(names_.Text(key.function), &stub_name);
    cur_stub_addr_ = stub_name.addr;
    held_costs_.clear();
    cur_out_.object = Name{stub.object, names_.Text(stub.object)};
    cur_out_.function = Name{stub.function, names_.Text(stub.function)};
    cur_raw_.clear();
  }
  pending_header_ = true;
  cur_deferred_ = false;
  // Known before any JIT block that runs its code is rewritten, wherever its blocks are.
  objects_.NoteObject(key.object);
  objects_.NoteFunction(key);
  NoteRealFunction(key);
}

Position Injector::Impl::ShiftedReadPosition(const Position& pos) const {
  const uint64_t addr = columns_.Instr(pos);
  if (addr > UINT64_MAX - cur_shift_bias_) return pos;
  if (cur_shift_extent_ == ShiftExtent::kNotAsked)
    cur_shift_extent_ = objects_.ElfRange(cur_shift_object_, &cur_shift_begin_, &cur_shift_end_)
                            ? ShiftExtent::kRange
                            : ShiftExtent::kPerAddress;
  if (!objects_.OwnsElfAddress(cur_shift_object_, addr)) return pos;
  if (!cur_shift_own_ && !objects_.IsJitAddress(unknown_name_, addr + cur_shift_bias_)) return pos;
  Position out = pos;
  columns_.SetInstr(&out, addr + cur_shift_bias_);
  return out;
}

Position Injector::Impl::RebasedIfOwned(const Position& pos, const OutFunction& f) const {
  const uint64_t addr = columns_.Instr(pos);
  if (addr < f.rebase || !objects_.OwnsElfAddress(f.key.object, addr - f.rebase)) return pos;
  return Rebased(pos, f.rebase);
}

uint64_t Injector::Impl::ShiftedKey(FunctionKey* key) {
  if (index_.empty() || key->object == 0 || key->object == unknown_name_ ||
      !in_.JitLooking(key->function) || in_.UnknownObject(key->object))
    return 0;
  auto [it, inserted] =
      shifted_names_.try_emplace(uint64_t{key->object} << 32 | key->function, ShiftedName{});
  if (inserted) {
    objects_.NoteObject(key->object);
    std::optional<uint64_t> bias = objects_.ShiftedObjectBias(key->object);
    JitName jit;
    if (bias && ParseJitFunctionName(names_.Text(key->function), &jit) &&
        jit.addr <= UINT64_MAX - *bias) {
      const uint64_t runtime = jit.addr + *bias;
      if (index_.Lookup(runtime) != nullptr && !objects_.IsObjectCode(runtime)) {
        char text[24];
        std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(runtime));
        std::string name = text;
        name += jit.suffix;
        it->second = ShiftedName{names_.Intern(name).id, *bias};
      }
    }
  }
  if (it->second.function == 0) return 0;
  key->object = unknown_name_;
  key->function = it->second.function;
  return it->second.bias;
}

void Injector::Impl::NoteRealFunction(const FunctionKey& key) {
  if (key.object == 0 || key.object == unknown_name_ || in_.UnknownObject(key.object)) return;
  if (real_by_name_.size() <= key.function) real_by_name_.resize(key.function + 1, {0, 0});
  auto& [object, file] = real_by_name_[key.function];
  if (object == 0) {
    object = key.object;
    file = key.file;
  } else if (object != key.object || file != key.file) {
    object = kAmbiguous;
  }
}

void Injector::Impl::SettleStub() {
  if (!cur_stub_unsettled_) return;
  cur_stub_unsettled_ = false;
  // The stub's call showed its object changed: if no call line named it yet, the block keeps
  // the input's names and addresses, as every later stub of that object does.
  if (objects_.Changed(cur_out_.object.id) && objects_.ForgetStub(cur_stub_addr_)) {
    cur_stub_ = false;
    cur_out_ = cur_unstubbed_;
  }
  for (const HeldCost& held : held_costs_) EmitPassCost(held.position, held.file, held.costs);
  held_costs_.clear();
}

void Injector::Impl::EmitPassCost(const Position& plain, Name file, std::span<const uint64_t> costs,
                                  std::string_view raw, const Position& raw_base) {
  EmitPassHeader();
  CostRecord out{plain, file, costs};
  if (cur_stub_) {
    out.position = Rebased(out.position, cur_stub_bias_);
  } else if (!columns_.adds_line()) {  // unchanged: the writer may copy its input text
    out.raw = raw;
    out.raw_base = raw_base;
  }
  if (columns_.has_instr()) {
    if (!block_.has_kept || columns_.Instr(out.position) > columns_.Instr(block_.max_kept)) {
      block_.has_kept = true;
      block_.max_kept = out.position;
      block_.max_kept_file = file.id;
    }
  }
  downstream_->OnCost(out);
}

bool Injector::Impl::StubKey(const FunctionKey& key, FunctionKey* out, uint64_t* bias,
                             bool for_call) {
  if (index_.empty()) return false;
  if (key.object != unknown_name_ && !in_.UnknownObject(key.object)) return false;
  // A source's entry always wins.
  if (!in_.JitLooking(key.function) || in_.Covered(key.function)) return false;
  JitName jit;
  if (!ParseJitFunctionName(names_.Text(key.function), &jit)) return false;
  ObjectCode::Stub stub;
  if (!objects_.NamedStubAt(jit.addr, &stub, for_call) || stub.name == 0) {
    // JIT code no source lists, named by what lies around it (a Mono trampoline), in `???`
    // still: no source describes it.
    stub = ObjectCode::Stub{key.object, GapName(jit.addr), jit.addr};
    if (stub.name == 0) return false;
  }
  uint32_t name = stub.name;
  if (!jit.suffix.empty()) {
    std::string text(names_.Text(stub.name));
    text += jit.suffix;
    name = names_.Intern(text).id;
  }
  *out = FunctionKey{stub.object, key.file, name};
  if (bias != nullptr) *bias = jit.addr - stub.elf_addr;
  return true;
}

uint32_t Injector::Impl::GapName(uint64_t addr) {
  auto [it, inserted] = gap_names_.try_emplace(addr, 0);
  if (inserted) {
    std::string name = out_.unnamed().GapName(addr);
    if (!name.empty()) {
      it->second = names_.Intern(name).id;
      ++stats_.unnamed_code_named;
    }
  }
  return it->second;
}

bool Injector::Impl::MisplacedTarget(const FunctionKey& target) const {
  // Without sources nothing is renamed: the profile passes through as it was read.
  if (index_.empty()) return false;
  if (target.object != unknown_name_ && target.object != 0) return false;
  if (target.function == 0) return false;
  if (in_.JitLooking(target.function)) return false;
  const CostAccounting::Entry* own = in_acc_.Find(target);
  return !own || !own->defined;
}

bool Injector::Impl::RealTarget(const FunctionKey& target, FunctionKey* real) const {
  if (target.function >= real_by_name_.size()) return false;
  auto [object, file] = real_by_name_[target.function];
  if (object == 0 || object == kAmbiguous) return false;
  if (target.file != file && target.file != 0 && target.file != unknown_name_) return false;
  *real = FunctionKey{object, file, target.function};
  return true;
}

void Injector::Impl::OnCost(const CostRecord& in_cost) {
  // A shifted object's addresses are read as the runtime ones the sources give (ReadPosition):
  // such a line is a record of its own, built only then (a record zeroed for every cost line,
  // whether it was needed or not, was a third of OnCost).
  if (cur_shift_object_ != 0 && mode_ != Mode::kNone) {
    Position read = ReadPosition(in_cost.position);
    if (read != in_cost.position)
      return TakeCost(CostRecord{read, in_cost.source_file, in_cost.costs});
  }
  TakeCost(in_cost);
}

void Injector::Impl::TakeCost(const CostRecord& cost) {
  in_acc_.Cost(cost.costs);
  // Cost lines mostly stay in one file: the last one's mapping is kept.
  if (cost.source_file.id != cost_file_in_ || cost_file_in_ == 0) {
    cost_file_in_ = cost.source_file.id;
    cost_file_ = names_.Map(cost.source_file);
  }
  const Name file = cost_file_;
  if (mode_ == Mode::kNone) {  // a cost line before any fn= (tolerated by the reader)
    CostRecord out{columns_.Plain(cost.position), file, cost.costs};
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
  if (columns_.has_instr()) {
    uint64_t addr = columns_.Instr(cost.position);
    if (objects_.IsJitAddress(b.key.object, addr)) {
      block_.agg.AddCost(&pool_, CostKey{cost.position, file.id}, cost.costs);
      Defer();
      removed_acc_.Cost(cost.costs);
      return;
    }
    // The object's own code at an address a source also lists (V8 builtins in /usr/bin/node):
    // remember whose it is, so JIT blocks that ran it give the cost back to this function.
    objects_.NoteCost(b.key, addr);
  }
  if (cur_stub_unsettled_) {
    held_costs_.push_back({columns_.Plain(cost.position), file,
                           std::vector<uint64_t>(cost.costs.begin(), cost.costs.end())});
    return;
  }
  EmitPassCost(columns_.Plain(cost.position), file, cost.costs, cost.raw, cost.raw_base);
}

void Injector::Impl::OnCall(const CallRecord& in_call) {
  Name target_object = names_.Map(in_call.target_object);
  Name target_file = names_.Map(in_call.target_file);
  Name target_function = names_.Map(in_call.target_function);
  FunctionKey target{target_object.id, target_file.id, target_function.id};
  objects_.NoteObject(target.object);
  // A call from a shifted block, or into a shifted function, reads its addresses as the
  // runtime ones (ShiftedKey); the target goes under the name it is read as.
  const Position source = cur_shift_object_ != 0 && mode_ != Mode::kNone
                              ? ReadPosition(in_call.source)
                              : in_call.source;
  const bool source_shift = source != in_call.source;
  const uint64_t target_shift = ShiftedKey(&target);
  CallRecord shifted;
  if (source_shift || target_shift != 0) {
    shifted = in_call;
    shifted.source = source;
    if (target_shift != 0 && columns_.has_instr())
      columns_.SetInstr(&shifted.target, columns_.Instr(in_call.target) + target_shift);
    shifted.raw = {};
    if (target_shift != 0) {
      target_object = Name{target.object, names_.Text(target.object)};
      target_function = Name{target.function, names_.Text(target.function)};
    }
  }
  const CallRecord& call = source_shift || target_shift != 0 ? shifted : in_call;
  // A PLT slot's jump, from an unnamed `???` block's first instruction into a real object: may
  // locate the shared library the slot is in (issue 23 item 7).
  if (cur_unnamed_entry_ != 0 && target.object != unknown_name_ &&
      !in_.UnknownObject(target.object) &&
      (!columns_.has_instr() || columns_.Instr(call.source) == cur_unnamed_entry_))
    objects_.NoteStubCall(cur_unnamed_entry_, target.object, target.function);
  if (mode_ == Mode::kPass) SettleStub();
  uint32_t target_index = 0;
  CostAccounting::Entry& target_entry = in_acc_.Call(target, call.inclusive, &target_index);
  call_overflow_.Call(target_index, call.inclusive);
  Name file = names_.Map(call.source_file);
  auto forward = [&] {
    CallRecord out = call;
    out.source = columns_.Plain(call.source);
    out.target = columns_.Plain(call.target);
    out.source_file = file;
    out.target_object = target_object;
    out.target_file = target_file;
    out.target_function = target_function;
    if (columns_.adds_line()) out.raw = {};  // positions changed: format
    RetargetToStub(target, &out);
    if (mode_ == Mode::kPass && cur_stub_) {
      out.source = Rebased(out.source, cur_stub_bias_);
      out.raw = {};
    }
    downstream_->OnCall(out);
    target_entry.pass_called = true;
  };
  // A misplaced target whose real function's block came already, or an unnamed JIT block's id
  // under another cob=: called by that function's name.
  // (The input's text names the target by an id or object the output reads otherwise.)
  auto forward_to = [&](const FunctionKey& real) {
    CallRecord out = call;
    out.source = columns_.Plain(call.source);
    out.target = columns_.Plain(call.target);
    out.source_file = file;
    out.target_object = Name{real.object, names_.Text(real.object)};
    out.target_file = Name{real.file, names_.Text(real.file)};
    out.target_function = target_function;
    out.raw = {};
    RetargetToStub(real, &out);
    if (cur_stub_) out.source = Rebased(out.source, cur_stub_bias_);
    downstream_->OnCall(out);
    in_acc_.At(real).pass_called = true;
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
  if ((columns_.has_instr() && objects_.IsJitAddress(b.key.object, columns_.Instr(call.source))) ||
      in_.IsJitTarget(target, &target_addr, &suffix)) {
    block_.agg.AddCall(&pool_, key, call.count, call.inclusive);
    Defer();
    removed_acc_.CallCost(call.inclusive);
    return;
  }
  if (FunctionKey block; in_.IsUnnamedJitBlock(target, &block)) {
    EmitPassHeader();
    forward_to(block);
    return;
  }
  if (MisplacedTarget(target)) {
    FunctionKey real;
    if (RealTarget(target, &real)) {
      EmitPassHeader();
      forward_to(real);
      return;
    }
    // Its real block may come later in the part: rewritten at the block's end, and waits there.
    block_.agg.AddCall(&pool_, key, call.count, call.inclusive);
    Defer();
    removed_acc_.CallCost(call.inclusive);
    return;
  }
  EmitPassHeader();
  forward();
}

void Injector::Impl::OnJump(const JumpRecord& in_jump) {
  // A jump's ends in a shifted object, read at runtime addresses (ReadPosition).
  JumpRecord shifted;
  const bool shift = cur_shift_object_ != 0 && mode_ != Mode::kNone &&
                     (ReadPosition(in_jump.source) != in_jump.source ||
                      ReadPosition(in_jump.target) != in_jump.target);
  if (shift) {
    shifted = in_jump;
    shifted.source = ReadPosition(in_jump.source);
    shifted.target = ReadPosition(in_jump.target);
    shifted.raw = {};
  }
  const JumpRecord& jump = shift ? shifted : in_jump;
  if (mode_ == Mode::kPass) SettleStub();
  Name file = names_.Map(jump.source_file);
  Name target_file = names_.Map(jump.target_file);
  Name target_function = names_.Map(jump.target_function);
  auto forward = [&] {
    JumpRecord out = jump;
    out.source = columns_.Plain(jump.source);
    out.target = columns_.Plain(jump.target);
    out.source_file = file;
    out.target_file = target_file;
    out.target_function = target_function;
    if (columns_.adds_line()) out.raw = {};   // positions changed: format
    if (mode_ == Mode::kPass && cur_stub_) {  // a jump inside a stub: both ends in the object
      out.source = Rebased(out.source, cur_stub_bias_);
      out.target = Rebased(out.target, cur_stub_bias_);
      out.raw = {};
    }
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
  if (columns_.has_instr() && (objects_.IsJitAddress(b.key.object, columns_.Instr(jump.source)) ||
                               objects_.IsJitAddress(b.key.object, columns_.Instr(jump.target)))) {
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
  CheckMergedCycles();
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
  in_.Clear();
  out_.Clear();
  pool_.Reset(events_);
}

}  // namespace cg_inject
