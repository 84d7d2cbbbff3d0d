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

/// Throws "PATH:LINE: what". Out of line so hot parsing loops stay small.
[[noreturn]] void ThrowAtLine(std::string_view path, uint64_t line_no, std::string_view what);

/// Throws "PATH: offset N: what" for binary formats (N in decimal).
[[noreturn]] void ThrowAtOffset(std::string_view path, uint64_t file_offset, std::string_view what);

/// Throws "PATH: what" for problems without a position (empty file, wrong format).
[[noreturn]] void ThrowForFile(std::string_view path, std::string_view what);

/// Throws "PATH: strerror(errno_value)"-style system errors; `action` says what failed.
[[noreturn]] void ThrowSystemError(std::string_view action, std::string_view path, int errno_value);

}  // namespace cg_inject
