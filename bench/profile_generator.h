// Large, realistic Callgrind profiles with matching JIT symbol sources, for benchmarks anyone can
// rerun: everything is a function of GeneratorOptions (same seed, same bytes, on any machine).
//
// The profile looks like `valgrind --tool=callgrind --dump-instr=yes` of a JIT runtime:
// `positions: instr line`, 3 events (Ir Dr Dw), name compression (`fn=(id) name` once, then
// `fn=(id)`), subposition compression (`+N`, `-N`, `*`), repeated fn= blocks per function (one per
// basic-block run), calls with inclusive cost. `jit_share` of the functions are JIT code in
// `ob=??? fl=???` named `fn=0x%016lx`; their cost lines sit on instruction starts of x86-64 code
// that the jitdump carries byte for byte, and one JIT block in 20 runs into the next function's
// code (a tail jump). The perf map and the jitdump describe the same JIT functions (one entry
// each, V8-style names with file and line); no address is reused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cg_inject {

class ByteSink;

namespace bench {

struct GeneratorOptions {
  uint64_t seed = 1;
  uint64_t target_bytes = uint64_t{100} << 20;  // the profile stops at the first block past this
  int64_t functions = 60000;                    // distinct functions in the profile
  double jit_share = 0.45;                      // of `functions`: 27,000 JIT functions by default
  uint32_t pid = 4242;
  /// The `ob=` names of ordinary code, each function in one of them; empty: 40 made-up
  /// libraries (/usr/lib/x86_64-linux-gnu/libbenchN.so.1) that no machine has. bench/run.sh names
  /// real files here (/usr/bin/node, libc...) to measure what reading real objects costs.
  std::vector<std::string> objects;
};

/// One JIT function: [start, start + code.size()) with x86-64 code whose instructions start at
/// `insn_offsets` (ascending).
struct JitFunction {
  uint64_t start = 0;
  std::string code;
  std::vector<uint32_t> insn_offsets;
  std::string name;  // as the perf map and the jitdump write it
};

/// The JIT functions of `options`, in address order.
std::vector<JitFunction> MakeJitFunctions(const GeneratorOptions& options);

/// Writes the profile to `out` (then calls out->Finish()); returns its size in bytes.
uint64_t WriteProfile(const GeneratorOptions& options, const std::vector<JitFunction>& jit,
                      ByteSink* out);

/// A perf map (`START SIZE name` per line, hex) of `jit`.
std::string MakePerfMap(const std::vector<JitFunction>& jit);

/// A jitdump (header, then one CODE_LOAD with code bytes per function, timestamps ascending) of
/// `jit`, for x86-64, in this machine's byte order.
std::string MakeJitdump(const GeneratorOptions& options, const std::vector<JitFunction>& jit);

}  // namespace bench
}  // namespace cg_inject
