// One block of the injector, rewritten when it ends: its code version and output identity, the
// function that owns each of its records, the synthesized edges for cost that left it, and the
// functions it touched written out. Rules: include/cg_inject/inject.h.
#include <algorithm>
#include <string>
#include <tuple>

#include "cg_inject/symbols.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

BlockOutput& Injector::Impl::Output(int function) {
  OutFunction& f = out_[function];
  if (f.slot < 0) {
    f.slot = int(slots_used_++);
    if (slots_.size() < slots_used_) {
      slots_.emplace_back();
      last_edge_ = nullptr;  // the slots may have moved
      edge_index_.clear();
    }
    BlockOutput& slot = slots_[size_t(f.slot)];
    slot.function = function;  // its tables were emptied when the last block was written
    if (last_edge_caller_ == function) last_edge_ = nullptr;
  }
  return slots_[size_t(f.slot)];
}

SynthEdge& Injector::Impl::Edge(int caller, int target) {
  // A block's moved lines mostly go to one function in a row: one map lookup per run of them.
  if (last_edge_ != nullptr && caller == last_edge_caller_ && target == last_edge_target_)
    return *last_edge_;
  // Then the block's index: a builtin that tail-jumps into JIT code (tsc's) has its lines go to
  // hundreds of functions in turn, and a walk of the map's tree per line missed the cache.
  auto [indexed, added] =
      edge_index_.try_emplace(uint64_t(uint32_t(caller)) << 32 | uint32_t(target));
  if (added) *indexed = &Output(caller).edges[target];
  SynthEdge& e = **indexed;
  last_edge_ = &e;  // a map's elements stay put while others come and go
  last_edge_caller_ = caller;
  last_edge_target_ = target;
  if (!e.has_inclusive) {
    e.inclusive = pool_.Alloc();
    e.has_inclusive = true;
  }
  return e;
}

void Injector::Impl::RewriteBlock() {
  ResolveBlock();
  RewriteJumps();
  RewriteCosts();
  RewriteCalls();
  FinalizeEdges();
  EmitOutputs();
  InFunction& f = In(block_.function);
  if (f.jit) ResolvePending(f.key);  // calls waiting for this block, if any
  block_.agg.Clear();
  ClearForNextBlock(&block_.lines);
  ClearForNextBlock(&block_.own);      // written: empty, but it may hold a large one's room
  ClearForNextBlock(&scratch_lines_);  // EmitCosts swapped it with block_.own
  kept_in_block_cache_.clear();
}

