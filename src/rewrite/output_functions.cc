// The injector's output functions and JIT identities (see output_functions.h).
#include "rewrite/output_functions.h"

#include "cg_inject/symbols.h"
#include "resolve/name_table.h"
#include "rewrite/object_code.h"
#include "rewrite/version_lines.h"

namespace cg_inject {

OutputFunctions::OutputFunctions(const SymbolIndex& index,
                                 std::span<const std::string> version_objects, NameTable* names,
                                 const ObjectCode* objects)
    : symbols_(index), version_objects_(version_objects), names_(names), objects_(objects) {
  // Two passes over the versions, 8 bytes each instead of 24 (resolve/definition_names.h).
  definition_names_.Build(index.size(), [&](size_t i) { return SiteOf(index.version(i)); });
}

void OutputFunctions::Clear() {
  functions_.clear();
  index_.clear();
  identity_by_version_.clear();
  identity_cache_.clear();
}

DefinitionSite OutputFunctions::SiteOf(const CodeVersion& version) const {
  // BEAM's prologue is its function (PrologueOwner).
  if (const CodeVersion* owner = PrologueOwner(symbols_, version)) return SiteOf(*owner);
  // Views into the index and version_objects_ only: this runs for every version of every source,
  // and interning each name would cost gigabytes for a 10-million-line perf map.
  const SymbolSourceInfo* source = version.source() < symbols_.sources().size()
                                       ? &symbols_.sources()[version.source()]
                                       : nullptr;
  std::string_view object = source && !source->object_name.empty() ? source->object_name
                            : source                               ? source->path
                                                                   : std::string_view("jit");
  // The caller may give each version an object of its own (ELF images of the JIT code).
  if (size_t v = version.load_order(); v < version_objects_.size() && !version_objects_[v].empty())
    object = version_objects_[v];
  std::string_view file = FileText(version);
  // Empty for a nameless version, which Identity names `jit@ADDR`, unique per address.
  std::string_view function = version.display_name();
  // The name's own position when it has one: a line table may start on another line for each
  // tier of one definition.
  uint32_t line =
      version.definition_line() != 0 ? version.definition_line() : version.source_line();
  return {object, file, function, line, version.definition_column(), version.definition_tag()};
}

int OutputFunctions::Identity(const CodeVersion* version, uint32_t suffix) {
  uint32_t order = version->load_order();
  uint32_t* cached = nullptr;
  if (suffix == 0) {
    if (order >= identity_by_version_.size()) identity_by_version_.resize(size_t{order} + 1);
    cached = &identity_by_version_[order];
  } else {
    cached = &identity_cache_[(uint64_t{order} << 32) | suffix];
  }
  if (*cached != 0) return int(*cached - 1);
  DefinitionSite site = SiteOf(*version);
  // One function per definition (resolve/definition_names.h), then Callgrind's recursion suffix.
  std::string function = site.name.empty() ? "jit@" + std::to_string(version->start())
                                           : definition_names_.NameOf(site);
  if (suffix) function += names_->Text(suffix);
  // Code in a shifted object (V8's builtins in Deno's stripped binary) is that object's: named
  // by the source, written under the object at its ELF addresses, so KCachegrind's machine code
  // view disassembles the object there.
  uint32_t object = 0;
  uint64_t rebase = 0;
  if (objects_ == nullptr || !objects_->InShiftedObject(version->start(), &object, &rebase))
    object = names_->Intern(site.object).id;
  FunctionKey key{object, names_->Intern(site.file).id, names_->Intern(function).id};
  // Neither cache grew since `cached` was taken: For and the name table touch neither.
  int out = For(key, /*jit=*/true);
  functions_[size_t(out)].rebase = rebase;
  *cached = uint32_t(out) + 1;
  return out;
}

int OutputFunctions::For(const FunctionKey& key, bool jit) {
  auto [index, inserted] = index_.insert(key, uint32_t(functions_.size()));
  if (inserted) {
    OutFunction& f = functions_.emplace_back();
    f.key = key;
    f.jit = jit;
  }
  return int(index);
}

}  // namespace cg_inject
