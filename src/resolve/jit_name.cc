#include "resolve/jit_name.h"

#include <charconv>

namespace cg_inject {

bool IsUnknownObject(std::string_view object) { return object.empty() || object == "???"; }

bool ParseJitFunctionName(std::string_view function, JitName* out) {
  if (function.size() < 3 || function[0] != '0' || (function[1] != 'x' && function[1] != 'X'))
    return false;
  std::string_view digits = function.substr(2);
  std::string_view suffix;
  if (size_t quote = digits.find('\''); quote != std::string_view::npos) {
    suffix = digits.substr(quote);
    digits = digits.substr(0, quote);
    // Callgrind writes `'N` with N >= 2; accept any decimal number, nothing else.
    if (suffix.size() < 2) return false;
    for (char c : suffix.substr(1))
      if (c < '0' || c > '9') return false;
  }
  if (digits.empty() || digits.size() > 16) return false;
  uint64_t addr = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), addr, 16);
  if (ec != std::errc() || end != digits.data() + digits.size()) return false;
  out->addr = addr;
  out->suffix = suffix;
  return true;
}

}  // namespace cg_inject
