// Internals of Injector (include/cg_inject/inject.h). The injector streams: each input block is
// rewritten as soon as it ends (block_rewriter.cc) and only what is per function or per symbol
// stays for the rest of the part (names, output identities, the invariants' per-function sums),
// plus the rare calls into a reused block that has not been seen yet (pending_).
//   injector.cc        the record callbacks: ordinary lines straight through, the rest into the
//                      current block (its aggregate, or its cost lines in order)
//   block_rewriter.cc  one block: its version, its co-owners, who owns each record, the
//                      synthesized edges, and writing the touched functions out
//   part_checks.cc     invariants and statistics at the end of each part
// and the parts they use, each with one job and its own tests:
//   input_functions.h  the part's JIT-looking input functions and what each resolved to
//   output_functions.h the part's output functions, and the one each code version becomes
//   object_code.h      which indexed addresses are a real object's code, and whose
//   version_lines.h    the source line and file of an address of a code version
//   position_columns.h the instr and line columns, and the line column a profile gains
//   record_owners.h    who owns each record of a block
//   pending_calls.h    calls into reused code waiting for their target's block
//   reuse_split.h      a reused block's records divided among the versions that ran there
//   record_agg.h       a block's records summed by position
//   accounting.h       the invariants' sums
#pragma once

#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "resolve/name_table.h"
#include "resolve/version_chooser.h"
#include "rewrite/accounting.h"
#include "rewrite/call_overflow.h"
#include "rewrite/cycle_guard.h"
#include "rewrite/input_functions.h"
#include "rewrite/object_code.h"
#include "rewrite/output_functions.h"
#include "rewrite/pending_calls.h"
#include "rewrite/position_columns.h"
#include "rewrite/record_agg.h"
#include "rewrite/record_owners.h"
#include "rewrite/reuse_split.h"
#include "rewrite/synth_edge.h"
#include "rewrite/version_lines.h"

namespace cg_inject {

class CodeVersion;

/// A cost line of a block: position, fi=/fe= file id, and its costs' CostPool offset.
struct CostLine {
  Position pos;
  uint32_t file = 0;
  size_t costs = 0;
};

/// What the current block gives one output function: records at output positions and the
/// synthesized edges from it. Slots are reused block after block (small tables keep capacity).
struct BlockOutput {
  int function = -1;  // OutFunction index
  // Cost lines of other functions' blocks or divided among versions, in no order: summed by
  // position when written (EmitCosts). The function's own lines are the block's (own).
  std::vector<CostLine> lines;
  RecordAgg agg;                   // calls and jumps
  std::map<int, SynthEdge> edges;  // by target OutFunction index; ordered for determinism
};

/// The block being read: its records at input positions.
struct CurrentBlock : ResolvedBlock {  // resolved when the block ends
  int function = -1;                   // InFunction index
  uint64_t fn_line = 0;                // its fn= line in the input (0: not known), for messages
  RecordAgg agg;                       // JIT block: all records; ordinary block: the deferred ones
  // A JIT block entered where only one version lived (no reused code to choose among) keeps its
  // cost lines in input order instead of summing them by position: its version does not depend
  // on them, and consumers sum lines at one position anyway. Summing, re-keying and re-sorting
  // every line was most of the injector's time.
  bool in_order = false;
  std::vector<CostLine> lines;  // at input positions
  // The cost lines the block's own function keeps, at output positions: written by its slot,
  // with its costs unchanged (a JIT block's lines rarely leave it).
  std::vector<CostLine> own;
  // The highest instr position the block's function kept (streamed through, or its own lines
  // of a JIT block): the call site of synthesized edges without a jump to point at.
  bool has_kept = false;
  Position max_kept;
  uint32_t max_kept_file = 0;
};

class Injector::Impl {
 public:
  Impl(const SymbolIndex& index, const ObjectExtents* extents, InjectOptions options,
       ProfileSink* downstream);

