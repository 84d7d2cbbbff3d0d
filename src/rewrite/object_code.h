// Which addresses that a symbol source lists are really a loaded object's code, and whose. Perf
// maps list some of a program's own code (Node's /usr/bin/node, an ET_EXEC, has its builtins in
// the map), and Callgrind charges that code to a real object and function: such code is never
// renamed, and cost a JIT block ran there goes back to the object's function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cg_inject/inject.h"
#include "rewrite/accounting.h"
#include "util/flat_hash_map.h"

namespace cg_inject {

class CodeVersion;
class NameTable;
class ObjectExtents;
class SymbolIndex;

/// What the part's objects say about the index's addresses. Objects are known by their name ids
/// in `names` and learned as the profile names them; what they taught stays for the whole run
/// (one process's objects). Memory: per object, and per function of an object with absolute
/// addresses (not per function of the program); once asked a lot, 16 bytes per run of adjacent
/// versions. One thread at a time, its const questions too: they keep the last answers.
class ObjectCode {
 public:
  /// `index` is finished (its address span is taken here); `extents` may be null (no object is
  /// then known).
  ObjectCode(const SymbolIndex& index, const ObjectExtents* extents, NameTable* names);

  /// An object name seen in the profile (`ob=`, `cob=`, the command's program): each is asked
  /// once whether its addresses are absolute.
  void NoteObject(uint32_t object);
  /// The program's object (ProgramObject's answer), noted as NoteObject does. `found_in_path`:
  /// the program was looked up in this machine's PATH, a guess at the file the profile ran: the
  /// first object the profile names by the same file name (another deno than the one in PATH)
  /// takes its place, and the guess is forgotten.
  void NoteProgram(uint32_t object, bool found_in_path);
  /// A block of `function` of a real object: its file names the function's symbol later
  /// (SymbolOwner), for objects with absolute addresses.
  void NoteFunction(const FunctionKey& function);
  /// A cost line of `function` (a real object's) at `addr`: when the index lists `addr` too, that
  /// version's code is the object's, and `function` owns it unless a symbol says otherwise.
  void NoteCost(const FunctionKey& function, uint64_t addr);

  /// Whether `addr` is a real object's code; `*owner` (when asked) is the function that had a
  /// cost line in that version's code, or null.
  bool IsObjectCode(uint64_t addr, const FunctionKey** owner = nullptr) const;
  /// Whether `addr`, in a block of `object`, is JIT code: the index lists it and it is neither
  /// `object`'s own code nor another object's.
  bool IsJitAddress(uint32_t object, uint64_t addr) const;
  /// IsJitAddress without asking whether the index lists `addr`, for a caller that looks it up
  /// in the index next and takes an unlisted address for no JIT code: that search is the costly
  /// part when addresses come in no order (a block's summed lines), and the lookup repeats it.
  bool MayBeJitAddress(uint32_t object, uint64_t addr) const;
  /// The function of an object with absolute addresses whose ELF symbol contains `addr`, or null.
  /// The key stays valid for the whole run.
  const FunctionKey* SymbolOwner(uint64_t addr);

  /// Code of a real object that Callgrind wrote in `???` (issue 23 item 7): its object's name id,
  /// its name there (`free@plt`; 0 when the object has no name for it) and its ELF address.
  struct Stub {
    uint32_t object = 0;
    uint32_t name = 0;
    uint64_t elf_addr = 0;
  };
  /// A block Callgrind wrote in `???` at `addr` (its name's address) calls `target` (a real
  /// object's function) from its first instruction, as a PLT slot's jump does: when `addr` is
  /// the start of a slot `target`@plt of a shared library seen so far (ObjectExtents::
  /// SlotLoadBias), that library's load bias is learnt from it. Each address is asked once; an
  /// address that fits slots of two libraries places neither, and a library that two stubs
  /// place at different biases is dropped (a wrong guess, or dlclose and dlopen again).
  /// The same call also checks the stub: when `addr` is a named stub of an object and the call
  /// goes to another object, a slot whose relocation names another function than `target`
  /// (ObjectExtents::StubCallFits) proves the stub's object changed since the profile was
  /// written: its stubs are named no more (Changed).
  void NoteStubCall(uint64_t addr, uint32_t target_object, uint32_t target);
  /// Whether a stub's call showed `object` changed (see NoteStubCall).
  bool Changed(uint32_t object) const {
    return std::find(changed_.begin(), changed_.end(), object) != changed_.end();
  }
  /// Forgets the name NamedStubAt gave the stub at `addr`, when only its own block has used it
  /// (no call was written with it): true then, and it is no stub from now on.
  bool ForgetStub(uint64_t addr);

