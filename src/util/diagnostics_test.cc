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

TEST(ErrorTest, ControlBytesAreEscapedAndOtherTextKept) {
  // C0, DEL, C1 raw and as UTF-8 (U+0085, U+009B), a byte-order mark: escaped (issue 22).
  EXPECT_EQ(EscapeControlBytes(std::string_view("a\0b\x1b[2J\x7f", 8)), "a\\x00b\\x1b[2J\\x7f");
  EXPECT_EQ(EscapeControlBytes("\x9b"
                               "31m \xc2\x85 \xc2\x9b"
                               "2J"),
            "\\x9b31m \\xc2\\x85 \\xc2\\x9b2J");
  EXPECT_EQ(EscapeControlBytes("\xef\xbb\xbf# callgrind"), "\\xef\\xbb\\xbf# callgrind");
  // UTF-8 whose continuation bytes are 0x80-0x9f, U+00A0 and up, Latin-1 letters: kept.
  EXPECT_EQ(EscapeControlBytes("\xc4\x80 \xe2\x80\x9c \xc2\xa0 \xe9t\xe9"),
            "\xc4\x80 \xe2\x80\x9c \xc2\xa0 \xe9t\xe9");
  // A sequence cut short: its lead byte is kept, the C1 byte after it escaped.
  EXPECT_EQ(EscapeControlBytes("\xe2\x80"), "\xe2\\x80");
  EXPECT_EQ(EscapeControlBytes("a\\b"), "a\\b");
  EXPECT_EQ(EscapeControlBytes("a\\b", /*escape_backslash=*/true), "a\\\\b");
}

TEST(ErrorTest, MessagesHoldNoNulToCutThemShort) {
  // what() is a C string: a NUL quoted from the input ended the message there ("got 'ab").
  try {
    ThrowForFile("m.map", std::string("got 'ab\0cd'\xc2\x9b", 13));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "m.map: got 'ab\\x00cd'\\xc2\\x9b");
  }
}

TEST(DiagnosticsTest, WarningsEscapeC1Controls) {
  Diagnostics diag;
  diag.Warn("k",
            "x.cg:3: got '\x9b"
            "2J\xc2\x9b"
            "31m'");
  std::string summary;
  diag.AppendSummary(&summary);
  EXPECT_EQ(summary, "warning: x.cg:3: got '\\x9b2J\\xc2\\x9b31m'\n");
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
