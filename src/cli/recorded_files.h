// What a `cg-inject record` run left behind: the Callgrind files of every recorded process
// (Callgrind names them OUT.PID, OUT.PID.N for parts, OUT.PID-NN per thread, from
// --callgrind-out-file=DIR/callgrind.out.%p), grouped by pid, and each pid's symbol sources.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace cg_inject {

/// A directory entry as the grouping sees it (tests pass them in memory).
struct DirEntry {
  std::string name;
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // modification time, for telling a rewritten file from an old one
  uint64_t inode = 0;
};

/// The names in `after` that are also in `before` with the same size, time and inode: files the
/// run did not write (Callgrind truncates and rewrites a file whose name a recycled pid repeats).
std::set<std::string> UnchangedNames(const std::vector<DirEntry>& before,
                                     const std::vector<DirEntry>& after);

/// The Callgrind files of one process, as paths (DIR/name), in the order Callgrind wrote them:
/// parts by number, then the file without a part number (the dump at exit); threads by number
/// within each.
struct RecordedProcess {
  uint64_t pid = 0;
  std::vector<std::string> profiles;
};

/// The name prefix `record` gives Callgrind: "callgrind.out." + pid.
inline constexpr const char* kRecordPrefix = "callgrind.out.";

/// Groups the entries named PREFIX+PID[.N][-NN] (nothing else: "callgrind.out.1.jit" and other
/// suffixes are not Callgrind's) that are not in `before`, by pid, ascending. An empty
/// PREFIX+PID file beside per-thread files is left out: with --separate-threads=yes Callgrind
/// leaves it empty and writes everything to the thread files.
std::vector<RecordedProcess> GroupRecordedProfiles(const std::string& dir,
                                                   const std::vector<DirEntry>& entries,
                                                   const std::set<std::string>& before);

/// The regular files in `dir`; empty when it cannot be read.
std::vector<DirEntry> ListDirectory(const std::string& dir);

}  // namespace cg_inject
