// The injection stage: a ProfileSink that names JIT code from a SymbolIndex and forwards the
// rewritten profile to another sink (normally the Callgrind writer).
//
// Rules (issue 4; the report and README repeat them):
// - A block is JIT-looking when its object is `???` (or empty) and its function is `0x<hex>`,
//   optionally with a `'N` recursion suffix. It is resolved only when the index covers its
//   address; blocks no source covers pass through exactly as they came (ob=??? also holds stubs).
// - A resolved function is named by its source: ob = the source's object name, fl = the source
//   file (line table or name-derived) or `???`, fn = the readable name plus the `'N` suffix. The
//   same triple is used on the callee side and on every caller side (cob/cfi/cfn).
// - One function per definition (resolve/definition_names.h): KCachegrind keys a function by name
//   plus the base names of file and object, so where two definitions would share that key
//   (nameless V8/MoarVM frames become `(anonymous)`; two classes' `get` in one file) the name
//   gets the definition's position: `NAME:LINE`, `NAME:LINE:COL` when only columns differ,
//   `NAME (FILE:LINE:COL)` when only directories do. Tiers and versions of one definition (same
//   name, file and position) share one function.
// - With `instr` positions every cost and calls= line, in any block, belongs to the JIT function
//   containing its address. Cost that leaves its block (tail jumps, fall-through) becomes the
//   target's self cost, and the block's function gets a synthesized call edge to the target whose
//   inclusive cost is the moved self cost plus the inclusive cost of the calls that moved with it,
//   so the block function's inclusive cost is unchanged.
//   Call count of a synthesized edge: the followed count of the block's jump=/jcnd= lines whose
//   target lies in the target function, when there are any; otherwise the execution count of the
//   target's entry instruction in the moved lines (first event, when it is `Ir`), or of the lowest
//   moved address when the entry did not run from that block; 1 when the first event is not Ir.
//   Its call site is the source of such a jump, else the highest instruction position the block's
//   function kept, else the lowest moved position.
// - Blocks resolving to one function are merged; a call between pieces of one function that does
//   not target its entry is an internal transfer and disappears (its cost is already the
//   function's own); a call to the entry is recursion and stays. Equal positions and equal edges
//   (call site, target) are summed within a block; across blocks the consumers sum them.
// - Versions: for each address, the versions that lived there (SymbolIndex::LookupAll) are
//   filtered by instruction boundaries decoded from their code bytes; a block prefers the version
//   its entry resolved to. When several versions still fit, part number q (the `part:` header,
//   else the part's index + 1) takes the q-th loaded version (the last one when there are fewer):
//   with CALLGRIND_DUMP_STATS_AT dumps, later parts ran later code. Such choices are counted.
//   The part rule holds only in a profile that says it has several parts (a `part:` above 1, a
//   `desc: Trigger:` other than the program's end): otherwise, where versions without code bytes
//   (a perf map's) tie, the code is one function that says it is ambiguous, `0x<16 hex digits>
//   (ambiguous: f | g)` (OutputFunctions::Ambiguous), with the costs and calls Callgrind counted.
//   When one block holds the code of several versions at its entry (reuse without a dump in
//   between), each version with instructions of its own there gets them; lines that fit several
//   (the shared entry) and the calls into the block are split among them in proportion to their
//   estimated entry counts (first event at each version's lowest own address), a call line of
//   count N among at most N versions (those of most entries), each at least 1, the counts
//   adding up to N; the inclusive cost of those calls is split among the versions they enter in
//   proportion to each version's cost in the block.
// - A perf-map entry that a jitdump load describes too (start, size, name) is that load's
//   version (SymbolIndex::Superseded): the jitdump's code bytes and lines name it.
// - Real-object code that a source also lists (Node's `Builtin:X` = ELF `Builtins_X`): a
//   source never renames a function of a real object. An address is object code when a block of
//   that object has a cost line there, or when it lies in the extent of an object whose addresses
//   are absolute (ObjectExtents); a JIT block's cost there goes to the function of the ELF symbol
//   that contains the address (ObjectExtents::FunctionAt, with the file Callgrind gave that
//   function, else `???`), with a synthesized edge. Only for an object without symbols does it go
//   to the function that had a cost line there (Callgrind charges tail jumps inside native code
//   to the jumping function), and when no block of it is known it stays where it was.
// - Lines: with a line table, each JIT cost line gets the file/line of its address; otherwise the
//   name-derived file and first line. An input with `instr` but no `line` column gets one.
// - Invariants checked at the end of every part: per-event totals unchanged, every call target
//   exists as a function block (unless it was already missing in the input), the inclusive cost of
//   every function no source covers unchanged. A violation throws InvariantError unless
//   InjectOptions::force; it is always listed in InjectStats.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cg_inject/error.h"
#include "cg_inject/profile.h"

