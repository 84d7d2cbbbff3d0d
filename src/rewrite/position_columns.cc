// The injector's position columns (see position_columns.h).
#include "rewrite/position_columns.h"

namespace cg_inject {

void PositionColumns::Set(const PositionLayout& in, bool may_add_line) {
  instr_ = in.IndexOf(PositionKind::kInstr);
  const int in_line = in.IndexOf(PositionKind::kLine);
  adds_line_ = may_add_line && instr_ >= 0 && in_line < 0 && in.count < kMaxPositionColumns;
  out_layout_ = in;
  out_line_ = in_line;
  if (adds_line_) {
    out_line_ = out_layout_.count;
    out_layout_.kinds[out_layout_.count++] = PositionKind::kLine;
  }
}

}  // namespace cg_inject
