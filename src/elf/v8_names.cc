// The two namings, as observed in a Node 20.20.2 perf map and /usr/bin/node's .symtab: the map
// writes "Builtin:" + builtin name, or "BytecodeHandler:" + bytecode name with ".Wide" or
// ".ExtraWide" for the operand scale; the ELF file has "Builtins_" + builtin name, where a
// bytecode handler's name is the bytecode, then "Wide"/"ExtraWide", then "Handler".
#include "elf/v8_names.h"

#include <algorithm>

namespace cg_inject {
namespace {

constexpr std::string_view kBuiltinPrefix = "Builtin:";
constexpr std::string_view kHandlerPrefix = "BytecodeHandler:";
constexpr std::string_view kElfPrefix = "Builtins_";

bool IsIdentifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The short-star bytecodes (Star0, Star1, ...) share one handler, Builtins_ShortStarHandler; the
// map lists it once, as Star0.
bool IsShortStar(std::string_view bytecode) {
  if (bytecode.size() <= 4 || bytecode.substr(0, 4) != "Star") return false;
  return std::all_of(bytecode.begin() + 4, bytecode.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string V8BuiltinElfName(std::string_view perf_map_name) {
  std::string elf_name;
  if (perf_map_name.starts_with(kBuiltinPrefix)) {
    const std::string_view builtin = perf_map_name.substr(kBuiltinPrefix.size());
    if (!IsIdentifier(builtin)) return elf_name;
    elf_name.append(kElfPrefix).append(builtin);
    return elf_name;
  }
  if (!perf_map_name.starts_with(kHandlerPrefix)) return elf_name;
  std::string_view bytecode = perf_map_name.substr(kHandlerPrefix.size());
  std::string_view scale;
  if (const size_t dot = bytecode.find('.'); dot != std::string_view::npos) {
    scale = bytecode.substr(dot + 1);
    bytecode = bytecode.substr(0, dot);
    if (scale != "Wide" && scale != "ExtraWide") return elf_name;
  }
  if (!IsIdentifier(bytecode)) return elf_name;
  if (scale.empty() && IsShortStar(bytecode)) bytecode = "ShortStar";
  elf_name.append(kElfPrefix).append(bytecode).append(scale).append("Handler");
  return elf_name;
}

}  // namespace cg_inject
