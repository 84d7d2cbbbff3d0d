// V8 (Node.js) embeds its builtins in the executable as ordinary ELF functions, and its perf map
// (`node --perf-basic-prof`) lists the same code under other names. This maps one naming to the
// other so the injector can find a map entry's function in the object's symbols.
#pragma once

#include <string>
#include <string_view>

namespace cg_inject {

/// The ELF symbol name of the V8 builtin that a perf map calls `perf_map_name`, or "" when the
/// name is not a builtin's:
///   "Builtin:CallWithArrayLike"      -> "Builtins_CallWithArrayLike"
///   "BytecodeHandler:Ldar"           -> "Builtins_LdarHandler"
///   "BytecodeHandler:Ldar.Wide"      -> "Builtins_LdarWideHandler"
///   "BytecodeHandler:Ldar.ExtraWide" -> "Builtins_LdarExtraWideHandler"
///   "BytecodeHandler:Star0"          -> "Builtins_ShortStarHandler"
/// Checked against Node 20.20.2 on x86-64: every one of the 2182 `Builtin:`/`BytecodeHandler:`
/// lines of a `node --perf-basic-prof -e 1` map names an ELF symbol of /usr/bin/node with the
/// same address and size. Matching by address and size first is still the safer rule; use this
/// to confirm or when addresses differ (a relocated embedded blob).
std::string V8BuiltinElfName(std::string_view perf_map_name);

}  // namespace cg_inject
