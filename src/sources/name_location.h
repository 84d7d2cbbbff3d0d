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
  std::string function;  // readable function name; the whole name when nothing matched
  // View into the parsed name, or into decoded_file; empty when the name has no file. A
  // `file:///abs/path.js` URL (Deno, Node's ES modules) is the path it names.
  std::string_view file;
  uint32_t line_no = 0;  // 0 when the name has no line
  uint32_t column = 0;   // 0 when the name has no column (V8's `JS:` names have one)
  // What tells apart two definitions with one name where the name has no position: JavaScript-
  // Core's `#hash` (`JSC-DFG: fib#BbF6aX`); a view into the parsed name, ending it; else empty.
  std::string_view definition_tag;
  std::string_view convention;  // the matching table row ("v8", "cpython", ...); empty if none
  // The path of a file URL that spelled it with percent escapes (`file:///a%20b.js`): the only
  // file that is not a piece of the name. Copies keep `file` pointing at their own.
  std::string decoded_file;

  NameLocation() = default;
  NameLocation(const NameLocation& other) { *this = other; }
  NameLocation(NameLocation&& other) noexcept { *this = std::move(other); }
  NameLocation& operator=(const NameLocation& other);
  NameLocation& operator=(NameLocation&& other) noexcept;
};

/// The end of the name of BEAMJIT's helper that holds a function's entry
/// ("fibm:fib/1-CodeInfoPrologue"): ParseNameLocation names it as that function.
inline constexpr std::string_view kBeamPrologueSuffix = "-CodeInfoPrologue";

/// The path a local file URL names (`file:///abs/path.js`, `file://localhost/abs/path.js`, as
/// Deno and Node's ES modules name scripts, in names and in jitdump line tables), else `file`
/// itself. A view into `file`, or into `*decoded` when the URL has percent escapes.
std::string_view FileUrlPath(std::string_view file, std::string* decoded);

/// Splits `name` by the first matching runtime convention. Never fails: an unrecognized name
/// comes back whole in `function`. `file` points into `name`.
NameLocation ParseNameLocation(std::string_view name);

}  // namespace cg_inject
