// Callgrind profile reader. Format: valgrind callgrind/docs/cl-format.xml ("Callgrind Format
// Specification", version 1), checked against what valgrind's callgrind/dump.c writes and what
// callgrind_annotate and KCachegrind's loader accept.
//
// Each line is dispatched on its first byte: '#' comment, digit/'+'/'-'/'*' cost line, a letter
// either `key=name` (ob, fl, fi, fe, fn, cob, cfi, cfl, cfn, jfi, jfn) or an association
// (calls, jump, jcnd) or a `key: value` header line. Numbers and keys are parsed by hand, a word
// at a time where lengths vary (a loop per number or a search per key mispredicted once per
// token); nothing on the per-line path allocates except the first sight of a new name.
//
// Decisions where the spec is silent or real files disagree with it:
// - Name compression ids live in three spaces shared the way Callgrind shares them: objects
//   (ob, cob), files (fl, fi, fe, cfi, cfl, jfi), functions (fn, cfn, jfn). Ids persist across
//   parts, as with `--combine-dumps=yes`.
// - Relative subpositions (+N, -N, *) are relative to the previous position line: cost lines,
//   the line after calls= and the line after jump=/jcnd= update it; call and jump targets are
//   relative to it but do not update it (as KCachegrind and callgrind_annotate read them).
// - cob/cfi/cfn apply to the next calls= only; cob defaults to the current ob=, cfi to the
//   current fi/fe/fl file. jfi/jfn likewise apply to the next jump only.
// - fn= takes the current file as the function's file, including a fi=/fe= switch that the
//   previous function left open. callgrind_annotate reads it so, and it also gives
//   lsprofcalltree's `fi=~` before `fn=` (it never writes fl=) a file. KCachegrind instead
//   returns to the fl= file. Callgrind normally closes a switch with fe= before the next fn=,
//   where all agree; valgrind 3.19 sometimes does not (tests/data aarch64 captures), and then
//   we side with callgrind_annotate so that its report and our summary agree.
// - `jcnd=F/E` is Callgrind's form (followed/executed); the spec grammar's `jcnd=E F` is read as
//   executed then followed. Jumps are followed by a position-only line, as dump.c writes.
// - Costs are unsigned decimal or 0x hex numbers. speedscope's fixture with +N/-N/* in cost
//   columns is refused: the spec defines subposition compression for positions only, and any
//   reading of "-300" as a cost would invent numbers.
// - Header lines after the body start a new part, except `totals:` and `summary:`, which close
//   the current one.
// - Every part's costs are summed with overflow checks (part_totals.h) and compared with its
//   summary:/totals:; a part Callgrind wrote must end with totals: (see the reader options).
// - A name id defined again with another name, a second events: line in one part, and a
//   position name other than instr/line/bb are read (the last definition wins, an unknown
//   column is kept opaque, as callgrind_annotate and KCachegrind do) with a located warning.
#include "callgrind/callgrind_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/spirit/home/x3.hpp>

#include "callgrind/line_reader.h"
#include "callgrind/part_totals.h"
#include "callgrind/string_interner.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/profile.h"
#include "sources/discovery.h"