  /// Whether `addr`, an address Callgrind wrote in `???` (a runtime address), is the code of an
  /// object seen so far whose load address is known: implied by the object (ObjectExtents::
  /// KnownLoadBias: an ET_EXEC, the program's PIE executable) or learnt from a stub of a shared
  /// library (NoteStubCall); `*stub` (when asked) says whose and what. Answers are kept per
  /// address (a stub is asked for at each call into it) until another object is located.
  /// Without `stub` nothing is named (ObjectExtents::IsCodeAt), so no symbol table is read.
  bool StubAt(uint64_t addr, Stub* stub = nullptr);
  /// ObjectExtents::ProgramObject: the object path, links resolved, of the program `cmd:`
  /// names, or "". Asked once per program (each part repeats `cmd:`).
  const std::string& ProgramObject(std::string_view program);
  /// StubAt for naming: the first answer for an address stays for the whole run, so a call into
  /// a stub and the stub's block get the same name whichever comes first, even when the stub's
  /// object is seen only between the two.
  /// `for_call`: the name goes into a call line (ForgetStub can no longer take it back).
  bool NamedStubAt(uint64_t addr, Stub* stub, bool for_call = false);

  /// The program's own PIE executable (seen so far, with sources) whose code Callgrind names by
  /// ELF address where it has no symbol (`fn=0x...` in ob=OBJECT: Deno's stripped binary holds
  /// V8's builtins) while the sources name that code at its runtime address: its load bias
  /// (KnownLoadBias: Valgrind's fixed PIE base), else nullopt. An ET_EXEC's addresses are its
  /// runtime ones already (its code is object code, above), and a shared library's bias is
  /// learnt from its stubs only as the profile goes, so neither is shifted.
  std::optional<uint64_t> ShiftedObjectBias(uint32_t object) const;
  /// Whether `runtime_addr` lies in such an object's extent: its name id and bias.
  bool InShiftedObject(uint64_t runtime_addr, uint32_t* object, uint64_t* bias) const;
  /// The shifted object when there is exactly one (the program), with its bias.
  bool SoleShiftedObject(uint32_t* object, uint64_t* bias) const {
    if (shifted_.size() != 1) return false;
    *object = shifted_[0].object;
    *bias = shifted_[0].bias;
    return true;
  }
  /// Whether `elf_addr` lies in `object`'s extent (its ELF addresses; an unknown object: no).
  bool OwnsElfAddress(uint32_t object, uint64_t elf_addr) const {
    return Owns(object, ExtentOf(object), elf_addr);
  }
  /// OwnsElfAddress as one range, [*begin, *end), when the extents give one (an unknown object's
  /// is empty); false when they answer per address.
  bool ElfRange(uint32_t object, uint64_t* begin, uint64_t* end) const {
    const Extent& extent = ExtentOf(object);
    if (extent.kind == Extent::kAsk) return false;
    const bool range = extent.kind == Extent::kRange;
    *begin = range ? extent.begin : 0;
    *end = range ? extent.end : 0;
    return true;
  }

 private:
  using Extent = ObjectExtents::Extent;
  bool IsAbsolute(uint32_t object) const;
  // What the extents say about `object`, asked once per object where Contains would first have
  // been (asking may open the object's file, and warn when it is absent): kUnknown for an
  // unknown object (`???`) or without extents.
  const Extent& ExtentOf(uint32_t object) const {
    if (has_last_object_ && object == last_object_) return last_extent_;
    if (has_previous_object_ && object == previous_object_) return previous_extent_;
    return AskExtent(object);
  }
  const Extent& AskExtent(uint32_t object) const;
  // Whether `object`, whose extent is `extent`, contains `addr` (an unknown object: no).
  bool Owns(uint32_t object, const Extent& extent, uint64_t addr) const {
    if (extent.kind == Extent::kRange) return addr - extent.begin < extent.end - extent.begin;
    return extent.kind == Extent::kAsk && AskContains(object, addr);
  }
  bool AskContains(uint32_t object, uint64_t addr) const;
  // Whether `addr` lies within the index's address span and outside `object`'s own extent.
  bool InIndexSpanElsewhere(uint32_t object, uint64_t addr) const {
    return addr >= index_min_ && addr < index_max_ && !Owns(object, ExtentOf(object), addr);
  }
  // index_.Lookup(addr) != nullptr, by a binary search over the versions' merged ranges, with
  // the last range (covered or not) kept: cost lines of a block are near each other. The tree
  // answers until the ranges are built.
  bool Covered(uint64_t addr) const {
    if (addr - last_range_.begin < last_range_.end - last_range_.begin) return last_range_covered_;
    return SearchCovered(addr);
  }
  bool SearchCovered(uint64_t addr) const;
  // index_.Lookup(addr) for a covered `addr`: the last version found, when no other version
  // overlaps it, is the answer anywhere in its range (Node's builtins have a cost line per
  // instruction).
  const CodeVersion* VersionAt(uint64_t addr) const;