namespace cg_inject {

class SymbolIndex;

/// Tells an object's own code (Callgrind writes its addresses relative to the load bias, i.e. as
/// ELF virtual addresses) from absolute JIT addresses when both appear in one block. Implemented
/// from ELF program headers (src/elf); tests use a fake.
class ObjectExtents {
 public:
  virtual ~ObjectExtents() = default;
  /// Whether `addr` lies in a loaded segment of `object` (the `ob=` text); nullopt when the object
  /// is unknown (then the symbol index alone decides).
  virtual std::optional<bool> Contains(std::string_view object, uint64_t addr) const = 0;
  /// What ExtentOf answers.
  struct Extent {
    enum Kind : uint8_t { kAsk, kUnknown, kRange };
    Kind kind = kAsk;
    uint64_t begin = 0, end = 0;
  };
  /// Contains for every address of `object` at once, for callers that ask about each cost line:
  /// kRange when Contains is true exactly for `addr - begin < end - begin` (an ELF image's
  /// extent), kUnknown when Contains answers nullopt, kAsk (the default) when Contains must be
  /// asked per address. Called where Contains would first be, as it may open the object.
  virtual Extent ExtentOf(std::string_view object) const {
    (void)object;
    return {};
  }
  /// True when `object`'s addresses are its runtime addresses (an ET_EXEC executable such as
  /// Node's /usr/bin/node): then an absolute address in a JIT block can be the object's own code
  /// (V8's embedded builtins, which perf maps also list), and such code is never renamed.
  virtual bool AddressesAreAbsolute(std::string_view object) const {
    (void)object;
    return false;
  }
  /// The name Callgrind gives the function symbol of `object` that contains `addr` (ELF .symtab,
  /// else .dynsym, Valgrind's naming rules), or nullopt when the object has no such symbol.
  virtual std::optional<std::string> FunctionAt(std::string_view object, uint64_t addr) const {
    (void)object;
    (void)addr;
    return std::nullopt;
  }
  /// Where Valgrind loaded `object`, when the object alone tells: 0 for an ET_EXEC (its ELF
  /// addresses are its runtime ones), Valgrind's fixed PIE base for the program's own PIE
  /// executable; nullopt for shared libraries (SlotLoadBias may learn theirs). Callgrind
  /// writes code of an object outside its .text (.plt.got, .plt.sec, .init) in `???` at runtime
  /// addresses; with this such an address is known to be the object's (issue 23 item 7).
  virtual std::optional<uint64_t> KnownLoadBias(std::string_view object) const {
    (void)object;
    return std::nullopt;
  }
  /// A shared library's load bias, from a block Callgrind wrote in `???` at runtime address
  /// `addr` that calls a function it names `target` (issue 23 item 7): the page-aligned bias
  /// under which `addr` is the start of `object`'s PLT slot `target`@plt (libc's malloc@plt
  /// calls malloc), or nullopt (no such slot, or several under different biases). Callgrind
  /// writes a library's own code at ELF addresses, so a stub in `???` is the profile's only
  /// trace of where the library was loaded.
  virtual std::optional<uint64_t> SlotLoadBias(std::string_view object, uint64_t addr,
                                               std::string_view target) const {
    (void)object;
    (void)addr;
    (void)target;
    return std::nullopt;
  }
  /// Whether the stub of `object` at ELF address `addr` (a PLT slot), which the profile shows
  /// calling `target` in `target_object`, can be that call's slot: false when the slot's
  /// relocation names another function, which proves that `object` is not the file the profile
  /// ran (rebuilt since; issue 36 item 3). Its stubs are then left unnamed (and the
  /// implementation says so once). True when nothing can be told (no such slot, an indirect
  /// function that resolves to another name, an unreadable target object).
  virtual bool StubCallFits(std::string_view object, uint64_t addr, std::string_view target_object,
                            std::string_view target) const {
    (void)object;
    (void)addr;
    (void)target_object;
    (void)target;
    return true;
  }
  /// What code of `object` lies at ELF address `addr`: nullopt when `addr` is in no executable
  /// segment of it; else the name objdump gives it (`free@plt` for a PLT slot), else the name
  /// Callgrind gives the function symbol containing it, else "".
  virtual std::optional<std::string> CodeNameAt(std::string_view object, uint64_t addr) const {
    (void)object;
    (void)addr;
    return std::nullopt;
  }
  /// CodeNameAt(object, addr).has_value(), without the name: whether `addr` is code of `object`
  /// (naming it may read the object's symbols, which this need not).
  virtual bool IsCodeAt(std::string_view object, uint64_t addr) const {
    return CodeNameAt(object, addr).has_value();
  }
  /// The object path Callgrind writes for the program that `cmd:` starts with: an absolute
  /// path, or found from the current directory or PATH as a shell would (`./prog`, `mono`),
  /// symbolic links resolved (the kernel maps the real file: `/usr/bin/mono` and `mono` are
  /// /usr/bin/mono-sgen); "" when not found. Callgrind may name the program's stubs in `???`
  /// before any block of the program (issue 23 item 7).
  virtual std::string ProgramObject(std::string_view program) const {
    (void)program;
    return "";
  }
};

/// The program a `cmd:` header value starts with: its first word, blanks before it skipped
/// (Callgrind writes `cmd:  node --perf-prof ...`). The injector and the run's look-ahead
/// (which reads the program while the sources load) both read it so.
std::string_view CommandProgram(std::string_view cmd);

/// Architecture of the JIT code, for decoding instruction boundaries from code bytes.
enum class CodeArch : uint8_t { kUnknown, kX86_64, kAArch64 };

/// Pieces of JIT functions that must stay apart from their function, because merging them made
/// call cycles the input did not have (rewrite/cycle_guard.h, issue 33 item 7): what a first pass
/// found, for the second. Keyed by the part's position in the file (0-based) and the input's
/// names, which a second reading of the same input gives again.
struct KeptApart {
  /// An input function ("PART:NAME", NAME the fn= name as read, `0x...` with its recursion
  /// suffix) that becomes a function of its own, `NAME (entered at 0xADDR, +0xOFFSET)`.
  std::set<std::string> blocks;
  /// Code of a function that another function's block ran, left with that block: "PART:BLOCK
  /// NAME\x1fFUNCTION" (the block's fn= name as read, the function's output name).
  std::set<std::string> ran_by_other;
  bool empty() const { return blocks.empty() && ran_by_other.empty(); }
};

struct InjectOptions {
  /// Write even when an invariant check fails (the violation is still reported).
  bool force = false;
  /// Architecture of code bytes whose source does not say (a jitdump's e_machine wins);
  /// kUnknown disables boundary checks for them (any address fits).
  CodeArch arch = CodeArch::kX86_64;
  /// How many unresolved JIT-looking addresses InjectStats::top_unresolved keeps.
  int top_unresolved = 10;
  /// Empty, or one entry per SymbolIndex::version(i): a non-empty entry is the `ob=` of the
  /// functions resolved to that version (the ELF image holding its code, src/elf/jit_image_plan.h)
  /// instead of its source's object name.
  std::vector<std::string> version_objects;
  /// The input's name in messages: an input error of the injector (sums past 2^64 where it
  /// merges records) says PATH:LINE, LINE being the fn= line of the block it was rewriting.
  std::string input_name;
  /// Another pass over the same input: the pieces an earlier pass found must stay apart
  /// (Injector::must_keep_apart).
  KeptApart kept_apart;
};

/// Everything `--stats` prints. Costs are of the first event.
struct InjectStats {
  struct Source {
    std::string path, kind, object_name;
    int64_t records = 0;
    std::string damage = {};      // SymbolSourceInfo::damage
    int64_t dropped_records = 0;  // SymbolSourceInfo::dropped_records (a cut-off jitdump's tail)
    uint64_t dropped_bytes = 0;
    int64_t superseded = 0;  // SymbolSourceInfo::superseded (a perf map's entries in a jitdump)
  };
  struct Unresolved {
    uint64_t addr = 0;
    std::string name;  // the block's fn= text
    uint64_t cost = 0;
  };
  std::vector<Source> sources;
  std::string first_event;  // name of the event the costs below count
  int64_t parts = 0;
  bool has_instr_positions = false;  // false: resolution by block name only
  bool added_line_column = false;
  uint64_t total_cost = 0;               // first event, all parts
  uint64_t unnamed_jit_cost_before = 0;  // self cost in JIT-looking blocks of the input
  uint64_t unnamed_jit_cost_after = 0;   // the same in the output
  // Counted per part and summed, as Callgrind names every function again in each part.
  int64_t jit_blocks = 0;  // JIT-looking functions (fn= of `???`, address names)
  int64_t jit_blocks_resolved = 0;
  int64_t functions_resolved = 0;         // resolved (ob, fl, fn) triples written
  int64_t definitions_disambiguated = 0;  // names given a `:LINE` (resolve/definition_names.h)
  // Addresses of JIT code no source covers named by their place (rewrite/unnamed_code.h: Mono's
  // trampolines between its map entries), summed over parts as the functions are.
  int64_t unnamed_code_named = 0;
  int64_t calls_renamed = 0;  // calls= lines whose target was renamed
  // Cost lines that left their block (tail jumps). Lines of one position count once in a block
  // entered at reused code (summed by position first), each in the others.
  int64_t cost_lines_moved = 0;
  uint64_t cost_moved = 0;
  int64_t edges_synthesized = 0;
  int64_t internal_transfers_dropped = 0;
  int64_t object_code_lines = 0;      // JIT-block lines given to a real object's function
  int64_t reused_ranges = 0;          // from the index: overlapping versions of different functions
  int64_t reused_addresses_seen = 0;  // profile addresses with more than one candidate version
  int64_t ambiguous_choices = 0;      // addresses where several versions fit equally
  int64_t reused_blocks_split = 0;    // blocks holding several versions' code, split among them
  // Functions named `0x... (ambiguous: f | g)`: code at an address that several functions of a
  // perf map used in turn, with nothing to tell which ran (one part, no code bytes), and their
  // self cost.
  int64_t ambiguous_functions = 0;
  uint64_t ambiguous_cost = 0;
  // Input call edges (caller, callee, summed over a part's calls= lines) whose inclusive cost
  // exceeds their part's total: Callgrind's call tracking broke (rewrite/call_overflow.h).
  int64_t overflowing_call_edges = 0;
  // Pieces of JIT functions kept apart because merged they made call cycles the input did not
  // have (issue 33 item 7): blocks given a function of their own, code left with the block that
  // ran it; pieces this pass found that would need it too (another pass keeps them apart); and
  // pieces in such cycles that nothing may keep apart (entry blocks, real objects' code).
  int64_t blocks_kept_apart = 0;
  int64_t ran_code_kept_in_block = 0;
  int64_t new_cycles_left = 0;
  int64_t new_cycles_merged = 0;
  std::string kept_apart_example;  // the output name of the first block kept apart
  std::vector<Unresolved> top_unresolved;
  std::vector<std::string> invariant_violations;