namespace cg_inject {
namespace {

enum class Key : uint8_t {
  kOb,
  kFl,
  kFi,
  kFe,
  kFn,
  kCob,
  kCfi,
  kCfn,
  kJfi,
  kJfn,
  kCalls,
  kJump,
  kJcnd
};

// --- small helpers ---------------------------------------------------------------------------

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// A key line's key (at most 5 bytes) and its length in one integer, bytes in memory order:
// finding the key is then a multiply and one compare, with no branch on which key it is.
constexpr uint64_t PackKey(std::string_view key) {
  uint64_t v = uint64_t{key.size()} << 56;
  for (size_t i = 0; i < key.size(); ++i)
    v |= uint64_t{static_cast<unsigned char>(key[i])} << (8 * i);
  return v;
}
// Found by search: it gives the 14 keys 14 different slots of 16 (MakeKeyTable checks).
constexpr uint64_t kKeyMultiplier = 0xb30cb8dddc7c2921;
constexpr size_t KeySlot(uint64_t packed) { return (packed * kKeyMultiplier) >> 60; }

struct KeySlotEntry {
  uint64_t packed = UINT64_MAX;  // no key packs to this
  Key key = Key::kOb;
};
constexpr std::array<KeySlotEntry, 16> MakeKeyTable() {
  constexpr std::pair<std::string_view, Key> kKeys[] = {
      {"ob", Key::kOb},     {"fl", Key::kFl},     {"fi", Key::kFi},   {"fe", Key::kFe},
      {"fn", Key::kFn},     {"cob", Key::kCob},   {"cfi", Key::kCfi}, {"cfl", Key::kCfi},
      {"cfn", Key::kCfn},   {"jfi", Key::kJfi},   {"jfn", Key::kJfn}, {"calls", Key::kCalls},
      {"jump", Key::kJump}, {"jcnd", Key::kJcnd},
  };
  std::array<KeySlotEntry, 16> table{};
  for (const auto& [text, key] : kKeys) {
    KeySlotEntry& e = table[KeySlot(PackKey(text))];
    if (e.packed != UINT64_MAX) throw "two keys share a slot: search another multiplier";
    e = KeySlotEntry{PackKey(text), key};
  }
  return table;
}
constexpr std::array<KeySlotEntry, 16> kKeyTable = MakeKeyTable();

/// The key of a `key=value` line and the offset of its value. The keys are not prefixes of each
/// other, so the text before '=' must be one of them exactly. Reads 8 bytes of the line whatever
/// its length (LineReader::kPadding).
bool ParseKeyLine(std::string_view line, Key* key, size_t* value_at) {
  uint64_t word;
  std::memcpy(&word, line.data(), 8);
  uint64_t x = word ^ 0x3d3d3d3d3d3d3d3d;                               // '=' bytes become 0
  uint64_t zeros = (x - 0x0101010101010101) & ~x & 0x8080808080808080;  // lowest one exact
  if (zeros == 0) return false;
  size_t eq = static_cast<size_t>(__builtin_ctzll(zeros)) / 8;
  if (eq >= line.size() || eq > 5) return false;
  uint64_t packed = (word & ((uint64_t{1} << (8 * eq)) - 1)) | uint64_t{eq} << 56;
  const KeySlotEntry& e = kKeyTable[KeySlot(packed)];
  if (e.packed != packed) return false;
  *key = e.key;
  *value_at = eq + 1;
  return true;
}

// Header lines are few, so their grammar stays declarative (Boost.Spirit X3). The per-line
// paths above (numbers, name ids, key= keys) are hand-written: X3's number and symbol parsers
// there were a tenth of a read.
namespace x3 = boost::spirit::x3;
// Explicit ranges, not x3::alpha/alnum: those assert on bytes >= 0x80 (found by the fuzzer).
const auto kLetter = x3::char_('a', 'z') | x3::char_('A', 'Z');
// Unknown header keys are kept, so accept the shapes old writers used ("timeframe (BB):").
const auto kHeaderKey = kLetter >> *(kLetter | x3::char_('0', '9') | x3::char_("_ ()-")) >> ':';
const x3::uint_parser<uint64_t, 10> kVersionNumber;

/// The length of a header key through its ':', or 0.
size_t HeaderKeyLength(std::string_view line) {
  const char* it = line.data();
  if (!x3::parse(it, line.data() + line.size(), kHeaderKey)) return 0;
  return static_cast<size_t>(it - line.data());
}

void SkipBlanks(const char** p, const char* end) {
  while (*p != end && IsBlank(**p)) ++*p;
}

std::string_view TokenAt(const char* p, const char* end) {
  const char* q = p;
  while (q != end && !IsBlank(*q)) ++q;
  return std::string_view(p, static_cast<size_t>(q - p));
}

/// "'text'" for messages, shortened so a binary line does not flood the terminal, with control
/// bytes escaped (\x1b, \x00, C1 controls, a byte-order mark) so garbage input cannot drive the
/// terminal, cut the message or hide in it.
std::string Quote(std::string_view text) {
  constexpr size_t kMax = 60;
  std::string out = "'" + EscapeControlBytes(text.substr(0, kMax), /*escape_backslash=*/true);
  if (text.size() > kMax) out += "...";
  out += '\'';
  return out;
}

/// Scans a decimal number at p: the end of its digits, or nullptr when there are none or the value
/// needs more than 64 bits. Leading zeros are free. Reads 8 bytes from p whatever `end` says
/// (LineReader::kPadding makes that safe): most numbers are short, and a loop over them
/// mispredicted its exit once per number.
[[gnu::always_inline]] inline const char* ScanDecimal(const char* p, const char* end,
                                                      uint64_t* value) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  uint64_t digits = word ^ 0x3030303030303030;  // digit bytes become 0..9, others do not
  // High bit of each byte that is not 0..9: >= 0x80 itself, or 0x0a..0x7f plus 0x76. A carry
  // only leaves a byte already marked, and only the first mark counts.
  uint64_t marks = (digits | (digits + 0x7676767676767676)) & 0x8080808080808080;
  size_t n = marks == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(marks)) / 8;
  n = std::min(n, static_cast<size_t>(end - p));
  if (n == 0) return nullptr;
  if (n < 8) {
    // The digits to the top bytes, first digit lowest, then pairs, fours and eights combined
    // (Lemire, "Fast number parsing"): 0 to 7 leading zero bytes do not change the value.
    digits <<= 8 * (8 - n);
    digits = digits * 10 + (digits >> 8);
    digits = ((digits & 0x000000FF000000FF) * (100 + (1000000ULL << 32)) +
              ((digits >> 16) & 0x000000FF000000FF) * (1 + (10000ULL << 32))) >>
             32;
    *value = digits;
    return p + n;
  }
  // 8 digits or more: rare outside call costs, and overflow needs checking.
  uint64_t v = 0;
  for (; p != end && IsDigit(*p); ++p) {
    if (__builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, static_cast<uint64_t>(*p - '0'), &v))
      return nullptr;
  }
  *value = v;
  return p;
}

/// ScanDecimal, or a 0x hex number (either case), as Callgrind writes addresses. "0x" without hex
/// digits, or with more than 64 bits of them, is the number 0 followed by 'x'. Decimal first:
/// most numbers are, and a hex one shows as a lone 0 followed by 'x'.
[[gnu::always_inline]] inline const char* ScanNumber(const char* p, const char* end,
                                                     uint64_t* value) {
  const char* decimal_end = ScanDecimal(p, end, value);
  if (decimal_end != p + 1 || *p != '0' || decimal_end == end || *decimal_end != 'x')
    return decimal_end;
  uint64_t v = 0;
  const char* q = p + 2;
  for (; q != end; ++q) {
    char c = *q;
    unsigned d = IsDigit(c)                               ? unsigned(c - '0')
                 : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? unsigned((c | 0x20) - 'a' + 10)
                                                          : 16;
    if (d == 16) break;
    if (v >> 60 != 0) return decimal_end;  // past 64 bits: the "0" before the 'x'
    v = v << 4 | d;
  }
  if (q == p + 2) return decimal_end;  // no hex digits
  *value = v;
  return q;
}

/// Parses one whole number token at *p (decimal or 0x hex); false if it is not one.
inline bool ReadNumber(const char** p, const char* end, uint64_t* value) {
  const char* q = ScanNumber(*p, end, value);
  if (q == nullptr || (q != end && !IsBlank(*q))) return false;
  *p = q;
  return true;
}

enum NameSpace { kObjects = 0, kFiles = 1, kFunctions = 2 };
const char* const kSpaceNoun[] = {"object", "file", "function"};

