// Reads the input text of one record (the `raw` of profile.h) far enough for the writer to decide
// whether copying it reads the same as formatting the record: which context lines (ob=, fi=,
// cob=, cfn=, ...) it holds, and the compressed ids they define or reference.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cg_inject {

/// The record kind whose text is parsed; each has the shape Callgrind writes for it.
enum class RawKind : uint8_t { kHeader, kFunction, kCost, kCall, kJump };

/// The context lines a record's text may hold, in the order they must appear (fi covers fe;
/// cfi covers cfl).
enum class RawKey : uint8_t { kOb, kFl, kFi, kCob, kCfi, kCfn, kJfi, kJfn, kFn, kCount };

/// One name line: `key=(id) text` defines id, `key=(id)` references it, `key=text` has no id.
struct RawName {
  bool present = false;
  bool has_id = false;
  bool has_text = false;
  uint32_t id = 0;
  std::string_view text;  // a view into the parsed raw text
};

struct RawLines {
  std::array<RawName, size_t(RawKey::kCount)> names;
  bool starts_with_marker = false;  // the first line is "# callgrind format"
  const RawName& operator[](RawKey key) const { return names[size_t(key)]; }
};

/// Ids at or past this are not adopted (KCachegrind sizes its id tables by the largest id).
inline constexpr uint32_t kMaxRawId = uint32_t{1} << 24;

/// The common case, checked before ParseRawLines: `raw` is one position line (a cost line).
inline bool IsOnePositionLine(std::string_view raw) {
  if (raw.size() < 2 || raw.back() != '\n' || raw[raw.size() - 2] == '\r') return false;
  char c = raw[0];
  if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*')) return false;
  return raw.find('\n') == raw.size() - 1;
}

/// Parses `raw`, the text of one record of `kind`, into `out`. Accepts only what every consumer
/// reads alike: each allowed context line at most once and in RawKey order (a function's text
/// or a header's, may start with the previous function's closing fi=/fe=), blank and `#` lines
/// among them,
/// then the record's own line(s) (`key: value`; fn=; a position line; calls= or
/// jump=/jcnd=F/E plus a position line), each ending in "\n" without "\r" and without indentation.
/// Returns false for anything else; the writer then formats the record.
bool ParseRawLines(std::string_view raw, RawKind kind, RawLines* out);

}  // namespace cg_inject
