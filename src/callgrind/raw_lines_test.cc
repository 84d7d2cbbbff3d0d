#include "callgrind/raw_lines.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(RawLinesTest, OnePositionLine) {
  EXPECT_TRUE(IsOnePositionLine("+3 * 1\n"));
  EXPECT_TRUE(IsOnePositionLine("0x1040 0 1\n"));
  EXPECT_FALSE(IsOnePositionLine("+3 * 1"));      // no newline: the file's last line
  EXPECT_FALSE(IsOnePositionLine("+3 * 1\r\n"));  // CRLF
  EXPECT_FALSE(IsOnePositionLine("fi=(2)\n+3 1\n"));
  EXPECT_FALSE(IsOnePositionLine("\n+3 1\n"));
}

TEST(RawLinesTest, FunctionWithDefinitionsAndReferences) {
  RawLines lines;
  ASSERT_TRUE(ParseRawLines("\n# note\nob=(5) /lib/x.so\nfl=(141)\nfn=(1062) 0x1040\n",
                            RawKind::kFunction, &lines));
  EXPECT_TRUE(lines[RawKey::kOb].has_id && lines[RawKey::kOb].has_text);
  EXPECT_EQ(lines[RawKey::kOb].id, 5u);
  EXPECT_EQ(lines[RawKey::kOb].text, "/lib/x.so");
  EXPECT_TRUE(lines[RawKey::kFl].has_id);
  EXPECT_FALSE(lines[RawKey::kFl].has_text);
  EXPECT_EQ(lines[RawKey::kFn].text, "0x1040");
  EXPECT_FALSE(lines[RawKey::kCfn].present);
  EXPECT_FALSE(lines.starts_with_marker);
}

TEST(RawLinesTest, FunctionAfterTheClosingFe) {
  // Callgrind's own shape: the previous function returns to its file, a blank line, fn=.
  RawLines lines;
  ASSERT_TRUE(ParseRawLines("fe=(2)\n\nfn=(70) dl_main\n", RawKind::kFunction, &lines));
  EXPECT_EQ(lines[RawKey::kFi].id, 2u);
  EXPECT_EQ(lines[RawKey::kFn].text, "dl_main");
  EXPECT_FALSE(ParseRawLines("fe=(2)\nfi=(3)\nfn=f\n", RawKind::kFunction, &lines));
}

TEST(RawLinesTest, CallAndJumpShapes) {
  RawLines lines;
  ASSERT_TRUE(
      ParseRawLines("fi=(3) a.h\ncob=(2)\ncfi=(54) ???\ncfn=(7) f\ncalls=1 0x10 0 \n* 0 72\n",
                    RawKind::kCall, &lines));
  EXPECT_EQ(lines[RawKey::kFi].text, "a.h");
  EXPECT_EQ(lines[RawKey::kCfi].id, 54u);
  EXPECT_TRUE(ParseRawLines("jcnd=1/1 +23 0 \n* 0 \n", RawKind::kJump, &lines));
  EXPECT_TRUE(ParseRawLines("jfn=(3) g\njump=1 0x1080 0\n* 0\n", RawKind::kJump, &lines));
  // The spec's `jcnd=EXECUTED FOLLOWED` form is read differently by different consumers.
  EXPECT_FALSE(ParseRawLines("jcnd=1 1 +23 0\n* 0\n", RawKind::kJump, &lines));
  EXPECT_FALSE(ParseRawLines("calls=1 0x10\n* 0 72\n", RawKind::kCall, &lines));  // no cfn=
}

TEST(RawLinesTest, RefusesWhatConsumersMightReadDifferently) {
  RawLines lines;
  EXPECT_FALSE(ParseRawLines(" fn=(3) f\n", RawKind::kFunction, &lines));   // indented
  EXPECT_FALSE(ParseRawLines("fn=(3) f\r\n", RawKind::kFunction, &lines));  // CRLF
  EXPECT_FALSE(ParseRawLines("fn= (3) f\n", RawKind::kFunction, &lines));   // blank in value
  EXPECT_FALSE(ParseRawLines("fl=(1) a\nob=(2) b\nfn=f\n", RawKind::kFunction, &lines));  // order
  EXPECT_FALSE(ParseRawLines("fl=(1) a\nfi=(2) b\nfn=f\n", RawKind::kFunction, &lines));
  EXPECT_FALSE(ParseRawLines("fn=(99999999) f\n", RawKind::kFunction, &lines));  // huge id
  EXPECT_FALSE(ParseRawLines("calls=1 2\n\n+1 2\n", RawKind::kCall, &lines));    // blank inside
  EXPECT_FALSE(ParseRawLines("fn=f", RawKind::kFunction, &lines));               // no final newline
}

TEST(RawLinesTest, HeaderWithTheFormatMarker) {
  RawLines lines;
  ASSERT_TRUE(ParseRawLines("# callgrind format\nversion: 1\n", RawKind::kHeader, &lines));
  EXPECT_TRUE(lines.starts_with_marker);
  EXPECT_FALSE(ParseRawLines("version: 1\nfl=x\n", RawKind::kHeader, &lines));
}

}  // namespace
}  // namespace cg_inject