  void OnPartBegin(int part_index);
  void OnHeader(std::string_view key, std::string_view value);
  void OnLayout(const PartLayout& layout);
  void OnFunction(const FunctionContext& function);
  void OnCost(const CostRecord& cost);
  void OnCall(const CallRecord& call);
  void OnJump(const JumpRecord& jump);
  void OnPartEnd();
  void OnAbort() { downstream_->OnAbort(); }
  InjectStats stats() const;
  const std::vector<bool>& touched_versions() const { return out_.touched(); }
  const KeptApart& must_keep_apart() const { return found_apart_; }
  /// Runs `record`; a SumOverflow it throws leaves as an InputError located at the block being
  /// rewritten (PATH:LINE of its fn= line), when the options name the input.
  template <typename Record>
  void Located(Record&& record) {
    try {
      record();
    } catch (const SumOverflow& overflow) {
      if (options_.input_name.empty() || block_.fn_line == 0) throw;
      ThrowAtLine(options_.input_name, block_.fn_line, overflow.what());
    }
  }

 private:
  enum class Mode : uint8_t { kNone, kJit, kPass };

  // Streaming (injector.cc).
  /// A cost line as the injector reads it (OnCost shifted its position where it had to).
  void TakeCost(const CostRecord& cost);
  void FinishBlock();
  void EmitPassHeader();
  /// The current ordinary block's record is rewritten at the block's end, not streamed.
  void Defer();
  InFunction& In(int index) { return in_[index]; }
  const InFunction& In(int index) const { return in_[index]; }

