// What the injector has worked out about each function of a part, found by the reader's name ids
// of its object, file and function. Without it every block and call line mapped its three names,
// hashed the key into the invariants' table and asked again whether the name is a JIT address a
// source covers. A function is found the way PartTotals finds it: by its name's id in an array,
// checking the object and file, so a line costs one lookup where it cost five.
#pragma once

#include <cstdint>

#include "rewrite/accounting.h"
#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

/// One function of the part. Only what cannot change during the part is kept: the names'
/// mapping, table indexes (entries are never removed within a part), and answers that depend on
/// the names and the sources alone.
struct FunctionMemo {
  static constexpr int kNoBlock = -1;
  uint32_t upstream_object = 0, upstream_file = 0;  // the reader's ids: the memo's identity
  FunctionKey key;                                  // the names in the injector's table
  uint32_t accounting = 0;  // its entry in the input's sums + 1; 0: none yet
  int block = kNoBlock;     // InputFunctions::ForBlock's answer once it has had a block
  // False when InputFunctions::IsJitTarget, or Injector::Impl::StubKey, is false whatever comes
  // later in the part: the name is no address a source covers, or no uncovered address in `???`.
  bool may_jit_target = false;
  bool may_be_stub = false;
};

/// Memos by the reader's (object, file, function) name ids, for one part.
class FunctionMemos {
 public:
  void Clear();
  /// The memo of the function; `*added` when it is new (the caller fills in `key` and the
  /// answers).
  FunctionMemo& Find(uint32_t object, uint32_t file, uint32_t function, bool* added);
  size_t size() const { return memos_.size(); }

 private:
  struct Ids {
    uint32_t object, file, function;
    bool operator==(const Ids&) const = default;
  };
  struct IdsHash {
    size_t operator()(const Ids& ids) const {
      return FunctionKeyHash{}(FunctionKey{ids.object, ids.file, ids.function});
    }
  };
  uint32_t Add(uint32_t object, uint32_t file);
  // By function name id: the memo of its first (object, file) + 1. A name in several objects or
  // files, or an id past kDenseIds, is found in other_.
  static constexpr uint32_t kDenseIds = 1u << 24;
  ChunkedVector<uint32_t> by_name_;
  FlatHashMap<Ids, uint32_t, IdsHash> other_;
  ChunkedVector<FunctionMemo> memos_;
};

}  // namespace cg_inject
