// Perf-map reader. The format (linux tools/perf/Documentation/jit-interface.txt) is one
// `START SIZE name` line per code range, START and SIZE in hex, the name the rest of the line.
// Real writers differ in details this reader accepts: `0x` prefixes (HotSpot agents), upper-case
// zero-padded 16-digit addresses (.NET), names with blanks, brackets and generics, unsorted and
// duplicate lines (later lines describe later code, so file order is load order).
//
// A perf map is appended to by every JIT thread with plain write()s, so real files contain
// damage: a name broken by an embedded newline leaves a line without address and size, and two
// writers interleaving leave one line holding a cut-off entry followed by a complete one
// ("...<frozen sitej7fbf1fc215f9 b py::expanduser:..."). A line without address and size is
// skipped and counted. A torn line keeps both entries: the first one's start and size are
// intact and its name is kept as far as it goes (a cut-off name beats an unnamed address), the
// complete entry at its end as it is; both are counted.
#include "sources/perf_map.h"

#include <array>
#include <charconv>
#include <cstring>
#include <string>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "sources/name_location.h"

namespace cg_inject {
namespace {

constexpr std::string_view kBadLine = "perf-map: bad line";
constexpr std::string_view kTornLine = "perf-map: torn line";

constexpr bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// A table, because the torn-line check looks at every byte of every name (a quarter of the
// load time with the comparison chain).
constexpr std::array<bool, 256> kHexDigit = [] {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[static_cast<size_t>(c)] = true;
  for (int c = 'a'; c <= 'f'; ++c) table[static_cast<size_t>(c)] = true;
  for (int c = 'A'; c <= 'F'; ++c) table[static_cast<size_t>(c)] = true;
  return table;
}();
constexpr bool IsHex(char c) { return kHexDigit[static_cast<unsigned char>(c)]; }

// Shows at most 40 bytes of a bad field in a message.
std::string Quote(std::string_view text) {
  std::string quoted = "'";
  quoted.append(EscapeControlBytes(text.substr(0, 40), /*escape_backslash=*/true));
  if (text.size() > 40) quoted.append("...");
  quoted.push_back('\'');
  return quoted;
}

// Takes the next blank-delimited field off `*rest`.
std::string_view TakeField(std::string_view* rest) {
  size_t end = 0;
  while (end < rest->size() && !IsBlank((*rest)[end])) ++end;
  std::string_view field = rest->substr(0, end);
  rest->remove_prefix(end);
  while (!rest->empty() && IsBlank(rest->front())) rest->remove_prefix(1);
  return field;
}

// Parses a whole field as hex, with or without 0x. Returns an error message or empty.
bool ParseHexField(std::string_view field, std::string_view what, uint64_t* value,
                   std::string* error) {
  std::string_view digits = field;
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  if (digits.empty()) {
    *error = "expected hex " + std::string(what) + ", got " + Quote(field);
    return false;
  }
  for (char c : digits) {
    if (!IsHex(c)) {
      *error = "expected hex " + std::string(what) + ", got " + Quote(field);
      return false;
    }
  }
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value, 16);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    *error = "expected a " + std::string(what) + " of at most 64 bits, got " + Quote(field);
    return false;
  }
  return true;
}

// Finds another entry ("HEX HEX name", the address at least 8 digits) starting inside `name`.
// Returns its offset in `name`, or npos. 8 digits keep ordinary names with numbers ("stub<12>",
// "Version 2 1 x") from matching; every 64-bit JIT address has more.
size_t FindEmbeddedEntry(std::string_view name) {
  size_t i = 0;
  while (i < name.size()) {
    if (!IsHex(name[i])) {
      ++i;
      continue;
    }
    size_t run_start = i;
    while (i < name.size() && IsHex(name[i])) ++i;
    size_t run = i - run_start;
    // The address may start inside a run (the cut-off name ended in a hex letter, "site7f..."):
    // take at most the last 16 digits.
    if (run < 8 || i >= name.size() || name[i] != ' ') continue;
    size_t addr_start = run > 16 ? i - 16 : run_start;
    size_t j = i + 1;
    size_t size_start = j;
    while (j < name.size() && IsHex(name[j])) ++j;
    if (j == size_start || j - size_start > 16) continue;
    if (j + 1 >= name.size() || name[j] != ' ' || IsBlank(name[j + 1])) continue;
    return addr_start;
  }
  return std::string_view::npos;
}

}  // namespace