  // One block (block_rewriter.cc).
  void RewriteBlock();
  void ResolveBlock();
  void RewriteJumps();
  void RewriteCosts();
  /// One cost line of the block: `offset` holds its costs in pool_.
  void RewriteCost(const Position& pos, uint32_t file, size_t offset);
  void RewriteCalls();
  void RewriteCall(const CallKey& key, const CallValue& value);
  /// Adds a call whose site is placed (`key.site`, in `owner`'s output function) to the JIT
  /// function `target` (`version`, recursion suffix `suffix`) entered at the input position
  /// `key.target_pos`; with `split`, divided among the versions of a reused target's block.
  /// `from_other`: the call's input target is another input function than its caller.
  void AddCallTo(int owner, int owner_base, const CallKey& key, uint64_t count,
                 std::span<const uint64_t> inclusive, uint32_t suffix, const CodeVersion* version,
                 int target, const ReuseSplit* split, uint64_t target_addr, bool from_other);
  void ResolvePending(const FunctionKey& target);
  /// Whether a call target is in Callgrind's unknown object under a real function's name (not a
  /// JIT address) and had no block of its own: a JIT block's call Callgrind wrote without cob=,
  /// or an id that the real function's block bound (KCachegrind then means that function,
  /// callgrind_annotate knows functions by file and name only). Such a target is the real
  /// function of that name (RealTarget), else it has no block in either consumer.
  bool MisplacedTarget(const FunctionKey& target) const;
  /// The real object's function a misplaced target means: this part's one block of its name in
  /// a real object, with its file or an unknown one (`???`, a call without cfi=).
  bool RealTarget(const FunctionKey& target, FunctionKey* real) const;
  /// A real object's block starts: its name may be a misplaced call target's.
  void NoteRealFunction(const FunctionKey& key);
  /// Whether `key` is a `???` function no source covers whose address is a real object's code
  /// with a name there (a PLT stub: ObjectCode::NamedStubAt); `*out` is then the key it is
  /// written under: that object, its file, `NAME` plus the input's recursion suffix. Wherever
  /// the function is written (its blocks, calls into it) it goes under that key, and its
  /// positions at the object's ELF addresses, as Callgrind writes a real object's: `*bias` (when
  /// asked) is what to subtract. Never without sources: then nothing is renamed. A `???`
  /// function that is no stub but JIT code whose place says what it is (GapName: a Mono
  /// trampoline) is written under that name, in `???`, at its own addresses (bias 0).
  /// `for_call`: the key goes into a call line.
  bool StubKey(const FunctionKey& key, FunctionKey* out, uint64_t* bias = nullptr,
               bool for_call = false);
  /// The name id of the code at `addr`, which no source covers, by what lies around it
  /// (UnnamedCode::GapName), or 0. Asked once per address.
  uint32_t GapName(uint64_t addr);
  /// Whether `*key` is a nameless function of a shifted object (ObjectCode::ShiftedObjectBias:
  /// Callgrind's `0x...` name at an ELF address of the program's PIE, where it found no symbol)
  /// whose runtime address a source covers: then `*key` becomes the JIT function the injector
  /// reads it as (`???`, the runtime address, the input's recursion suffix) and the object's
  /// load bias is returned, which its records' addresses get added (OutputFunctions writes them
  /// back under the object, at its ELF addresses). 0, `*key` unchanged, for any other function.
  uint64_t ShiftedKey(FunctionKey* key);
  /// A position of the current block as the injector reads it: Callgrind writes each
  /// instruction relative to its own object, so in a shifted block (or a `???` block) an address
  /// in the shifted object's ELF extent is that object's code, read at its runtime address (in a
  /// `???` block only where a source covers it: a JIT address there is its own). Anything else
  /// is unchanged.
  /// Inline: it runs for every line of a `???` block, and most lie outside the shifted object.
  Position ReadPosition(const Position& pos) const {
    if (cur_shift_object_ == 0 || !columns_.has_instr()) return pos;
    if (cur_shift_extent_ == ShiftExtent::kRange &&
        columns_.Instr(pos) - cur_shift_begin_ >= cur_shift_end_ - cur_shift_begin_)
      return pos;
    return ShiftedReadPosition(pos);
  }
  Position ShiftedReadPosition(const Position& pos) const;
  /// A position `f` writes: a shifted object's function (OutFunction::rebase) writes its
  /// object's addresses back at their ELF addresses; other addresses (JIT code its block ran)
  /// stay.
  /// Inline: it runs for every line written, and most functions are no shifted object's.
  Position WrittenPosition(const Position& pos, const OutFunction& f) const {
    if (f.rebase == 0 || !columns_.has_instr()) return pos;
    return RebasedIfOwned(pos, f);
  }
  Position RebasedIfOwned(const Position& pos, const OutFunction& f) const;
  /// A call record whose target `target` is such a stub: its object's name and ELF address,
  /// formatted (the input's text names it otherwise). False, unchanged, for any other target.
  bool RetargetToStub(const FunctionKey& target, CallRecord* out) {
    FunctionKey stub;
    uint64_t bias = 0;
    if (!StubKey(target, &stub, &bias, /*for_call=*/true)) return false;
    out->target_object = Name{stub.object, names_.Text(stub.object)};
    out->target_function = Name{stub.function, names_.Text(stub.function)};
    out->target = Rebased(out->target, bias);
    out->raw = {};
    return true;
  }
  /// `pos` with its instr column moved down by `bias` (a stub's runtime address made its ELF
  /// address); unchanged without an instr column.
  Position Rebased(const Position& pos, uint64_t bias) const {
    Position out = pos;
    if (columns_.has_instr()) columns_.SetInstr(&out, columns_.Instr(pos) - bias);
    return out;
  }
  /// Part end: pending calls whose target never had a block, then blocks for call targets.
  void FlushPending();
  /// The output function that owns the block's record at `addr`, and the version there (null:
  /// an ordinary function's own code).
  int Owner(uint64_t addr, const CodeVersion** version, bool call = false) {
    int owner = owners_.Owner(In(block_.function), block_, addr, version, call);
    // A second pass may leave another function's code with the block that ran it.
    if (!options_.kept_apart.ran_by_other.empty() && !block_.IsOwn(owner) && KeptInBlock(owner))
      return block_.identity;
    return owner;
  }
  uint64_t AddrOf(const Position& pos) const;
  /// Where VersionChooser puts a tie that this part names instead of choosing by part number.
  std::vector<const CodeVersion*>* TieOut() { return ties_named_ ? &tie_ : nullptr; }
  /// The output function a JIT address resolves to (`*version`, null for an ambiguous one), by
  /// Choose: the target of a jump or of a call whose target block gave no answer. For a call,
  /// `call_target` is the input's target function (a second pass may keep it apart).
  int ChooseTarget(uint64_t addr, const CodeVersion* preferred, uint32_t suffix,
                   const CodeVersion** version, const FunctionKey* call_target = nullptr);
  /// Output position and file of a record at `pos` owned by `version` (null: left as it was).
  void Place(const Position& pos, uint32_t in_file, const CodeVersion* version, Position* out_pos,
             uint32_t* out_file);
  FitsFn Fits();
  BlockOutput& Output(int function);
  SynthEdge& Edge(int caller, int target);
  void FinalizeEdges();
  /// Writes the functions the block gave records to: for each, its cost lines (with the block's
  /// own kept lines when it is the block's function), calls and jumps, each by position.
  void EmitOutputs();
  void EmitCosts(const OutFunction& f, BlockOutput& slot, bool has_own);
  void EmitCalls(const OutFunction& f, const BlockOutput& slot);
  void EmitJumps(const OutFunction& f, const BlockOutput& slot);
  /// Bookkeeping for the invariants when `f`'s block is written.
  void NoteWritten(const OutFunction& f);

