// The streaming Callgrind reader: bytes in, ProfileSink records out, one line at a time.
#pragma once

#include <cstdint>
#include <string_view>

namespace cg_inject {

class ByteSource;
class Diagnostics;
class ProfileSink;

struct CallgrindReaderOptions {
  /// Require a line that only Callgrind-format files have (`# callgrind format`, `version:`,
  /// `creator:`, `positions:`, `pid:`, `thread:`, `part:`, `event:`, or `summary:` before the
  /// first record) so that Cachegrind output, which shares the basic syntax, is refused.
  bool require_callgrind_marker = true;
  /// Receives tolerated oddities. A reference to a name id that was never defined (old
  /// Callgrind versions wrote some) is read as an empty name and warned about here; without
  /// diagnostics, or with strict_ids, it is an error.
  Diagnostics* diagnostics = nullptr;
  bool strict_ids = false;
  /// Every part's costs are summed and compared with its `summary:` and `totals:` lines. In a
  /// part Callgrind 3.10 or later wrote (`creator: callgrind-3.19.0`), a missing `totals:` (the
  /// file is cut off) or a `totals:` the costs do not add up to is an error; `force` makes it a
  /// warning and adds the missing `totals:`. Any other disagreement is a warning (older
  /// Callgrinds wrote `summary: 0` for client-request dumps; other writers; hand-edited files).
  /// A `totals:` header is delivered with what the costs add up to. A wrong `summary:` is
  /// delivered as the file has it, and only once: callgrind_annotate takes the last `summary:`
  /// for its percentages, so a corrected second one would change how the profile reads.
  /// Without diagnostics, warnings are not reported.
  bool force = false;
};

/// Reads a whole Callgrind profile (valgrind callgrind/docs/cl-format.xml, plus the forms
/// Callgrind really writes) from `in` and pushes it into `sink` as records whose names,
/// positions and call targets are fully resolved (see profile.h). Memory grows with the number
/// of distinct names and functions, not with the file size. Throws InputError "PATH:LINE:
/// expected X, got Y" on malformed input, on a cost sum past 2^64 (a part's total or a
/// function's inclusive cost) and on a cut-off profile (see `force`); the sink may have received
/// part of the profile by then.
void ReadCallgrind(ByteSource& in, ProfileSink& sink, const CallgrindReaderOptions& options = {});

/// True when all of `token` is a cost as the reader takes it: a decimal or 0x hex number below
/// 2^64 (leading zeros allowed, no sign). Exposed for tests of the reader's number syntax.
bool ParseCallgrindNumber(std::string_view token, uint64_t* value);

}  // namespace cg_inject