void Injector::Impl::ResolveBlock() {
  InFunction& f = In(block_.function);
  block_.split.clear();
  block_.version = nullptr;
  if (f.jit && objects_.IsObjectCode(f.entry)) {
    // Its entry turned out to be a real object's code: a source never renames it.
    f.jit = false;
    --stats_.jit_blocks_resolved;
    // Its records were counted as a JIT block's (totals only); now they are compared as this
    // function's.
    removed_acc_.Function(f.key);
    // It had no entry of its own in the input's sums either (OnFunction): it gets the one an
    // unresolved JIT-looking function has, and its cost leaves the resolved ones' sum.
    in_acc_.Function(f.key, /*sums=*/true);
    auto recount = [&](size_t offset) {
      std::span<const uint64_t> costs = pool_.Get(offset);
      removed_acc_.Cost(costs, /*in_totals=*/false);
      in_acc_.Cost(costs, /*in_totals=*/false);
      if (!costs.empty()) resolved_jit_cost_before_ -= costs[0];
    };
    block_.agg.ForEachCost(pool_,
                           [&](const Position&, uint32_t, size_t offset) { recount(offset); });
    for (const CostLine& line : block_.lines) recount(line.costs);
    for (const auto& [key, value] : block_.agg.calls) {
      removed_acc_.CallCost(pool_.Get(value.inclusive));
      in_acc_.CallCost(pool_.Get(value.inclusive));
    }
  }
  if (!f.jit) {
    block_.identity = block_.base_identity = out_.For(f.key, /*jit=*/false);
    return;
  }
  scratch_addrs_.clear();
  scratch_call_addrs_.clear();
  // A block kept in order has one candidate version, which ChooseForBlock returns whatever the
  // addresses.
  if (columns_.has_instr() && !block_.in_order) {
    block_.agg.ForEachCost(pool_, [&](const Position& pos, uint32_t, size_t) {
      scratch_addrs_.push_back(columns_.Instr(pos));
    });
    for (const auto& [key, value] : block_.agg.calls) {
      scratch_addrs_.push_back(columns_.Instr(key.site));
      scratch_call_addrs_.push_back(columns_.Instr(key.site));
    }
    std::sort(scratch_call_addrs_.begin(), scratch_call_addrs_.end());
    scratch_call_addrs_.erase(std::unique(scratch_call_addrs_.begin(), scratch_call_addrs_.end()),
                              scratch_call_addrs_.end());
    std::sort(scratch_addrs_.begin(), scratch_addrs_.end());
    scratch_addrs_.erase(std::unique(scratch_addrs_.begin(), scratch_addrs_.end()),
                         scratch_addrs_.end());
  }
  bool tied = false;  // versions without code bytes that nothing told apart
  if (block_.in_order && f.resolved) {
    block_.version = f.version;  // the lone version, which ChooseForBlock would return again
  } else {
    block_.version = chooser_.ChooseForBlock(f.entry, scratch_addrs_, part_number_,
                                             scratch_call_addrs_, TieOut());
    tied = ties_named_ && !tie_.empty();
    if (!block_.version) block_.version = index_.Lookup(f.entry);
  }
  block_.identity = out_.Identity(block_.version, f.suffix);
  block_.base_identity = f.suffix ? out_.Identity(block_.version, 0) : block_.identity;
  if (KeptApartBlock(f.key)) {
    // A second pass: merged, this piece made a call cycle the input did not have.
    block_.identity = out_.ApartIdentity(block_.version, f.suffix, f.entry);
    block_.base_identity =
        f.suffix ? out_.ApartIdentity(block_.version, 0, f.entry) : block_.identity;
    if (!f.resolved) {
      ++stats_.blocks_kept_apart;
      if (stats_.kept_apart_example.empty())
        stats_.kept_apart_example = names_.Text(out_[block_.identity].key.function);
    }
  }
  // A block kept in order was entered where one version lived: nothing to split.
  if (columns_.has_instr() && !block_.in_order) {
    std::vector<const CodeVersion*> candidates = index_.LookupAll(f.entry);
    if (candidates.size() >= 2) {
      std::vector<BlockLine> lines;
      block_.agg.ForEachCost(pool_, [&](const Position& pos, uint32_t, size_t offset) {
        lines.push_back({columns_.Instr(pos), pool_.Get(offset), false});
      });
      for (const auto& [key, value] : block_.agg.calls)
        lines.push_back({columns_.Instr(key.site), pool_.Get(value.inclusive), true});
      block_.split = FindReuseSplit(candidates, lines, events_, Fits());
      if (!block_.split.empty()) {
        ++stats_.reused_blocks_split;
        for (const CodeVersion* v : block_.split.versions)
          block_.split.identities.push_back(out_.Identity(v, f.suffix));
      }
    }
  }
  if (tied && block_.split.empty()) {
    // Which of the versions ran here nothing tells (a perf map's reused address in a profile of
    // one part): the block is their ambiguous function, whose calls and costs stay as Callgrind
    // counted them (issue 33).
    block_.identity = out_.Ambiguous(tie_, f.suffix);
    block_.base_identity = f.suffix ? out_.Ambiguous(tie_, 0) : block_.identity;
    if (out_[block_.identity].ambiguous) block_.version = nullptr;
  }
  // Calls into this function from now on enter what its first block resolved to.
  InFunction& g = In(block_.function);
  if (!g.resolved) {
    g.resolved = true;
    g.version = block_.version;
    g.identity = block_.identity;
    if (!block_.split.empty()) in_.SetSplit(block_.function, block_.split);
  }
}

FitsFn Injector::Impl::Fits() {
  return [this](const CodeVersion& version, uint64_t addr) {
    return chooser_.FitsBoundary(version, addr);
  };
}

uint64_t Injector::Impl::AddrOf(const Position& pos) const {
  return columns_.has_instr() ? columns_.Instr(pos) : In(block_.function).entry;
}

