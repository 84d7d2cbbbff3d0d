// Who owns each record of a block (see record_owners.h).
#include "rewrite/record_owners.h"

#include "cg_inject/symbols.h"
#include "resolve/version_chooser.h"
#include "rewrite/input_functions.h"
#include "rewrite/object_code.h"
#include "rewrite/output_functions.h"
#include "rewrite/position_columns.h"

namespace cg_inject {

RecordOwners::RecordOwners(const SymbolIndex& index, VersionChooser* chooser, ObjectCode* objects,
                           OutputFunctions* out, const PositionColumns* columns)
    : index_(index), chooser_(chooser), objects_(objects), out_(out), columns_(columns) {}

int RecordOwners::Owner(const InFunction& function, const ResolvedBlock& block, uint64_t addr,
                        const CodeVersion** version, bool call) {
  *version = block.version;
  if (!columns_->has_instr()) return block.identity;
  if (function.jit) {
    const FunctionKey* object_owner = nullptr;
    if (objects_->IsObjectCode(addr, &object_owner)) {
      // The ELF symbol that contains the address owns it. The function that had a cost line
      // there is only a fallback for objects without symbols: Callgrind charges tail jumps
      // inside native code to the jumping function (Node's builtins show it).
      if (const FunctionKey* symbol_owner = objects_->SymbolOwner(addr))
        object_owner = symbol_owner;
      if (!object_owner) return block.identity;
      *version = nullptr;
      int owner = out_->For(*object_owner, /*jit=*/false);
      (*out_)[owner].moved_in = true;
      ++object_code_lines_;
      return owner;
    }
    const ReuseSplit& split = block.split;
    if (split.empty() && block.version && block.version->Contains(addr) &&
        (!index_.Overlapped(*block.version) ||
         (call ? chooser_->FitsCall(*block.version, addr)
               : chooser_->FitsBoundary(*block.version, addr)))) {
      // Most lines: the block's own version, which Choose prefers where it fits and returns
      // wherever no other version lives (no instruction boundaries to decode then), so its own
      // function (Identity(version, 0) is the block's base identity).
      return block.identity;
    }
    // A call line goes to a split version with a call there before one that merely fits.
    for (int pass = call ? 0 : 1; pass < 2; ++pass) {
      for (size_t i = 0; i < split.versions.size(); ++i) {
        if (pass == 0 ? chooser_->FitsCall(*split.versions[i], addr)
                      : chooser_->FitsBoundary(*split.versions[i], addr)) {
          *version = split.versions[i];
          return split.identities[i];
        }
      }
    }
    const CodeVersion* v =
        chooser_->Choose(addr, block.version, part_number_, call, name_ties_ ? &tie_ : nullptr);
    if (!v) return block.identity;  // not covered: stays with the block's function
    int base = OwnerOfChoice(v, version);
    return base == block.base_identity ? block.identity : base;
  }
  // Choose finds no version where the index lists none: IsJitAddress's own search of the index
  // would only repeat it (a block's lines come in the order of its table, which defeats that
  // search's cache: 280 instructions a line on tsc).
  if (!objects_->MayBeJitAddress(function.key.object, addr)) return block.identity;
  const CodeVersion* v =
      chooser_->Choose(addr, nullptr, part_number_, call, name_ties_ ? &tie_ : nullptr);
  if (!v) return block.identity;
  return OwnerOfChoice(v, version);
}

int RecordOwners::OwnerOfChoice(const CodeVersion* chosen, const CodeVersion** version) {
  *version = chosen;
  if (!name_ties_ || tie_.empty()) return out_->Identity(chosen, 0);
  int owner = out_->Ambiguous(tie_, 0);
  if ((*out_)[owner].ambiguous) *version = nullptr;
  return owner;
}

}  // namespace cg_inject
