// What the injector has worked out about each function of a part, by the reader's number for it
// (FunctionContext::id, CallRecord::target_id). Without it every block and call line mapped its
// three names, hashed the key into the invariants' table and asked again whether the name is a
// JIT address a source covers: several cache misses per line in tables of every function. With
// it, a function's second line costs one array access.
#pragma once

#include <cstdint>

#include "rewrite/accounting.h"
#include "util/chunked_vector.h"

namespace cg_inject {

/// One function of the part. Only what cannot change during the part is kept: the names'
/// mapping, table indexes (entries are never removed within a part), and answers that depend on
/// the names and the sources alone.
struct FunctionMemo {
  static constexpr int kNoBlock = -1;
  FunctionKey key;          // the names in the injector's table; valid when `known`
  uint32_t accounting = 0;  // its entry in the input's sums + 1; 0: none yet
  int block = kNoBlock;     // InputFunctions::ForBlock's answer once it has had a block
  bool known = false;
  // False when InputFunctions::IsJitTarget, or Injector::Impl::StubKey, is false whatever comes
  // later in the part: the name is no address a source covers, or no uncovered address in `???`.
  bool may_jit_target = false;
  bool may_be_stub = false;
};

/// Memos by the reader's number, for one part.
class FunctionMemos {
 public:
  void Clear() { memos_.clear(); }
  /// The memo of number `id`, made empty when new; null for 0 (the producer gave none) and for a
  /// number far past the ones seen (the reader's are dense: never from it).
  FunctionMemo* Find(uint32_t id) {
    if (id == 0) return nullptr;
    if (id >= memos_.size()) {
      if (id - memos_.size() > kMaxSkip) return nullptr;
      memos_.resize(size_t{id} + 1);
    }
    return &memos_[id];
  }

 private:
  static constexpr uint32_t kMaxSkip = 1u << 16;
  ChunkedVector<FunctionMemo> memos_;
};

}  // namespace cg_inject
