// Reader for perf maps (/tmp/perf-PID.map), the text format JIT runtimes write for perf:
// one `START SIZE name` line per piece of code (linux tools/perf/Documentation/jit-interface.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cg_inject {

class Diagnostics;
class SymbolIndex;

/// One parsed perf-map line. Views point into the line.
struct PerfMapLine {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string_view name;
  /// When another entry starts inside the name (two writers interleaved): that entry, the rest
  /// of the line. `name` then holds the cut-off name, as far as it goes.
  std::string_view torn_tail;
  /// 1-based column of `torn_tail` in the line (0 when the line is not torn).
  size_t torn_column = 0;
};

/// Parses one line (without its '\n'). Returns true when the line starts with a valid entry
/// (a torn line too: its start and size are intact); otherwise sets `*error` to why the line is
/// malformed ("expected hex start address, got 'xyz'").
bool ParsePerfMapLine(std::string_view line, PerfMapLine* out, std::string* error);

/// What ReadPerfMap saw.
struct PerfMapStats {
  int64_t lines = 0;        // lines in the file, blank ones included
  int64_t entries = 0;      // versions added to the index
  int64_t bad_lines = 0;    // malformed lines skipped (each reported through Diagnostics)
  int64_t torn_lines = 0;   // lines holding two interleaved entries (each reported)
  int64_t cut_names = 0;    // entries kept with a cut-off name (the head of a torn line)
  int64_t recovered = 0;    // entries salvaged from the tail of a torn line (counted in entries)
  int64_t blank_lines = 0;  // empty lines, ignored
};

/// The longest perf-map line read, as the Callgrind reader caps its lines: a longer one is an
/// error, so a stream without newlines (`--perf-map /dev/stdin < /dev/zero`) fails with bounded
/// memory instead of growing until the machine runs out.
constexpr size_t kMaxPerfMapLineSize = size_t{64} << 20;

/// Reads perf-map `bytes` and adds one CodeVersion per good line to `index`, in file order, with
/// CodeVersion::source = `source`. Malformed lines are skipped and reported as
/// "PATH:LINE: reason" under the kind "perf-map: bad line". A torn line gives both of its
/// entries, the first with its name cut off, reported under "perf-map: torn line". Throws
/// InputError when the file has lines but none of them parses, and for a line of
/// kMaxPerfMapLineSize bytes or more.
/// `done_with(n)` (optional) is called every few megabytes: the reader will not read bytes before
/// offset n again.
PerfMapStats ReadPerfMap(std::string_view bytes, std::string_view path, uint32_t source,
                         SymbolIndex* index, Diagnostics* diagnostics,
                         const std::function<void(size_t)>& done_with = {});

}  // namespace cg_inject
