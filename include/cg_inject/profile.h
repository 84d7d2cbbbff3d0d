// The record model shared by every stage that touches a Callgrind profile: the reader pushes
// records into a ProfileSink, the rewriter is a ProfileSink that forwards to another one, and the
// writer is the last ProfileSink. Format: valgrind callgrind/docs/cl-format.xml.
//
// The reader undoes all compression before records leave it: names are plain text (the writer
// compresses again), positions are absolute, costs are padded to the number of events, and call
// and jump targets carry their resolved object/file/function (cob/cfi/cfn default to the current
// ob/file as the format specifies). Views in records point into storage owned by the reader (names
// live as long as the reader; positions, costs and `raw` only until the callback returns).
//
// `raw` is the exact input text a record came from: every byte since the previous record or
// header line (blank lines, comments, the ob=/fl=/fi=/cob=/cfn= lines that set its context) up to
// and including its own line(s) and their final newline. The writer copies it instead of
// formatting when the copy reads the same, which keeps untouched profiles byte-identical. A stage
// that changes a record or synthesizes one leaves `raw` empty.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace cg_inject {

/// What one position column holds (`positions:` header). kOther is a name the spec does not
/// define (qt-creator's tests use `memAddr`); such columns are carried through unchanged.
enum class PositionKind : uint8_t { kLine, kInstr, kBb, kOther };

inline constexpr size_t kMaxPositionColumns = 3;

/// The position columns of a part, in file order. The format's default is one `line` column.
struct PositionLayout {
  std::array<PositionKind, kMaxPositionColumns> kinds{PositionKind::kLine};
  uint8_t count = 1;

  /// Column index of `kind`, or -1 when the layout has no such column.
  int IndexOf(PositionKind kind) const {
    for (int i = 0; i < count; ++i)
      if (kinds[i] == kind) return i;
    return -1;
  }
  bool operator==(const PositionLayout&) const = default;
};

/// Absolute values of one position, one per column of the part's PositionLayout.
struct Position {
  std::array<uint64_t, kMaxPositionColumns> values{};
  // Column by column: the defaulted comparison calls memcmp, 3% of a run that compares
  // positions per record (the injector's tables).
  bool operator==(const Position& other) const {
    static_assert(kMaxPositionColumns == 3);
    return values[0] == other.values[0] && values[1] == other.values[1] &&
           values[2] == other.values[2];
  }
};

/// An interned name. `id` is unique per distinct text within one reader (0 = no name, e.g. no
/// `fl=` seen yet); `text` stays valid as long as the reader that produced it.
struct Name {
  uint32_t id = 0;
  std::string_view text;
};

/// The function a block of cost lines belongs to: set by ob=/fl=/fn= lines.
struct FunctionContext {
  Name object;             // ob=
  Name file;               // fl=
  Name function;           // fn=
  std::string_view raw{};  // input text through the fn= line (see above)
  uint64_t line = 0;       // the fn= line's number in the input (0: not known), for messages
};

/// The layout of a part's body, delivered before its first body record.
struct PartLayout {
  PositionLayout positions;
  std::span<const std::string_view> events;  // `events:` names in order
};

/// A cost line: exclusive cost at one position of the current function.
struct CostRecord {
  Position position;
  Name source_file;  // the current fi=/fe= file, or the function's fl= when none is active
  std::span<const uint64_t> costs;  // one value per event
  std::string_view raw{};           // input text through the cost line
  Position raw_base{};              // the position relative subpositions in `raw` are based on
};

/// `calls=COUNT TARGET` plus its mandatory following line (call site + inclusive cost).
struct CallRecord {
  uint64_t count = 0;
  Position target;   // target position (columns the line omitted are 0)
  Position source;   // call-site position in the current function
  Name source_file;  // current fi=/fe= file of the call site
  Name target_object, target_file, target_function;  // resolved cob/cfi(cfl)/cfn
  std::span<const uint64_t> inclusive;
  std::string_view raw{};  // input text through the line after calls=
  Position raw_base{};     // the position relative subpositions in `raw` are based on
};

/// `jump=COUNT TARGET` (followed == executed == COUNT) or `jcnd=FOLLOWED/EXECUTED TARGET` as
/// Callgrind writes it (the spec's grammar form `jcnd=EXECUTED FOLLOWED TARGET` is read too),
/// plus the source-position line that Callgrind writes after it.
struct JumpRecord {
  bool conditional = false;
  uint64_t followed = 0;
  uint64_t executed = 0;
  Position target;
  Position source;
  Name source_file;
  Name target_file, target_function;  // resolved jfi/jfn (default: current file/function)
  std::string_view raw{};             // input text through the line after jump=/jcnd=
  Position raw_base{};                // the position relative subpositions in `raw` are based on
};

/// Receives a profile. Parts arrive in file order: OnPartBegin, header lines, OnLayout, body
/// records, trailing header lines (e.g. `totals:` written after the body), OnPartEnd.
class ProfileSink {
 public:
  virtual ~ProfileSink() = default;
  /// `part_index` counts from 0 within the file (not the `part:` header value).
  virtual void OnPartBegin(int part_index) = 0;
  /// Any `key: value` header line, verbatim, including unknown keys, `events:`, `positions:`,
  /// `summary:` and `totals:`. `key` has no colon; `value` has no leading blanks and no trailing
  /// ones either, except for the free-text `desc:` and `cmd:`, which keep them verbatim.
  virtual void OnHeader(std::string_view key, std::string_view value) = 0;
  /// A header line as the reader delivers it, with `raw`, the input text it came from (see
  /// above; empty when the reader corrected the value). Sinks that do not copy input lines keep
  /// this default, which drops `raw`.
  virtual void OnRawHeader(std::string_view key, std::string_view value, std::string_view raw) {
    (void)raw;
    OnHeader(key, value);
  }
  virtual void OnLayout(const PartLayout& layout) = 0;
  /// A new function block starts (fn= line, possibly after ob=/fl=).
  virtual void OnFunction(const FunctionContext& function) = 0;
  virtual void OnCost(const CostRecord& cost) = 0;
  virtual void OnCall(const CallRecord& call) = 0;
  virtual void OnJump(const JumpRecord& jump) = 0;
  virtual void OnPartEnd() = 0;
  /// The producer failed and its storage (names included) goes away when this returns: a sink
  /// that still uses views of it (BackgroundSink) stops first. Stages forward it downstream.
  virtual void OnAbort() {}
};

}  // namespace cg_inject
