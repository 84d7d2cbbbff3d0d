// One KCachegrind function per JIT definition.
//
// KCachegrind identifies a function by its name plus the base names of its file and object
// (TraceData::function keys on name + file->shortName() + object->shortName()). The runtimes'
// name conventions turn every nameless V8 or MoarVM frame into `(anonymous)` in its file, and two
// classes' `get` in one file share a name, so distinct definitions would merge into one function.
//
// A definition is where code was written: object, file, name and the position the name gives
// (line, and column where V8's `JS:` names have one), else the line table's first line. Versions
// and tiers of one definition (V8's ~ ^ + * tiers, moved or re-JITed code) agree on all of it and
// share one function. Only where two definitions would share KCachegrind's key does the name say
// where it is defined:
//   `NAME:LINE`         when the lines tell the group's definitions apart,
//   `NAME:LINE:COLUMN`  when only line and column do,
//   `NAME (FILE:LINE:COLUMN)` otherwise (same base name, different directories).
// A definition with no position at all keeps the bare name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cg_inject {

/// A definition as the injector will name it. Views must outlive the DefinitionNames.
struct DefinitionSite {
  std::string_view object, file, name;
  uint32_t line = 0, column = 0;
  bool operator==(const DefinitionSite&) const = default;
};

/// Collects every definition first (Add), decides once (Finish), then names each one (NameOf).
class DefinitionNames {
 public:
  void Add(const DefinitionSite& site);
  void Finish();
  /// `site.name`, with the definition's position appended where the rule above asks for it.
  std::string NameOf(const DefinitionSite& site) const;
  /// Groups where the position was appended (for tests and --stats).
  int64_t disambiguated_groups() const { return disambiguated_; }

 private:
  enum class Format : uint8_t { kBare, kLine, kLineColumn, kFileLineColumn };
  struct GroupKey {
    std::string_view object_base, file_base, name;
    bool operator==(const GroupKey&) const = default;
  };
  struct Hash {
    size_t operator()(const GroupKey& k) const;
    size_t operator()(const DefinitionSite& s) const;
  };
  struct Group {
    std::vector<DefinitionSite> sites;  // distinct definitions
    Format format = Format::kBare;
  };
  static GroupKey KeyOf(const DefinitionSite& site);
  static Format Choose(const std::vector<DefinitionSite>& sites);

  std::unordered_set<DefinitionSite, Hash> seen_;
  std::unordered_map<GroupKey, Group, Hash> groups_;
  int64_t disambiguated_ = 0;
};

}  // namespace cg_inject
