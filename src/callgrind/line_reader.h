// Splits a ByteSource into lines without copying them: big blocks, memchr for '\n', and the
// partial last line of a block carried over to the next one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace cg_inject {

class ByteSource;

/// Yields the lines of a text stream as views into an internal buffer.
class LineReader {
 public:
  /// Lines longer than this are an InputError (a binary file or a runaway writer), so memory
  /// stays bounded whatever the input.
  static constexpr size_t kMaxLineSize = size_t{64} << 20;

  explicit LineReader(ByteSource* in, size_t block_size = size_t{2} << 20);
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Stores the next line, without its "\n" or "\r\n", in `*line` and returns true; returns
  /// false at the end of input. A last line without a newline is still returned. The view
  /// stays valid until the next call, and kPadding bytes after its end are readable
  /// (initialized), so parsers may load a word at a time near the end of a line.
  bool ReadLine(std::string_view* line) {
    // Inline for the common case, a newline within the block: it runs for every line.
    const char* start = buf_.get() + begin_;
    const char* nl =
        static_cast<const char*>(std::memchr(start + scanned_, '\n', end_ - begin_ - scanned_));
    if (nl == nullptr) return ReadLastOrRefill(line);
    size_t len = static_cast<size_t>(nl - start);
    begin_ += len + 1;
    scanned_ = 0;
    if (len > 0 && start[len - 1] == '\r') --len;
    ++line_no_;
    *line = std::string_view(start, len);
    return true;
  }
  static constexpr size_t kPadding = 8;

  /// Starts a span at the next line. Span() returns the input bytes from there through the
  /// newline of the last line returned, so a record can carry the exact text it came from.
  void MarkSpan() {
    span_begin_ = begin_;
    span_ok_ = true;
  }
  /// The bytes since MarkSpan() (valid until the next ReadLine); empty when the span grew past
  /// kMaxSpanSize and was dropped, so a run of comment lines cannot pin the buffer.
  std::string_view Span() const {
    if (!span_ok_) return {};
    return std::string_view(buf_.get() + span_begin_, begin_ - span_begin_);
  }
  static constexpr size_t kMaxSpanSize = size_t{1} << 20;

  /// 1-based number of the line last returned (0 before the first).
  uint64_t line_no() const { return line_no_; }
  /// True when the line last returned is the input's last and has no line end: a file cut
  /// inside a line (a writer killed, a full disk), so errors on it can say so.
  bool last_line_unterminated() const { return last_line_unterminated_; }
  const std::string& display_name() const;

 private:
  /// ReadLine when the block holds no newline: refills, or returns the last line.
  bool ReadLastOrRefill(std::string_view* line);
  /// Makes room and reads more bytes; returns false at end of input.
  bool Refill();

  ByteSource* in_;
  std::unique_ptr<char[]> buf_;
  size_t capacity_;
  size_t begin_ = 0;       // start of the unconsumed bytes
  size_t end_ = 0;         // end of the valid bytes
  size_t scanned_ = 0;     // bytes after begin_ already known to hold no '\n'
  size_t span_begin_ = 0;  // start of the span; Refill keeps the bytes from here on
  bool span_ok_ = false;
  bool eof_ = false;
  bool last_line_unterminated_ = false;
  uint64_t line_no_ = 0;
};

}  // namespace cg_inject
