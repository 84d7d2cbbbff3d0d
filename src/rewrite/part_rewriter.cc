// End-of-part half of the injector: every JIT block gets its code version and output identity,
// every aggregated record is attributed to the function whose code it belongs to, synthesized
// edges are added for cost that left its block, the part's JIT functions are written out, and the
// invariants are checked. Rules: include/cg_inject/inject.h.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "cg_inject/symbols.h"
#include "resolve/jit_name.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

namespace {
constexpr size_t kMaxViolationMessages = 20;

// Splits `total` in proportion to `weights`; the last share takes the rounding rest, so the
// shares always add up to `total`. Equal shares when all weights are 0.
__extension__ typedef unsigned __int128 Uint128;  // products of two 64-bit costs

std::vector<uint64_t> Split(uint64_t total, const std::vector<uint64_t>& weights) {
  std::vector<uint64_t> shares(weights.size(), 0);
  if (weights.empty()) return shares;
  Uint128 sum = 0;
  for (uint64_t w : weights) sum += w;
  uint64_t given = 0;
  for (size_t i = 0; i + 1 < weights.size(); ++i) {
    Uint128 share = sum ? Uint128(total) * weights[i] / sum : Uint128(total) / weights.size();
    shares[i] = uint64_t(share);
    given += shares[i];
  }
  shares.back() = total - given;
  return shares;
}

std::string FormatCosts(std::span<const uint64_t> costs) {
  std::string out;
  for (uint64_t c : costs) {
    if (!out.empty()) out += ' ';
    out += std::to_string(c);
  }
  return out;
}

// The file a version's function is in: its own, else its line table's first, else `???`.
std::string_view FileText(const CodeVersion& version) {
  if (!version.source_file.empty()) return version.source_file;
  if (!version.lines.empty() && version.lines[0].file_index < version.files.size())
    return version.files[version.lines[0].file_index];
  return "???";
}
}  // namespace

uint32_t Injector::Impl::FileOf(const CodeVersion& version) {
  return names_.Intern(FileText(version)).id;
}

void Injector::Impl::LineOf(const CodeVersion& version, uint64_t addr, uint32_t* line,
                            uint32_t* file) {
  if (const LineEntry* e = version.LookupLine(addr); e && e->file_index < version.files.size()) {
    *line = e->line_no;
    *file = names_.Intern(version.files[e->file_index]).id;
    return;
  }
  *line = version.source_line;
  *file = FileOf(version);
}

DefinitionSite Injector::Impl::SiteOf(const CodeVersion& version) const {
  // Views into the index and options_ only: this runs for every version of every source, and
  // interning each name would cost gigabytes for a 10-million-line perf map.
  const SymbolSourceInfo* source =
      version.source < index_.sources().size() ? &index_.sources()[version.source] : nullptr;
  std::string_view object = source && !source->object_name.empty() ? source->object_name
                            : source                               ? source->path
                                                                   : std::string_view("jit");
  // The caller may give each version an object of its own (ELF images of the JIT code).
  if (size_t v = size_t(&version - index_.versions().data());
      v < options_.version_objects.size() && !options_.version_objects[v].empty())
    object = options_.version_objects[v];
  std::string_view file = FileText(version);
  // Empty for a nameless version, which Identity names `jit@ADDR`, unique per address.
  std::string_view function =
      !version.function_name.empty() ? version.function_name : std::string_view(version.raw_name);
  // The name's own position when it has one: a line table may start on another line for each
  // tier of one definition.
  uint32_t line = version.definition_line != 0 ? version.definition_line : version.source_line;
  return {object, file, function, line, version.definition_column};
}