void Injector::Impl::Place(const Position& pos, uint32_t in_file, const CodeVersion* version,
                           Position* out_pos, uint32_t* out_file) {
  if (!version) {
    *out_pos = columns_.Plain(pos);
    *out_file = in_file;
    return;
  }
  uint32_t line = 0;
  lines_.LineOf(*version, AddrOf(pos), &line, out_file);
  *out_pos = columns_.WithLine(pos, line);
}

void Injector::Impl::RewriteJumps() {
  // Jumps first: jumps from the block's own code into another function are the best evidence
  // for the call counts of synthesized edges.
  const InFunction& b = In(block_.function);
  const bool jit = b.jit;
  const FunctionKey block_key = b.key;
  for (const auto& [key, value] : block_.agg.jumps) {
    const CodeVersion* site_version = nullptr;
    int owner = Owner(AddrOf(key.site), &site_version);
    JumpKey out_key = key;
    Place(key.site, key.site_file, site_version, &out_key.site, &out_key.site_file);
    out_key.target = columns_.Plain(key.target);
    if (columns_.has_instr()) {
      uint64_t target_addr = columns_.Instr(key.target);
      const CodeVersion* tv = nullptr;
      int target_base = -1;
      if ((jit && !objects_.IsObjectCode(target_addr)) ||
          objects_.IsJitAddress(block_key.object, target_addr))
        target_base = ChooseTarget(target_addr, jit ? block_.version : nullptr, 0, &tv);
      if (target_base >= 0) {
        int target = target_base == block_.BaseOf(owner) ? owner : target_base;
        if (tv) {
          uint32_t line = 0, file = 0;
          lines_.LineOf(*tv, target_addr, &line, &file);
          out_key.target = columns_.WithLine(key.target, line);
          out_key.target_file = file;
        } else {
          out_key.target_file = out_[target].key.file;  // ambiguous: the position as it was
        }
        out_key.target_function = out_[target].key.function;
        if (block_.IsOwn(owner) && target_base != block_.base_identity) {
          SynthEdge& e = Edge(block_.identity, target_base);
          e.jump_count += value.followed;
          if (!e.has_jump_site && value.followed > 0) {
            e.has_jump_site = true;
            e.jump_site = out_key.site;
            e.jump_site_file = out_key.site_file;
          }
        }
      }
    } else {
      uint64_t target_addr = 0;
      uint32_t suffix = 0;
      FunctionKey tk{block_key.object, key.target_file, key.target_function};
      if (in_.IsJitTarget(tk, &target_addr, &suffix)) {
        const CodeVersion* tv = nullptr;
        if (int target = ChooseTarget(target_addr, nullptr, suffix, &tv); target >= 0) {
          const OutFunction& t = out_[target];
          out_key.target_file = t.key.file;
          out_key.target_function = t.key.function;
        }
      }
    }
    Output(owner).agg.AddJump(out_key, value.followed, value.executed);
  }
}

void Injector::Impl::RewriteCosts() {
  block_.agg.ForEachCost(pool_, [&](const Position& pos, uint32_t file, size_t offset) {
    RewriteCost(pos, file, offset);
  });
  for (const CostLine& line : block_.lines) RewriteCost(line.pos, line.file, line.costs);
}

