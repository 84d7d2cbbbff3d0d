// Finding a profiled process's symbol sources without being told, the way perf and runtimes
// name them: /tmp/perf-PID.map, and jit-PID.dump in the working directory, /tmp, the perf
// debug cache (~/.debug/jit/*/) and any --jit-dir; JavaScriptCore's (Bun's) jit-TID-PID.dump,
// named after its writer thread too, in the same directories, and its /tmp/jit-TID-PID-XXXXXX.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cg_inject {

enum class SourceKind { kPerfMap, kJitdump, kDetect };

/// One file to load, found or given.
struct SourceSpec {
  std::string path;
  SourceKind kind = SourceKind::kDetect;  // kDetect: by content (jitdump magic, else perf map)
  bool explicit_file = false;             // named on the command line
};

/// Where discovery looks; injectable so tests use a temporary tree.
struct DiscoveryRoots {
  std::string tmp_dir = "/tmp";
  std::string cwd = ".";
  std::string home;                   // empty: no ~/.debug/jit search
  std::vector<std::string> jit_dirs;  // --jit-dir, searched for jit-PID.dump and perf-PID.map

  /// /tmp, ".", $HOME from the environment.
  static DiscoveryRoots FromEnvironment();
};

/// Existing regular files for `pid`, in this order: /tmp/perf-PID.map, ./jit-PID.dump,
/// /tmp/jit-PID.dump, ~/.debug/jit/*/jit-PID.dump (directory names sorted), then for each jit
/// dir DIR/jit-PID.dump and DIR/perf-PID.map; then JavaScriptCore's names (TID: digits, names
/// sorted): ./jit-TID-PID.dump, /tmp/jit-TID-PID.dump, /tmp/jit-TID-PID-XXXXXX (mkstemp's six
/// letters and digits; JSC's name without a jitDumpDirectory), DIR/jit-TID-PID.dump. A file
/// reachable twice (same device and inode) is listed once.
std::vector<SourceSpec> DiscoverSources(uint64_t pid, const DiscoveryRoots& roots);

/// The jitdumps in `dir` (files named jit-*) whose header says they are `pid`'s (a jitdump's
/// magic, either byte order, then the pid field), names sorted: how record finds the dumps that
/// Bun writes into its directory, whatever their names.
std::vector<std::string> FindJitdumpsOfProcess(const std::string& dir, uint64_t pid);

/// The process a profile's `pid:` header names: its value (blanks around it allowed) as a
/// decimal number in 1..2^32-1. Anything else (`3999991abc`, `-1`, empty) names no process, so
/// nothing is discovered for it (issue 22: `3999991abc` was read as 3999991 and its map used).
std::optional<uint64_t> ParsePidValue(std::string_view value);

/// "perf map" or "jitdump", for messages.
const char* SourceKindName(SourceKind kind);

}  // namespace cg_inject