int Injector::Impl::Identity(const CodeVersion* version, uint32_t suffix) {
  std::vector<std::pair<uint32_t, int>>& cached = identity_cache_[version];
  for (const auto& [s, index] : cached)
    if (s == suffix) return index;
  DefinitionSite site = SiteOf(*version);
  // One function per definition (resolve/definition_names.h), then Callgrind's recursion suffix.
  std::string function =
      site.name.empty() ? "jit@" + std::to_string(version->start) : definition_names_.NameOf(site);
  if (suffix) function += names_.Text(suffix);
  FunctionKey key{names_.Intern(site.object).id, names_.Intern(site.file).id,
                  names_.Intern(function).id};
  auto [it, inserted] = out_index_.try_emplace(key, int(out_.size()));
  if (inserted) {
    OutFunction& f = out_.emplace_back();
    f.key = key;
    f.jit = true;
  }
  cached.emplace_back(suffix, it->second);
  return it->second;
}

int Injector::Impl::PassIdentity(const FunctionKey& key) {
  auto [it, inserted] = out_index_.try_emplace(key, int(out_.size()));
  if (inserted) out_.emplace_back().key = key;
  return it->second;
}

void Injector::Impl::ResolveBlocks() {
  for (InBlock& b : blocks_) {
    if (b.jit && IsObjectCode(b.entry)) {
      // Its entry turned out to be a real object's code: a source never renames it.
      b.jit = false;
      --stats_.jit_blocks_resolved;
    }
    if (!b.jit) {
      b.identity = b.base_identity = PassIdentity(b.key);
      continue;
    }
    scratch_addrs_.clear();
    if (instr_col_ >= 0) {
      size_t c = size_t(instr_col_);
      for (const auto& [key, offset] : b.agg.costs) scratch_addrs_.push_back(key.pos.values[c]);
      for (const auto& [key, value] : b.agg.calls) scratch_addrs_.push_back(key.site.values[c]);
      std::sort(scratch_addrs_.begin(), scratch_addrs_.end());
      scratch_addrs_.erase(std::unique(scratch_addrs_.begin(), scratch_addrs_.end()),
                           scratch_addrs_.end());
    }
    b.version = chooser_.ChooseForBlock(b.entry, scratch_addrs_, part_number_);
    if (!b.version) b.version = index_.Lookup(b.entry);
    b.identity = Identity(b.version, b.suffix);
    b.base_identity = b.suffix ? Identity(b.version, 0) : b.identity;
    if (instr_col_ >= 0) FindCoowners(&b);
  }
}

bool Injector::Impl::IsOwn(const InBlock& block, int owner) {
  return owner == block.identity || std::find(block.coowner_ids.begin(), block.coowner_ids.end(),
                                              owner) != block.coowner_ids.end();
}

void Injector::Impl::CoownersAt(const InBlock& block, uint64_t addr, std::vector<size_t>* fits) {
  fits->clear();
  for (size_t i = 0; i < block.coowners.size(); ++i)
    if (chooser_.FitsBoundary(*block.coowners[i], addr)) fits->push_back(i);
}

void Injector::Impl::FindCoowners(InBlock* block) {
  InBlock& b = *block;
  std::vector<const CodeVersion*> candidates = index_.LookupAll(b.entry);
  if (candidates.size() < 2) return;
  const size_t instr = size_t(instr_col_);
  // First-event count per address, ascending, so the first exclusive address of a version is
  // its lowest own instruction.
  std::map<uint64_t, uint64_t> counts;
  for (const auto& [key, offset] : b.agg.costs)
    counts[key.pos.values[instr]] += pool_.First(offset);
  std::vector<bool> active(candidates.size(), false);
  std::vector<uint64_t> entry_counts(candidates.size(), 0);
  for (const auto& [addr, count] : counts) {
    size_t fitting = 0, only = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (chooser_.FitsBoundary(*candidates[i], addr)) {
        ++fitting;
        only = i;
      }
    }
    if (fitting == 1 && !active[only]) {
      active[only] = true;
      entry_counts[only] = count;
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!active[i]) continue;
    b.coowners.push_back(candidates[i]);
    b.coowner_counts.push_back(std::max<uint64_t>(entry_counts[i], 1));
  }
  if (b.coowners.size() < 2) {
    b.coowners.clear();
    b.coowner_counts.clear();
    return;
  }
  ++stats_.reused_blocks_split;
  b.coowner_weights.assign(b.coowners.size(), std::vector<uint64_t>(events_, 0));
  std::vector<size_t> fits;
  auto weigh = [&](uint64_t addr, std::span<const uint64_t> costs) {
    CoownersAt(b, addr, &fits);
    if (fits.empty()) return;
    std::vector<uint64_t> weights;
    for (size_t i : fits) weights.push_back(b.coowner_counts[i]);
    for (size_t e = 0; e < events_ && e < costs.size(); ++e) {
      std::vector<uint64_t> shares = Split(costs[e], weights);
      for (size_t k = 0; k < fits.size(); ++k) b.coowner_weights[fits[k]][e] += shares[k];
    }
  };
  for (const auto& [key, offset] : b.agg.costs) weigh(key.pos.values[instr], pool_.Get(offset));
  for (const auto& [key, value] : b.agg.calls)
    weigh(key.site.values[instr], pool_.Get(value.inclusive));
  for (const CodeVersion* v : b.coowners) b.coowner_ids.push_back(Identity(v, b.suffix));
}