/// Maps compressed ids of one name space to names. Small ids use a vector; ids far beyond
/// what has been defined go to a hash map so a hostile "(4000000000)" costs no memory.
class IdTable {
 public:
  /// The name `id` was defined as, and the part (0-based) that defined it; false if none.
  bool Lookup(uint64_t id, Name* name, int* part = nullptr) const {
#ifdef CG_INJECT_FUZZING
    bool found = LookupFast(id, name, part);
    auto shadow = shadow_.find(id);
    if (found != (shadow != shadow_.end()) || (found && name->id != shadow->second.id))
      __builtin_trap();  // the table lost or mixed up a defined id
    return found;
  }
  bool LookupFast(uint64_t id, Name* name, int* part) const {
#endif
    if (id < dense_.size()) {
      const Slot& slot = dense_[id];
      if (slot.id == 0) return false;
      *name = Name{slot.id, std::string_view(slot.data, slot.size)};
      if (part != nullptr) *part = dense_parts_[id];
      return true;
    }
    const Entry* entry = sparse_.find(id);
    if (entry == nullptr) return false;
    *name = entry->name;
    if (part != nullptr) *part = entry->part;
    return true;
  }
  void Define(uint64_t id, Name name, int part) {
#ifdef CG_INJECT_FUZZING
    shadow_[id] = name;
#endif
    if (id < dense_.size() || id < 2 * defined_ + 65536) {
      if (id >= dense_.size()) Grow(id + id / 2 + 16);
      Put(id, name, part);
    } else {
      sparse_[id] = Entry{name, part};
    }
    ++defined_;
  }

 private:
  // Every fn=/cfn=/cob=/cfi= line looks its id up at random, and the cache miss is most of
  // ParseName's time: so a slot is a Name in 16 bytes (Name and a part were 32), which halves
  // the table (60k functions: 1.9 -> 0.96 MB). The parts are only read when an id is defined.
  void Put(uint64_t id, Name name, int part) {
    dense_[id] = Slot{name.text.data(), static_cast<uint32_t>(name.text.size()), name.id};
    dense_parts_[id] = part;
  }
  /// Lookup reads only the dense slot of an id below dense_.size(), so the ids defined far
  /// ahead that the larger array now covers move into it (issue 23: a Node profile defines id
  /// 70000 before 1..2300, and every later use of 70000 read as undefined).
  void Grow(size_t size) {
    dense_.resize(size);
    dense_parts_.resize(size);
    if (sparse_.empty()) return;
    FlatHashMap<uint64_t, Entry> still_sparse;
    for (auto& entry : sparse_) {
      if (entry.key < size) {
        Put(entry.key, entry.value.name, entry.value.part);
      } else {
        still_sparse[entry.key] = entry.value;
      }
    }
    sparse_ = std::move(still_sparse);
  }

  struct Slot {
    const char* data = nullptr;
    uint32_t size = 0;  // names are shorter than 4 GB (string_interner.h)
    uint32_t id = 0;    // 0: not defined
  };
  struct Entry {
    Name name;
    int part = 0;
  };
  std::vector<Slot> dense_;
  std::vector<int> dense_parts_;
  FlatHashMap<uint64_t, Entry> sparse_;
  uint64_t defined_ = 0;
#ifdef CG_INJECT_FUZZING
  std::unordered_map<uint64_t, Name> shadow_;  // every definition, to check Lookup against
#endif
};

// --- the reader ------------------------------------------------------------------------------

class Reader {
 public:
  Reader(ByteSource& in, ProfileSink& sink, const CallgrindReaderOptions& options)
      : lines_(&in), sink_(sink), options_(options) {}

  void Run();

 private:
  [[noreturn]] void Fail(std::string_view what) const {
    if (CutHere(lines_.line_no())) {
      ThrowAtLine(lines_.display_name(), lines_.line_no(),
                  std::string(what) + " (" + std::string(kCutOff) + ")");
    }
    ThrowAtLine(lines_.display_name(), lines_.line_no(), what);
  }
  /// Whether line `line_no` is the last and has no line end: what is wrong with it may be only
  /// that the file was cut there (issue 36 item 7: `fn=(40` said only what a name id looks like).
  bool CutHere(uint64_t line_no) const {
    return line_no == lines_.line_no() && lines_.last_line_unterminated();
  }
  static constexpr std::string_view kCutOff =
      "the file ends inside this line, without a line end: the profile is cut off";
  [[noreturn]] void Expected(std::string_view expected, std::string_view got) const {
    std::string what = "expected ";
    what.append(expected);
    what += ", got ";
    what.append(got);
    Fail(what);
  }