bool ParsePerfMapLine(std::string_view line, PerfMapLine* out, std::string* error) {
  out->torn_tail = {};
  out->torn_column = 0;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view rest = line;
  if (rest.empty() || IsBlank(rest.front())) {
    // A line that does not start with an address is the rest of a name that contained a newline.
    *error = "expected hex start address, got " + Quote(line) +
             " (a name continued from the previous line?)";
    return false;
  }
  std::string_view start_field = TakeField(&rest);
  if (!ParseHexField(start_field, "start address", &out->start, error)) return false;
  std::string_view size_field = TakeField(&rest);
  if (!ParseHexField(size_field, "size", &out->size, error)) return false;
  if (out->size > UINT64_MAX - out->start) {
    *error = "start " + std::string(start_field) + " + size " + std::string(size_field) +
             " is beyond the 64-bit address space";
    return false;
  }
  if (rest.empty()) {
    *error = "expected a symbol name after the size, got nothing";
    return false;
  }
  out->name = rest;
  size_t embedded = FindEmbeddedEntry(rest);
  if (embedded != std::string_view::npos) {
    out->torn_tail = rest.substr(embedded);
    out->torn_column = static_cast<size_t>(rest.data() - line.data()) + embedded + 1;
    std::string_view cut = rest.substr(0, embedded);
    while (!cut.empty() && IsBlank(cut.back())) cut.remove_suffix(1);
    // FindEmbeddedEntry needs at least 8 digits before the tail, so the cut name is never empty.
    out->name = cut;
  }
  return true;
}

PerfMapStats ReadPerfMap(std::string_view bytes, std::string_view path, uint32_t source,
                         SymbolIndex* index, Diagnostics* diagnostics,
                         const std::function<void(size_t)>& done_with) {
  // How often done_with hears of progress: often enough that a mapped 600 MB map never has much
  // of itself resident, rarely enough to cost nothing.
  constexpr size_t kDoneStep = size_t{16} << 20;
  size_t next_done = kDoneStep;
  PerfMapStats stats;
  std::string error;        // reused for every bad line
  std::string first_error;  // kept for the all-lines-bad message
  PerfMapLine entry;
  auto add = [&](const PerfMapLine& parsed) {
    CodeVersionSpec version;
    version.start = parsed.start;
    version.size = parsed.size;
    version.raw_name = parsed.name;
    // Views into the line and into `location`, both alive until Add has copied them.
    NameLocation location = ParseNameLocation(parsed.name);
    version.function_name = location.function;
    version.source_file = location.file;
    version.source_line = location.line_no;
    version.definition_line = location.line_no;
    version.definition_column = location.column;
    version.definition_tag = location.definition_tag;
    version.source = source;
    index->Add(version);
    ++stats.entries;
  };
  size_t pos = 0;
  while (pos < bytes.size()) {
    const char* newline =
        static_cast<const char*>(std::memchr(bytes.data() + pos, '\n', bytes.size() - pos));
    size_t end = newline == nullptr ? bytes.size() : static_cast<size_t>(newline - bytes.data());
    std::string_view line = bytes.substr(pos, end - pos);
    pos = end + 1;
    ++stats.lines;
    if (line.size() >= kMaxPerfMapLineSize) {
      ThrowAtLine(path, uint64_t(stats.lines),
                  "expected a line shorter than 64 MiB, got a longer one");
    }
    if (done_with && pos >= next_done) {
      done_with(next_done);
      next_done += kDoneStep;
    }
    if (line.empty() || line == "\r") {
      ++stats.blank_lines;
      continue;
    }
    if (!ParsePerfMapLine(line, &entry, &error)) {
      ++stats.bad_lines;
      std::string message = std::string(path) + ":" + std::to_string(stats.lines) + ": " + error;
      if (first_error.empty()) first_error = message;
      diagnostics->Warn(kBadLine, std::move(message));
      continue;
    }
    add(entry);
    if (entry.torn_tail.empty()) continue;
    ++stats.torn_lines;
    ++stats.cut_names;
    size_t column = entry.torn_column;
    // The tail is a line of its own that can be torn again (three writers).
    int64_t kept = 1;
    PerfMapLine tail;
    std::string_view rest = entry.torn_tail;
    while (!rest.empty() && ParsePerfMapLine(rest, &tail, &error)) {
      add(tail);
      ++stats.recovered;
      ++kept;
      if (tail.torn_tail.empty()) break;
      ++stats.cut_names;
      rest = tail.torn_tail;
    }
    diagnostics->Warn(kTornLine, std::string(path) + ":" + std::to_string(stats.lines) +
                                     ": torn line: another entry starts at column " +
                                     std::to_string(column) + " (two writers interleaved); kept " +
                                     std::to_string(kept) +
                                     " entries, the first with its name "
                                     "cut off");
  }
  if (done_with) done_with(bytes.size());
  if (stats.entries == 0 && stats.bad_lines > 0) {
    ThrowForFile(path, "not a perf map: none of its " + std::to_string(stats.bad_lines) +
                           " non-empty lines is `START SIZE name` (first: " + first_error + ")");
  }
  return stats;
}

}  // namespace cg_inject
