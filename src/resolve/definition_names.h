// One KCachegrind function per JIT definition.
//
// KCachegrind identifies a function by its name plus the base names of its file and object
// (TraceData::function keys on name + file->shortName() + object->shortName()). The runtimes'
// name conventions turn every nameless V8 or MoarVM frame into `(anonymous)` in its file, and two
// classes' `get` in one file share a name, so distinct definitions would merge into one function.
//
// A definition is where code was written: object, file, name and the position the name gives
// (line, and column where V8's `JS:` names have one), else the line table's first line, or for
// names without a position the tag that the runtime gives instead (JavaScriptCore's `#hash` of
// the function's source). Versions and tiers of one definition (V8's ~ ^ + * tiers, JSC's
// Baseline, DFG and FTL, moved or re-JITed code) agree on all of it and share one function. Only
// where two definitions would share KCachegrind's key does the name say which one it is:
//   `NAME#TAG`          for a definition with a tag (JSC: `fib#BbF6aX`),
//   `NAME:LINE`         when the lines tell the group's definitions apart,
//   `NAME:LINE:COLUMN`  when only line and column do,
//   `NAME (FILE:LINE:COLUMN)` otherwise (same base name, different directories).
// A definition with neither position nor tag keeps the bare name.
//
// Memory: Add keeps 24 bytes per version (two 64-bit hashes and the position) until Finish, which
// keeps only the groups that need a position. Build, which sees the versions twice, keeps 8 bytes
// per version (the group hash) and 24 only for versions whose group another version shares: in a
// 10-million-line perf map of distinct functions that is 80 MB instead of 240. Groups and
// definitions are told apart by 64-bit hashes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cg_inject {

/// A definition as the injector will name it.
struct DefinitionSite {
  std::string_view object{}, file{}, name{};
  uint32_t line = 0, column = 0;
  std::string_view tag{};  // CodeVersion::definition_tag: `#hash`, or empty
};

/// Collects every definition first (Add), decides once (Finish), then names each one (NameOf).
class DefinitionNames {
 public:
  void Add(const DefinitionSite& site);
  void Finish();
  /// Add of site_of(i) for every i below `count` (sites with an empty name left out), then
  /// Finish, in two passes over the sites: first which groups have more than one version, then
  /// only those versions' definitions. site_of must give the same site for an i both times.
  void Build(size_t count, const std::function<DefinitionSite(size_t)>& site_of);
  /// `site.name`, with the definition's position appended where the rule above asks for it.
  std::string NameOf(const DefinitionSite& site) const;
  /// Groups where the position is appended (for tests and --stats).
  int64_t disambiguated_groups() const { return int64_t(formats_.size()); }

 private:
  enum class Format : uint8_t { kLine, kLineColumn, kFileLineColumn };
  struct Entry {
    uint64_t group = 0, definition = 0;
    uint32_t line = 0, column = 0;
  };
  static uint64_t GroupHash(const DefinitionSite& site);
  static uint64_t DefinitionHash(const DefinitionSite& site);

  std::vector<Entry> entries_;                    // until Finish
  std::unordered_map<uint64_t, Format> formats_;  // group hash -> format, groups that need one
};

}  // namespace cg_inject
