// The injector's input functions of one part that look like JIT code (Callgrind's `???` object
// and an address name, `fn=0x...`), whether a symbol source covers each, and what its first block
// resolved to: calls into it enter that. Ordinary functions get no entry (a profile may name
// millions): one scratch entry serves the current block's.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rewrite/accounting.h"
#include "rewrite/reuse_split.h"
#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

class CodeVersion;
class NameTable;
class ObjectCode;
class SymbolIndex;

/// What is known about one JIT-looking input function key (mapped ob, fl, fn) of the current
/// part, or about the ordinary function of the current block.
struct InFunction {
  // Ordered for size (40 bytes): a part may have millions.
  uint64_t entry = 0;
  // Set with `resolved` when its first block has been rewritten: what calls into it resolve to.
  const CodeVersion* version = nullptr;
  FunctionKey key;
  uint32_t suffix = 0;  // interned `'N` text id (0 = none)
  int identity = -1;
  bool unnamed = false;  // JIT-looking: `???` object, address name (covered or not)
  bool jit = false;      // JIT-looking and covered: every record is attributed
  bool resolved = false;
  // Only one version of the index covers `entry` (no reused code there): its blocks are kept in
  // order (CurrentBlock::in_order) and all enter the version its first block resolved to. Asked
  // once per function: per block it was two interval-tree queries and vectors.
  bool lone_entry = false;
};
static_assert(sizeof(InFunction) <= 40);

/// JIT-looking input functions by index (dense, in order of first block).
class InputFunctions {
 public:
  /// The index of an ordinary function's (scratch) entry.
  static constexpr int kOrdinary = -2;

  InputFunctions(const SymbolIndex& index, const ObjectCode& objects, NameTable* names);

  /// A new part: no functions.
  void Clear();
  /// The entry for a block of `key`: a JIT-looking function's, made on its first block (then
  /// `*added`), or kOrdinary, the scratch entry of any other, reset for this block.
  int ForBlock(const FunctionKey& key, bool* added);
  InFunction& operator[](int i) { return i == kOrdinary ? ordinary_ : functions_[size_t(i)]; }
  const InFunction& operator[](int i) const {
    return i == kOrdinary ? ordinary_ : functions_[size_t(i)];
  }
  /// The JIT-looking functions with a block in this part (indexes below it).
  size_t size() const { return functions_.size(); }
  /// The index of `key`'s entry when it has had a block in this part, else -1.
  int Find(const FunctionKey& key) const {
    const uint32_t* i = index_.find(key);
    return i ? int(*i) : -1;
  }
  /// Whether `key` names covered JIT code (a call or jump target), also under a real object (a
  /// JIT function's id used under another cob=); its entry address and recursion suffix (a name
  /// id) then in *addr and *suffix. `*known`, when asked for, is its entry's index when it has
  /// had a block, else -1.
  bool IsJitTarget(const FunctionKey& key, uint64_t* addr, uint32_t* suffix, int* known = nullptr);

  /// Whether `key` is an address name under a real object whose `???` block (no source covers
  /// it) this part has had: the id that block bound, used under another cob=. `*jit_key` is then
  /// that block's key, the function consumers mean.
  bool IsUnnamedJitBlock(const FunctionKey& key, FunctionKey* jit_key);

  /// Whether the name `object` (an id of the injector's name table) is Callgrind's unknown
  /// object (IsUnknownObject), and whether the name `function` is a JIT address name
  /// (ParseJitFunctionName): asked for every function and call line, answered from a byte per
  /// name id instead of the name's text (a cache miss per line, and a parse).
  bool UnknownObject(uint32_t object) const { return Kind(object, kObjectAsked, kUnknownObject); }
  bool JitLooking(uint32_t function) const { return Kind(function, kFunctionAsked, kJitName); }
  /// Whether the name `function` is a JIT address name whose address a symbol source covers
  /// (whether or not an object's code is there too): most call lines of a V8 profile target
  /// one, and without this byte each asked the index's tree again.
  bool Covered(uint32_t function) const { return Kind(function, kCoveredAsked, kCovered); }

  /// How the first block of entry `i` was split among reused versions (rare), or null.
  const ReuseSplit* SplitOf(int i) const {
    auto it = splits_.find(i);
    return it == splits_.end() ? nullptr : &it->second;
  }
  void SetSplit(int i, const ReuseSplit& split) { splits_[i] = split; }

 private:
  const SymbolIndex& symbols_;
  const ObjectCode& objects_;
  NameTable* names_;
  /// `key`'s function as a JIT block names it (`???` object and file).
  FunctionKey AsJitKey(const FunctionKey& key);

  static FunctionKey KeyOf(const ChunkedVector<InFunction>& t, uint32_t i) { return t[i].key; }
  uint32_t unknown_ = 0;  // the name id of `???`, once asked
  static constexpr uint8_t kObjectAsked = 1, kUnknownObject = 2, kFunctionAsked = 4, kJitName = 8,
                           kCoveredAsked = 16, kCovered = 32;
  bool Kind(uint32_t id, uint8_t asked, uint8_t yes) const {
    if (id < kinds_.size() && (kinds_[id] & asked)) return kinds_[id] & yes;
    return Classify(id, asked, yes);
  }
  bool Classify(uint32_t id, uint8_t asked, uint8_t yes) const;
  // Per name id (names outlive parts): the answers above, asked bits and answer bits.
  mutable std::vector<uint8_t> kinds_;
  // In chunks: a profile may have millions of JIT functions.
  ChunkedVector<InFunction> functions_;
  InFunction ordinary_;
  KeyIndex<FunctionKey, FunctionKeyHash, ChunkedVector<InFunction>, KeyOf> index_{&functions_};
  std::unordered_map<int, ReuseSplit> splits_;
};

}  // namespace cg_inject
