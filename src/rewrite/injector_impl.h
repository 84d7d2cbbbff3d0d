// Internals of Injector (include/cg_inject/inject.h), shared by injector.cc (streaming) and
// part_rewriter.cc (what happens at the end of each part).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cg_inject/inject.h"
#include "resolve/definition_names.h"
#include "resolve/name_table.h"
#include "resolve/version_chooser.h"
#include "rewrite/accounting.h"
#include "rewrite/record_agg.h"

namespace cg_inject {

struct CodeVersion;

/// A synthesized call edge from a block's function to a function whose code ran in that block.
struct SynthEdge {
  int64_t moved_lines = 0;
  size_t inclusive = 0;  // CostPool offset
  bool has_inclusive = false;
  const CodeVersion* target_version = nullptr;
  uint64_t jump_count = 0;  // followed counts of jumps from kept code into the target
  bool has_jump_site = false;
  Position jump_site;
  uint32_t jump_site_file = 0;
  uint64_t entry_count = 0;  // first event at the target's entry address, moved lines
  bool entry_seen = false;
  uint64_t min_addr = UINT64_MAX;  // lowest moved address and its first-event count
  uint64_t min_count = 0;
  Position min_pos;  // output position of the lowest moved address
  uint32_t min_file = 0;
};

/// One function of the output part: a resolved JIT function, or an ordinary one that receives
/// deferred records (JIT call targets, synthesized edges) in a second block.
struct OutFunction {
  FunctionKey key;  // output names
  bool jit = false;
  bool needed = false;             // emit it (has records or is a call target)
  bool moved_in = false;           // an ordinary function that received cost from JIT blocks
  RecordAgg agg;                   // output positions and names
  std::map<int, SynthEdge> edges;  // by target OutFunction index; ordered for determinism
  bool has_kept = false;           // highest kept position, the fallback call site
  Position max_kept;
  uint32_t max_kept_file = 0;
};

/// One input block key (mapped ob, fl, fn) of the current part.
struct InBlock {
  FunctionKey key;
  bool jit = false;  // JIT-looking and covered: every record aggregated here
  uint64_t entry = 0;
  uint32_t suffix = 0;    // interned `'N` text id (0 = none)
  RecordAgg agg;          // jit: all records; otherwise the deferred ones; input positions
  bool has_kept = false;  // ordinary blocks: highest instr position streamed through
  Position max_kept;
  uint32_t max_kept_file = 0;
  // Filled at part end.
  // Code reuse inside one block (an address re-emitted without a dump in between, so one fn=
  // holds both versions): the versions at the entry that have instructions of their own here,
  // their estimated entry counts (first event at their lowest own address) and per-event cost
  // (self + calls) in this block. Empty when the block has one owner.
  std::vector<const CodeVersion*> coowners;
  std::vector<int> coowner_ids;
  std::vector<uint64_t> coowner_counts;
  std::vector<std::vector<uint64_t>> coowner_weights;
  const CodeVersion* version = nullptr;
  int identity = -1;
  int base_identity = -1;
};

class Injector::Impl {
 public:
  Impl(const SymbolIndex& index, const ObjectExtents* extents, const InjectOptions& options,
       ProfileSink* downstream, Diagnostics* diagnostics);

  void OnPartBegin(int part_index);
  void OnHeader(std::string_view key, std::string_view value);
  void OnLayout(const PartLayout& layout);
  void OnFunction(const FunctionContext& function);
  void OnCost(const CostRecord& cost);
  void OnCall(const CallRecord& call);
  void OnJump(const JumpRecord& jump);
  void OnPartEnd();
  InjectStats stats() const;

 private:
  enum class Mode : uint8_t { kNone, kJit, kPass };

  // Streaming (injector.cc).
  void FinishBlock();
  void EmitPassHeader();
  int BlockFor(const FunctionKey& key);
  bool IsJitAddress(uint32_t object, uint64_t addr) const;
  /// Whether `addr` (absolute) is code of a real object (see the rules in inject.h); sets
  /// `*owner` to the object's function when a block of it has a cost line there.
  bool IsObjectCode(uint64_t addr, const FunctionKey** owner = nullptr) const;
  void NoteObject(uint32_t object);
  bool IsJitTarget(const FunctionKey& key, uint64_t* addr, uint32_t* suffix);
  Position ConvertPlain(const Position& in) const;
  Position Convert(const Position& in, uint32_t line) const;
  void NoteKept(InBlock* block, const Position& pos, uint32_t file);

