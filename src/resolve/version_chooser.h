// Picks, for an address in a profile, which code version (of those a SymbolIndex holds) ran there.
// Versions are filtered by instruction boundaries decoded from their code bytes (Capstone for
// x86-64, fixed 4-byte instructions for AArch64); what is left is resolved by the rules in
// include/cg_inject/inject.h: the block's own version first, then the part number.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "cg_inject/inject.h"

namespace cg_inject {

class CodeVersion;
class SymbolIndex;

class VersionChooser {
 public:
  VersionChooser(const SymbolIndex& index, CodeArch arch);
  ~VersionChooser();
  VersionChooser(const VersionChooser&) = delete;
  VersionChooser& operator=(const VersionChooser&) = delete;

  /// Whether `addr` can be the start of an instruction of `version`: inside its range and, when
  /// it has code bytes and the architecture is known, on a decoded instruction boundary.
  bool FitsBoundary(const CodeVersion& version, uint64_t addr);
  /// Whether a call line at `addr` can be `version`'s: it fits its boundaries and, when its code
  /// is decoded there, the instruction transfers control (call, jump or return: Callgrind makes
  /// calls of jumps and returns too).
  bool FitsCall(const CodeVersion& version, uint64_t addr);

  /// The version that ran at `addr`, or null when no version covers it. `preferred` (the version
  /// of the enclosing block, may be null) wins when it fits; `part_number` (1-based) breaks
  /// remaining ties: the part_number-th fitting version in load order, the last when fewer.
  /// With `call` (a call line's address), versions with a control transfer there come first,
  /// `preferred` included.
  /// `tie`, when given, is cleared, and filled with the versions that tied (in load order) when
  /// nothing told them apart: none has code bytes (a perf map's entries), so the part number
  /// is all that chose. A caller for whom the part number means nothing (a profile of one part)
  /// can then say the choice was not made (issue 33: a perf map's reused addresses).
  const CodeVersion* Choose(uint64_t addr, const CodeVersion* preferred, int64_t part_number,
                            bool call = false, std::vector<const CodeVersion*>* tie = nullptr);

  /// The version of a block entered at `entry` whose cost lines and call sites are at `addrs`,
  /// and whose call sites are also at `calls`: among versions containing `entry`, the one on whose
  /// boundaries most of `addrs` lie, each call site where it has a control transfer counting once
  /// more; ties as in Choose. Null when no version contains `entry`.
  /// `tie` as for Choose.
  const CodeVersion* ChooseForBlock(uint64_t entry, std::span<const uint64_t> addrs,
                                    int64_t part_number, std::span<const uint64_t> calls = {},
                                    std::vector<const CodeVersion*>* tie = nullptr);

  /// Distinct addresses that had more than one candidate version / needed the part rule.
  int64_t reused_addresses() const { return reused_addresses_; }
  int64_t ambiguous_choices() const { return ambiguous_choices_; }

 private:
  const std::vector<uint8_t>& Boundaries(const CodeVersion& version);
  /// 1: a control transfer of `version` starts at `addr`; 0: `addr` is none of it (off its
  /// boundaries, or another instruction); -1: its bytes say nothing there.
  int CallAt(const CodeVersion& version, uint64_t addr);
  /// The architecture of `version`'s code: its source's e_machine (jitdump header) when known,
  /// else the one given to the constructor.
  CodeArch ArchOf(const CodeVersion& version) const;
  void NoteReuse(uint64_t addr, bool ambiguous);

  const SymbolIndex& index_;
  CodeArch arch_;
  // Per version: one flag per code byte, 1 where an instruction starts. Built on first use, so
  // memory grows with the versions the profile touches.
  std::unordered_map<const CodeVersion*, std::vector<uint8_t>> boundaries_;
  std::unordered_map<uint64_t, bool> reuse_seen_;  // addr -> counted as ambiguous already
  std::vector<const CodeVersion*> scratch_;
  // The versions at the address Choose or ChooseForBlock asks about, kept for their capacity
  // (an allocation per cost line was 6% of the erlc capture's run).
  std::vector<const CodeVersion*> all_;
  // The last versions Choose found alone, whose ranges no other version overlaps (null: none
  // yet), replaced in turn: inside such a range the version is the answer whatever else is
  // asked, and a block's lines in other functions' code mostly ask about a few versions in turn
  // (erlc: 95% of 2.0M questions; tsc's 384K are spread over too many versions for any cache).
  std::array<const CodeVersion*, 4> lone_{};
  size_t next_lone_ = 0;
  int64_t reused_addresses_ = 0;
  int64_t ambiguous_choices_ = 0;
};

}  // namespace cg_inject