  /// A located warning of `kind` (nothing without diagnostics).
  void Warn(std::string_view kind, std::string_view what) const {
    if (options_.diagnostics == nullptr) return;
    options_.diagnostics->Warn(
        kind,
        lines_.display_name() + ":" + std::to_string(lines_.line_no()) + ": " + std::string(what));
  }
  /// A disagreement with summary:/totals:: an error in a part Callgrind wrote (unless `force`),
  /// a warning otherwise.
  /// `outcome` says what the output does about it (for a warning).
  /// `at_line`: `what` is about the line itself (not the end of file after it), so a last line
  /// without a line end is said to be cut.
  void Disagree(bool fatal, uint64_t line_no, const std::string& what,
                const char* outcome = "the output says what the costs add up to",
                bool at_line = true);
  /// `creator: callgrind-X.Y` with X.Y >= 3.10. Older ones are checked too, but only warned
  /// about: the corpus holds Qt Creator's hand-edited test files that claim callgrind-3.6.0 and
  /// end without totals:, and Callgrind 3.5 wrote `summary: 0` for client-request dumps. The
  /// creator line, unlike the `# callgrind format` line any writer puts first, survives a
  /// rewrite by cg-inject.
  bool WrittenByCallgrind() const {
    std::string_view v = creator_;
    if (!v.starts_with("callgrind-")) return false;
    v.remove_prefix(10);
    unsigned major = 0, minor = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), major);
    if (ec != std::errc() || p == v.data() + v.size() || *p != '.') return false;
    ++p;
    if (std::from_chars(p, v.data() + v.size(), minor).ec != std::errc()) return false;
    return major > 3 || (major == 3 && minor >= 10);
  }
  void HandleTotals(std::string_view value);
  /// Checks the part's sums at its end; `got` says what ended it ("end of file").
  void CheckPartEnd(std::string_view got);

  /// Next line that is neither blank nor a comment; false at end of input.
  bool NextContentLine(std::string_view* line);
  void HandleLine(std::string_view line);
  void HandleHeader(std::string_view key, std::string_view value);
  /// Passes a header line on with its input text and starts the next record's span.
  void DeliverHeader(std::string_view key, std::string_view value);
  void HandleKeyLine(Key key, std::string_view line, std::string_view value);
  void HandleCalls(std::string_view line, std::string_view value);
  void HandleJump(Key key, std::string_view line, std::string_view value);
  void HandleCost(std::string_view line);

  void ParseEvents(std::string_view value);
  std::string FormatEvents() const;
  void ParsePositions(std::string_view value);
  Name ParseName(NameSpace space, std::string_view value);
  Name Intern(std::string_view text);

  /// Parses one subposition token at *p (absolute, +N, -N or *) relative to `base`.
  uint64_t ReadSubposition(const char** p, const char* end, uint64_t base);
  /// Parses the position columns at *p into `pos`, relative to last_ (which is not updated). `what`
  /// names the line kind for messages.
  void ReadPositions(const char** p, const char* end, Position* pos, std::string_view what);
  /// Parses the costs after the positions into costs_ (missing ones are 0).
  void ReadCosts(const char* p, const char* end);
  // Their errors, out of line: the three above run for every line of a profile and are inlined
  // into one loop per line, which the messages' string building would bloat.
  [[noreturn, gnu::cold, gnu::noinline]] void BadPosition(const char* tok, const char* end,
                                                          uint64_t base);
  [[noreturn, gnu::cold, gnu::noinline]] void TooFewPositions(std::string_view what, int col);
  [[noreturn, gnu::cold, gnu::noinline]] void BadCost(const char* tok, const char* end, size_t i);
  /// Parses a whole position line that follows calls=/jump=; updates last_.
  void ReadFollowingLine(std::string_view after, Position* pos, bool with_costs);

  void EnterBody(std::string_view line);
  void RequireFunction(std::string_view line) {
    if (!has_function_) Expected("fn= before the first cost or call line", Quote(line));
  }
  void StartNewPart(std::string_view got);
  void EndPart(std::string_view got);
  void ResetPartState();

  LineReader lines_;
  ProfileSink& sink_;
  CallgrindReaderOptions options_;

  // Names: interned once, in blocks that never move, so Name::text views stay valid. One
  // std::string per name cost an allocation and ~40 bytes more each: for 1M distinct functions
  // (bench/callgrind_perftest --wide) read+write peaked at 270 MB, then 229 MB with blocks; 110
  // MB with StringInterner and the writer's flat tables.
  StringInterner names_;
  IdTable ids_[3];

  // Part layout.
  int part_index_ = 0;
  bool in_body_ = false;
  bool saw_marker_ = false;
  bool saw_anything_ = false;
  int64_t leading_comments_ = 0;  // comment lines before anything else
  bool cr_in_comment_ = false;    // one of them holds a CR: a file with CR-only line ends
  bool saw_events_ = false;       // an events: line in the current part's header
  PositionLayout positions_;
  std::vector<std::string> event_names_;
  std::vector<std::string_view> event_views_;

  // Current context (ob=, fl=, fi=/fe=, fn=) and pending call/jump targets.
  Name object_, file_, source_file_, function_;
  bool has_function_ = false;
  Name call_object_, call_file_, call_function_;
  bool has_call_object_ = false, has_call_file_ = false, has_call_function_ = false;
  Name jump_file_, jump_function_;
  bool has_jump_file_ = false, has_jump_function_ = false;
  Position last_;
  uint64_t name_line_ = 0;  // the last line that named something (cmd:, ob=, fn=, ...), or 0

  // Scratch reused by every cost line so the hot path does not allocate.
  std::vector<uint64_t> costs_;

  // summary:/totals: checks. creator_ persists across parts: Callgrind writes it once per file.
  std::string creator_;
  PartTotals totals_;
  std::string summary_;  // the part's last summary: value
  uint64_t summary_line_ = 0;
  bool has_summary_ = false, has_totals_ = false;
  uint64_t totals_line_ = 0;
  std::vector<uint64_t> sums_at_totals_;  // to notice records after totals:
  std::string totals_value_;
  std::string totals_raw_;  // the totals: line's input text (see ProfileSink::OnRawHeader)
};

void Reader::Run() {
  sink_.OnPartBegin(0);
  lines_.MarkSpan();
  std::string_view line;
  while (lines_.ReadLine(&line)) HandleLine(line);
  if (!saw_anything_) {
    std::string got = lines_.line_no() == 0    ? "an empty file"
                      : leading_comments_ == 0 ? "only blank lines"
                      : cr_in_comment_
                          ? "only comments, with carriage returns inside them: its lines end "
                            "in CR alone, which Callgrind never writes (convert them to LF)"
                          : "only comments (" + std::to_string(leading_comments_) +
                                (leading_comments_ == 1 ? " line)" : " lines)");
    ThrowForFile(lines_.display_name(), "expected a Callgrind profile, got " + got);
  }
  if (!in_body_) {
    if (event_names_.empty()) Expected("an events: header line", "end of file");
    if (options_.require_callgrind_marker && !saw_marker_)
      Expected(
          "a Callgrind header (# callgrind format, version:, creator:, positions: or summary:)",
          "end of file");
  }
  EndPart("end of file");
}

void Reader::Disagree(bool fatal, uint64_t line_no, const std::string& what, const char* outcome,
                      bool at_line) {
  if (fatal && !options_.force) {
    if (at_line && CutHere(line_no)) {
      ThrowAtLine(lines_.display_name(), line_no,
                  what + " (" + std::string(kCutOff) + "; --force writes it anyway)");
    }
    ThrowAtLine(lines_.display_name(), line_no,
                what + " (the profile is cut off or was changed; --force writes it anyway)");
  }
  if (options_.diagnostics == nullptr) return;
  options_.diagnostics->Warn(
      "callgrind: costs disagree with summary:/totals:",
      lines_.display_name() + ":" + std::to_string(line_no) + ": " + what +
          (fatal ? "; written anyway (--force)" : std::string("; ") + outcome));
}

