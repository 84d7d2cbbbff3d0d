// Valgrind's log pipe for `cg-inject record` (see valgrind_log.h). Valgrind moves the log fd it
// is given to a high, close-on-exec descriptor of its own, so the client never writes to it; the
// number given stays open in the client, so Valgrinds that --trace-children starts in exec'd
// programs log to the same pipe.
#include "cli/valgrind_log.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace cg_inject {
namespace {

// How a line of Valgrind's own failure report starts: the core's ("valgrind: ") or a tool's, as
// VG_(assert_fail) names its component (VG_(details).name, "Callgrind").
bool IsFailureLine(std::string_view line) {
  return line.starts_with("valgrind: ") || line.starts_with("Callgrind: ") ||
         line.starts_with("callgrind: ");
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

}  // namespace

void ValgrindFailureScan::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    std::string_view piece = bytes.substr(0, newline);
    if (line_.size() < kMaxLine) line_.append(piece.substr(0, kMaxLine - line_.size()));
    if (newline == std::string_view::npos) return;
    Line(line_);
    line_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void ValgrindFailureScan::End() {
  if (!line_.empty()) Line(line_);
  line_.clear();
}

void ValgrindFailureScan::Line(std::string_view line) {
  line = Trimmed(line);
  if (wants_reason_) {
    if (line.empty()) return;
    wants_reason_ = false;
    failure_ += " ";
    failure_ += line;
    return;
  }
  if (!failure_.empty() || !IsFailureLine(line)) return;
  failure_ = std::string(line);
  // "valgrind: the 'impossible' happened:" says why on the next line.
  wants_reason_ = line.ends_with(':');
}

ValgrindLog::ValgrindLog(std::FILE* forward_to) : out_(forward_to) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  // The write end goes to the child; the read end stays here.
  if (::fcntl(fds[1], F_SETFD, 0) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  thread_ = std::thread([this] { Forward(); });
}

ValgrindLog::~ValgrindLog() {
  if (thread_.joinable()) Finish(0);
  if (read_fd_ >= 0) ::close(read_fd_);
}

void ValgrindLog::Finish(int quiet_ms) {
  if (!thread_.joinable()) return;
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
  quiet_ms_ = quiet_ms;
  child_done_.store(true);
  thread_.join();
}

void ValgrindLog::Forward() {
  using Clock = std::chrono::steady_clock;
  // A daemon that the program left running under Valgrind may write on: after the child ended,
  // forwarding stops within this much time whatever comes.
  constexpr auto kMaxDrain = std::chrono::seconds(2);
  char buffer[4096];
  Clock::time_point last_data = Clock::now();
  Clock::time_point done_at{};
  bool done_seen = false;
  for (;;) {
    pollfd p{read_fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) break;
    const bool done = child_done_.load();
    if (done && !done_seen) {
      done_seen = true;
      done_at = Clock::now();
    }
    if (ready <= 0) {
      if (done && (Clock::now() - last_data >= std::chrono::milliseconds(quiet_ms_) ||
                   Clock::now() - done_at >= kMaxDrain))
        break;
      continue;
    }
    ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // every writer closed it
    std::fwrite(buffer, 1, size_t(n), out_);
    std::fflush(out_);
    scan_.Feed(std::string_view(buffer, size_t(n)));
    last_data = Clock::now();
    if (done && last_data - done_at >= kMaxDrain) break;
  }
  scan_.End();
}

}  // namespace cg_inject