void Injector::Impl::RewriteCost(const Position& pos, uint32_t file, size_t offset) {
  const bool jit = In(block_.function).jit;
  uint64_t addr = AddrOf(pos);
  if (!block_.split.empty()) {
    std::vector<size_t>& fits = scratch_fits_;
    VersionsAt(block_.split, addr, Fits(), &fits);
    if (fits.size() > 1) {
      // A line several reused versions share (their common entry): split by entry counts.
      // Copy: adding to the pool may move the original.
      std::vector<uint64_t>& copy = scratch_costs_;  // reused: one allocation per run
      copy.assign(pool_.Get(offset).begin(), pool_.Get(offset).end());
      std::vector<uint64_t> weights;
      for (size_t i : fits) weights.push_back(block_.split.entry_counts[i]);
      std::vector<std::vector<uint64_t>> shares(fits.size(), std::vector<uint64_t>(copy.size()));
      for (size_t e = 0; e < copy.size(); ++e) {
        std::vector<uint64_t> s = SplitProportionally(copy[e], weights);
        for (size_t k = 0; k < fits.size(); ++k) shares[k][e] = s[k];
      }
      for (size_t k = 0; k < fits.size(); ++k) {
        CostLine out;
        Place(pos, file, block_.split.versions[fits[k]], &out.pos, &out.file);
        out.costs = pool_.Append(shares[k]);
        Output(block_.split.identities[fits[k]]).lines.push_back(out);
      }
      return;
    }
  }
  const CodeVersion* version = nullptr;
  int owner = Owner(addr, &version);
  CostKey out_key;
  Place(pos, file, jit || owner != block_.identity ? version : nullptr, &out_key.pos,
        &out_key.file);
  if (jit && owner == block_.identity) {
    // The common case: kept by the block's own function, costs unchanged.
    Output(owner);  // its slot writes block_.own
    block_.own.push_back({out_key.pos, out_key.file, offset});
  } else {
    Output(owner).lines.push_back({out_key.pos, out_key.file, offset});
  }
  if (block_.IsOwn(owner)) {
    if (jit && owner == block_.identity && columns_.has_instr() &&
        (!block_.has_kept || PositionLess(block_.max_kept, out_key.pos))) {
      block_.has_kept = true;
      block_.max_kept = out_key.pos;
      block_.max_kept_file = out_key.file;
    }
    return;
  }
  SynthEdge& e = Edge(block_.identity, owner);
  pool_.Add(e.inclusive, pool_.Get(offset));  // read after Edge, whose pool entry may move it
  NoteRanByOther(owner, addr, version);
  uint64_t first = pool_.First(offset);
  e.NoteMoved(addr, out_key.pos, out_key.file, first, version, version && addr == version->start());
  ++stats_.cost_lines_moved;
  stats_.cost_moved += first;
}

void Injector::Impl::RewriteCalls() {
  for (const auto& [key, value] : block_.agg.calls) RewriteCall(key, value);
}

void Injector::Impl::RewriteCall(const CallKey& key, const CallValue& value) {
  const bool jit = In(block_.function).jit;
  const CodeVersion* site_version = nullptr;
  int owner = Owner(AddrOf(key.site), &site_version, /*call=*/true);
  CallKey out_key;
  Place(key.site, key.site_file, jit || owner != block_.identity ? site_version : nullptr,
        &out_key.site, &out_key.site_file);
  out_key.target_pos = key.target_pos;
  std::vector<uint64_t>& copy = scratch_costs_;
  copy.assign(pool_.Get(value.inclusive).begin(), pool_.Get(value.inclusive).end());
  if (!block_.IsOwn(owner)) {
    SynthEdge& e = Edge(block_.identity, owner);
    pool_.Add(e.inclusive, copy);
    if (!e.target_version) e.target_version = site_version;
    NoteRanByOther(owner, AddrOf(key.site), site_version);
    NoteRanByOtherCall(owner, key.target);
  }
  uint64_t target_addr = 0;
  uint32_t suffix = 0;
  int found = -1;  // the target's InFunction, when it has had a block
  if (!in_.IsJitTarget(key.target, &target_addr, &suffix, &found)) {
    out_key.target = key.target;
    out_key.target_pos = columns_.Plain(key.target_pos);
    in_.IsUnnamedJitBlock(key.target, &out_key.target);  // its `???` block, when it had one
    if (MisplacedTarget(key.target) && !RealTarget(key.target, &out_key.target)) {
      // Its real function's block may come later in the part.
      PendingCall& p = pending_.Add(key.target);
      p.owner = owner;
      p.owner_base = block_.BaseOf(owner);
      p.key = out_key;
      p.count = value.count;
      p.inclusive = copy;
      p.by_name = true;
      return;
    }
    Output(owner).agg.AddCall(&pool_, out_key, value.count, copy);
    return;
  }
  const InFunction* target = found >= 0 ? &in_[found] : nullptr;
  // A call from another input function: if both become one output function, the frame boundary
  // between them is gone (AddCallTo).
  const bool from_other = !(key.target == In(block_.function).key);
  if (target && target->jit && target->resolved) {
    AddCallTo(owner, block_.BaseOf(owner), out_key, value.count, copy, suffix, target->version,
              target->identity, in_.SplitOf(found), target_addr, from_other);
    return;
  }
  // Most targets are code no other version overlaps: the only candidate, found without
  // collecting every version there (twice, with Choose).
  if (const CodeVersion* only = index_.Lookup(target_addr); only && !index_.Overlapped(*only)) {
    AddCallTo(owner, block_.BaseOf(owner), out_key, value.count, copy, suffix, only,
              TargetIdentity(key.target, only, suffix, target_addr), nullptr, target_addr,
              from_other);
    return;
  }
  if ((!target || target->jit) && index_.LookupAll(target_addr).size() >= 2) {
    // Which of the versions at this reused address the call enters depends on the target's
    // block, which may come later in the part: wait for it.
    PendingCall& p = pending_.Add(key.target);
    p.owner = owner;
    p.owner_base = block_.BaseOf(owner);
    p.key = out_key;
    p.count = value.count;
    p.inclusive = copy;
    p.target_addr = target_addr;
    p.target_suffix = suffix;
    p.from_other = from_other;
    return;
  }
  const CodeVersion* tv = nullptr;
  int target_identity = ChooseTarget(target_addr, nullptr, suffix, &tv, &key.target);
  AddCallTo(owner, block_.BaseOf(owner), out_key, value.count, copy, suffix, tv, target_identity,
            nullptr, target_addr, from_other);
}