void Reader::HandleTotals(std::string_view value) {
  if (!in_body_) totals_.Reset(event_names_.size());  // a part without records sums to 0
  has_totals_ = true;
  totals_line_ = lines_.line_no();
  sums_at_totals_ = totals_.sums();
  totals_value_.assign(value);
  // Kept as text: the line is delivered at the part's end, after the buffer has moved on.
  totals_raw_.assign(lines_.Span());
  lines_.MarkSpan();
  // Checked here, for the line number; delivered at the part's end with what the whole part
  // adds up to (records after totals: would otherwise make the delivered one wrong).
  const std::vector<uint64_t>& sums = totals_.sums();
  std::optional<std::vector<uint64_t>> given = ParseCostList(value, sums.size());
  if (given && *given == sums) return;
  Disagree(WrittenByCallgrind(), lines_.line_no(),
           "expected totals: equal to what the part's costs add up to (" + FormatCostList(sums) +
               "), got " + Quote(value));
}

void Reader::CheckPartEnd(std::string_view got) {
  const std::vector<uint64_t>& sums = totals_.sums();
  std::optional<std::vector<uint64_t>> summary;
  if (has_summary_) summary = ParseCostList(summary_, sums.size());
  bool summary_ok = !has_summary_ || (summary && *summary == sums);
  std::string said = has_summary_ ? ", its summary: says " + Quote(summary_) : "";
  if (has_totals_ && sums_at_totals_ != sums) {
    Disagree(WrittenByCallgrind(), totals_line_,
             "expected totals: to end the part, got records after it (the part's costs add up to " +
                 FormatCostList(sums) + ")");
  }
  if (!has_totals_ && WrittenByCallgrind()) {
    // Callgrind writes totals: last, so without it the file ends early: a killed process, a
    // full disk, a file still being written.
    Disagree(true, lines_.line_no(),
             "expected totals: at the end of part " + std::to_string(part_index_ + 1) +
                 " (Callgrind writes it last), got " + std::string(got) +
                 ": the profile is cut off; its costs add up to " + FormatCostList(sums) + said,
             "the output says what the costs add up to", /*at_line=*/false);
  } else if (!summary_ok) {
    // In a part that ends with the right totals:, a wrong summary: is Callgrind's own slip
    // (3.5 wrote 0 for client-request dumps) or an edit, not lost data: a warning.
    Disagree(false, summary_line_,
             "expected summary: equal to what the part's costs add up to (" + FormatCostList(sums) +
                 "), got " + Quote(summary_),
             "the output keeps it, so its percentages read as the input's");
  }
  // A wrong summary: stays as the file wrote it, and no corrected one follows: callgrind_annotate
  // takes the last summary: for its percentages, so a second one changed the profile's reading
  // (issue 23: Qt Creator's test files came out with two and other totals). The warning says it.
  // totals: is the file's own text when it is true; otherwise (or when a Callgrind part was
  // forced through without one, so that it ends the way Callgrind ends a part) the true sums.
  if (has_totals_) {
    std::optional<std::vector<uint64_t>> given = ParseCostList(totals_value_, sums.size());
    if (given && *given == sums) {
      sink_.OnRawHeader("totals", totals_value_, totals_raw_);
    } else {
      sink_.OnHeader("totals", FormatCostList(sums));
    }
  } else if (WrittenByCallgrind()) {
    sink_.OnHeader("totals", FormatCostList(sums));
  }
}

bool Reader::NextContentLine(std::string_view* line) {
  while (lines_.ReadLine(line)) {
    const char* p = line->data();
    const char* end = p + line->size();
    SkipBlanks(&p, end);
    if (p != end && *p != '#') return true;
  }
  return false;
}

void Reader::HandleLine(std::string_view line) {
  if (line.empty()) return;
  char c = line[0];
  if (IsBlank(c)) {
    const char* p = line.data();
    const char* end = p + line.size();
    SkipBlanks(&p, end);
    if (p == end) return;
    line = std::string_view(p, static_cast<size_t>(end - p));  // tolerate indentation
    c = line[0];
  }
  if (c == '#') {
    if (!in_body_ && line.starts_with("# callgrind format")) saw_marker_ = true;
    if (!saw_anything_) {
      // Only for the message about a file that holds nothing else (see Run).
      ++leading_comments_;
      if (line.find('\r') != std::string_view::npos) cr_in_comment_ = true;
    }
    return;
  }
  saw_anything_ = true;
  if (IsDigit(c) || c == '+' || c == '-' || c == '*') {
    HandleCost(line);
    return;
  }
  Key key;
  size_t value_at;
  if (ParseKeyLine(line, &key, &value_at)) {
    HandleKeyLine(key, line, line.substr(value_at));
    if (key != Key::kCalls && key != Key::kJump && key != Key::kJcnd) name_line_ = lines_.line_no();
    return;
  }
  if (size_t key_length = HeaderKeyLength(line)) {
    size_t colon = key_length - 1;
    std::string_view header_key = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && IsBlank(value.front())) value.remove_prefix(1);
    // Free-text headers keep their trailing blanks: Callgrind writes "desc: I1 cache: " and
    // callgrind_annotate prints it verbatim, so a rewrite must too.
    if (header_key != "desc" && header_key != "cmd") {
      while (!value.empty() && IsBlank(value.back())) value.remove_suffix(1);
    }
    HandleHeader(header_key, value);
    if (header_key == "cmd") name_line_ = lines_.line_no();
    return;
  }
  if (name_line_ != 0 && name_line_ + 1 == lines_.line_no()) {
    // Callgrind writes a name as it is: a program whose path holds a line break gives a `cmd:`
    // and an `ob=` line whose name goes on in the next line (issue 36 item 10). Both consumers
    // warn about that line and ignore it (callgrind_annotate: "line N malformed, ignoring"),
    // so the name is its first line; the reading here is theirs.
    Warn("callgrind: line break in a name",
         "expected a header line, a name line, calls=, jump=, jcnd= or a cost line, got " +
             Quote(line) + ": taken for the rest of the name on line " +
             std::to_string(name_line_) +
             ", which holds a line break; ignored, as callgrind_annotate and KCachegrind do");
    return;
  }
  std::string got = Quote(line);
  // Quoted, a byte-order mark is \xef\xbb\xbf: say what it is (Callgrind never writes one).
  if (line.starts_with("\xef\xbb\xbf")) got += " (it starts with a UTF-8 byte-order mark)";
  Expected("a header line (key: value), a name line (fn=...), calls=, jump=, jcnd= or a cost line",
           got);
}

