// The injector's JIT-looking input functions (see input_functions.h).
#include "rewrite/input_functions.h"

#include "cg_inject/symbols.h"
#include "resolve/jit_name.h"
#include "resolve/name_table.h"
#include "rewrite/object_code.h"

namespace cg_inject {

InputFunctions::InputFunctions(const SymbolIndex& index, const ObjectCode& objects,
                               NameTable* names)
    : symbols_(index), objects_(objects), names_(names) {}

void InputFunctions::Clear() {
  functions_.clear();
  index_.clear();
  splits_.clear();
}

int InputFunctions::ForBlock(const FunctionKey& key, bool* added) {
  *added = false;
  // A JIT function's later blocks: found by key, without parsing its name again.
  if (const uint32_t* known = index_.find(key)) return int(*known);
  JitName jit;
  if (!IsUnknownObject(names_->Text(key.object)) ||
      !ParseJitFunctionName(names_->Text(key.function), &jit)) {
    // Nothing looks an ordinary function up after its block (call targets, the invariants'
    // exemptions and the report ask about JIT-looking ones only).
    ordinary_ = InFunction{};
    ordinary_.key = key;
    return kOrdinary;
  }
  *added = true;
  uint32_t index = uint32_t(functions_.size());
  index_.insert(key, index);
  InFunction& f = functions_.emplace_back();
  f.key = key;
  f.unnamed = true;
  if (symbols_.Lookup(jit.addr) && !objects_.IsObjectCode(jit.addr)) {
    f.jit = true;
    f.entry = jit.addr;
    f.lone_entry = symbols_.LookupAll(jit.addr).size() == 1;
    f.suffix = jit.suffix.empty() ? 0 : names_->Intern(jit.suffix).id;
  }
  return int(index);
}

bool InputFunctions::IsJitTarget(const FunctionKey& key, uint64_t* addr, uint32_t* suffix,
                                 int* known) {
  if (known != nullptr) *known = -1;
  if (!IsUnknownObject(names_->Text(key.object))) return false;
  // A target with a block of its own in this part was parsed then: the answer is that entry's,
  // without parsing the name and querying the index again. Only IsObjectCode can change since
  // (it only turns true: the objects' code seen grows).
  if (const uint32_t* index = index_.find(key)) {
    if (known != nullptr) *known = int(*index);
    const InFunction& f = functions_[*index];
    *addr = f.entry;
    *suffix = f.suffix;
    return f.jit && !objects_.IsObjectCode(f.entry);
  }
  JitName jit;
  if (!ParseJitFunctionName(names_->Text(key.function), &jit)) return false;
  if (!symbols_.Lookup(jit.addr) || objects_.IsObjectCode(jit.addr)) return false;
  *addr = jit.addr;
  *suffix = jit.suffix.empty() ? 0 : names_->Intern(jit.suffix).id;
  return true;
}

}  // namespace cg_inject
