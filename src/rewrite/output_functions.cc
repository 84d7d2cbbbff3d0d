// The injector's output functions and JIT identities (see output_functions.h).
#include "rewrite/output_functions.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "cg_inject/symbols.h"
#include "resolve/name_table.h"
#include "rewrite/object_code.h"
#include "rewrite/version_lines.h"

namespace cg_inject {

OutputFunctions::OutputFunctions(const SymbolIndex& index,
                                 std::span<const std::string> version_objects, NameTable* names,
                                 const ObjectCode* objects)
    : symbols_(index),
      version_objects_(version_objects),
      names_(names),
      objects_(objects),
      unnamed_(index, [this](const CodeVersion& v) { return FunctionName(v); }) {
  // Two passes over the versions, 8 bytes each instead of 24 (resolve/definition_names.h).
  // A map entry a jitdump version describes too is never a function: not a definition either.
  definition_names_.Build(index.size(), [&](size_t i) {
    const CodeVersion& v = index.version(i);
    return index.Superseded(v) ? DefinitionSite{} : SiteOf(v);
  });
  if (!version_objects_.empty()) touched_.assign(index.size(), false);
}

void OutputFunctions::Clear() {
  functions_.clear();
  index_.clear();
  identity_by_version_.clear();
  identity_cache_.clear();
  ambiguous_.clear();
  apart_cache_.clear();
}

DefinitionSite OutputFunctions::SiteOf(const CodeVersion& version) const {
  // BEAM's prologue is its function (PrologueOwner).
  if (const CodeVersion* owner = PrologueOwner(symbols_, version)) return SiteOf(*owner);
  // Views into the index and version_objects_ only: this runs for every version of every source,
  // and interning each name would cost gigabytes for a 10-million-line perf map.
  const SymbolSourceInfo* source = version.source() < symbols_.sources().size()
                                       ? &symbols_.sources()[version.source()]
                                       : nullptr;
  // The source's object, not the ELF image a version's code went to: one definition's versions
  // can sit in several images (code that reused an address goes to a later one), and its name
  // must be the same in all of them, so which definitions share a name is decided over the
  // whole source (ObjectOf gives the image, for the output's ob=).
  std::string_view object = source && !source->object_name.empty() ? source->object_name
                            : source                               ? source->path
                                                                   : std::string_view("jit");
  std::string_view file = FileText(version);
  // Empty for a nameless version, which FunctionName names by its address: one function each.
  std::string_view function = UnnamedCode::IsNullName(version) ? "" : version.display_name();
  // The name's own position when it has one: a line table may start on another line for each
  // tier of one definition.
  uint32_t line =
      version.definition_line() != 0 ? version.definition_line() : version.source_line();
  return {object, file, function, line, version.definition_column(), version.definition_tag()};
}

std::string_view OutputFunctions::ObjectOf(const CodeVersion& version) const {
  if (const CodeVersion* owner = PrologueOwner(symbols_, version)) return ObjectOf(*owner);
  // The caller may give each version an object of its own (ELF images of the JIT code).
  if (size_t v = version.load_order(); v < version_objects_.size() && !version_objects_[v].empty())
    return version_objects_[v];
  return SiteOf(version).object;
}

void OutputFunctions::MarkTouched(const CodeVersion& version) {
  if (touched_.empty()) return;
  // The version's image is named now; a BEAM prologue is named after its owner's.
  const CodeVersion* owner = PrologueOwner(symbols_, version);
  for (const CodeVersion* v : {&version, owner}) {
    if (v != nullptr && v->load_order() < touched_.size()) touched_[v->load_order()] = true;
  }
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
  MarkTouched(*version);
  // One function per definition (resolve/definition_names.h), then Callgrind's recursion suffix.
  std::string function = FunctionName(*version);
  if (suffix) function += names_->Text(suffix);
  // Code in a shifted object (V8's builtins in Deno's stripped binary) is that object's: named
  // by the source, written under the object at its ELF addresses, so KCachegrind's machine code
  // view disassembles the object there.
  uint32_t object = 0;
  uint64_t rebase = 0;
  if (objects_ == nullptr || !objects_->InShiftedObject(version->start(), &object, &rebase))
    object = names_->Intern(ObjectOf(*version)).id;
  FunctionKey key{object, names_->Intern(site.file).id, names_->Intern(function).id};
  // Neither cache grew since `cached` was taken: For and the name table touch neither.
  int out = For(key, /*jit=*/true);
  functions_[size_t(out)].rebase = rebase;
  *cached = uint32_t(out) + 1;
  return out;
}

int OutputFunctions::Ambiguous(std::span<const CodeVersion* const> tie, uint32_t suffix) {
  // The functions the versions are, each once, in load order.
  std::vector<int> functions;
  uint64_t start = 0;
  for (const CodeVersion* v : tie) {
    int f = Identity(v, 0);
    if (std::find(functions.begin(), functions.end(), f) == functions.end()) functions.push_back(f);
    start = std::max(start, v->start());
  }
  if (functions.size() < 2) return Identity(tie.front(), suffix);
  // At most three names: the function list stays readable (a busy address may have held dozens).
  constexpr size_t kNamed = 3;
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%016" PRIx64, start);
  std::string name = std::string(addr) + " (ambiguous: ";
  for (size_t i = 0; i < functions.size() && i < kNamed; ++i) {
    if (i) name += " | ";
    name += names_->Text(functions_[size_t(functions[i])].key.function);
  }
  if (functions.size() > kNamed)
    name += " | " + std::to_string(functions.size() - kNamed) + " more";
  name += ')';
  const uint32_t file = functions_[size_t(functions[0])].key.file;
  bool one_file = true;
  for (int f : functions) one_file = one_file && functions_[size_t(f)].key.file == file;
  int base = -1;
  if (suffix) {
    base = Ambiguous(tie, 0);
    name += names_->Text(suffix);
  }
  FunctionKey key{names_->Intern(ObjectOf(*tie.front())).id,
                  one_file ? file : names_->Intern("???").id, names_->Intern(name).id};
  int out = For(key, /*jit=*/true);
  functions_[size_t(out)].ambiguous = true;
  ambiguous_[out] = {start, suffix ? base : out};
  return out;
}

int OutputFunctions::ApartIdentity(const CodeVersion* version, uint32_t suffix, uint64_t entry) {
  auto [it, inserted] = apart_cache_.try_emplace({version->load_order(), suffix, entry}, -1);
  if (!inserted) return it->second;
  DefinitionSite site = SiteOf(*version);
  MarkTouched(*version);
  // The address keeps two pieces apart (two versions of one function may be entered at the same
  // offset); the offset says how far into the function it is.
  char offset[64];
  std::snprintf(offset, sizeof offset, " (entered at 0x%" PRIx64 ", +0x%" PRIx64 ")", entry,
                entry - version->start());
  std::string function = FunctionName(*version) + offset;
  if (suffix) function += names_->Text(suffix);
  FunctionKey key{names_->Intern(ObjectOf(*version)).id, names_->Intern(site.file).id,
                  names_->Intern(function).id};
  it->second = For(key, /*jit=*/true);
  return it->second;
}

std::string OutputFunctions::FunctionName(const CodeVersion& version) {
  if (UnnamedCode::IsNullName(version)) return unnamed_.VersionName(version);
  DefinitionSite site = SiteOf(version);
  return site.name.empty() ? "jit@" + std::to_string(version.start())
                           : definition_names_.NameOf(site);
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
