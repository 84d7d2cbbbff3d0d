// Located, user-facing error messages (see include/cg_inject/error.h).
#include "cg_inject/error.h"

#include <cstring>
#include <string>

namespace cg_inject {

void ThrowAtLine(std::string_view path, uint64_t line_no, std::string_view what) {
  std::string message;
  message.reserve(path.size() + what.size() + 24);
  message.append(path);
  message += ':';
  message += std::to_string(line_no);
  message += ": ";
  message.append(what);
  throw InputError(message);
}

void ThrowAtOffset(std::string_view path, uint64_t file_offset, std::string_view what) {
  std::string message(path);
  message += ": offset ";
  message += std::to_string(file_offset);
  message += ": ";
  message.append(what);
  throw InputError(message);
}

void ThrowForFile(std::string_view path, std::string_view what) {
  std::string message(path);
  message += ": ";
  message.append(what);
  throw InputError(message);
}

void ThrowSystemError(std::string_view action, std::string_view path, int errno_value) {
  // "PATH: cannot ACTION: REASON", e.g. "out.cg: cannot rename: Permission denied".
  std::string message(path);
  message += ": cannot ";
  message.append(action);
  message += ": ";
  message += std::strerror(errno_value);
  throw InputError(message);
}

}  // namespace cg_inject