int Injector::Impl::ChooseTarget(uint64_t addr, const CodeVersion* preferred, uint32_t suffix,
                                 const CodeVersion** version, const FunctionKey* call_target) {
  const CodeVersion* v = chooser_.Choose(addr, preferred, part_number_, false, TieOut());
  *version = v;
  if (ties_named_ && !tie_.empty()) {
    int target = out_.Ambiguous(tie_, suffix);
    if (out_[target].ambiguous) *version = nullptr;
    return target;
  }
  if (!v) v = *version = index_.Lookup(addr);
  if (!v) return -1;
  return call_target ? TargetIdentity(*call_target, v, suffix, addr) : out_.Identity(v, suffix);
}

void Injector::Impl::AddCallTo(int owner, int owner_base, const CallKey& key, uint64_t count,
                               std::span<const uint64_t> inclusive, uint32_t suffix,
                               const CodeVersion* version, int target, const ReuseSplit* split,
                               uint64_t target_addr, bool from_other) {
  uint64_t entered_at = columns_.has_instr() ? columns_.Instr(key.target_pos) : target_addr;
  ++stats_.calls_renamed;
  if (split) {
    // A call into a block that several reused versions share: split it among them. Only the
    // versions that get calls get inclusive cost (a call line of 0 calls with cost is read by
    // callgrind_annotate as its caller's self cost), so a call of count 1 enters one version.
    std::vector<uint64_t> counts = SplitCallCount(count, split->entry_counts);
    std::vector<std::vector<uint64_t>> shares(split->versions.size(),
                                              std::vector<uint64_t>(inclusive.size()));
    const std::vector<size_t> called = CalledVersions(count, split->entry_counts);
    std::vector<uint64_t> w;
    for (size_t e = 0; e < inclusive.size(); ++e) {
      w.clear();
      for (size_t k : called) w.push_back(split->weights[k][e]);
      std::vector<uint64_t> s = SplitProportionally(inclusive[e], w);
      for (size_t i = 0; i < called.size(); ++i) shares[called[i]][e] = s[i];
    }
    for (size_t k : called) {
      uint32_t line = 0, file = 0;
      lines_.LineOf(*split->versions[k], entered_at, &line, &file);
      CallKey split_key = key;
      split_key.target = out_[split->identities[k]].key;
      split_key.target_pos = columns_.WithLine(key.target_pos, line);
      out_[split->identities[k]].called = true;
      Output(owner).agg.AddCall(&pool_, split_key, counts[k], shares[k],
                                out_[split->identities[k]].jit);
    }
    return;
  }
  // An ambiguous target (no version: code that several functions of a perf map may be) is
  // entered at its address, and the call's position stays as Callgrind wrote it.
  const bool ambiguous = out_[target].ambiguous;
  int target_base = !suffix     ? target
                    : ambiguous ? out_.AmbiguousBase(target)
                                : out_.Identity(version, 0);
  // A call between pieces of one function, not to its entry: an internal transfer. The target
  // piece's cost is already this function's own. A BEAM prologue is entered at its last bytes:
  // that is its function's entry (a recursive call), not a transfer.
  const bool internal =
      ambiguous ? entered_at != out_.AmbiguousStart(target)
                : entered_at != version->start() && PrologueOwner(index_, *version) == nullptr;
  // A call to its entry from another input function that became this one (a stub's block that
  // ran the function's first frame, calling its entry recursively): the caller's frame and the
  // callee's are one function's now, and the call's cost is already inside the inclusive cost of
  // the calls into the caller. Kept, it would be a call of the function to itself at the same
  // recursion level, which Callgrind never writes and callgrind_annotate and `--callgraph` add to
  // the function's inclusive cost a second time. Deeper frames keep the calls Callgrind wrote
  // for them (to `'2`).
  const bool merged_frames = from_other;
  if (target_base == owner_base && target == owner && (internal || merged_frames)) {
    --stats_.calls_renamed;
    ++stats_.internal_transfers_dropped;
    return;
  }
  CallKey out_key = key;
  out_key.target = out_[target].key;
  if (ambiguous) {
    out_key.target_pos = columns_.Plain(key.target_pos);
  } else {
    uint32_t line = 0, file = 0;
    lines_.LineOf(*version, entered_at, &line, &file);
    out_key.target_pos = columns_.WithLine(key.target_pos, line);
  }
  out_[target].called = true;
  Output(owner).agg.AddCall(&pool_, out_key, count, inclusive, out_[target].jit);
}

