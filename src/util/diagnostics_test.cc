#include "cg_inject/diagnostics.h"

#include <gtest/gtest.h>

#include "cg_inject/error.h"

namespace cg_inject {
namespace {

TEST(DiagnosticsTest, KeepsFirstMessagesAndCountsTheRest) {
  Diagnostics diag;
  for (int i = 0; i < 7; ++i) diag.Warn("perf-map: bad line", "m:" + std::to_string(i + 1));
  diag.Warn("jitdump: unknown record", "j:1");
  ASSERT_EQ(diag.kinds().size(), 2u);
  EXPECT_EQ(diag.kinds()[0].count, 7);
  EXPECT_EQ(diag.kinds()[0].first_messages.size(), 5u);
  EXPECT_EQ(diag.total(), 8);
  std::string summary;
  diag.AppendSummary(&summary);
  EXPECT_EQ(summary,
            "warning: m:1\nwarning: m:2\nwarning: m:3\nwarning: m:4\nwarning: m:5\n"
            "warning: perf-map: bad line: and 2 more\nwarning: j:1\n");
}

TEST(ErrorTest, MessagesAreLocated) {
  try {
    ThrowAtLine("a.out", 12, "expected X, got Y");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "a.out:12: expected X, got Y");
  }
  try {
    ThrowAtOffset("jit.dump", 40, "bad record");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "jit.dump: offset 40: bad record");
  }
  try {
    ThrowSystemError("open", "x", ENOENT);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "x: cannot open: No such file or directory");
  }
}

TEST(DiagnosticsTest, AbsorbAddsCountsAndKeepsTheFirstMessages) {
  Diagnostics a, b;
  for (int i = 0; i < 4; ++i) a.Warn("x", "a" + std::to_string(i));
  for (int i = 0; i < 3; ++i) b.Warn("x", "b" + std::to_string(i));
  b.Warn("y", "only b");
  a.Absorb(b);
  ASSERT_EQ(a.kinds().size(), 2u);
  EXPECT_EQ(a.kinds()[0].count, 7);
  EXPECT_EQ(a.kinds()[0].first_messages, (std::vector<std::string>{"a0", "a1", "a2", "a3", "b0"}));
  EXPECT_EQ(a.kinds()[1].kind, "y");
  EXPECT_EQ(a.total(), 8);
}

}  // namespace
}  // namespace cg_inject
