// Code reuse inside one block: when a JIT runtime re-emits code at an address without a dump in
// between, Callgrind gives one fn= the lines of every version that lived there. This splits such
// a block among the versions that have instructions of their own in it (rules in inject.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace cg_inject {

class CodeVersion;

/// `total` in proportion to `weights`; the last share takes the rounding rest, so the shares
/// always add up to `total`. Equal shares when all weights are 0. Empty for no weights.
std::vector<uint64_t> SplitProportionally(uint64_t total, std::span<const uint64_t> weights);

/// The versions (indices, ascending) among which `count` calls into a reused block are divided:
/// all of them when there are calls enough, else the `count` of largest weight (their entry
/// counts; earlier ones on ties), since a version with a share of the calls has at least one.
/// One version for a count of 0 (which Callgrind never writes). Empty for no weights.
std::vector<size_t> CalledVersions(uint64_t count, std::span<const uint64_t> weights);

/// `count` calls divided among the CalledVersions in proportion to `weights`, each of them at
/// least 1 (unless `count` is 0), the others 0; the shares add up to `count`.
std::vector<uint64_t> SplitCallCount(uint64_t count, std::span<const uint64_t> weights);

/// The versions one block holds, each with its estimated entry count and its cost (per event,
/// self + calls) in the block. Empty when the block has one owner.
struct ReuseSplit {
  std::vector<const CodeVersion*> versions;
  std::vector<int> identities;  // output function of each version (filled by the injector)
  std::vector<uint64_t> entry_counts;
  std::vector<std::vector<uint64_t>> weights;

  bool empty() const { return versions.empty(); }
  void clear() { *this = ReuseSplit{}; }
};

/// A cost line (is_call false: self cost) or a call site (inclusive cost) of a block.
struct BlockLine {
  uint64_t addr = 0;
  std::span<const uint64_t> costs;
  bool is_call = false;
};

/// Whether `addr` can start an instruction of `version` (VersionChooser::FitsBoundary).
using FitsFn = std::function<bool(const CodeVersion& version, uint64_t addr)>;

/// Of `candidates` (the versions at the block's entry), those with an address only they fit;
/// each one's entry count is the first event at its lowest such address (at least 1), and its
/// weights are the block's costs split by entry counts among the versions each line fits. Empty
/// unless at least two versions own addresses.
ReuseSplit FindReuseSplit(std::span<const CodeVersion* const> candidates,
                          std::span<const BlockLine> lines, size_t events, const FitsFn& fits);

/// Indices of the split's versions that `addr` fits.
void VersionsAt(const ReuseSplit& split, uint64_t addr, const FitsFn& fits,
                std::vector<size_t>* out);

}  // namespace cg_inject