  // Pieces that merging would join into call cycles the input did not have (issue 33 item 7,
  // rewrite/cycle_guard.h; part_checks.cc).
  /// The current block ran code of output function `owner` at `addr` (`version`: the code
  /// version there, null for a real object's).
  void NoteRanByOther(int owner, uint64_t addr, const CodeVersion* version);
  /// ... and a call from that code to `target`.
  void NoteRanByOtherCall(int owner, const FunctionKey& target);
  /// The current block in call_overflow_'s ids: a JIT-looking function's InFunction index with
  /// the top bit, else its entry in in_acc_.
  uint32_t BlockNode() const {
    return block_.function >= 0 ? uint32_t(block_.function) | kJitNode : in_acc_.current_index();
  }
  static constexpr uint32_t kJitNode = 1u << 31;
  /// "PART:NAME" for the decisions of KeptApart.
  std::string PartKey(uint32_t name) const;
  /// Whether a second pass gives the input function `key` a function of its own.
  bool KeptApartBlock(const FunctionKey& key) const {
    return !options_.kept_apart.blocks.empty() &&
           options_.kept_apart.blocks.count(PartKey(key.function)) != 0;
  }
  /// Whether a second pass leaves code of output function `owner` with the current block.
  bool KeptInBlock(int owner);
  /// The output function a call to JIT function `target` enters: `version`'s with `suffix`, or
  /// the piece's own when a second pass keeps `target` apart (entered at `entry`).
  int TargetIdentity(const FunctionKey& target, const CodeVersion* version, uint32_t suffix,
                     uint64_t entry) {
    if (KeptApartBlock(target)) return out_.ApartIdentity(version, suffix, entry);
    return out_.Identity(version, suffix);
  }
  /// Part end: finds the pieces (first pass) or counts those left (second pass).
  void CheckMergedCycles();

  // Part end (part_checks.cc).
  void CheckInvariants();
  void CollectStats();
  void Violation(std::string message);

  const SymbolIndex& index_;
  InjectOptions options_;
  ProfileSink* downstream_;
  VersionChooser chooser_;
  NameTable names_;
  ObjectCode objects_;
  VersionLines lines_{index_, &names_};

