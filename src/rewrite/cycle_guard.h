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
// CycleGuard sees one part as a graph of pieces (each with the output function it becomes) and
// their calls, and compares two readings of it as KCachegrind's cycle detection groups them
// (strongly connected components, a call of a function to itself left out): the input's, where
// every block is a function of its own and code another function's block ran is that block's,
// and the output's, where the pieces of each function are one. An output cycle whose pieces all
// lie in one input cycle is the input's (the bundled Valgrind's Node capture has V8's
// interpreter handlers and the JIT functions' pieces in one large cycle: merging them changes
// nothing KCachegrind shows). An output cycle that joins pieces of two or more input cycles (or
// of none) is new: each merged function in it keeps the pieces in the input cycle of its main
// piece (its entry block) and gives up those that take part in the new cycle (a call to or from
// another function of it), where it can: a block entered elsewhere than the function's entry
// becomes a function of its own, code that another JIT function's block ran stays with that
// block. A function's entry block and code of a real object are never given up: such a cycle
// stays, and is counted.
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
  /// A block of the input that becomes the function `output` (any id, or kAlone), entered
  /// `offset` bytes after the function's entry (0: at the entry, never given up). Returns its
  /// id (dense, from 0).
  uint32_t AddPiece(uint32_t output, uint64_t offset);
  /// Code of the function `output` that the block `block` (a piece) ran, from `offset` bytes
  /// after its entry; `can_stay` when it may stay with that block (both JIT code of one
  /// object, whose machine code view then still finds it). Returns its id.
  uint32_t AddRanPiece(uint32_t output, uint32_t block, uint64_t offset, bool can_stay);
  /// A piece made before its output function was known becomes part of `output`.
  void SetOutput(uint32_t piece, uint32_t output) { pieces_[piece].output = output; }
  /// A call from piece `from` to piece `to`.
  void AddCall(uint32_t from, uint32_t to) { calls_.push_back({from, to}); }
  size_t pieces() const { return pieces_.size(); }

  struct Decision {
    /// The pieces to give up (sorted): blocks that become functions of their own, code that
    /// stays with the block that ran it.
    std::vector<uint32_t> apart;
    /// Pieces in a new cycle that could not be given up (entry blocks, real objects' code).
    size_t left_merged = 0;
  };
  /// Which pieces to give up so that merging makes no cycle the input did not have. A few
  /// rounds of Tarjan's algorithm over the pieces, then for each piece that may go a few
  /// searches that stop as soon as they have their answer: O(pieces + calls) each at worst.
  Decision Decide() const;

 private:
  struct Piece {
    uint32_t output = kAlone;
    uint64_t offset = 0;
    uint32_t ran_in = kAlone;  // for code another block ran: that block's piece
    bool can_go = false;       // may be given up
  };
  struct Call {
    uint32_t from = 0, to = 0;
  };
  std::vector<Piece> pieces_;
  std::vector<Call> calls_;
};

}  // namespace cg_inject
