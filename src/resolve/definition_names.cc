#include "resolve/definition_names.h"

#include <set>
#include <tuple>

namespace cg_inject {
namespace {

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

size_t Mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

size_t DefinitionNames::Hash::operator()(const GroupKey& k) const {
  std::hash<std::string_view> h;
  return Mix(Mix(h(k.name), h(k.file_base)), h(k.object_base));
}

size_t DefinitionNames::Hash::operator()(const DefinitionSite& s) const {
  std::hash<std::string_view> h;
  size_t seed = Mix(Mix(h(s.name), h(s.file)), h(s.object));
  return Mix(seed, (uint64_t{s.line} << 32) | s.column);
}

DefinitionNames::GroupKey DefinitionNames::KeyOf(const DefinitionSite& site) {
  return {BaseName(site.object), BaseName(site.file), site.name};
}

DefinitionNames::Format DefinitionNames::Choose(const std::vector<DefinitionSite>& sites) {
  if (sites.size() < 2) return Format::kBare;
  std::set<uint32_t> lines;
  std::set<std::pair<uint32_t, uint32_t>> positions;
  for (const DefinitionSite& s : sites) {
    lines.insert(s.line);
    positions.emplace(s.line, s.column);
  }
  if (lines.size() == sites.size()) return Format::kLine;
  if (positions.size() == sites.size()) return Format::kLineColumn;
  return Format::kFileLineColumn;
}

void DefinitionNames::Add(const DefinitionSite& site) {
  if (!seen_.insert(site).second) return;
  groups_[KeyOf(site)].sites.push_back(site);
}

void DefinitionNames::Finish() {
  seen_.clear();
  for (auto& [key, group] : groups_) {
    group.format = Choose(group.sites);
    if (group.format != Format::kBare) ++disambiguated_;
    group.sites.clear();  // only the format is needed from here on
    group.sites.shrink_to_fit();
  }
}

std::string DefinitionNames::NameOf(const DefinitionSite& site) const {
  std::string name(site.name);
  auto it = groups_.find(KeyOf(site));
  if (it == groups_.end() || it->second.format == Format::kBare) return name;
  // A definition without a position cannot say where it is; it keeps the bare name, which no
  // other definition of the group has.
  if (site.line == 0 && site.column == 0) return name;
  switch (it->second.format) {
    case Format::kLine:
      return name + ":" + std::to_string(site.line);
    case Format::kLineColumn:
      return name + ":" + std::to_string(site.line) + ":" + std::to_string(site.column);
    default:
      return name + " (" + std::string(site.file) + ":" + std::to_string(site.line) + ":" +
             std::to_string(site.column) + ")";
  }
}

}  // namespace cg_inject