  // Part state: per function, never per position.
  int64_t part_number_ = 1;
  // The profile says it has several parts (a `part:` above 1, a part that a dump request ended,
  // a second part in the file): then the part number may choose among versions that nothing
  // else tells apart (inject.h). Otherwise such a choice is not made (ties_named_).
  bool several_parts_ = false;
  bool ties_named_ = false;
  std::vector<const CodeVersion*> tie_;  // VersionChooser's tie, when ties_named_
  bool body_started_ = false;
  std::vector<std::pair<std::string, std::string>> trailing_headers_;
  PositionColumns columns_;
  bool first_event_is_ir_ = false;
  size_t events_ = 0;
  // In chunks: a profile may have millions of functions, and a vector's doubling would hold the
  // old and the new array at once.
  InputFunctions in_;
  OutputFunctions out_;
  RecordOwners owners_{index_, &chooser_, &objects_, &out_, &columns_};
  // The invariants' sums: every input record, and of those the ones the injector took out of the
  // stream and what it wrote instead. Lines that pass through count only once, in in_acc_, whose
  // per-function sums are kept for unnamed JIT functions only (the report's).
  CostAccounting in_acc_, removed_acc_, added_acc_;
  // First-event cost of the part's resolved JIT blocks, which have no entry in in_acc_.
  uint64_t resolved_jit_cost_before_ = 0;
  // Calls waiting for their target's block, by target InFunction index. Rare: only calls into
  // reused addresses before the target's block, and misplaced targets before their real block.
  PendingCalls pending_;
  // Per function name id: the object and file of the part's real-object block of that name
  // (object kAmbiguous: two objects or files have one). 8 bytes a name; reset every part, as
  // consumers forget ids then.
  static constexpr uint32_t kAmbiguous = UINT32_MAX;
  std::vector<std::pair<uint32_t, uint32_t>> real_by_name_;
  uint32_t unknown_name_ = 0;  // `???`'s name id
  // The input's call edges, summed, for the broken-call-tracking report (call_overflow.h).
  CallOverflow call_overflow_;
  // Code that blocks ran of other functions, and the calls made from it, by (block node, owner);
  // a piece each for CheckMergedCycles. Small: one per synthesized edge.
  struct RanByOther {
    uint32_t block_node = 0;
    int owner = -1;
    uint64_t offset = UINT64_MAX;  // the lowest address moved, from the owner's entry
  };
  std::vector<RanByOther> ran_by_other_;
  std::unordered_map<uint64_t, uint32_t> ran_by_other_index_;  // (block node << 32 | owner)
  uint64_t last_ran_key_ = UINT64_MAX;  // NoteRanByOther's last key and its index
  uint32_t last_ran_index_ = 0;
  struct RanByOtherCall {
    uint32_t ran = 0;  // index in ran_by_other_
    FunctionKey target;
    bool operator==(const RanByOtherCall&) const = default;
  };
  struct RanByOtherCallHash {
    size_t operator()(const RanByOtherCall& c) const {
      return FunctionKeyHash{}(c.target) ^ (size_t{c.ran} * 0x9E3779B97F4A7C15ull);
    }
  };
  std::unordered_set<RanByOtherCall, RanByOtherCallHash> ran_by_other_calls_;
  int64_t part_index_ = 0;  // the part's position in the file, for KeptApart's keys
  KeptApart found_apart_;   // a first pass's findings, all parts
  // A second pass's: what KeptInBlock answered for the current block, by owner (a table: a block
  // may run code of hundreds of functions, and scanning a list of them was 2% of erlc's second
  // pass), and the pieces it applied (for the stats).
  FlatHashMap<int, bool> kept_in_block_cache_;
  std::set<std::string> applied_ran_by_other_;

