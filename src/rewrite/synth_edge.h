// A synthesized call edge: cost that left its block (a tail jump, fall-through into another
// function's code) becomes the target's self cost, and the block's function gets a call to the
// target carrying that cost as inclusive cost, so its own inclusive cost stays the same.
#pragma once

#include <cstdint>

#include "cg_inject/profile.h"

namespace cg_inject {

class CodeVersion;

/// What one block's moved lines and jumps say about an edge from its function to one target.
struct SynthEdge {
  int64_t moved_lines = 0;
  size_t inclusive = 0;  // CostPool offset
  bool has_inclusive = false;
  const CodeVersion* target_version = nullptr;  // null: moved into an object's function
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

  /// Records one moved cost line at `addr` (output position `pos` in `file`) whose first event
  /// is `first`; `version` is the target's version there (null for object code) and
  /// `version_start` its entry.
  void NoteMoved(uint64_t addr, const Position& pos, uint32_t file, uint64_t first,
                 const CodeVersion* version, bool at_entry) {
    ++moved_lines;
    if (version && at_entry) {
      entry_count += first;
      entry_seen = true;
      target_version = version;
    }
    if (addr < min_addr) {
      min_addr = addr;
      min_count = first;
      min_pos = pos;
      min_file = file;
      if (!entry_seen) target_version = version;
    } else if (addr == min_addr) {
      min_count += first;
    }
  }

  /// The call count (rules in inject.h): the followed jumps into the target, else the entry's
  /// (or the lowest moved address's) execution count when the first event is Ir, else 1; never 0.
  uint64_t CallCount(bool first_event_is_ir) const {
    uint64_t count = 1;
    if (jump_count > 0) {
      count = jump_count;
    } else if (first_event_is_ir) {
      count = entry_seen ? entry_count : min_count;
    }
    return count == 0 ? 1 : count;
  }
};

}  // namespace cg_inject
