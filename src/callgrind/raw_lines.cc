// ParseRawLines: the writer's check of a record's input text. It accepts the shapes Callgrind
// writes and refuses the rest rather than modelling every reader's quirk: a refused record is
// formatted, which is always right, only not byte-identical.
#include "callgrind/raw_lines.h"

namespace cg_inject {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsPositionStart(char c) { return IsDigit(c) || c == '+' || c == '-' || c == '*'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// The context key of `line` ("cfi=..." -> kCfi) or kCount when it is none.
RawKey KeyOf(std::string_view line, std::string_view* value) {
  size_t eq = line.find('=');
  if (eq == std::string_view::npos || eq > 3) return RawKey::kCount;
  std::string_view key = line.substr(0, eq);
  *value = line.substr(eq + 1);
  if (key == "ob") return RawKey::kOb;
  if (key == "fl") return RawKey::kFl;
  if (key == "fi" || key == "fe") return RawKey::kFi;
  if (key == "fn") return RawKey::kFn;
  if (key == "cob") return RawKey::kCob;
  if (key == "cfi" || key == "cfl") return RawKey::kCfi;
  if (key == "cfn") return RawKey::kCfn;
  if (key == "jfi") return RawKey::kJfi;
  if (key == "jfn") return RawKey::kJfn;
  return RawKey::kCount;
}

/// Parses a name value as the reader does ("(id) text", "(id)" or "text"), without its
/// tolerance for leading blanks.
bool ParseName(std::string_view value, RawName* name) {
  name->present = true;
  if (value.size() < 2 || value[0] != '(' || !IsDigit(value[1])) {
    if (!value.empty() && (value[0] == ' ' || value[0] == '\t')) return false;
    name->has_text = true;
    name->text = value;
    return true;
  }
  size_t i = 1;
  uint64_t id = 0;
  while (i < value.size() && IsDigit(value[i])) {
    id = id * 10 + uint64_t(value[i] - '0');
    if (id >= kMaxRawId) return false;
    ++i;
  }
  if (i == value.size() || value[i] != ')') return false;
  ++i;
  while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
  name->has_id = true;
  name->id = uint32_t(id);
  name->has_text = i < value.size();
  name->text = value.substr(i);
  return true;
}

/// The context keys a record of `kind` may carry before its own line.
bool Allowed(RawKind kind, RawKey key) {
  switch (kind) {
    case RawKind::kFunction:
      return key == RawKey::kOb || key == RawKey::kFl;
    case RawKind::kCost:
      return key == RawKey::kFi;
    case RawKind::kCall:
      return key == RawKey::kFi || key == RawKey::kCob || key == RawKey::kCfi ||
             key == RawKey::kCfn;
    case RawKind::kJump:
      return key == RawKey::kFi || key == RawKey::kJfi || key == RawKey::kJfn;
    case RawKind::kHeader:
      return false;
  }
  return false;
}

/// `jump=N ...` or Callgrind's `jcnd=F/E ...` (the spec's `jcnd=E F` form is read differently
/// by different consumers).
bool IsJumpLine(std::string_view line) {
  if (line.starts_with("jump=")) return true;
  if (!line.starts_with("jcnd=")) return false;
  size_t slash = line.find('/');
  size_t blank = line.find(' ');
  return slash != std::string_view::npos && slash < blank;
}

}  // namespace

bool ParseRawLines(std::string_view raw, RawKind kind, RawLines* out) {
  if (raw.empty() || raw.back() != '\n') return false;
  *out = RawLines{};
  out->starts_with_marker = raw.starts_with("# callgrind format\n");
  // Record lines still expected after the context lines: fn= / one position line / calls= or
  // jump= and then a position line.
  enum Stage { kContext, kSecond, kDone } stage = kContext;
  int next_key = 0;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t nl = raw.find('\n', pos);
    std::string_view line = raw.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') return false;
    if (stage == kDone) return false;
    // Blank and comment lines may come anywhere before the record's own line (Callgrind ends a
    // function with "fe=(2)", a blank line, then the next function's lines).
    if (stage != kSecond && (line.empty() || line[0] == '#')) continue;
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#') return false;
    if (stage == kSecond) {
      if (!IsPositionStart(line[0])) return false;
      stage = kDone;
      continue;
    }
    // kContext: a context line, or the record's (first) line.
    std::string_view value;
    RawKey key = KeyOf(line, &value);
    if ((kind == RawKind::kFunction || kind == RawKind::kHeader) && key == RawKey::kFi) {
      // The fe= that closes the previous function's inlined file: before ob=/fl=, or before
      // the totals: that ends the part.
      if (next_key != 0 || (*out)[RawKey::kFi].present) return false;
      if (!ParseName(value, &out->names[size_t(key)])) return false;
      continue;
    }
    if (kind == RawKind::kHeader) {
      if (!IsLetter(line[0])) return false;
      stage = kDone;
      continue;
    }
    if (IsPositionStart(line[0])) {
      if (kind != RawKind::kCost) return false;
      stage = kDone;
      continue;
    }
    if (kind == RawKind::kCall && line.starts_with("calls=")) {
      if (!(*out)[RawKey::kCfn].present) return false;
      stage = kSecond;
      continue;
    }
    if (kind == RawKind::kJump && IsJumpLine(line)) {
      stage = kSecond;
      continue;
    }
    if (key == RawKey::kCount) return false;
    if (int(key) < next_key) return false;
    if (key == RawKey::kFn) {
      if (kind != RawKind::kFunction) return false;
      stage = kDone;
    } else if (!Allowed(kind, key)) {
      return false;
    }
    next_key = int(key) + 1;
    if (!ParseName(value, &out->names[size_t(key)])) return false;
  }
  return stage == kDone;
}

}  // namespace cg_inject
