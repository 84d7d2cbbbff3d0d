// Located, user-facing error messages (see include/cg_inject/error.h).
#include "cg_inject/error.h"

#include <cstring>
#include <string>
#include <utility>

namespace cg_inject {
namespace {

void AppendHex(std::string* out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  *out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
}

/// The length of the valid UTF-8 sequence at text[i] (2 to 4), or 0.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  size_t n = c >= 0xc2 && c <= 0xdf   ? 2
             : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

/// Every message is escaped where it is made: what() is a C string, so a NUL quoted from the
/// input cut the message there ("got 'ab", no closing quote) when it was printed.
InputError MakeError(std::string message) { return InputError(EscapeControlBytes(message)); }

}  // namespace

std::string EscapeControlBytes(std::string_view text, bool escape_backslash) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        AppendHex(&out, c);
      } else if (c == '\\' && escape_backslash) {
        out += "\\\\";
      } else {
        out += static_cast<char>(c);
      }
      continue;
    }
    size_t n = Utf8SequenceLength(text, i);
    std::string_view sequence = text.substr(i, n);
    if (n == 0) {
      // A byte outside any UTF-8 sequence: C1 controls escaped, Latin-1 text kept.
      if (c <= 0x9f) {
        AppendHex(&out, c);
      } else {
        out += static_cast<char>(c);
      }
      continue;
    }
    bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (c1 || sequence == "\xef\xbb\xbf") {
      for (char b : sequence) AppendHex(&out, static_cast<unsigned char>(b));
    } else {
      out += sequence;
    }
    i += n - 1;
  }
  return out;
}

void ThrowAtLine(std::string_view path, uint64_t line_no, std::string_view what) {
  std::string message;
  message.reserve(path.size() + what.size() + 24);
  message.append(path);
  message += ':';
  message += std::to_string(line_no);
  message += ": ";
  message.append(what);
  throw MakeError(std::move(message));
}

void ThrowAtOffset(std::string_view path, uint64_t file_offset, std::string_view what) {
  std::string message(path);
  message += ": offset ";
  message += std::to_string(file_offset);
  message += ": ";
  message.append(what);
  throw MakeError(std::move(message));
}

void ThrowForFile(std::string_view path, std::string_view what) {
  std::string message(path);
  message += ": ";
  message.append(what);
  throw MakeError(std::move(message));
}

void ThrowSystemError(std::string_view action, std::string_view path, int errno_value) {
  // "PATH: cannot ACTION: REASON", e.g. "out.cg: cannot rename: Permission denied".
  std::string message(path);
  message += ": cannot ";
  message.append(action);
  message += ": ";
  message += std::strerror(errno_value);
  throw MakeError(std::move(message));
}

}  // namespace cg_inject
