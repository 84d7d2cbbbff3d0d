// Instruction boundaries come from resolve/instruction_boundaries.h, a linear sweep from the start
// of the code. JIT code can embed data (constant pools, jump tables), after which a sweep may lose
// sync; an address that fits no version's boundaries is therefore not rejected but falls back to
// "any version that contains it".
#include "resolve/version_chooser.h"

#include <algorithm>

#include "cg_inject/symbols.h"
#include "resolve/instruction_boundaries.h"

namespace cg_inject {

VersionChooser::VersionChooser(const SymbolIndex& index, CodeArch arch)
    : index_(index), arch_(arch) {}

VersionChooser::~VersionChooser() = default;

CodeArch VersionChooser::ArchOf(const CodeVersion& version) const {
  if (version.source() < index_.sources().size()) {
    CodeArch arch = CodeArchOfElfMachine(index_.sources()[version.source()].elf_machine);
    if (arch != CodeArch::kUnknown) return arch;
  }
  return arch_;
}

const std::vector<uint8_t>& VersionChooser::Boundaries(const CodeVersion& version) {
  auto [it, inserted] = boundaries_.try_emplace(&version);
  if (inserted) it->second = DecodeInstructionStarts(version.code(), ArchOf(version));
  return it->second;
}

bool VersionChooser::FitsBoundary(const CodeVersion& version, uint64_t addr) {
  if (!version.Contains(addr)) return false;
  if (version.code().empty() || ArchOf(version) == CodeArch::kUnknown) return true;
  uint64_t offset = addr - version.start();
  // Past the code bytes, or in a tail the writer salted (CPython), the bytes say nothing.
  if (offset + version.salted_code_tail() >= version.code().size()) return true;
  return Boundaries(version)[offset] != 0;
}

int VersionChooser::CallAt(const CodeVersion& version, uint64_t addr) {
  if (!FitsBoundary(version, addr)) return 0;
  if (version.code().empty() || ArchOf(version) == CodeArch::kUnknown) return -1;
  uint64_t offset = addr - version.start();
  if (offset + version.salted_code_tail() >= version.code().size()) return -1;
  return (Boundaries(version)[offset] & kControlTransfer) != 0 ? 1 : 0;
}

bool VersionChooser::FitsCall(const CodeVersion& version, uint64_t addr) {
  return CallAt(version, addr) != 0;
}

void VersionChooser::NoteReuse(uint64_t addr, bool ambiguous) {
  auto [it, inserted] = reuse_seen_.try_emplace(addr, false);
  if (inserted) ++reused_addresses_;
  if (ambiguous && !it->second) {
    it->second = true;
    ++ambiguous_choices_;
  }
}

namespace {

/// Several sources can describe the same code (a discovered perf map and an explicit jitdump of
/// one run): that is not reuse. Only the versions of the source added last are candidates;
/// sources given on the command line are added last, so they win.
void KeepLatestSource(std::vector<const CodeVersion*>* versions) {
  uint32_t latest = 0;
  for (const CodeVersion* v : *versions) latest = std::max(latest, v->source());
  std::erase_if(*versions, [latest](const CodeVersion* v) { return v->source() != latest; });
}

const CodeVersion* PickByPart(const std::vector<const CodeVersion*>& fits, int64_t part_number) {
  int64_t index = std::clamp<int64_t>(part_number - 1, 0, int64_t(fits.size()) - 1);
  return fits[size_t(index)];
}

/// Fills `*tie` (when asked) with `fits` when none of them has code bytes: then only the part
/// number told them apart.
void NoteTie(const std::vector<const CodeVersion*>& fits, std::vector<const CodeVersion*>* tie) {
  if (!tie) return;
  for (const CodeVersion* v : fits)
    if (!v->code().empty()) return;
  *tie = fits;
}
}  // namespace

const CodeVersion* VersionChooser::Choose(uint64_t addr, const CodeVersion* preferred,
                                          int64_t part_number, bool call,
                                          std::vector<const CodeVersion*>* tie) {
  if (tie) tie->clear();
  // Inside the range of a version no other overlaps, that version is the only candidate (and
  // `preferred` is it or does not contain `addr`): the answer whatever else is asked.
  for (const CodeVersion* lone : lone_)
    if (lone != nullptr && lone->Contains(addr)) return lone;
  const bool preferred_fits =
      preferred && preferred->Contains(addr) && FitsBoundary(*preferred, addr);
  if (preferred_fits && (!call || FitsCall(*preferred, addr))) {
    // Still note reuse so the report counts every reused address the profile touched.
    return preferred;
  }
  std::vector<const CodeVersion*>& all = all_;
  index_.LookupAll(addr, &all);
  if (all.empty()) return nullptr;
  if (all.size() == 1 && !index_.Overlapped(*all[0])) {
    lone_[next_lone_] = all[0];
    next_lone_ = (next_lone_ + 1) % lone_.size();
  }
  KeepLatestSource(&all);
  if (all.size() == 1) return all[0];
  scratch_.clear();
  if (call) {
    // A call line: only a version with a control transfer there made it (when none has one,
    // the bytes say nothing and the rules below decide).
    for (const CodeVersion* v : all)
      if (CallAt(*v, addr) == 1) scratch_.push_back(v);
    if (scratch_.empty() && preferred_fits) return preferred;
  }
  if (scratch_.empty()) {
    for (const CodeVersion* v : all)
      if (FitsBoundary(*v, addr)) scratch_.push_back(v);
  }
  if (scratch_.empty()) scratch_ = all;
  bool ambiguous = scratch_.size() > 1;
  NoteReuse(addr, ambiguous);
  if (!ambiguous) return scratch_[0];
  NoteTie(scratch_, tie);
  return PickByPart(scratch_, part_number);
}

const CodeVersion* VersionChooser::ChooseForBlock(uint64_t entry, std::span<const uint64_t> addrs,
                                                  int64_t part_number,
                                                  std::span<const uint64_t> calls,
                                                  std::vector<const CodeVersion*>* tie) {
  if (tie) tie->clear();
  std::vector<const CodeVersion*>& all = all_;
  index_.LookupAll(entry, &all);
  if (all.empty()) return nullptr;
  KeepLatestSource(&all);
  if (all.size() == 1) return all[0];
  int64_t best_score = -1;
  std::vector<const CodeVersion*> best;
  for (const CodeVersion* v : all) {
    int64_t score = FitsBoundary(*v, entry) ? 1 : 0;
    for (uint64_t a : addrs)
      if (a != entry && FitsBoundary(*v, a)) ++score;
    for (uint64_t a : calls)
      if (FitsCall(*v, a)) ++score;
    if (score > best_score) {
      best_score = score;
      best.clear();
    }
    if (score == best_score) best.push_back(v);
  }
  bool ambiguous = best.size() > 1;
  NoteReuse(entry, ambiguous);
  if (!ambiguous) return best[0];
  NoteTie(best, tie);
  return PickByPart(best, part_number);
}

}  // namespace cg_inject