  double unnamed_share_before() const {
    return total_cost ? double(unnamed_jit_cost_before) / double(total_cost) : 0.0;
  }
  double unnamed_share_after() const {
    return total_cost ? double(unnamed_jit_cost_after) / double(total_cost) : 0.0;
  }
};

/// Thrown at the end of a part when an invariant fails and InjectOptions::force is off. An
/// InputError so the entry function's single catch turns it into a message and exit code.
class InvariantError : public InputError {
 public:
  using InputError::InputError;
};

/// Rewrites a profile stream, one block at a time. Lines of ordinary blocks that touch no JIT code
/// stream straight through; the rest of a block is kept (a JIT block's cost lines in input order
/// when one version lived at its entry, else summed by position) and rewritten when the block
/// ends (a function may so get several blocks in a part: consumers add them up). Between
/// blocks only per-function state is kept (names, output identities, the invariants' sums), plus
/// the calls into a reused address whose block has not come yet, so memory grows with distinct
/// functions and the largest block, never with the file.
/// Requires: `index` finished; `index`, `extents`, `downstream` and the reader that feeds this
/// sink outlive the Injector (names are forwarded as views).
class Injector : public ProfileSink {
 public:
  Injector(const SymbolIndex& index, const ObjectExtents* extents, InjectOptions options,
           ProfileSink* downstream);
  ~Injector() override;
  Injector(const Injector&) = delete;
  Injector& operator=(const Injector&) = delete;