void Reader::HandleHeader(std::string_view key, std::string_view value) {
  if (in_body_) {
    if (key == "totals") {
      HandleTotals(value);
      return;
    }
    if (key == "summary") {
      summary_.assign(value);
      summary_line_ = lines_.line_no();
      has_summary_ = true;
      DeliverHeader(key, value);
      return;
    }
    StartNewPart("the next part's " + std::string(key) + ": line");
  }
  if (key == "events") {
    if (saw_events_) {
      Warn("callgrind: events: repeated", "expected one events: line per part, got a second one (" +
                                              Quote(value) + " replaces " + Quote(FormatEvents()) +
                                              ")");
    }
    saw_events_ = true;
    ParseEvents(value);
  } else if (key == "totals") {
    HandleTotals(value);
    return;
  } else if (key == "positions") {
    ParsePositions(value);
    saw_marker_ = true;
  } else if (key == "version") {
    const char* p = value.data();
    uint64_t major = 0;
    if (!x3::parse(p, value.data() + value.size(), kVersionNumber, major) || major > 1)
      Expected("version: 1 (or 0)", Quote(value));
    saw_marker_ = true;
  } else if (key == "creator" || key == "pid" || key == "thread" || key == "part" ||
             key == "event" || key == "summary") {
    // Cachegrind writes only desc:, cmd:, events: before its data and summary: after it.
    saw_marker_ = true;
    if (key == "creator") creator_.assign(value);
    if (key == "pid" && !ParsePidValue(value)) {
      Warn("callgrind: bad pid: line", "expected pid: with a process id (a decimal number), got " +
                                           Quote(value) +
                                           "; no symbol source is discovered for it");
    }
    if (key == "summary") {
      summary_.assign(value);
      summary_line_ = lines_.line_no();
      has_summary_ = true;
    }
  }
  DeliverHeader(key, value);
}

void Reader::DeliverHeader(std::string_view key, std::string_view value) {
  sink_.OnRawHeader(key, value, lines_.Span());
  lines_.MarkSpan();
}

std::string Reader::FormatEvents() const {
  std::string out;
  for (const std::string& e : event_names_) out += (out.empty() ? "" : " ") + e;
  return out;
}

void Reader::ParseEvents(std::string_view value) {
  event_names_.clear();
  const char* p = value.data();
  const char* end = p + value.size();
  for (;;) {
    SkipBlanks(&p, end);
    if (p == end) break;
    std::string_view name = TokenAt(p, end);
    event_names_.emplace_back(name);
    p += name.size();
  }
  if (event_names_.empty()) Expected("at least one event name after events:", "none");
  event_views_.assign(event_names_.begin(), event_names_.end());
  costs_.assign(event_names_.size(), 0);
}

void Reader::ParsePositions(std::string_view value) {
  PositionLayout layout;
  layout.count = 0;
  const char* p = value.data();
  const char* end = p + value.size();
  for (;;) {
    SkipBlanks(&p, end);
    if (p == end) break;
    std::string_view name = TokenAt(p, end);
    p += name.size();
    if (layout.count == kMaxPositionColumns)
      Expected("at most 3 position names after positions:", Quote(value));
    PositionKind kind = name == "line"    ? PositionKind::kLine
                        : name == "instr" ? PositionKind::kInstr
                        : name == "bb"    ? PositionKind::kBb
                                          : PositionKind::kOther;
    if (kind == PositionKind::kOther) {
      Warn("callgrind: unknown position name", "expected position names instr, line or bb, got " +
                                                   Quote(name) +
                                                   " (its column is carried through unchanged)");
    }
    layout.kinds[layout.count++] = kind;
  }
  if (layout.count == 0) Expected("a position name (instr, bb, line) after positions:", "none");
  positions_ = layout;
}

Name Reader::Intern(std::string_view text) { return names_.Intern(text); }

Name Reader::ParseName(NameSpace space, std::string_view value) {
  size_t i = 0;
  while (i < value.size() && IsBlank(value[i])) ++i;
  value.remove_prefix(i);
  // "(" digit starts a compressed name; real names never start that way (cl-format.xml).
  if (value.size() < 2 || value[0] != '(' || !IsDigit(value[1])) return Intern(value);
  const char* end = value.data() + value.size();
  uint64_t id = 0;
  const char* p = ScanDecimal(value.data() + 1, end, &id);
  if (p == nullptr || p == end || *p != ')') Expected("a name id like (12)", Quote(value));
  ++p;
  SkipBlanks(&p, end);
  if (p == end) {
    Name name;
    if (ids_[space].Lookup(id, &name)) return name;
    // callgrind-0.10.1 wrote references to object ids it never defined (gprof2dot's
    // selinux.callgrind); callgrind_annotate reads them as an empty name, and so do we, with a
    // counted warning. Strict mode refuses them.
    std::string ref(value.substr(0, static_cast<size_t>(p - value.data())));
    if (options_.diagnostics == nullptr || options_.strict_ids)
      Expected(std::string("a ") + kSpaceNoun[space] + " id defined earlier", Quote(ref));
    options_.diagnostics->Warn("callgrind: undefined name id",
                               lines_.display_name() + ":" + std::to_string(lines_.line_no()) +
                                   ": undefined " + kSpaceNoun[space] + " id " + ref +
                                   ", read as an empty name");
    return Intern("");
  }
  Name name = Intern(std::string_view(p, static_cast<size_t>(end - p)));
  Name old;
  int old_part = 0;
  // callgrind_annotate and KCachegrind both take the new name from here on; so do we. Within a
  // part that is a slip; a later part may define ids afresh (KCachegrind forgets them at each
  // part, and cg-inject's writer defines them anew per part).
  if (ids_[space].Lookup(id, &old, &old_part) && old.id != name.id && old_part == part_index_) {
    Warn("callgrind: name id redefined", std::string("expected ") + kSpaceNoun[space] + " id (" +
                                             std::to_string(id) + ") to keep its name " +
                                             Quote(old.text) + ", got " + Quote(name.text) +
                                             " (the new name is used from here on)");
  }
  ids_[space].Define(id, name, part_index_);
  return name;
}