  // The block being read and written.
  Mode mode_ = Mode::kNone;
  CurrentBlock block_;
  CostPool pool_;  // the block's costs, input and output
  std::vector<BlockOutput> slots_;
  size_t slots_used_ = 0;
  // Edge's last answer (null: none): valid until its caller's slot is emptied.
  SynthEdge* last_edge_ = nullptr;
  int last_edge_caller_ = -1, last_edge_target_ = -1;
  // Every edge of the block being rewritten, by (caller << 32 | target): emptied with the slots.
  FlatHashMap<uint64_t, SynthEdge*> edge_index_;
  FunctionContext cur_out_;    // mapped names of the current ordinary block
  std::string cur_raw_;        // its input text (FunctionContext::raw), kept until it is emitted
  uint32_t cost_file_in_ = 0;  // OnCost's last fi=/fe= file (upstream id) and its mapping
  Name cost_file_;
  bool pending_header_ = false;
  bool cur_deferred_ = false;
  // The current ordinary block is a real object's stub written under its object (StubKey): its
  // positions go out minus this bias.
  bool cur_stub_ = false;
  uint64_t cur_stub_bias_ = 0;
  // A stub block's cost lines wait for its first call or jump (or its end): the call may show
  // that the stub's object changed since the profile was written (ObjectCode::NoteStubCall), and
  // then the block is written as the input has it (SettleStub).
  bool cur_stub_unsettled_ = false;
  uint64_t cur_stub_addr_ = 0;
  FunctionContext cur_unstubbed_;  // cur_out_ before the stub's names
  struct HeldCost {
    Position position;  // plain (the output's columns), not rebased
    Name file;
    std::vector<uint64_t> costs;
  };
  std::vector<HeldCost> held_costs_;
  void SettleStub();
  /// A kept cost line of an ordinary block (or a stub's) goes out.
  void EmitPassCost(const Position& plain, Name file, std::span<const uint64_t> costs,
                    std::string_view raw = {}, const Position& raw_base = {});
  uint64_t cur_unnamed_entry_ = 0;  // the address an unnamed, uncovered `???` block is named by
  // The shifted object whose ELF addresses the current block's records may hold (ReadPosition),
  // 0 for none; its bias; and whether the block is that object's own (ShiftedKey: every address
  // in its extent is read shifted) or a `???` block (only covered ones).
  uint32_t cur_shift_object_ = 0;
  uint64_t cur_shift_bias_ = 0;
  bool cur_shift_own_ = false;
  // The shifted object's extent as ReadPosition's first line asked it (no earlier: asking may
  // open its file and warn), when it is one range: [cur_shift_begin_, cur_shift_end_).
  enum class ShiftExtent : uint8_t { kNotAsked, kRange, kPerAddress };
  mutable ShiftExtent cur_shift_extent_ = ShiftExtent::kNotAsked;
  mutable uint64_t cur_shift_begin_ = 0, cur_shift_end_ = 0;
  // ShiftedKey's answers by (object << 32 | function) name ids: the function name id it is read
  // as (0: not shifted) and the bias. One entry per nameless function of the program.
  struct ShiftedName {
    uint32_t function = 0;
    uint64_t bias = 0;
  };
  std::unordered_map<uint64_t, ShiftedName> shifted_names_;
  std::vector<uint64_t> scratch_addrs_;
  std::vector<uint64_t> scratch_call_addrs_;  // ResolveBlock's: the block's call sites
  std::vector<CostLine> scratch_lines_;       // EmitOutputs': one slot's cost lines, sorted
  std::vector<size_t> scratch_fits_;          // RewriteCost's: the reused versions a line fits
  // A copy of one pooled cost vector: adding to the pool may move the original.
  std::vector<uint64_t> scratch_costs_;

  // Whole run.
  InjectStats stats_;
  std::unordered_map<std::string, uint64_t> unresolved_cost_;  // fn text -> first-event cost
  // GapName's answers by address (0: none): one per `???` address the profile names.
  std::unordered_map<uint64_t, uint32_t> gap_names_;
  int64_t violations_total_ = 0;
};

}  // namespace cg_inject