  void OnPartBegin(int part_index) override;
  void OnHeader(std::string_view key, std::string_view value) override;
  void OnLayout(const PartLayout& layout) override;
  void OnFunction(const FunctionContext& function) override;
  void OnCost(const CostRecord& cost) override;
  void OnCall(const CallRecord& call) override;
  void OnJump(const JumpRecord& jump) override;
  void OnPartEnd() override;
  void OnAbort() override;

  /// Statistics so far (complete after the last OnPartEnd).
  InjectStats stats() const;
  /// With InjectOptions::version_objects: per SymbolIndex::version(i), whether the output named
  /// a function after version i's object (so its ELF image must be written); else empty.
  const std::vector<bool>& touched_versions() const;
  /// After the last OnPartEnd: the pieces that must stay apart, InjectOptions::kept_apart and
  /// those this pass found (InjectStats::new_cycles_left counts them), which only another pass
  /// over the same input with them in InjectOptions::kept_apart can do: this pass's output has
  /// them merged.
  const KeptApart& must_keep_apart() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Appends the human-readable `--stats` report (several lines) to `out`.
void AppendStatsText(const InjectStats& stats, std::string* out);
/// Appends `--stats=json`: one JSON object and a newline.
void AppendStatsJson(const InjectStats& stats, std::string* out);

}  // namespace cg_inject
