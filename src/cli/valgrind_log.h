// Valgrind's own messages during `cg-inject record`. Valgrind and the recorded program share
// stderr, so when Valgrind itself dies (an assertion, a panic: exit status 1 and an empty
// profile) record could not tell that from a program that exec'd outside Valgrind, and said the
// wrong thing (issue 33 item 9). Record gives Valgrind a pipe of its own (`--log-fd`), forwards
// everything that arrives to its stderr as it comes, and keeps the lines that say Valgrind failed.
#pragma once

#include <atomic>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>

namespace cg_inject {

/// Reads Valgrind's log line by line and keeps its failure report: the first line that starts
/// with `valgrind: ` or a tool's name (`Callgrind: `), as m_libcassert.c prints an assertion
/// ("valgrind: m_foo.c:12 (fn): Assertion 'x' failed.") or a panic ("valgrind: the 'impossible'
/// happened:", its reason on the next line, which is then appended). Memory: one line (capped).
class ValgrindFailureScan {
 public:
  /// The next bytes of the log, in any chunks.
  void Feed(std::string_view bytes);
  /// The log ended: a last line without its newline counts too.
  void End();
  /// The failure report, or "" when the log had none.
  const std::string& failure() const { return failure_; }

 private:
  void Line(std::string_view line);
  std::string line_;  // the current line, at most kMaxLine bytes of it
  std::string failure_;
  bool wants_reason_ = false;  // the failure line ended in ':'; its reason comes next
  static constexpr size_t kMaxLine = 1024;
};

/// A pipe for `valgrind --log-fd=N` and the thread that forwards it. Requires: one at a time per
/// process (the write end is left open across exec for the child, so no other child may be
/// spawned meanwhile).
class ValgrindLog {
 public:
  /// Opens the pipe and starts forwarding to `forward_to`. fd() is -1 when the pipe could not be
  /// made (then Valgrind keeps logging to stderr and no failure is recognized).
  explicit ValgrindLog(std::FILE* forward_to);
  ~ValgrindLog();
  ValgrindLog(const ValgrindLog&) = delete;
  ValgrindLog& operator=(const ValgrindLog&) = delete;

  /// The write end, for `--log-fd`: inherited by the child (not close-on-exec).
  int fd() const { return write_fd_; }
  /// After the child was spawned and has ended: closes this process's write end and waits until
  /// every writer has closed it, or until the log has been quiet for `quiet_ms` (a daemon the
  /// program started may keep it open for ever), forwarding what comes meanwhile.
  void Finish(int quiet_ms = 200);
  /// What ValgrindFailureScan found; valid after Finish.
  const std::string& failure() const { return scan_.failure(); }

 private:
  void Forward();
  std::FILE* out_;
  int read_fd_ = -1, write_fd_ = -1;
  std::atomic<bool> child_done_{false};
  int quiet_ms_ = 200;
  ValgrindFailureScan scan_;
  std::thread thread_;
};

}  // namespace cg_inject