void Injector::Impl::ResolvePending(const FunctionKey& target_key) {
  std::vector<PendingCall> calls = pending_.Take(target_key);
  if (calls.empty()) return;
  int target = in_.Find(target_key);  // pending only for functions with a block
  const InFunction& t = in_[target];
  for (const PendingCall& p : calls) {
    AddCallTo(p.owner, p.owner_base, p.key, p.count, p.inclusive, p.target_suffix, t.version,
              t.identity, in_.SplitOf(target), p.target_addr, p.from_other);
  }
  EmitOutputs();
}

void Injector::Impl::FlushPending() {
  // Targets whose block never came in this part: resolved as any call to an address.
  for (const auto& [key, calls] : pending_.TakeAll()) {
    for (const PendingCall& p : calls) {
      if (p.by_name) {
        // The part is read: its real function if it has one, else the target as it was read.
        CallKey out_key = p.key;
        if (MisplacedTarget(key)) RealTarget(key, &out_key.target);
        Output(p.owner).agg.AddCall(&pool_, out_key, p.count, p.inclusive);
        continue;
      }
      const CodeVersion* tv = nullptr;
      int target = ChooseTarget(p.target_addr, nullptr, p.target_suffix, &tv, &key);
      AddCallTo(p.owner, p.owner_base, p.key, p.count, p.inclusive, p.target_suffix, tv, target,
                nullptr, p.target_addr, p.from_other);
    }
  }
  EmitOutputs();
  // A function that is only a call target still gets a block: consumers need one to name it.
  for (OutFunction& f : out_) {
    if (!f.called || f.emitted) continue;
    f.emitted = true;
    downstream_->OnFunction(FunctionContext{Name{f.key.object, names_.Text(f.key.object)},
                                            Name{f.key.file, names_.Text(f.key.file)},
                                            Name{f.key.function, names_.Text(f.key.function)}});
    NoteWritten(f);
  }
}

