// The position columns of the injector's part, in and out. A profile with instr positions but no
// line column gains one at its end when there are sources, so that the JIT code's lines get their
// source lines; every input position is then converted to the output layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cg_inject/profile.h"

namespace cg_inject {

/// Where the instr and line columns are, and an input position made an output position.
class PositionColumns {
 public:
  /// Takes a part's input layout. With `may_add_line` (the index has versions), a layout with
  /// instr but no line column, and room for one more column, gets a line column at its end.
  void Set(const PositionLayout& in, bool may_add_line);
  /// Before the part's positions: no instr column, nothing added.
  void Reset() { *this = PositionColumns(); }

  const PositionLayout& out_layout() const { return out_layout_; }
  bool has_instr() const { return instr_ >= 0; }
  /// Whether the output has a line column the input lacks (every position is then reformatted).
  bool adds_line() const { return adds_line_; }
  /// The instruction address of a position (input or output: the column does not move).
  /// Requires has_instr().
  uint64_t Instr(const Position& pos) const { return pos.values[size_t(instr_)]; }

  /// `pos` in the output layout, left where it was: an added line column is 0.
  Position Plain(const Position& pos) const {
    Position out = pos;
    if (adds_line_) out.values[size_t(out_line_)] = 0;
    return out;
  }
  /// `pos` in the output layout at source line `line` (unchanged without a line column).
  Position WithLine(const Position& pos, uint32_t line) const {
    Position out = pos;
    SetLine(&out, line);
    return out;
  }
  /// Sets an output position's instr column, when there is one.
  void SetInstr(Position* pos, uint64_t addr) const {
    if (instr_ >= 0) pos->values[size_t(instr_)] = addr;
  }
  /// Sets an output position's line column, when there is one.
  void SetLine(Position* pos, uint32_t line) const {
    if (out_line_ >= 0) pos->values[size_t(out_line_)] = line;
  }

 private:
  PositionLayout out_layout_;
  int instr_ = -1;     // in both layouts
  int out_line_ = -1;  // in the output layout
  bool adds_line_ = false;
};

}  // namespace cg_inject
