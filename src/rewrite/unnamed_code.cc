// Names for JIT code no source names (see unnamed_code.h).
#include "rewrite/unnamed_code.h"

#include <cinttypes>
#include <cstdio>
#include <utility>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

std::string Hex(uint64_t addr) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, addr);
  return text;
}

}  // namespace

UnnamedCode::UnnamedCode(const SymbolIndex& index,
                         std::function<std::string(const CodeVersion&)> name_of)
    : index_(index), name_of_(std::move(name_of)) {}

bool UnnamedCode::IsNullName(const CodeVersion& version) {
  return version.stored_name() == "(null)";
}

bool UnnamedCode::MonoSource(uint32_t source) {
  if (source >= mono_.size()) mono_.resize(size_t{source} + 1, -1);
  if (mono_[source] < 0) {
    // Once per source, and only for one that has unnamed code: a pass over its versions.
    mono_[source] = 0;
    for (size_t i = 0; i < index_.size(); ++i) {
      const CodeVersion& v = index_.version(i);
      if (v.source() == source && v.display_name().starts_with("generic_trampoline_")) {
        mono_[source] = 1;
        break;
      }
    }
  }
  return mono_[source] == 1;
}

const CodeVersion* UnnamedCode::NamedBefore(uint64_t addr) {
  const uint64_t limit = addr > kMonoChunk ? addr - kMonoChunk : 0;
  // Runs of unnamed entries are short (a trampoline between two methods); a few steps back.
  for (int steps = 0; steps < 64; ++steps) {
    const CodeVersion* before = index_.LookupNeighbors(addr).before;
    if (before == nullptr || before->end() < limit) return nullptr;
    if (!IsNullName(*before)) return before;
    addr = before->start();
  }
  return nullptr;
}

std::string UnnamedCode::Trampoline(uint64_t addr, const CodeVersion* before) {
  std::string name = "(trampoline at " + Hex(addr);
  if (before != nullptr) name += " after " + name_of_(*before);
  return name + ")";
}

std::string UnnamedCode::VersionName(const CodeVersion& version) {
  if (!MonoSource(version.source())) return "(unnamed JIT code at " + Hex(version.start()) + ")";
  return Trampoline(version.start(), NamedBefore(version.start()));
}

std::string UnnamedCode::GapName(uint64_t addr) {
  SymbolIndex::Neighbors n = index_.LookupNeighbors(addr);
  const bool near_before = n.before != nullptr && addr - n.before->end() < kMonoChunk;
  const bool near_after = n.after != nullptr && n.after->start() - addr < kMonoChunk;
  // Mono's code chunks hold its methods and trampolines only; a shared library's stubs lie
  // megabytes away (0x33c028 and more after the last entry in the mcs capture).
  if (!(near_before && MonoSource(n.before->source())) &&
      !(near_after && MonoSource(n.after->source())))
    return "";
  return Trampoline(addr, near_before ? NamedBefore(addr) : nullptr);
}

}  // namespace cg_inject
