// Merging must not make a broken call graph worse (issue 33 item 7).
//
// The injector merges the pieces of one JIT function: the blocks Callgrind wrote for it (one per
// address it was entered at) and its code that other functions' blocks ran (a tail jump's target,
// whose records move to it). Where Callgrind's call tracking broke (Valgrind 3.19 on Erlang, Deno,
// Bun), a piece is often entered by a "call" that was a return or a jump back: Deno's baseline
// code calls the builtin BaselineOutOfLinePrologue, which jumps back into the function's body, and
// Callgrind wrote a call from the builtin into a block of the body. Merged, the function calls
// the builtin, which calls the function: a cycle the input did not have, and the builtin's
// inclusive cost counted again inside the function's (109% -> 143% in KCachegrind).
//
// CycleGuard sees one part as a graph of pieces (each with the function it becomes) and their
// calls. A piece that a path from another piece of its function reaches through other functions
// is nested in that piece's calls: merged, the function would call those functions and be
// called back by them (a cycle the input did not have), and count the piece's cost again inside
// its own inclusive cost (a deeper recursion level that Callgrind, entering it elsewhere than at
// the function's entry, could not name `'2`). Such pieces stay apart; the piece entered nearest
// the function's entry keeps the function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cg_inject {

class CycleGuard {
 public:
  /// Forgets everything (a new part).
  void Clear();
  /// The `output` of a piece that is a function of its own (no other piece has it).
  static constexpr uint32_t kAlone = UINT32_MAX;
  /// A piece that becomes the function `output` (any id, or kAlone), entered `offset` bytes after
  /// the function's entry (0: at the entry); `ran_by_other` for code another function's block ran
  /// (which keeps the function only when no block of the function's own competes). Returns its
  /// id (dense, from 0).
  uint32_t AddPiece(uint32_t output, uint64_t offset, bool ran_by_other = false);
  /// A call from piece `from` to piece `to`.
  void AddCall(uint32_t from, uint32_t to) { calls_.push_back({from, to}); }
  size_t pieces() const { return output_.size(); }

  /// The pieces that must stay apart from their function: those a path from another piece of
  /// their function reaches through other functions, but the one entered nearest the entry;
  /// sorted. O(pieces + calls) for the strongly connected components, then one pass over their
  /// DAG per 64 x words functions of two or more pieces (words: as many as 2 MB of bits hold):
  /// broken call tracking leaves thousands (mcs under Valgrind 3.19).
  std::vector<uint32_t> PiecesToKeepApart() const;

 private:
  struct Call {
    uint32_t from = 0, to = 0;
  };
  std::vector<uint32_t> output_;    // by piece
  std::vector<uint64_t> offset_;    // by piece
  std::vector<bool> ran_by_other_;  // by piece
  std::vector<Call> calls_;
};

}  // namespace cg_inject