  const SymbolIndex& index_;
  const ObjectExtents* extents_;
  NameTable* names_;
  uint64_t index_min_ = UINT64_MAX, index_max_ = 0;  // the index's address span
  // Objects with absolute addresses seen so far, and their extents.
  struct Absolute {
    uint32_t object = 0;
    Extent extent;
  };
  std::vector<Absolute> absolute_objects_;
  // ExtentOf's answers (small: one per object asked about), and the last one: a block's cost
  // lines all ask about its object.
  mutable FlatHashMap<uint32_t, Extent> extents_by_object_;
  mutable uint32_t last_object_ = 0;
  mutable bool has_last_object_ = false;
  mutable Extent last_extent_;
  // ... and the one before: a shifted block's cost lines ask about the block's object and the
  // shifted object in turn (1.1M map lookups, 1% of the mcs capture's run, with one kept).
  mutable uint32_t previous_object_ = 0;
  mutable bool has_previous_object_ = false;
  mutable Extent previous_extent_;
  // The union of the versions' [start, end), sorted and merged (an entry per run of touching or
  // overlapping versions, 16 bytes each); and the last range Covered found an address in, a
  // merged range or the gap between two. Sorting costs about a tree query per version, so the
  // union is built only once the tree has been asked a quarter of the index's size: a big
  // jitdump whose profile asks little never pays for it.
  struct Range {
    uint64_t begin = 0, end = 0;
  };
  // Whether `addr` is in one of `ranges` (sorted, merged); `*last` becomes that range, or the
  // gap between the two around `addr`, and `*in` the answer, for the next question.
  static bool FindRange(const std::vector<Range>& ranges, uint64_t addr, Range* last, bool* in);
  mutable std::vector<Range> covered_;
  mutable bool covered_built_ = false;
  mutable size_t tree_questions_ = 0;
  mutable Range last_range_;
  mutable bool last_range_covered_ = false;
  mutable const CodeVersion* lone_version_ = nullptr;  // VersionAt's: overlapped by none
  mutable Range lone_range_;                           // its [start, end)
  // Per object name id: 0 not asked yet, 1 asked. Dense: NoteObject runs for every call line.
  std::vector<uint8_t> object_noted_;
  // Versions whose code is an object's -> the object's function that had cost lines in it. Small:
  // one entry per such version.
  std::unordered_map<const CodeVersion*, FunctionKey> object_code_;
  // The union of those versions' [start, end), sorted and merged: an address outside it is no
  // such version's, without the tree's query (IsObjectCode runs for most JIT cost lines; on the
  // tsc capture its queries were 9% of the run).
  std::vector<Range> object_code_ranges_;
  // The last range or gap InObjectCodeRange found an address in (emptied when the ranges
  // change): a JIT block's lines mostly lie in one gap, the JIT heap (tsc's deferred lines come
  // in hash order, 780,000 binary searches over 455 ranges).
  mutable Range last_object_code_range_;
  mutable bool last_in_object_code_ = false;
  bool InObjectCodeRange(uint64_t addr) const {
    const Range& last = last_object_code_range_;
    if (addr - last.begin < last.end - last.begin) return last_in_object_code_;
    return FindRange(object_code_ranges_, addr, &last_object_code_range_, &last_in_object_code_);
  }
  // (object << 32 | function) -> the file of the function's first block (absolute objects only:
  // one entry per function of a whole program was 17 MB at 1M functions), and the keys
  // SymbolOwner hands out (a node map: pointers to them stay valid).
  FlatHashMap<uint64_t, uint32_t> function_files_;
  std::unordered_map<uint64_t, FunctionKey> symbol_owners_;
  // Objects with a known load bias (StubAt), in the order seen; and StubAt's answers by address
  // (object 0: none). Both small: a few objects, and the `???` addresses asked about.
  struct Located {
    uint32_t object = 0;
    uint64_t bias = 0;
  };
  std::vector<Located> located_;
  void Locate(uint32_t object, uint64_t bias);
  // Objects seen whose load bias NoteStubCall may learn, the addresses it was asked about, and
  // the objects it placed at two biases. Small: objects, and `???` blocks calling at entry.
  std::vector<uint32_t> libraries_;
  std::unordered_set<uint64_t> stub_calls_;
  std::unordered_set<uint64_t> checked_stubs_;  // NoteStubCall's slot checks, one per address
  std::vector<uint32_t> dropped_;
  std::vector<uint32_t> changed_;  // objects a stub's call showed changed (also dropped)
  std::unordered_map<uint64_t, Stub> stubs_;
  struct Named {
    Stub stub;
    bool in_call = false;  // a call line was written with it
  };
  std::unordered_map<uint64_t, Named> named_;
  // ShiftedObjectBias's objects (the program: one at most).
  struct Shifted {
    uint32_t object = 0;
    uint64_t bias = 0;
  };
  std::vector<Shifted> shifted_;
  std::unordered_map<std::string, std::string> programs_;  // ProgramObject's answers
  uint32_t program_guess_ = 0;  // NoteProgram's object found in PATH, until the profile names one
  // Forgets what NoteObject learnt of `object`: it owns no code from now on.
  void Forget(uint32_t object);
};

}  // namespace cg_inject
