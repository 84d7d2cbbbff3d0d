// The injector's output functions of one part: one per output name (ob, fl, fn), ordinary or
// named by the injector, and which one each JIT code version becomes (its identity). A version's
// function is its definition's (one function for every tier and move of one source function,
// resolve/definition_names.h), in the object that holds its code, plus Callgrind's recursion
// suffix when the input had one.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "resolve/definition_names.h"
#include "rewrite/accounting.h"
#include "rewrite/unnamed_code.h"
#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

class CodeVersion;
class NameTable;
class ObjectCode;
class SymbolIndex;

/// One output function of the part: a resolved JIT function or an ordinary one. Per function,
/// for the whole part; what one block gives it lives in the injector's BlockOutput.
struct OutFunction {
  FunctionKey key;  // output names
  // A function of a shifted object's code (ObjectCode::InShiftedObject: V8's builtins in Deno's
  // stripped binary): its records are read at runtime addresses and written at the object's ELF
  // addresses, this much lower.
  uint64_t rebase = 0;
  bool jit = false;
  bool moved_in = false;  // an ordinary function that received cost from JIT blocks
  bool called = false;    // a call target: needs a block even without records
  bool emitted = false;   // has a block in this part's output
  // Code at an address that several functions of a perf map used in turn, where nothing tells
  // which of them ran (OutputFunctions::Ambiguous): no version, positions as Callgrind wrote them.
  bool ambiguous = false;
  int slot = -1;  // its BlockOutput while the current block is written, else -1
};

/// Output functions by index (dense, in order of first use; stable within a part).
class OutputFunctions {
 public:
  /// `version_objects`: empty, or the `ob=` of each version by load order (ELF images of the
  /// JIT code; an empty entry: its source's object name). Names the definitions of every version
  /// of `index` up front, per source: a definition has one name in every image.
  /// `objects` (may be null) tells the versions that are a shifted object's code, which go
  /// under that object.
  OutputFunctions(const SymbolIndex& index, std::span<const std::string> version_objects,
                  NameTable* names, const ObjectCode* objects = nullptr);

  /// A new part: no functions.
  void Clear();
  /// The output function named `key`, made when new (`jit`: named by the injector).
  int For(const FunctionKey& key, bool jit);
  /// The output function `version` becomes, with recursion suffix `suffix` (a name id, 0: none).
  int Identity(const CodeVersion* version, uint32_t suffix);
  /// The output function of code that `tie` (versions of one address that nothing told apart,
  /// VersionChooser::Choose) may be, with recursion suffix `suffix`: the versions' function when
  /// they are all one definition's, else one that says it is ambiguous, in the versions' object
  /// and their file (`???` when they differ), named after the address where they all lie and
  /// the functions they may be: `0x0000000004a2e000 (ambiguous: f | g)`.
  int Ambiguous(std::span<const CodeVersion* const> tie, uint32_t suffix);
  /// For an ambiguous function: its address (the highest start of its versions) and the same
  /// function without the recursion suffix.
  uint64_t AmbiguousStart(int i) const { return ambiguous_.at(i).start; }
  int AmbiguousBase(int i) const { return ambiguous_.at(i).base; }
  /// The output function of a piece of `version` that must stay apart from it (issue 33 item
  /// 7): a block Callgrind entered at `entry`, `NAME (entered at 0xADDR, +0xOFFSET)` plus `suffix`.
  int ApartIdentity(const CodeVersion* version, uint32_t suffix, uint64_t entry);
  /// The output function named `key`, or -1.
  int Find(const FunctionKey& key) const {
    const uint32_t* i = index_.find(key);
    return i ? int(*i) : -1;
  }

  OutFunction& operator[](int i) { return functions_[size_t(i)]; }
  const OutFunction& operator[](int i) const { return functions_[size_t(i)]; }
  auto begin() { return functions_.begin(); }
  auto end() { return functions_.end(); }
  auto begin() const { return functions_.begin(); }
  auto end() const { return functions_.end(); }
  /// Definitions named with their position because several share a name.
  int64_t disambiguated_groups() const { return definition_names_.disambiguated_groups(); }
  /// With `version_objects`: per version (load order), whether an output function named after
  /// its object was made (in any part so far), so that only the ELF images the output names are
  /// written. Empty without `version_objects`.
  const std::vector<bool>& touched() const { return touched_; }
  /// Names of code no source names (`(null)` entries, and code between entries).
  UnnamedCode& unnamed() { return unnamed_; }

 private:
  /// The definition `version` belongs to, in its source's object, with views into the index.
  DefinitionSite SiteOf(const CodeVersion& version) const;
  /// The `ob=` of `version`'s function: its ELF image (version_objects_), else its source's.
  std::string_view ObjectOf(const CodeVersion& version) const;
  /// The function name of `version`, without recursion suffix.
  std::string FunctionName(const CodeVersion& version);
  /// Records that an output function is named after `version`'s object (see touched()).
  void MarkTouched(const CodeVersion& version);

  const SymbolIndex& symbols_;
  std::span<const std::string> version_objects_;
  NameTable* names_;
  const ObjectCode* objects_;
  DefinitionNames definition_names_;
  UnnamedCode unnamed_;
  static FunctionKey KeyOf(const ChunkedVector<OutFunction>& t, uint32_t i) { return t[i].key; }
  // In chunks: a part may have millions of functions, and a vector's doubling would hold the old
  // and the new array at once.
  ChunkedVector<OutFunction> functions_;
  KeyIndex<FunctionKey, FunctionKeyHash, ChunkedVector<OutFunction>, KeyOf> index_{&functions_};
  // Identity's, holding index + 1 (0: not made yet): by version load order for identities without
  // a suffix (most: a map entry per version was 17 MB at 500K JIT functions), by (load order << 32
  // | suffix id) for the others.
  ChunkedVector<uint32_t> identity_by_version_;
  FlatHashMap<uint64_t, uint32_t> identity_cache_;
  std::vector<bool> touched_;  // see touched(); a bit per version, for the whole run
  struct Ambiguity {
    uint64_t start = 0;
    int base = -1;
  };
  std::unordered_map<int, Ambiguity> ambiguous_;  // by output function; rare
  // ApartIdentity's, by (version load order, suffix, entry): a few pieces a part.
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, int> apart_cache_;
};

}  // namespace cg_inject
