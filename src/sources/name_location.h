// Source locations that JIT runtimes encode in symbol names. Perf maps carry no line table, but
// most runtimes put where the code came from into the name (V8 `LazyCompile:~f file.js:110`,
// CPython `py::f:/path/file.py`, ...). ParseNameLocation recognizes these conventions, one table
// row per runtime, and splits a name into a readable function name plus file and line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cg_inject {

/// What a name says about itself.
struct NameLocation {
  std::string function;         // readable function name; the whole name when nothing matched
  std::string_view file;        // view into the parsed name; empty when the name has no file
  uint32_t line_no = 0;         // 0 when the name has no line
  uint32_t column = 0;          // 0 when the name has no column (V8's `JS:` names have one)
  std::string_view convention;  // the matching table row ("v8", "cpython", ...); empty if none
};

/// The end of the name of BEAMJIT's helper that holds a function's entry
/// ("fibm:fib/1-CodeInfoPrologue"): ParseNameLocation names it as that function.
inline constexpr std::string_view kBeamPrologueSuffix = "-CodeInfoPrologue";

/// Splits `name` by the first matching runtime convention. Never fails: an unrecognized name
/// comes back whole in `function`. `file` points into `name`.
NameLocation ParseNameLocation(std::string_view name);

}  // namespace cg_inject