void Reader::EnterBody(std::string_view line) {
  if (in_body_) return;
  if (options_.require_callgrind_marker && !saw_marker_) {
    Expected(
        "a Callgrind header (# callgrind format, version:, creator:, positions: or summary:) "
        "before the first record",
        Quote(line) + " (Cachegrind output is not a Callgrind profile)");
  }
  if (event_names_.empty()) Expected("an events: header line before the first record", Quote(line));
  in_body_ = true;
  totals_.Reset(event_names_.size());
  sink_.OnLayout(PartLayout{positions_, event_views_});
}

void Reader::HandleKeyLine(Key key, std::string_view line, std::string_view value) {
  EnterBody(line);
  switch (key) {
    case Key::kOb:
      object_ = ParseName(kObjects, value);
      return;
    case Key::kFl:
      file_ = source_file_ = ParseName(kFiles, value);
      return;
    case Key::kFi:
    case Key::kFe:
      source_file_ = ParseName(kFiles, value);
      return;
    case Key::kFn:
      function_ = ParseName(kFunctions, value);
      // The current file, fi=/fe= included, is the function's file (see the overview).
      file_ = source_file_;
      has_function_ = true;
      has_call_object_ = has_call_file_ = has_call_function_ = false;
      has_jump_file_ = has_jump_function_ = false;
      totals_.Function(object_.id, file_.id, function_.id);
      sink_.OnFunction(FunctionContext{object_, file_, function_, lines_.Span(), lines_.line_no()});
      lines_.MarkSpan();
      return;
    case Key::kCob:
      call_object_ = ParseName(kObjects, value);
      has_call_object_ = true;
      return;
    case Key::kCfi:
      call_file_ = ParseName(kFiles, value);
      has_call_file_ = true;
      return;
    case Key::kCfn:
      call_function_ = ParseName(kFunctions, value);
      has_call_function_ = true;
      return;
    case Key::kJfi:
      jump_file_ = ParseName(kFiles, value);
      has_jump_file_ = true;
      return;
    case Key::kJfn:
      jump_function_ = ParseName(kFunctions, value);
      has_jump_function_ = true;
      return;
    case Key::kCalls:
      HandleCalls(line, value);
      return;
    case Key::kJump:
    case Key::kJcnd:
      HandleJump(key, line, value);
      return;
  }
}

void Reader::BadPosition(const char* tok, const char* end, uint64_t base) {
  // Parsed again, slowly, to say what was wrong with it.
  char c = *tok;
  uint64_t value = 0;
  const char* p = tok + (c == '+' || c == '-' ? 1 : 0);
  if (c == '*' || !ReadNumber(&p, end, &value))
    Expected("a position (number, +N, -N or *)", Quote(TokenAt(tok, end)));
  if (c == '+') Expected("a position below 2^64", Quote(TokenAt(tok, end)));
  Expected("a relative position that stays >= 0",
           Quote(TokenAt(tok, end)) + " after " + std::to_string(base));
}

void Reader::TooFewPositions(std::string_view what, int col) {
  Expected(std::string(what) + " with " + std::to_string(positions_.count) + " position column" +
               (positions_.count > 1 ? "s" : ""),
           std::to_string(col));
}

void Reader::BadCost(const char* tok, const char* end, size_t i) {
  size_t n = costs_.size();
  if (i == n) {
    Expected("at most " + std::to_string(n) + " cost" + (n > 1 ? "s" : "") + " (one per event)",
             "another one, " + Quote(TokenAt(tok, end)));
  }
  Expected("a cost (a decimal or 0x hex number)", Quote(TokenAt(tok, end)));
}

[[gnu::always_inline]] inline uint64_t Reader::ReadSubposition(const char** p, const char* end,
                                                               uint64_t base) {
  const char* tok = *p;
  const char sign = *tok;
  uint64_t value = base;
  if (sign == '*') {
    ++*p;
  } else {
    const char* q = ScanNumber(tok + (sign == '+' || sign == '-' ? 1 : 0), end, &value);
    if (q == nullptr) BadPosition(tok, end, base);
    *p = q;
    if (sign == '+' && __builtin_add_overflow(base, value, &value)) BadPosition(tok, end, base);
    if (sign == '-') {
      if (value > base) BadPosition(tok, end, base);
      value = base - value;
    }
  }
  if (*p != end && !IsBlank(**p)) BadPosition(tok, end, base);
  return value;
}

[[gnu::always_inline]] inline void Reader::ReadPositions(const char** p, const char* end,
                                                         Position* pos, std::string_view what) {
  for (int col = 0; col < positions_.count; ++col) {
    SkipBlanks(p, end);
    if (*p == end) TooFewPositions(what, col);
    pos->values[col] = ReadSubposition(p, end, last_.values[col]);
  }
}

[[gnu::always_inline]] inline void Reader::ReadCosts(const char* p, const char* end) {
  const size_t n = costs_.size();
  size_t i = 0;
  for (;;) {
    SkipBlanks(&p, end);
    if (p == end) break;
    const char* q = i == n ? nullptr : ScanNumber(p, end, &costs_[i]);
    if (q == nullptr || (q != end && !IsBlank(*q))) BadCost(p, end, i);
    p = q;
    ++i;
  }
  for (; i < n; ++i) costs_[i] = 0;
}

void Reader::HandleCost(std::string_view line) {
  EnterBody(line);
  RequireFunction(line);
  const char* p = line.data();
  const char* end = p + line.size();
  CostRecord record;
  record.raw_base = last_;
  ReadPositions(&p, end, &record.position, "a cost line");
  ReadCosts(p, end);
  size_t event = 0;
  bool inclusive = false;
  if (!totals_.AddCost(costs_, &event, &inclusive)) {
    Expected("costs whose sums stay below 2^64",
             Quote(line) + ", which takes " +
                 (inclusive
                      ? "the inclusive " + event_names_[event] + " cost of " + Quote(function_.text)
                      : "the part's " + event_names_[event] + " total") +
                 " past it");
  }
  last_ = record.position;
  record.source_file = source_file_;
  record.costs = costs_;
  record.raw = lines_.Span();
  sink_.OnCost(record);
  lines_.MarkSpan();
}

