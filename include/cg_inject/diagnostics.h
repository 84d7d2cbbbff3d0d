// Tolerated oddities in inputs (a torn perf-map line, an unknown jitdump record) are counted,
// never silently dropped: the first few are kept with their location, the rest only counted,
// and the whole set is summarized on stderr at exit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cg_inject {

/// Collects located warnings. Not thread-safe; one per run.
class Diagnostics {
 public:
  /// How many messages are kept verbatim per kind; the rest are counted.
  static constexpr int64_t kKeptPerKind = 5;

  /// Records a warning of `kind` (a short stable tag, e.g. "perf-map: bad line") with its
  /// located message ("PATH:LINE: reason").
  void Warn(std::string_view kind, std::string message);

  struct Kind {
    std::string kind;
    int64_t count = 0;
    std::vector<std::string> first_messages;
  };
  const std::vector<Kind>& kinds() const { return kinds_; }
  int64_t total() const;

  /// Adds `other`'s warnings, as if they had been warned here after this one's (several inputs
  /// run on threads of their own, each with its own Diagnostics).
  void Absorb(const Diagnostics& other);
  /// Appends a human-readable summary (one line per kept message plus "and N more") to `out`.
  void AppendSummary(std::string* out) const;

 private:
  std::vector<Kind> kinds_;
};

}  // namespace cg_inject
