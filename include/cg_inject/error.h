// Errors that reach the user. Deep readers throw InputError through the [[noreturn]] helpers
// below; the entry function (RunCgInject) catches it once and turns it into a message and an
// exit code, so no code in between needs try/catch.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cg_inject {

/// A problem with an input or output file. what() is the complete user-facing message, already
/// located: "PATH:LINE: expected X, got Y" for text, "PATH: offset N: ..." for binary files.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `text` with every byte that could drive a terminal or hide itself written as \xNN: C0
/// controls and DEL, C1 controls (raw 0x80-0x9f outside a UTF-8 sequence, and UTF-8 U+0080-U+009F)
/// and a UTF-8 byte-order mark. Other UTF-8 and other high bytes stay as they are. With
/// `escape_backslash`, '\' becomes "\\" so escaped and literal text cannot be confused (quoted
/// input; a message whose quotes are already escaped leaves it false).
std::string EscapeControlBytes(std::string_view text, bool escape_backslash = false);

/// Throws "PATH:LINE: what". Out of line so hot parsing loops stay small. The Throw* helpers
/// escape control bytes (EscapeControlBytes) so what() holds no NUL that would cut it short.
[[noreturn]] void ThrowAtLine(std::string_view path, uint64_t line_no, std::string_view what);

/// Throws "PATH: offset N: what" for binary formats (N in decimal).
[[noreturn]] void ThrowAtOffset(std::string_view path, uint64_t file_offset, std::string_view what);

/// Throws "PATH: what" for problems without a position (empty file, wrong format).
[[noreturn]] void ThrowForFile(std::string_view path, std::string_view what);

/// Throws "PATH: strerror(errno_value)"-style system errors; `action` says what failed.
[[noreturn]] void ThrowSystemError(std::string_view action, std::string_view path, int errno_value);

}  // namespace cg_inject