void Reader::ReadFollowingLine(std::string_view after, Position* pos, bool with_costs) {
  std::string_view line;
  // Constants, not built per call: this runs for every call and jump line.
  std::string_view what = with_costs
                              ? "the call's cost line (position and inclusive costs) after calls="
                          : after == "jcnd=" ? "the jump's source position line after jcnd="
                                             : "the jump's source position line after jump=";
  if (!NextContentLine(&line)) {
    ThrowAtLine(lines_.display_name(), lines_.line_no() + 1,
                "expected " + std::string(what) + ", got end of file");
  }
  const char* p = line.data();
  const char* end = p + line.size();
  SkipBlanks(&p, end);
  char c = *p;
  if (!IsDigit(c) && c != '+' && c != '-' && c != '*') Expected(what, Quote(line));
  ReadPositions(&p, end, pos, what);
  if (with_costs) {
    ReadCosts(p, end);
  } else {
    SkipBlanks(&p, end);
    if (p != end) Expected("only a position on the line after " + std::string(after), Quote(line));
  }
  last_ = *pos;
}

void Reader::HandleCalls(std::string_view line, std::string_view value) {
  RequireFunction(line);
  if (!has_call_function_) Expected("cfn= before calls=", Quote(line));
  const char* p = value.data();
  const char* end = p + value.size();
  SkipBlanks(&p, end);
  CallRecord call;
  call.raw_base = last_;
  const char* tok = p;
  if (!ReadNumber(&p, end, &call.count))
    Expected("a call count after calls=", Quote(TokenAt(tok, end)));
  // The target may give fewer columns than the layout (old writers give only the line); the
  // rest stay 0.
  for (int col = 0; col < positions_.count; ++col) {
    SkipBlanks(&p, end);
    if (p == end) {
      if (col == 0) Expected("a target position after the call count", "end of line");
      break;
    }
    call.target.values[col] = ReadSubposition(&p, end, last_.values[col]);
  }
  SkipBlanks(&p, end);
  if (p != end) Expected("end of line after the call target", Quote(TokenAt(p, end)));
  call.target_object = has_call_object_ ? call_object_ : object_;
  call.target_file = has_call_file_ ? call_file_ : source_file_;
  call.target_function = call_function_;
  ReadFollowingLine("calls=", &call.source, true);
  call.source_file = source_file_;
  call.inclusive = costs_;
  size_t event = 0;
  if (!totals_.AddCall(costs_, &event)) {
    Expected("call costs whose sums stay below 2^64", "a call that takes the inclusive " +
                                                          event_names_[event] + " cost of " +
                                                          Quote(function_.text) + " past it");
  }
  has_call_object_ = has_call_file_ = has_call_function_ = false;
  call.raw = lines_.Span();
  sink_.OnCall(call);
  lines_.MarkSpan();
}

void Reader::HandleJump(Key key, std::string_view line, std::string_view value) {
  RequireFunction(line);
  const char* p = value.data();
  const char* end = p + value.size();
  SkipBlanks(&p, end);
  JumpRecord jump;
  jump.conditional = key == Key::kJcnd;
  jump.raw_base = last_;
  const char* tok = p;
  uint64_t first = 0;
  p = ScanNumber(p, end, &first);
  if (p == nullptr) {
    Expected(jump.conditional ? "a count after jcnd=" : "a count after jump=",
             Quote(TokenAt(tok, end)));
  }
  if (!jump.conditional) {
    if (p != end && !IsBlank(*p)) Expected("a count after jump=", Quote(TokenAt(tok, end)));
    jump.followed = jump.executed = first;
  } else if (p != end && *p == '/') {
    ++p;  // Callgrind: jcnd=FOLLOWED/EXECUTED
    tok = p;
    if (!ReadNumber(&p, end, &jump.executed))
      Expected("an execution count after jcnd=N/", Quote(TokenAt(tok, end)));
    jump.followed = first;
  } else {
    if (p != end && !IsBlank(*p)) Expected("a count after jcnd=", Quote(TokenAt(tok, end)));
    SkipBlanks(&p, end);
    tok = p;
    if (!ReadNumber(&p, end, &jump.followed))  // spec grammar: jcnd=EXECUTED FOLLOWED
      Expected("a jump count after jcnd=EXECUTED", Quote(TokenAt(tok, end)));
    jump.executed = first;
  }
  ReadPositions(&p, end, &jump.target, "a jump target");
  SkipBlanks(&p, end);
  if (p != end) Expected("end of line after the jump target", Quote(TokenAt(p, end)));
  jump.target_file = has_jump_file_ ? jump_file_ : source_file_;
  jump.target_function = has_jump_function_ ? jump_function_ : function_;
  ReadFollowingLine(jump.conditional ? "jcnd=" : "jump=", &jump.source, false);
  jump.source_file = source_file_;
  has_jump_file_ = has_jump_function_ = false;
  jump.raw = lines_.Span();
  sink_.OnJump(jump);
  lines_.MarkSpan();
}

void Reader::ResetPartState() {
  in_body_ = false;
  saw_events_ = false;
  has_summary_ = has_totals_ = false;
  object_ = file_ = source_file_ = function_ = Name{};
  has_function_ = false;
  has_call_object_ = has_call_file_ = has_call_function_ = false;
  has_jump_file_ = has_jump_function_ = false;
  last_ = Position{};
}

void Reader::EndPart(std::string_view got) {
  if (!in_body_ && !event_names_.empty()) {
    totals_.Reset(event_names_.size());
    sink_.OnLayout(PartLayout{positions_, event_views_});
  }
  CheckPartEnd(got);
  sink_.OnPartEnd();
}

void Reader::StartNewPart(std::string_view got) {
  EndPart(got);
  ResetPartState();
  sink_.OnPartBegin(++part_index_);
}

}  // namespace

bool ParseCallgrindNumber(std::string_view token, uint64_t* value) {
  std::string padded(token);  // ScanDecimal reads 8 bytes
  padded.append(8, '\0');
  const char* end = padded.data() + token.size();
  const char* q = ScanNumber(padded.data(), end, value);
  return q != nullptr && q == end;
}

void ReadCallgrind(ByteSource& in, ProfileSink& sink, const CallgrindReaderOptions& options) {
  Reader reader(in, sink, options);
  try {
    reader.Run();
  } catch (...) {
    sink.OnAbort();  // while the reader's names still exist
    throw;
  }
}

}  // namespace cg_inject
