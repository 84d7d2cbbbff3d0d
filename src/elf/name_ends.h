// Where the NUL-terminated names of an ELF string table end, found in time linear in the file's
// size however a hostile file lays them out (issue 36 item 1).
//
// Looking for each name's NUL from its start is quadratic when names overlap: 250,000 symbols
// whose names start one byte apart in one long run of letters each scan the rest of the run. So
// a name is first looked for within a short window (every name of a real table but a few C++
// ones ends there), and the rest are resolved together, sorted by where they start: a name that
// starts before the NUL found for the previous one ends at that same NUL, so no byte of the file
// is scanned twice.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cg_inject {

class NameEnds {
 public:
  /// Bytes looked at from a name's start before it is left for Resolve.
  static constexpr uint64_t kQuickScan = 256;

  /// `file`: the whole mapped file the tables lie in.
  explicit NameEnds(std::string_view file) : file_(file) {}

  /// The name at `offset` of a string table [table_begin, table_end) of the file, when its NUL
  /// lies within kQuickScan bytes: true and `*name` set. An offset outside the table gives true
  /// and an empty name. Otherwise false: the name is to be asked for again with Later/Resolve.
  bool Quick(uint64_t table_begin, uint64_t table_end, uint64_t offset,
             std::string_view* name) const;

  /// Remembers the name at `offset` of the table [table_begin, table_end) under `tag` (the
  /// caller's index of what the name belongs to).
  void Later(uint64_t table_begin, uint64_t table_end, uint64_t offset, uint32_t tag);

  struct Resolved {
    uint32_t tag;
    std::string_view name;  // empty when no NUL ends it inside its table
  };
  /// The names given to Later, each scanned once at most; clears them. Order: by position.
  std::vector<Resolved> Resolve();

 private:
  struct Pending {
    uint64_t start, limit;
    uint32_t tag;
  };
  std::string_view file_;
  std::vector<Pending> pending_;
};

}  // namespace cg_inject
