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
  JitName jit;
  // Only JIT-looking keys have entries: an ordinary function's block (most blocks) is told by
  // its object's and name's kinds, without a lookup in the index.
  if (!UnknownObject(key.object) || !JitLooking(key.function)) {
    // Nothing looks an ordinary function up after its block (call targets, the invariants'
    // exemptions and the report ask about JIT-looking ones only).
    ordinary_ = InFunction{};
    ordinary_.key = key;
    return kOrdinary;
  }
  // A JIT function's later blocks: found by key, without parsing its name again.
  if (const uint32_t* known = index_.find(key)) return int(*known);
  ParseJitFunctionName(names_->Text(key.function), &jit);
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
  // A JIT function's name under a real object's cob= (Erlang: `cob=(10) beam.smp`, `cfn=(N)`
  // where N was defined as the JIT function `0x...` of `???`): KCachegrind binds the id to the
  // JIT function and callgrind_annotate knows functions by file and name, not object, so the
  // call enters the JIT code its name gives. Only names whose address a source covers and no
  // object's code holds are taken so; a real object's function without a symbol keeps its name.
  const bool in_object = !UnknownObject(key.object);
  JitName jit;
  // Most calls are between a real object's functions: their names are no address.
  if (in_object && !JitLooking(key.function)) return false;
  // A target with a block of its own in this part was parsed then: the answer is that entry's,
  // without parsing the name and querying the index again. Only IsObjectCode can change since
  // (it only turns true: the objects' code seen grows).
  if (const uint32_t* index = index_.find(in_object ? AsJitKey(key) : key)) {
    if (known != nullptr) *known = int(*index);
    const InFunction& f = functions_[*index];
    *addr = f.entry;
    *suffix = f.suffix;
    return f.jit && !objects_.IsObjectCode(f.entry) &&
           (!in_object || objects_.IsJitAddress(key.object, f.entry));
  }
  if (!Covered(key.function) || !ParseJitFunctionName(names_->Text(key.function), &jit))
    return false;
  if (objects_.IsObjectCode(jit.addr)) return false;
  if (in_object && !objects_.IsJitAddress(key.object, jit.addr)) return false;
  *addr = jit.addr;
  *suffix = jit.suffix.empty() ? 0 : names_->Intern(jit.suffix).id;
  return true;
}

bool InputFunctions::IsUnnamedJitBlock(const FunctionKey& key, FunctionKey* jit_key) {
  if (UnknownObject(key.object) || !JitLooking(key.function)) return false;
  const uint32_t* index = index_.find(AsJitKey(key));
  if (!index || functions_[*index].jit) return false;
  *jit_key = functions_[*index].key;
  return true;
}

bool InputFunctions::Classify(uint32_t id, uint8_t asked, uint8_t yes) const {
  if (id >= kinds_.size()) kinds_.resize(size_t{id} + 1, 0);
  std::string_view text = names_->Text(id);
  JitName jit;
  bool answer = asked == kObjectAsked ? IsUnknownObject(text)
                : asked == kFunctionAsked
                    ? ParseJitFunctionName(text, &jit)
                    : ParseJitFunctionName(text, &jit) && symbols_.Lookup(jit.addr) != nullptr;
  kinds_[id] |= asked | (answer ? yes : 0);
  return answer;
}

FunctionKey InputFunctions::AsJitKey(const FunctionKey& key) {
  if (unknown_ == 0) unknown_ = names_->Intern("???").id;
  return FunctionKey{unknown_, unknown_, key.function};
}

}  // namespace cg_inject
