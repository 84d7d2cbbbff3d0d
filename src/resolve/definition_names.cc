#include "resolve/definition_names.h"

#include <algorithm>
#include <set>

namespace cg_inject {
namespace {

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// splitmix64 finalizer over a running combination: cheap and well mixed for 64-bit keys.
uint64_t Mix(uint64_t seed, uint64_t value) {
  uint64_t h = seed ^ (value + 0x9E3779B97F4A7C15ull + (seed << 6) + (seed >> 2));
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

uint64_t HashText(std::string_view text) { return std::hash<std::string_view>{}(text); }

}  // namespace

uint64_t DefinitionNames::GroupHash(const DefinitionSite& site) {
  return Mix(Mix(HashText(site.name), HashText(BaseName(site.file))),
             HashText(BaseName(site.object)));
}

uint64_t DefinitionNames::DefinitionHash(const DefinitionSite& site) {
  uint64_t h = Mix(Mix(HashText(site.name), HashText(site.file)), HashText(site.object));
  h = Mix(h, (uint64_t{site.line} << 32) | site.column);
  return site.tag.empty() ? h : Mix(h, HashText(site.tag));
}

void DefinitionNames::Add(const DefinitionSite& site) {
  entries_.push_back({GroupHash(site), DefinitionHash(site), site.line, site.column});
}

void DefinitionNames::Build(size_t count, const std::function<DefinitionSite(size_t)>& site_of) {
  // A group of one version has one definition and keeps its bare name: only groups seen twice
  // need their definitions collected.
  std::vector<uint64_t> shared;
  {
    std::vector<uint64_t> groups;
    groups.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (DefinitionSite site = site_of(i); !site.name.empty()) groups.push_back(GroupHash(site));
    }
    std::sort(groups.begin(), groups.end());
    for (size_t i = 1; i < groups.size(); ++i) {
      if (groups[i] == groups[i - 1] && (shared.empty() || shared.back() != groups[i]))
        shared.push_back(groups[i]);
    }
  }
  for (size_t i = 0; i < count && !shared.empty(); ++i) {
    DefinitionSite site = site_of(i);
    if (site.name.empty()) continue;
    uint64_t group = GroupHash(site);
    if (std::binary_search(shared.begin(), shared.end(), group))
      entries_.push_back({group, DefinitionHash(site), site.line, site.column});
  }
  Finish();
}

void DefinitionNames::Finish() {
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.group != b.group ? a.group < b.group : a.definition < b.definition;
  });
  for (size_t i = 0; i < entries_.size();) {
    size_t end = i;
    size_t definitions = 0;
    while (end < entries_.size() && entries_[end].group == entries_[i].group) {
      if (end == i || entries_[end].definition != entries_[end - 1].definition) ++definitions;
      ++end;
    }
    if (definitions > 1) {
      std::set<uint32_t> lines;
      std::set<std::pair<uint32_t, uint32_t>> positions;
      for (size_t k = i; k < end; ++k) {
        if (k > i && entries_[k].definition == entries_[k - 1].definition) continue;
        lines.insert(entries_[k].line);
        positions.emplace(entries_[k].line, entries_[k].column);
      }
      formats_[entries_[i].group] = lines.size() == definitions       ? Format::kLine
                                    : positions.size() == definitions ? Format::kLineColumn
                                                                      : Format::kFileLineColumn;
    }
    i = end;
  }
  entries_.clear();
  entries_.shrink_to_fit();
}

std::string DefinitionNames::NameOf(const DefinitionSite& site) const {
  std::string name(site.name);
  // A definition without a position or tag cannot say which it is; it keeps the bare name, which
  // no other definition of the group has.
  if (formats_.empty() || (site.line == 0 && site.column == 0 && site.tag.empty())) return name;
  auto it = formats_.find(GroupHash(site));
  if (it == formats_.end()) return name;
  if (!site.tag.empty()) return name.append(site.tag);
  switch (it->second) {
    case Format::kLine:
      return name + ":" + std::to_string(site.line);
    case Format::kLineColumn:
      return name + ":" + std::to_string(site.line) + ":" + std::to_string(site.column);
    case Format::kFileLineColumn:
      break;
  }
  return name + " (" + std::string(site.file) + ":" + std::to_string(site.line) + ":" +
         std::to_string(site.column) + ")";
}

}  // namespace cg_inject
