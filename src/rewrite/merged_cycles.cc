// The injector's side of issue 33 item 7 (rewrite/cycle_guard.h): which pieces of merged JIT
// functions made call cycles the input did not have. Each part's pieces are the input functions
// (the JIT ones become their code version's function, the others stay themselves) and the code
// that blocks ran of other functions; their calls are the input's edges (call_overflow_, whose
// ids these are), the calls made from such code, and a call from each block into the code of
// others it ran. A real object's function whose code JIT blocks ran is one function with its
// own block. A pass only finds the pieces: its output has already merged them, so the caller
// reads the input again with them in InjectOptions::kept_apart, and the next pass keeps them
// apart (block_rewriter.cc). CycleGuard decides with every piece it gives up already apart, so
// the second pass normally finds none left (it counts them if it does).
#include <string>
#include <unordered_map>

#include "cg_inject/symbols.h"
#include "rewrite/injector_impl.h"

namespace cg_inject {

std::string Injector::Impl::PartKey(uint32_t name) const {
  std::string key = std::to_string(part_index_);
  key += ':';
  key += names_.Text(name);
  return key;
}

void Injector::Impl::NoteRanByOther(int owner, uint64_t addr, const CodeVersion* version) {
  const uint32_t block = BlockNode();
  const uint64_t key = uint64_t{block} << 32 | uint32_t(owner);
  if (key != last_ran_key_) {  // a block's moved lines mostly go to one owner in a row
    auto [it, inserted] = ran_by_other_index_.try_emplace(key, uint32_t(ran_by_other_.size()));
    if (inserted) ran_by_other_.push_back({block, owner, UINT64_MAX});
    last_ran_key_ = key;
    last_ran_index_ = it->second;
  }
  RanByOther& r = ran_by_other_[last_ran_index_];
  const uint64_t offset =
      version != nullptr && addr >= version->start() ? addr - version->start() : 0;
  if (offset < r.offset) r.offset = offset;
}

void Injector::Impl::NoteRanByOtherCall(int owner, const FunctionKey& target) {
  auto it = ran_by_other_index_.find(uint64_t{BlockNode()} << 32 | uint32_t(owner));
  if (it != ran_by_other_index_.end()) ran_by_other_calls_.insert({it->second, target});
}

bool Injector::Impl::KeptInBlock(int owner) {
  if (const bool* kept = kept_in_block_cache_.find(owner)) return *kept;
  std::string key = PartKey(In(block_.function).key.function);
  key += '\x1f';
  key += names_.Text(out_[owner].key.function);
  const bool kept = options_.kept_apart.ran_by_other.count(key) != 0;
  if (kept) applied_ran_by_other_.insert(std::move(key));
  kept_in_block_cache_[owner] = kept;
  return kept;
}

void Injector::Impl::CheckMergedCycles() {
  // Only a function of two or more pieces can be split: most parts have none (a sound call
  // graph enters a function at its entry), and then nothing else is looked at. Code of a real
  // object's function that JIT blocks ran joins that function's own block.
  std::unordered_map<int, uint32_t> pieces_per_output;
  for (size_t f = 0; f < in_.size(); ++f) {
    const InFunction& fn = in_[int(f)];
    if (fn.jit && fn.resolved && fn.identity >= 0) ++pieces_per_output[fn.identity];
  }
  for (const RanByOther& r : ran_by_other_) pieces_per_output[r.owner] += out_[r.owner].jit ? 1 : 2;
  bool merged = false;
  for (const auto& [output, count] : pieces_per_output) merged |= count >= 2;
  if (!merged) return;

  CycleGuard guard;
  // Pieces by call_overflow_ node: JIT input functions by InFunction index, the others by their
  // in_acc_ index (a JIT function called before its block, or without one, has one too).
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> jit_piece(in_.size(), kNone);
  std::vector<uint32_t> acc_piece(in_acc_.functions().size(), kNone);
  std::vector<uint32_t> piece_node;  // piece -> node (pieces of code ran by others: kNone)
  auto add = [&](uint32_t node, uint32_t output, uint64_t offset) {
    piece_node.push_back(node);
    return guard.AddPiece(output, offset);
  };
  auto jit_node_piece = [&](int f) {
    uint32_t& piece = jit_piece[size_t(f)];
    if (piece != kNone) return piece;
    const InFunction& fn = in_[f];
    const bool resolved = fn.jit && fn.resolved && fn.identity >= 0 && fn.version != nullptr;
    piece = add(uint32_t(f) | kJitNode, resolved ? uint32_t(fn.identity) : CycleGuard::kAlone,
                resolved ? fn.entry - fn.version->start() : 0);
    return piece;
  };
  auto piece_of = [&](uint32_t node) -> uint32_t {
    if (node & kJitNode) return jit_node_piece(int(node & ~kJitNode));
    if (node >= acc_piece.size()) return add(node, CycleGuard::kAlone, 0);
    uint32_t& piece = acc_piece[node];
    if (piece != kNone) return piece;
    if (int f = in_.Find(in_acc_.functions()[node].key); f >= 0) return piece = jit_node_piece(f);
    return piece = add(node, CycleGuard::kAlone, 0);
  };
  auto piece_of_key = [&](const FunctionKey& key) -> uint32_t {
    if (int f = in_.Find(key); f >= 0) return jit_node_piece(f);
    if (const uint32_t* i = in_acc_.IndexOf(key)) return piece_of(*i);
    return kNone;
  };
  call_overflow_.ForEachEdge(
      [&](uint32_t caller, uint32_t callee) { guard.AddCall(piece_of(caller), piece_of(callee)); });
  std::vector<uint32_t> ran_piece(ran_by_other_.size());
  for (size_t i = 0; i < ran_by_other_.size(); ++i) {
    const RanByOther& r = ran_by_other_[i];
    const uint32_t block = piece_of(r.block_node);
    // Code may stay with the block that ran it only where KCachegrind's machine code view still
    // finds it: JIT code of another JIT function written under the same object (ELF image).
    // Never a real object's code that a source names (V8's builtins in Deno's binary, written
    // at the object's addresses): each of its lines is the function the source says.
    bool can_stay = false;
    if (out_[r.owner].jit && out_[r.owner].rebase == 0 && (r.block_node & kJitNode)) {
      const InFunction& fn = in_[int(r.block_node & ~kJitNode)];
      can_stay = fn.jit && fn.resolved && fn.identity >= 0 && out_[fn.identity].rebase == 0 &&
                 out_[fn.identity].key.object == out_[r.owner].key.object;
    }
    piece_node.push_back(kNone);
    ran_piece[i] = guard.AddRanPiece(uint32_t(r.owner), block,
                                     r.offset == UINT64_MAX ? 0 : r.offset, can_stay);
    guard.AddCall(block, ran_piece[i]);
    // A real object's function: its own block (when the part has one) is the same function.
    if (!out_[r.owner].jit) {
      const uint32_t own = piece_of_key(out_[r.owner].key);
      if (own != kNone) guard.SetOutput(own, uint32_t(r.owner));
    }
  }
  for (const RanByOtherCall& c : ran_by_other_calls_) {
    uint32_t target = piece_of_key(c.target);
    if (target != kNone) guard.AddCall(ran_piece[c.ran], target);
  }

  const CycleGuard::Decision decision = guard.Decide();
  // What this pass could not keep apart any more (its output has them merged), and what no pass
  // can (entry blocks, real objects' code).
  stats_.new_cycles_left += int64_t(decision.apart.size());
  stats_.new_cycles_merged += int64_t(decision.left_merged);
  auto node_name = [&](uint32_t node) {
    return node & kJitNode ? in_[int(node & ~kJitNode)].key.function
                           : in_acc_.functions()[node].key.function;
  };
  size_t ran_index = 0;  // both ascending: a two-pointer walk
  for (uint32_t piece : decision.apart) {
    if (piece_node[piece] != kNone) {
      found_apart_.blocks.insert(PartKey(node_name(piece_node[piece])));
      continue;
    }
    while (ran_index < ran_piece.size() && ran_piece[ran_index] != piece) ++ran_index;
    if (ran_index == ran_piece.size()) continue;
    const RanByOther& r = ran_by_other_[ran_index];
    found_apart_.ran_by_other.insert(PartKey(node_name(r.block_node)) + '\x1f' +
                                     std::string(names_.Text(out_[r.owner].key.function)));
  }
}

}  // namespace cg_inject