int Injector::Impl::Owner(const InBlock& block, uint64_t addr, const CodeVersion** version) {
  *version = block.version;
  if (instr_col_ < 0) return block.identity;
  if (block.jit) {
    const FunctionKey* object_owner = nullptr;
    if (IsObjectCode(addr, &object_owner)) {
      // The ELF symbol that contains the address owns it. The function that had a cost line
      // there is only a fallback for objects without symbols: Callgrind charges tail jumps
      // inside native code to the jumping function (Node's builtins show it).
      if (const FunctionKey* symbol_owner = SymbolOwner(addr)) object_owner = symbol_owner;
      if (!object_owner) return block.identity;
      *version = nullptr;
      int owner = PassIdentity(*object_owner);
      out_[size_t(owner)].moved_in = true;
      ++stats_.object_code_lines;
      return owner;
    }
    if (!block.coowners.empty()) {
      for (size_t i = 0; i < block.coowners.size(); ++i) {
        if (chooser_.FitsBoundary(*block.coowners[i], addr)) {
          *version = block.coowners[i];
          return block.coowner_ids[i];
        }
      }
    }
    const CodeVersion* v = chooser_.Choose(addr, block.version, part_number_);
    if (!v) return block.identity;  // not covered: stays with the block's function
    *version = v;
    int base = Identity(v, 0);
    return base == block.base_identity ? block.identity : base;
  }
  if (!IsJitAddress(block.key.object, addr)) return block.identity;
  const CodeVersion* v = chooser_.Choose(addr, nullptr, part_number_);
  if (!v) return block.identity;
  *version = v;
  return Identity(v, 0);
}

SynthEdge& Injector::Impl::Edge(int caller, int target) {
  SynthEdge& e = out_[size_t(caller)].edges[target];
  if (!e.has_inclusive) {
    e.inclusive = pool_.Alloc();
    e.has_inclusive = true;
  }
  return e;
}

