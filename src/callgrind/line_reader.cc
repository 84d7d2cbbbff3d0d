// LineReader: the scanning half of the Callgrind reader (meaning lives in callgrind_reader.cc).
// 2 MiB blocks keep read() calls rare; lines are handed out as views into the block, and only
// the unfinished tail of a block is moved to the front before the next read.
#include "callgrind/line_reader.h"

#include <cstring>

#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {

LineReader::LineReader(ByteSource* in, size_t block_size)
    : in_(in), buf_(new char[block_size + kPadding]), capacity_(block_size) {}

const std::string& LineReader::display_name() const { return in_->display_name(); }

bool LineReader::ReadLastOrRefill(std::string_view* line) {
  for (;;) {
    const char* start = buf_.get() + begin_;
    const char* nl =
        static_cast<const char*>(std::memchr(start + scanned_, '\n', end_ - begin_ - scanned_));
    size_t len;
    if (nl != nullptr) {
      len = static_cast<size_t>(nl - start);
      begin_ += len + 1;
    } else if (!eof_ && Refill()) {
      continue;
    } else {
      if (begin_ == end_) return false;
      start = buf_.get() + begin_;  // Refill may have moved the bytes
      len = end_ - begin_;          // last line without a newline
      begin_ = end_;
      last_line_unterminated_ = true;
    }
    scanned_ = 0;
    if (len > 0 && start[len - 1] == '\r') --len;
    ++line_no_;
    *line = std::string_view(start, len);
    return true;
  }
}

bool LineReader::Refill() {
  scanned_ = end_ - begin_;
  if (span_ok_ && begin_ - span_begin_ > kMaxSpanSize) span_ok_ = false;
  // The open span moves to the front with the unfinished line.
  size_t keep = span_ok_ ? span_begin_ : begin_;
  if (keep > 0) {
    std::memmove(buf_.get(), buf_.get() + keep, end_ - keep);
    begin_ -= keep;
    end_ -= keep;
    span_begin_ = span_ok_ ? span_begin_ - keep : 0;
  }
  if (end_ == capacity_) {
    if (capacity_ >= kMaxLineSize) {
      ThrowAtLine(display_name(), line_no_ + 1,
                  "expected a line shorter than 64 MiB, got a longer one");
    }
    std::unique_ptr<char[]> bigger(new char[capacity_ * 2 + kPadding]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    capacity_ *= 2;
  }
  size_t n = in_->Read(buf_.get() + end_, capacity_ - end_);
  end_ += n;
  std::memset(buf_.get() + end_, 0, kPadding);  // see kPadding
  if (n == 0) {
    eof_ = true;
    return false;
  }
  return true;
}

}  // namespace cg_inject
