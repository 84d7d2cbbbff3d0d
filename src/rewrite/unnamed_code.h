// Names for JIT code that no source names, by what it is and where it lies (issue 33 item 6).
//
// Mono 6.8 writes `(null)` into its perf map for the trampolines it registers without a name
// (mono_tramp_info_create (NULL, ...) in mini/tramp-amd64.c and mini-amd64.c: unbox, static
// RGCTX and IMT trampolines), and never writes its specific trampolines at all
// (mono_create_specific_trampoline in mini/mini-trampolines.c: a `call generic_trampoline_jit`,
// or _vcall, _delegate, ..., followed by its argument, 10 or 14 bytes, allocated with alignment 1
// from the domain's code chunk, most right after the method whose callees they lead to). Named
// `(unnamed JIT code)` alike, the twelve `(null)` entries of a small program became one function
// linking callers to callees that never met; left as `0x...`, the mcs capture had 4,353 of them
// (3,439 less than 0x40 bytes after a map entry, 4,314 calling a generic trampoline).
//
// So each such piece of code is a function of its own, named by its address, and where the
// runtime says what it is, that too:
//   `(trampoline at 0xADDR after NAME)`  Mono: a `(null)` entry, or code between entries, that
//                                        lies within a code chunk (64 KiB, mono-codeman.c's
//                                        MIN_PAGES) after the entry named NAME
//   `(trampoline at 0xADDR)`             Mono: such code before the first entry of its chunk
//   `(unnamed JIT code at 0xADDR)`       any other runtime's `(null)` entry
// A process is Mono's when its source lists Mono's generic trampolines (`generic_trampoline_jit`,
// which Mono always maps with --jitmap). Code between entries of other runtimes keeps its
// address name: nothing says what it is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cg_inject {

class CodeVersion;
class SymbolIndex;

class UnnamedCode {
 public:
  /// `name_of` gives the output name (without recursion suffix) of a version with a name.
  UnnamedCode(const SymbolIndex& index, std::function<std::string(const CodeVersion&)> name_of);

  /// Whether the source gave `version` no name (printf's "(null)").
  static bool IsNullName(const CodeVersion& version);
  /// The name of such a version.
  std::string VersionName(const CodeVersion& version);
  /// The name of the code at `addr`, which no version contains, when where it lies says what it
  /// is (a Mono trampoline), else "".
  std::string GapName(uint64_t addr);

  /// How far after the end of a map entry code still counts as following it: one chunk of
  /// Mono's code manager.
  static constexpr uint64_t kMonoChunk = 64 * 1024;

 private:
  bool MonoSource(uint32_t source);
  /// The nearest version with a name that ends at or below `addr`, at most kMonoChunk before it.
  const CodeVersion* NamedBefore(uint64_t addr);
  std::string Trampoline(uint64_t addr, const CodeVersion* before);

  const SymbolIndex& index_;
  std::function<std::string(const CodeVersion&)> name_of_;
  std::vector<int8_t> mono_;  // by source: -1 not asked, 0 no, 1 yes
};

}  // namespace cg_inject