  // Part end (part_rewriter.cc).
  void ResolveBlocks();
  void ProcessBlock(InBlock* block);
  int Owner(const InBlock& block, uint64_t addr, const CodeVersion** version);
  void FindCoowners(InBlock* block);
  /// Indices of the co-owners of `block` whose instruction boundaries fit `addr`.
  void CoownersAt(const InBlock& block, uint64_t addr, std::vector<size_t>* fits);
  static bool IsOwn(const InBlock& block, int owner);
  int Identity(const CodeVersion* version, uint32_t suffix);
  /// The function of an absolute object (ObjectExtents::AddressesAreAbsolute) whose ELF symbol
  /// contains `addr`, or null when no such object or symbol does.
  const FunctionKey* SymbolOwner(uint64_t addr);
  /// The definition a version belongs to, with views into the index and options_.
  DefinitionSite SiteOf(const CodeVersion& version) const;
  int PassIdentity(const FunctionKey& key);
  void LineOf(const CodeVersion& version, uint64_t addr, uint32_t* line, uint32_t* file);
  uint32_t FileOf(const CodeVersion& version);
  SynthEdge& Edge(int caller, int target);
  void FinalizeEdges();
  void EmitAll();
  void CheckInvariants();
  void CollectStats();
  void Violation(std::string message);

  const SymbolIndex& index_;
  const ObjectExtents* extents_;
  InjectOptions options_;
  ProfileSink* downstream_;
  Diagnostics* diagnostics_;
  VersionChooser chooser_;
  NameTable names_;
  DefinitionNames definition_names_;
  uint64_t index_min_ = UINT64_MAX, index_max_ = 0;  // address span of the index

  // Part state.
  int part_index_ = 0;
  int64_t part_number_ = 1;
  bool body_started_ = false;
  std::vector<std::pair<std::string, std::string>> trailing_headers_;
  PositionLayout in_layout_, out_layout_;
  int instr_col_ = -1, line_col_ = -1, out_line_col_ = -1;
  bool add_line_ = false;
  bool first_event_is_ir_ = false;
  size_t events_ = 0;
  CostPool pool_;
  std::vector<InBlock> blocks_;
  std::unordered_map<FunctionKey, int, FunctionKeyHash> block_index_;
  std::vector<OutFunction> out_;
  std::unordered_map<FunctionKey, int, FunctionKeyHash> out_index_;
  // version -> (suffix id, out index) pairs; few suffixes per version.
  std::unordered_map<const CodeVersion*, std::vector<std::pair<uint32_t, int>>> identity_cache_;
  // (object << 32 | function) -> the file of that function's first block, and the keys that
  // SymbolOwner hands out (a node map: pointers to them stay valid).
  std::unordered_map<uint64_t, uint32_t> function_files_;
  std::unordered_map<uint64_t, FunctionKey> symbol_owners_;
  CostAccounting in_acc_, out_acc_;
  std::vector<uint64_t> scratch_addrs_;
  // A copy of one pooled cost vector: adding to the pool may move the original.
  std::vector<uint64_t> scratch_costs_;
  // Real-object code that the index also lists: the source's version (its range) -> the object's
  // function that has cost lines in it (objects with absolute addresses only), and the objects
  // with absolute addresses seen in this part. Small: one entry per such version.
  std::unordered_map<const CodeVersion*, FunctionKey> object_code_;
  std::vector<uint32_t> absolute_objects_;
  std::unordered_map<uint32_t, bool> object_is_absolute_;  // cache, whole run

  // Current block.
  Mode mode_ = Mode::kNone;
  int cur_ = -1;
  FunctionContext cur_out_;  // mapped names of the current ordinary block
  std::string cur_raw_;      // its input text (FunctionContext::raw), kept until it is emitted
  bool pending_header_ = false;
  bool cur_deferred_ = false;
  bool cur_had_records_ = false;

  // Whole run.
  InjectStats stats_;
  std::unordered_set<FunctionKey, FunctionKeyHash> resolved_functions_;
  std::unordered_map<std::string, uint64_t> unresolved_cost_;  // fn text -> first-event cost
  int64_t violations_total_ = 0;
};

}  // namespace cg_inject
