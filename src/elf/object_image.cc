// ObjectImage: sorted arrays built once, binary-searched afterwards. Symbols are kept one per
// address (aliases folded into the first-preferred name) because the resolver asks "which function
// is at this address" and one answer per address keeps the output stable.
#include "cg_inject/object_catalog.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <numeric>
#include <string_view>
#include <unordered_set>

namespace cg_inject {
namespace {

// One past the last address a symbol contains; a size-0 symbol contains its own address.
uint64_t SymbolEnd(const ElfSymbol& s) {
  const uint64_t span = std::max<uint64_t>(s.size, 1);
  return s.addr > std::numeric_limits<uint64_t>::max() - span ? std::numeric_limits<uint64_t>::max()
                                                              : s.addr + span;
}

}  // namespace

ObjectImage::ObjectImage(std::string path, bool is_pie, std::vector<LoadSegment> segments,
                         std::vector<ElfSymbol> symbols, std::string debug_file,
                         std::shared_ptr<const void> names)
    : path_(std::move(path)),
      debug_file_(std::move(debug_file)),
      is_pie_(is_pie),
      segments_(std::move(segments)),
      names_(std::move(names)) {
  if (!names_) {  // one block for every name, which moving the image leaves in place
    size_t bytes = 0;
    for (const ElfSymbol& s : symbols) bytes += s.name.size();
    copied_names_ = std::make_unique<char[]>(std::max<size_t>(bytes, 1));
    char* at = copied_names_.get();
    for (ElfSymbol& s : symbols) {
      std::copy(s.name.begin(), s.name.end(), at);
      s.name = std::string_view(at, s.name.size());
      at += s.name.size();
    }
  }
  bool first = true;
  for (const LoadSegment& seg : segments_) {
    if (seg.size == 0) continue;
    has_code_ = has_code_ || seg.executable;
    const uint64_t end =
        seg.addr + seg.size < seg.addr ? std::numeric_limits<uint64_t>::max() : seg.addr + seg.size;
    extent_begin_ = first ? seg.addr : std::min(extent_begin_, seg.addr);
    extent_end_ = first ? end : std::max(extent_end_, end);
    first = false;
  }

  // Group by address, keeping the caller's preference order within one address.
  std::vector<uint32_t> order(symbols.size());
  std::iota(order.begin(), order.end(), 0u);
  auto by_addr = [&](uint32_t a, uint32_t b) { return symbols[a].addr < symbols[b].addr; };
  // The ELF reader gives them sorted already.
  if (!std::is_sorted(order.begin(), order.end(), by_addr)) {
    std::stable_sort(order.begin(), order.end(), by_addr);
  }

  std::vector<size_t> kept;  // aliases kept for one address; reused across groups
  // The names kept at one address, for an address with many: comparing each with every kept
  // one was quadratic (250,000 symbols at one address took 85 s, issue 36).
  constexpr size_t kFewAliases = 16;
  std::unordered_set<std::string_view> kept_names;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && symbols[order[end]].addr == symbols[order[begin]].addr) ++end;
    size_t primary = begin;
    for (size_t i = begin; i < end; ++i) {
      if (symbols[order[i]].size != 0) {
        primary = i;
        break;
      }
    }
    kept.clear();
    kept_names.clear();
    const bool many = end - begin > kFewAliases;
    for (size_t i = begin; i < end; ++i) {
      const std::string_view name = symbols[order[i]].name;
      if (i == primary || name == symbols[order[primary]].name) continue;
      const bool fresh = many ? kept_names.insert(name).second
                              : std::none_of(kept.begin(), kept.end(), [&](size_t k) {
                                  return symbols[order[k]].name == name;
                                });
      if (fresh) kept.push_back(i);
    }
    alias_begin_.push_back(static_cast<uint32_t>(alias_names_.size()));
    symbols_.push_back(symbols[order[primary]]);
    for (size_t k : kept) alias_names_.push_back(symbols[order[k]].name);
    begin = end;
  }
  alias_begin_.push_back(static_cast<uint32_t>(alias_names_.size()));

  max_end_.reserve(symbols_.size());
  uint64_t max_end = 0;
  for (const ElfSymbol& s : symbols_) {
    max_end = std::max(max_end, SymbolEnd(s));
    max_end_.push_back(max_end);
  }
}

