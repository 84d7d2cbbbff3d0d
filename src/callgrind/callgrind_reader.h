// The streaming Callgrind reader: bytes in, ProfileSink records out, one line at a time.
#pragma once

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
};

/// Reads a whole Callgrind profile (valgrind callgrind/docs/cl-format.xml, plus the forms
/// Callgrind really writes) from `in` and pushes it into `sink` as records whose names,
/// positions and call targets are fully resolved (see profile.h). Memory grows with the number
/// of distinct names, not with the file size. Throws InputError "PATH:LINE: expected X, got Y"
/// on malformed input; the sink may have received part of the profile by then.
void ReadCallgrind(ByteSource& in, ProfileSink& sink, const CallgrindReaderOptions& options = {});

}  // namespace cg_inject
