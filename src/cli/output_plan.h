// Decides where each input's output goes and refuses combinations that would lose data: an
// output that is one of the inputs (same device and inode), several inputs into one file.
#pragma once

#include <string>
#include <vector>

namespace cg_inject {

struct CliOptions;

struct PlannedOutput {
  std::string input;
  std::string output;  // "-" = stdout
  bool zstd = false;   // compress (asked for, or the name ends in .zst)
};

/// Pairs every input with its output path. Throws InputError (usage-like problems are reported
/// as "cg-inject: ..." by the caller) when an output is an input and --in-place is not given.
std::vector<PlannedOutput> PlanOutputs(const CliOptions& options);

/// For an empty `input` named like `callgrind.out.PID`, the per-thread files Callgrind wrote
/// beside it with --separate-threads=yes (`callgrind.out.PID-NN`), sorted; empty otherwise.
std::vector<std::string> FindPerThreadSiblings(const std::string& input);

}  // namespace cg_inject