const std::vector<std::pair<std::string_view, uint32_t>>& ObjectImage::ByName() const {
  // Built on the first lookup by name: the injector only asks by address, and sorting the names
  // of /usr/bin/node's 110k functions was a third of the cost of reading it (issue 24).
  std::call_once(*by_name_once_, [this] {
    by_name_.reserve(symbols_.size() + alias_names_.size());
    for (uint32_t i = 0; i < symbols_.size(); ++i) {
      by_name_.emplace_back(symbols_[i].name, i);
      for (uint32_t a = alias_begin_[i]; a < alias_begin_[i + 1]; ++a) {
        by_name_.emplace_back(alias_names_[a], i);
      }
    }
    std::sort(by_name_.begin(), by_name_.end());
  });
  return by_name_;
}

void ObjectImage::SetIndirect(std::vector<uint64_t> addresses) {
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  indirect_ = std::move(addresses);
}

bool ObjectImage::IsIndirect(std::string_view name) const {
  if (indirect_.empty()) return false;
  for (const ElfSymbol* s : FindSymbols(name)) {
    if (std::binary_search(indirect_.begin(), indirect_.end(), s->addr)) return true;
  }
  return false;
}

bool ObjectImage::IsCode(uint64_t addr) const {
  return std::any_of(segments_.begin(), segments_.end(), [addr](const LoadSegment& seg) {
    return seg.executable && seg.Contains(addr);
  });
}

const ElfSymbol* ObjectImage::LookupSymbol(uint64_t addr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const ElfSymbol& s) { return a < s.addr; });
  // Walk back over earlier symbols only while one of them could still reach `addr`; without
  // overlapping symbols this stops at the first step.
  for (auto i = static_cast<size_t>(it - symbols_.begin()); i-- > 0;) {
    if (symbols_[i].Contains(addr)) return &symbols_[i];
    if (max_end_[i] <= addr) break;
  }
  return nullptr;
}

const ElfSymbol* ObjectImage::FindSymbol(std::string_view name) const {
  const auto& by_name = ByName();
  auto it = std::lower_bound(by_name.begin(), by_name.end(), name,
                             [](const std::pair<std::string_view, uint32_t>& e,
                                std::string_view n) { return e.first < n; });
  if (it == by_name.end() || it->first != name) return nullptr;
  return &symbols_[it->second];
}

std::vector<const ElfSymbol*> ObjectImage::FindSymbols(std::string_view name) const {
  std::vector<const ElfSymbol*> found;
  const auto& by_name = ByName();
  auto it = std::lower_bound(by_name.begin(), by_name.end(), name,
                             [](const std::pair<std::string_view, uint32_t>& e,
                                std::string_view n) { return e.first < n; });
  for (; it != by_name.end() && it->first == name; ++it) {
    const ElfSymbol* s = &symbols_[it->second];
    if (found.empty() || found.back() != s) found.push_back(s);
  }
  return found;
}

std::vector<std::string_view> ObjectImage::AliasesOf(const ElfSymbol& symbol) const {
  std::vector<std::string_view> aliases;
  if (symbols_.empty() || &symbol < symbols_.data() ||
      &symbol >= symbols_.data() + symbols_.size()) {
    return aliases;
  }
  const auto i = static_cast<size_t>(&symbol - symbols_.data());
  for (uint32_t a = alias_begin_[i]; a < alias_begin_[i + 1]; ++a)
    aliases.push_back(alias_names_[a]);
  return aliases;
}

}  // namespace cg_inject
