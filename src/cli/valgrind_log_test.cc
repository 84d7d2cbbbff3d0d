#include "cli/valgrind_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace cg_inject {
namespace {

std::string Scan(std::string_view log, size_t chunk = 7) {
  ValgrindFailureScan scan;
  for (size_t i = 0; i < log.size(); i += chunk) scan.Feed(log.substr(i, chunk));
  scan.End();
  return scan.failure();
}

// What Valgrind 3.19's m_libcassert.c prints for a failed assertion in the core, and the report
// that follows it.
constexpr std::string_view kAssertion =
    "==4242== Callgrind, a call-graph generating cache profiler\n"
    "\n"
    "valgrind: m_scheduler/scheduler.c:1556 (vgPlain_scheduler): Assertion 'tst->os_state.lwpid "
    "== VG_(gettid)()' failed.\n"
    "valgrind: the thread's lwpid changed\n"
    "\n"
    "host stacktrace:\n"
    "==4242==    at 0x58046F4A: show_sb_backtrace (m_libcassert.c:406)\n"
    "Note: see also the FAQ in the source distribution.\n";

TEST(ValgrindFailureScanTest, AnAssertionIsItsFirstLine) {
  EXPECT_EQ(Scan(kAssertion),
            "valgrind: m_scheduler/scheduler.c:1556 (vgPlain_scheduler): Assertion "
            "'tst->os_state.lwpid == VG_(gettid)()' failed.");
  EXPECT_EQ(Scan(kAssertion, 1), Scan(kAssertion, 4096));
}

TEST(ValgrindFailureScanTest, APanicTakesItsReasonFromTheNextLine) {
  EXPECT_EQ(Scan("\nvalgrind: the 'impossible' happened:\n   Killed by fatal signal\n"),
            "valgrind: the 'impossible' happened: Killed by fatal signal");
}

TEST(ValgrindFailureScanTest, AToolsAssertionCounts) {
  EXPECT_EQ(Scan("Callgrind: bbcc.c:785 (vgCallgrind_setup_bbcc): Assertion 'x' failed.\r\n"),
            "Callgrind: bbcc.c:785 (vgCallgrind_setup_bbcc): Assertion 'x' failed.");
}

TEST(ValgrindFailureScanTest, AnOrdinaryRunHasNone) {
  EXPECT_EQ(Scan("==17== Callgrind, a call-graph generating cache profiler\n==17== Events : Ir\n"
                 "==17== I   refs:      3,006,446,086\n"),
            "");
}

TEST(ValgrindFailureScanTest, ALastLineWithoutNewlineCounts) {
  EXPECT_EQ(Scan("valgrind: m_x.c:1 (f): Assertion 'e' failed."),
            "valgrind: m_x.c:1 (f): Assertion 'e' failed.");
}

// A temporary file that stands for stderr, removed even when an assertion fails.
class Forwarded {
 public:
  Forwarded() : file_(std::tmpfile()) {}
  ~Forwarded() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string Text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string text;
    char buffer[512];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, file_)) text.append(buffer, n);
    return text;
  }

 private:
  std::FILE* file_;
};

TEST(ValgrindLogTest, ForwardsEverythingAndKeepsTheFailure) {
  Forwarded err;
  ValgrindLog log(err.file());
  ASSERT_GE(log.fd(), 0);
  ASSERT_EQ(::write(log.fd(), kAssertion.data(), kAssertion.size()), ssize_t(kAssertion.size()));
  log.Finish();
  EXPECT_EQ(err.Text(), std::string(kAssertion));
  EXPECT_EQ(log.failure().substr(0, 33), "valgrind: m_scheduler/scheduler.c");
}

TEST(ValgrindLogTest, AWriterThatNeverClosesItDoesNotHoldRecordUp) {
  Forwarded err;
  ValgrindLog log(err.file());
  ASSERT_GE(log.fd(), 0);
  int daemon = ::dup(log.fd());  // a process the program left running keeps the pipe open
  ASSERT_GE(daemon, 0);
  ASSERT_EQ(::write(daemon, "==9== x\n", 8), 8);
  auto start = std::chrono::steady_clock::now();
  log.Finish(100);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ::close(daemon);
  EXPECT_EQ(err.Text(), "==9== x\n");
  EXPECT_EQ(log.failure(), "");
}

}  // namespace
}  // namespace cg_inject