void Injector::Impl::ProcessBlock(InBlock* block) {
  InBlock& b = *block;
  const size_t instr = instr_col_ >= 0 ? size_t(instr_col_) : 0;
  auto addr_of = [&](const Position& p) { return instr_col_ >= 0 ? p.values[instr] : b.entry; };
  // Position and file of a record at `pos` owned by `version` (null: an ordinary function's own
  // code, left as it was).
  auto place = [&](const Position& pos, uint32_t in_file, const CodeVersion* version,
                   Position* out_pos, uint32_t* out_file) {
    if (!version) {
      *out_pos = ConvertPlain(pos);
      *out_file = in_file;
      return;
    }
    uint32_t line = 0;
    LineOf(*version, addr_of(pos), &line, out_file);
    *out_pos = Convert(pos, line);
  };
  auto base_of = [&](int owner) { return owner == b.identity ? b.base_identity : owner; };

  if (!b.jit && b.has_kept) {
    OutFunction& self = out_[size_t(b.identity)];
    if (!self.has_kept || PositionLess(self.max_kept, b.max_kept)) {
      self.has_kept = true;
      self.max_kept = b.max_kept;
      self.max_kept_file = b.max_kept_file;
    }
  }

  // Jumps first: jumps from the block's own code into another function are the best evidence
  // for the call counts of synthesized edges.
  for (const auto& [key, value] : b.agg.jumps) {
    const CodeVersion* site_version = nullptr;
    int owner = Owner(b, addr_of(key.site), &site_version);
    JumpKey out_key = key;
    place(key.site, key.site_file, site_version, &out_key.site, &out_key.site_file);
    out_key.target = ConvertPlain(key.target);
    if (instr_col_ >= 0) {
      uint64_t target_addr = key.target.values[instr];
      const CodeVersion* tv = nullptr;
      if ((b.jit && !IsObjectCode(target_addr)) || IsJitAddress(b.key.object, target_addr))
        tv = chooser_.Choose(target_addr, b.jit ? b.version : nullptr, part_number_);
      if (tv) {
        int target_base = Identity(tv, 0);
        int target = target_base == base_of(owner) ? owner : target_base;
        uint32_t line = 0, file = 0;
        LineOf(*tv, target_addr, &line, &file);
        out_key.target = Convert(key.target, line);
        out_key.target_file = file;
        out_key.target_function = out_[size_t(target)].key.function;
        if (IsOwn(b, owner) && target_base != b.base_identity) {
          SynthEdge& e = Edge(b.identity, target_base);
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
      FunctionKey tk{b.key.object, key.target_file, key.target_function};
      if (IsJitTarget(tk, &target_addr, &suffix)) {
        const CodeVersion* tv = chooser_.Choose(target_addr, nullptr, part_number_);
        if (tv) {
          const OutFunction& t = out_[size_t(Identity(tv, suffix))];
          out_key.target_file = t.key.file;
          out_key.target_function = t.key.function;
        }
      }
    }
    OutFunction& f = out_[size_t(owner)];
    f.needed = true;
    f.agg.AddJump(out_key, value.followed, value.executed);
  }

  std::vector<size_t> fits;
  for (const auto& [key, offset] : b.agg.costs) {
    uint64_t addr = addr_of(key.pos);
    if (!b.coowners.empty()) {
      CoownersAt(b, addr, &fits);
      if (fits.size() > 1) {
        // A line several reused versions share (their common entry): split by entry counts.
        std::vector<uint64_t> copy(pool_.Get(offset).begin(), pool_.Get(offset).end());
        std::vector<uint64_t> weights;
        for (size_t i : fits) weights.push_back(b.coowner_counts[i]);
        std::vector<std::vector<uint64_t>> shares(fits.size(), std::vector<uint64_t>(copy.size()));
        for (size_t e = 0; e < copy.size(); ++e) {
          std::vector<uint64_t> s = Split(copy[e], weights);
          for (size_t k = 0; k < fits.size(); ++k) shares[k][e] = s[k];
        }
        for (size_t k = 0; k < fits.size(); ++k) {
          CostKey out_key;
          place(key.pos, key.file, b.coowners[fits[k]], &out_key.pos, &out_key.file);
          OutFunction& f = out_[size_t(b.coowner_ids[fits[k]])];
          f.needed = true;
          f.agg.AddCost(&pool_, out_key, shares[k]);
        }
        continue;
      }
    }
    const CodeVersion* version = nullptr;
    int owner = Owner(b, addr, &version);
    CostKey out_key;
    place(key.pos, key.file, b.jit || owner != b.identity ? version : nullptr, &out_key.pos,
          &out_key.file);
    std::span<const uint64_t> costs = pool_.Get(offset);
    // Copy: AddCost may grow the pool and invalidate `costs`.
    std::vector<uint64_t>& copy = scratch_costs_;  // reused: one allocation per part, not per line
    copy.assign(costs.begin(), costs.end());
    OutFunction& f = out_[size_t(owner)];
    f.needed = true;
    f.agg.AddCost(&pool_, out_key, copy);
    if (IsOwn(b, owner)) {
      if (b.jit && instr_col_ >= 0 && (!f.has_kept || PositionLess(f.max_kept, out_key.pos))) {
        f.has_kept = true;
        f.max_kept = out_key.pos;
        f.max_kept_file = out_key.file;
      }
      continue;
    }
    SynthEdge& e = Edge(b.identity, owner);
    pool_.Add(e.inclusive, copy);
    ++e.moved_lines;
    uint64_t first = copy.empty() ? 0 : copy[0];
    if (version && addr == version->start) {
      e.entry_count += first;
      e.entry_seen = true;
      e.target_version = version;
    }
    if (addr < e.min_addr) {
      e.min_addr = addr;
      e.min_count = first;
      e.min_pos = out_key.pos;
      e.min_file = out_key.file;
      if (!e.entry_seen) e.target_version = version;
    } else if (addr == e.min_addr) {
      e.min_count += first;
    }
    ++stats_.cost_lines_moved;
    stats_.cost_moved += first;
  }

  for (const auto& [key, value] : b.agg.calls) {
    const CodeVersion* site_version = nullptr;
    int owner = Owner(b, addr_of(key.site), &site_version);
    CallKey out_key;
    place(key.site, key.site_file, b.jit || owner != b.identity ? site_version : nullptr,
          &out_key.site, &out_key.site_file);
    std::span<const uint64_t> incl = pool_.Get(value.inclusive);
    std::vector<uint64_t>& copy = scratch_costs_;
    copy.assign(incl.begin(), incl.end());
    uint64_t target_addr = 0;
    uint32_t suffix = 0;
    bool dropped = false;
    if (IsJitTarget(key.target, &target_addr, &suffix)) {
      auto found = block_index_.find(key.target);
      const CodeVersion* tv = nullptr;
      int target = -1;
      if (found != block_index_.end() && blocks_[size_t(found->second)].jit &&
          !blocks_[size_t(found->second)].coowners.empty()) {
        // A call into a block that several reused versions share: split it among them.
        const InBlock& tb = blocks_[size_t(found->second)];
        std::vector<uint64_t> counts = Split(value.count, tb.coowner_counts);
        std::vector<std::vector<uint64_t>> incl_shares(tb.coowners.size(),
                                                       std::vector<uint64_t>(copy.size()));
        for (size_t e = 0; e < copy.size(); ++e) {
          std::vector<uint64_t> w;
          for (const auto& weights : tb.coowner_weights) w.push_back(weights[e]);
          std::vector<uint64_t> s = Split(copy[e], w);
          for (size_t k = 0; k < s.size(); ++k) incl_shares[k][e] = s[k];
        }
        uint64_t entered_at = instr_col_ >= 0 ? key.target_pos.values[instr] : target_addr;
        OutFunction& f = out_[size_t(owner)];
        f.needed = true;
        for (size_t k = 0; k < tb.coowners.size(); ++k) {
          uint32_t line = 0, file = 0;
          LineOf(*tb.coowners[k], entered_at, &line, &file);
          CallKey split_key = out_key;
          split_key.target = out_[size_t(tb.coowner_ids[k])].key;
          split_key.target_pos = Convert(key.target_pos, line);
          out_[size_t(tb.coowner_ids[k])].needed = true;
          f.agg.AddCall(&pool_, split_key, counts[k], incl_shares[k]);
        }
        ++stats_.calls_renamed;
        if (!IsOwn(b, owner)) {
          SynthEdge& e = Edge(b.identity, owner);
          pool_.Add(e.inclusive, copy);
          if (!e.target_version) e.target_version = site_version;
        }
        continue;
      }
      if (found != block_index_.end() && blocks_[size_t(found->second)].jit) {
        const InBlock& tb = blocks_[size_t(found->second)];
        tv = tb.version;
        target = tb.identity;
      } else {
        tv = chooser_.Choose(target_addr, nullptr, part_number_);
        if (!tv) tv = index_.Lookup(target_addr);
        target = Identity(tv, suffix);
      }
      int target_base = suffix ? Identity(tv, 0) : target;
      uint64_t entered_at = instr_col_ >= 0 ? key.target_pos.values[instr] : target_addr;
      if (target_base == base_of(owner) && target == owner && entered_at != tv->start) {
        // A call between pieces of one function, not to its entry: an internal transfer. The
        // target piece's cost is already this function's own.
        dropped = true;
        ++stats_.internal_transfers_dropped;
      } else {
        uint32_t line = 0, file = 0;
        LineOf(*tv, entered_at, &line, &file);
        out_key.target = out_[size_t(target)].key;
        out_key.target_pos = Convert(key.target_pos, line);
        out_[size_t(target)].needed = true;
        ++stats_.calls_renamed;
      }
    } else {
      out_key.target = key.target;
      out_key.target_pos = ConvertPlain(key.target_pos);
    }
    if (!dropped) {
      OutFunction& f = out_[size_t(owner)];
      f.needed = true;
      f.agg.AddCall(&pool_, out_key, value.count, copy);
    }
    if (!IsOwn(b, owner)) {
      SynthEdge& e = Edge(b.identity, owner);
      pool_.Add(e.inclusive, copy);
      if (!e.target_version) e.target_version = site_version;
    }
  }
}

void Injector::Impl::FinalizeEdges() {
  for (size_t caller = 0; caller < out_.size(); ++caller) {
    for (auto& [target, e] : out_[caller].edges) {
      if (e.moved_lines == 0 && !e.target_version) continue;  // jump evidence only
      // Moved into an ordinary function (object code): no version, positions as recorded.
      bool plain = !e.target_version;
      const CodeVersion* tv = e.target_version;
      uint64_t count = 1;
      if (e.jump_count > 0) {
        count = e.jump_count;
      } else if (first_event_is_ir_) {
        count = e.entry_seen ? e.entry_count : e.min_count;
      }
      if (count == 0) count = 1;
      OutFunction& f = out_[caller];
      CallKey key;
      if (e.has_jump_site) {
        key.site = e.jump_site;
        key.site_file = e.jump_site_file;
      } else if (f.has_kept) {
        key.site = f.max_kept;
        key.site_file = f.max_kept_file;
      } else if (plain) {
        key.site = e.min_pos;
        key.site_file = e.min_file;
      } else if (tv) {
        uint32_t line = 0;
        if (instr_col_ >= 0) key.site.values[size_t(instr_col_)] = e.min_addr;
        LineOf(*tv, e.min_addr, &line, &key.site_file);
        if (out_line_col_ >= 0) key.site.values[size_t(out_line_col_)] = line;
      }
      key.target = out_[size_t(target)].key;
      if (plain) key.target_pos = e.min_pos;
      if (tv) {
        uint64_t entry = e.entry_seen || e.min_addr == UINT64_MAX ? tv->start : e.min_addr;
        uint32_t line = 0, file = 0;
        LineOf(*tv, entry, &line, &file);
        if (instr_col_ >= 0) key.target_pos.values[size_t(instr_col_)] = entry;
        if (out_line_col_ >= 0) key.target_pos.values[size_t(out_line_col_)] = line;
      }
      std::span<const uint64_t> incl = pool_.Get(e.inclusive);
      std::vector<uint64_t> copy(incl.begin(), incl.end());
      f.needed = true;
      f.agg.AddCall(&pool_, key, count, copy);
      out_[size_t(target)].needed = true;
      ++stats_.edges_synthesized;
    }
  }
}

void Injector::Impl::EmitAll() {
  for (const OutFunction& f : out_) {
    if (!f.needed) continue;
    FunctionContext ctx{Name{f.key.object, names_.Text(f.key.object)},
                        Name{f.key.file, names_.Text(f.key.file)},
                        Name{f.key.function, names_.Text(f.key.function)}};
    downstream_->OnFunction(ctx);
    out_acc_.Function(f.key);
    if (f.jit) resolved_functions_.insert(f.key);

    std::vector<const std::pair<const CostKey, size_t>*> costs;
    for (const auto& entry : f.agg.costs) costs.push_back(&entry);
    std::sort(costs.begin(), costs.end(), [](auto* a, auto* b) {
      if (a->first.pos != b->first.pos) return PositionLess(a->first.pos, b->first.pos);
      return a->first.file < b->first.file;
    });
    for (const auto* entry : costs) {
      CostRecord rec{entry->first.pos, Name{entry->first.file, names_.Text(entry->first.file)},
                     pool_.Get(entry->second)};
      downstream_->OnCost(rec);
      out_acc_.Cost(rec.costs);
    }

    std::vector<const std::pair<const CallKey, CallValue>*> calls;
    for (const auto& entry : f.agg.calls) calls.push_back(&entry);
    std::sort(calls.begin(), calls.end(), [](auto* a, auto* b) {
      const CallKey& x = a->first;
      const CallKey& y = b->first;
      if (x.site != y.site) return PositionLess(x.site, y.site);
      if (x.site_file != y.site_file) return x.site_file < y.site_file;
      if (!(x.target == y.target))
        return std::tie(x.target.object, x.target.file, x.target.function) <
               std::tie(y.target.object, y.target.file, y.target.function);
      return PositionLess(x.target_pos, y.target_pos);
    });
    for (const auto* entry : calls) {
      const CallKey& k = entry->first;
      CallRecord rec;
      rec.count = entry->second.count;
      rec.target = k.target_pos;
      rec.source = k.site;
      rec.source_file = Name{k.site_file, names_.Text(k.site_file)};
      rec.target_object = Name{k.target.object, names_.Text(k.target.object)};
      rec.target_file = Name{k.target.file, names_.Text(k.target.file)};
      rec.target_function = Name{k.target.function, names_.Text(k.target.function)};
      rec.inclusive = pool_.Get(entry->second.inclusive);
      downstream_->OnCall(rec);
      out_acc_.Call(k.target, rec.inclusive);
    }

    std::vector<const std::pair<const JumpKey, JumpValue>*> jumps;
    for (const auto& entry : f.agg.jumps) jumps.push_back(&entry);
    std::sort(jumps.begin(), jumps.end(), [](auto* a, auto* b) {
      const JumpKey& x = a->first;
      const JumpKey& y = b->first;
      if (x.site != y.site) return PositionLess(x.site, y.site);
      if (x.target != y.target) return PositionLess(x.target, y.target);
      return std::tie(x.site_file, x.target_file, x.target_function, x.conditional) <
             std::tie(y.site_file, y.target_file, y.target_function, y.conditional);
    });
    for (const auto* entry : jumps) {
      const JumpKey& k = entry->first;
      JumpRecord rec;
      rec.conditional = k.conditional;
      rec.followed = entry->second.followed;
      rec.executed = entry->second.executed;
      rec.target = k.target;
      rec.source = k.site;
      rec.source_file = Name{k.site_file, names_.Text(k.site_file)};
      rec.target_file = Name{k.target_file, names_.Text(k.target_file)};
      rec.target_function = Name{k.target_function, names_.Text(k.target_function)};
      downstream_->OnJump(rec);
    }
  }
}

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
    auto block = block_index_.find(key);
    if (block != block_index_.end() && blocks_[size_t(block->second)].jit) continue;
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
    if (unnamed(key)) stats_.unnamed_jit_cost_before += entry.self[0];
  for (const auto& [key, entry] : out_acc_.functions()) {
    if (!unnamed(key)) continue;
    stats_.unnamed_jit_cost_after += entry.self[0];
    if (entry.self[0] > 0)
      unresolved_cost_[std::string(names_.Text(key.function))] += entry.self[0];
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