void Injector::Impl::FinalizeEdges() {
  for (size_t s = 0; s < slots_used_; ++s) {
    const int caller = slots_[s].function;
    for (auto& [target, e] : slots_[s].edges) {
      if (e.moved_lines == 0 && !e.target_version) continue;  // jump evidence only
      // Moved into an ordinary function (object code): no version, positions as recorded.
      bool plain = !e.target_version;
      const CodeVersion* tv = e.target_version;
      CallKey key;
      if (e.has_jump_site) {
        key.site = e.jump_site;
        key.site_file = e.jump_site_file;
      } else if (caller == block_.identity && block_.has_kept) {
        key.site = block_.max_kept;
        key.site_file = block_.max_kept_file;
      } else if (plain) {
        key.site = e.min_pos;
        key.site_file = e.min_file;
      } else if (tv) {
        uint32_t line = 0;
        columns_.SetInstr(&key.site, e.min_addr);
        lines_.LineOf(*tv, e.min_addr, &line, &key.site_file);
        columns_.SetLine(&key.site, line);
      }
      key.target = out_[target].key;
      if (plain) key.target_pos = e.min_pos;
      if (tv) {
        uint64_t entry = e.entry_seen || e.min_addr == UINT64_MAX ? tv->start() : e.min_addr;
        uint32_t line = 0, file = 0;
        lines_.LineOf(*tv, entry, &line, &file);
        columns_.SetInstr(&key.target_pos, entry);
        columns_.SetLine(&key.target_pos, line);
      }
      std::span<const uint64_t> incl = pool_.Get(e.inclusive);
      scratch_costs_.assign(incl.begin(), incl.end());
      // Only the caller's slot changes here: `edges` is not touched while iterating it.
      slots_[s].agg.AddCall(&pool_, key, e.CallCount(first_event_is_ir_), scratch_costs_,
                            out_[target].jit);
      out_[target].called = true;
      ++stats_.edges_synthesized;
    }
  }
}

void Injector::Impl::NoteWritten(const OutFunction& f) {
  if (f.jit) {
    // Named by the injector: its sums are not compared with the input's, only the totals.
    if (CostAccounting::Entry* in = in_acc_.Find(f.key)) in->out_defined = true;
    return;
  }
  added_acc_.Function(f.key);
  in_acc_.At(f.key).out_defined = true;
}

void Injector::Impl::EmitOutputs() {
  for (size_t s = 0; s < slots_used_; ++s) {
    BlockOutput& slot = slots_[s];
    OutFunction& f = out_[slot.function];
    f.slot = -1;
    // The block's own function's kept lines (RewriteCost) go out with its slot, once.
    const bool has_own = slot.function == block_.identity && !block_.own.empty();
    if (!slot.lines.empty() || !slot.agg.empty() || has_own) {
      f.emitted = true;
      FunctionKey written = f.key;
      if (!f.jit) StubKey(f.key, &written);  // a real object's stub in `???`: its object's name
      FunctionContext ctx{Name{written.object, names_.Text(written.object)},
                          Name{written.file, names_.Text(written.file)},
                          Name{written.function, names_.Text(written.function)}};
      downstream_->OnFunction(ctx);
      NoteWritten(f);
      EmitCosts(f, slot, has_own);
      EmitCalls(f, slot);
      EmitJumps(f, slot);
    }
    // Emptied now, not when the slot is next taken: a slot that only some large block used
    // would hold that block's tables for the rest of the run (12 MB of tsc's).
    ClearForNextBlock(&slot.lines);
    slot.agg.Clear();
    slot.edges.clear();
  }
  slots_used_ = 0;
  last_edge_ = nullptr;
  edge_index_.clear();
}

void Injector::Impl::EmitCosts(const OutFunction& f, BlockOutput& slot, bool has_own) {
  std::vector<CostLine>& costs = scratch_lines_;
  costs.clear();
  if (has_own) {
    costs.swap(block_.own);  // block_.own is empty from here: written once
    block_.own.clear();
  }
  // By position, as Callgrind writes them (JIT blocks kept in order mostly are already).
  auto less = [](const CostLine& a, const CostLine& b) {
    if (a.pos != b.pos) return PositionLess(a.pos, b.pos);
    return a.file < b.file;
  };
  // The slot's lines go out one per position, summed: lines that moved or were divided among
  // versions rarely share one, so they are kept as a list and summed only here.
  std::sort(slot.lines.begin(), slot.lines.end(), less);
  const size_t own = costs.size();
  for (const CostLine& line : slot.lines) {
    CostLine* last = costs.size() > own ? &costs.back() : nullptr;
    if (last != nullptr && last->pos == line.pos && last->file == line.file) {
      pool_.Add(last->costs, pool_.Get(line.costs));
    } else {
      costs.push_back(line);
    }
  }
  if (!std::is_sorted(costs.begin(), costs.end(), less))
    std::sort(costs.begin(), costs.end(), less);
  Name file;  // the lines of a slot are mostly in one file: its text looked up once
  for (const CostLine& line : costs) {
    if (line.file != file.id || file.text.data() == nullptr)
      file = Name{line.file, names_.Text(line.file)};
    CostRecord rec{line.pos, file, pool_.Get(line.costs)};
    rec.position = WrittenPosition(rec.position, f);  // a shifted object's at its ELF address
    downstream_->OnCost(rec);
    if (f.jit) {
      added_acc_.AddTotals(rec.costs);
      if (f.ambiguous && !rec.costs.empty()) stats_.ambiguous_cost += rec.costs[0];
    } else {
      added_acc_.Cost(rec.costs);
    }
  }
}

