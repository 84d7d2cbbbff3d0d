// Who owns each record of a block: the rule at the heart of the injector (include/cg_inject/
// inject.h). Callgrind charges a tail jump's target code to the jumping function's block, so a
// JIT block's cost lines may lie in other functions' code; the version that ran at each address
// decides whose cost it is. A record in the block's own code stays with the block's function; one
// in another version's code goes to that version's function (and the injector adds the edge); one
// in a real object's code goes back to that object's function; an ordinary block's records in
// JIT code go to the JIT function that ran there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rewrite/reuse_split.h"

namespace cg_inject {

class CodeVersion;
class ObjectCode;
class OutputFunctions;
class PositionColumns;
class SymbolIndex;
class VersionChooser;
struct InFunction;

/// What a block resolved to (the injector's ResolveBlock): its version and output function.
struct ResolvedBlock {
  const CodeVersion* version = nullptr;  // null: an ordinary function's block
  int identity = -1;                     // its output function (with the input's recursion suffix)
  int base_identity = -1;                // the same without the suffix
  ReuseSplit split;                      // a reused block's versions, when several ran in it

  /// Whether `owner` is the block's function or one of its split versions' functions.
  bool IsOwn(int owner) const {
    return owner == identity || std::find(split.identities.begin(), split.identities.end(),
                                          owner) != split.identities.end();
  }
  /// `owner` without the block's recursion suffix.
  int BaseOf(int owner) const { return owner == identity ? base_identity : owner; }
};

/// Decides the owner of each record of a block, as an output function of `out`.
class RecordOwners {
 public:
  RecordOwners(const SymbolIndex& index, VersionChooser* chooser, ObjectCode* objects,
               OutputFunctions* out, const PositionColumns* columns);

  /// The part whose blocks follow (1-based: it breaks ties among reused versions, unless
  /// `name_ties`: then code that versions without code bytes tie for goes to their ambiguous
  /// function, OutputFunctions::Ambiguous).
  void StartPart(int64_t part_number, bool name_ties = false) {
    part_number_ = part_number;
    name_ties_ = name_ties;
  }
  /// The output function that owns the record at `addr` of a block of `function` resolved to
  /// `block`, and the version that ran there (null: no version, the positions stay as read).
  /// `call`: the record is a call line, which only a version with a control transfer at `addr`
  /// can have (where the versions' bytes tell).
  int Owner(const InFunction& function, const ResolvedBlock& block, uint64_t addr,
            const CodeVersion** version, bool call = false);
  /// Records given back to a real object's function so far.
  int64_t object_code_lines() const { return object_code_lines_; }

 private:
  const SymbolIndex& index_;
  VersionChooser* chooser_;
  ObjectCode* objects_;
  OutputFunctions* out_;
  const PositionColumns* columns_;
  /// The owner of code at an address Choose answered with `chosen`: an ambiguous function when
  /// the versions tied (then `*version` is null).
  int OwnerOfChoice(const CodeVersion* chosen, const CodeVersion** version);

  int64_t part_number_ = 1;
  bool name_ties_ = false;
  std::vector<const CodeVersion*> tie_;  // Choose's, reused
  int64_t object_code_lines_ = 0;
};

}  // namespace cg_inject
