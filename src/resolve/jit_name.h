// Recognizes the names Callgrind gives code it has no symbol for: `fn=0x<hex>` in `ob=???`,
// optionally with a `'N` recursion suffix (--separate-recs).
#pragma once

#include <cstdint>
#include <string_view>

namespace cg_inject {

/// A parsed JIT-looking function name. `suffix` views the input (`'2`, or empty).
struct JitName {
  uint64_t addr = 0;
  std::string_view suffix;
};

/// True when `object` is `???` or empty: Callgrind's object for code outside any mapped file.
bool IsUnknownObject(std::string_view object);

/// Parses `0x<hex>` with an optional `'<digits>` suffix. False for anything else (a symbol name,
/// more than 16 hex digits, a bad suffix).
bool ParseJitFunctionName(std::string_view function, JitName* out);

}  // namespace cg_inject