void Injector::Impl::EmitCalls(const OutFunction& f, const BlockOutput& slot) {
  std::vector<const decltype(slot.agg.calls)::Slot*> calls;
  for (const auto& entry : slot.agg.calls) calls.push_back(&entry);
  std::sort(calls.begin(), calls.end(), [](auto* a, auto* b) {
    const CallKey& x = a->key;
    const CallKey& y = b->key;
    if (x.site != y.site) return PositionLess(x.site, y.site);
    if (x.site_file != y.site_file) return x.site_file < y.site_file;
    if (!(x.target == y.target))
      return std::tie(x.target.object, x.target.file, x.target.function) <
             std::tie(y.target.object, y.target.file, y.target.function);
    return PositionLess(x.target_pos, y.target_pos);
  });
  for (const auto* entry : calls) {
    const CallKey& k = entry->key;
    CallRecord rec;
    rec.count = entry->value.count;
    rec.target = k.target_pos;
    rec.source = k.site;
    rec.source_file = Name{k.site_file, names_.Text(k.site_file)};
    rec.target_object = Name{k.target.object, names_.Text(k.target.object)};
    rec.target_file = Name{k.target.file, names_.Text(k.target.file)};
    rec.target_function = Name{k.target.function, names_.Text(k.target.function)};
    if (!entry->value.named_target) RetargetToStub(k.target, &rec);
    // A shifted object's code is written at its ELF addresses, as Callgrind writes an object's.
    rec.source = WrittenPosition(rec.source, f);
    if (int t = out_.Find(k.target); t >= 0) rec.target = WrittenPosition(rec.target, out_[t]);
    rec.inclusive = pool_.Get(entry->value.inclusive);
    downstream_->OnCall(rec);
    if (!f.jit) added_acc_.CallCost(rec.inclusive);
    // Targets the injector named are checked by their OutFunction (called, emitted).
    if (!entry->value.named_target) {
      int named = out_.Find(k.target);
      if (named < 0 || !out_[named].jit) in_acc_.At(k.target).added_called = true;
    }
  }
}

void Injector::Impl::EmitJumps(const OutFunction& f, const BlockOutput& slot) {
  std::vector<const decltype(slot.agg.jumps)::Slot*> jumps;
  for (const auto& entry : slot.agg.jumps) jumps.push_back(&entry);
  std::sort(jumps.begin(), jumps.end(), [](auto* a, auto* b) {
    const JumpKey& x = a->key;
    const JumpKey& y = b->key;
    if (x.site != y.site) return PositionLess(x.site, y.site);
    if (x.target != y.target) return PositionLess(x.target, y.target);
    return std::tie(x.site_file, x.target_file, x.target_function, x.conditional) <
           std::tie(y.site_file, y.target_file, y.target_function, y.conditional);
  });
  for (const auto* entry : jumps) {
    const JumpKey& k = entry->key;
    JumpRecord rec;
    rec.conditional = k.conditional;
    rec.followed = entry->value.followed;
    rec.executed = entry->value.executed;
    rec.target = k.target;
    rec.source = k.site;
    rec.source_file = Name{k.site_file, names_.Text(k.site_file)};
    rec.target_file = Name{k.target_file, names_.Text(k.target_file)};
    rec.target_function = Name{k.target_function, names_.Text(k.target_function)};
    rec.source = WrittenPosition(rec.source, f);
    if (int t = out_.Find({f.key.object, k.target_file, k.target_function}); t >= 0)
      rec.target = WrittenPosition(rec.target, out_[t]);
    downstream_->OnJump(rec);
  }
}

}  // namespace cg_inject
