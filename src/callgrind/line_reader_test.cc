#include "callgrind/line_reader.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

std::vector<std::string> Lines(std::string_view text, size_t block_size) {
  auto src = OpenMemoryInput(text, "mem");
  LineReader reader(src.get(), block_size);
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.ReadLine(&line)) {
    lines.emplace_back(line);
    EXPECT_EQ(reader.line_no(), lines.size());
  }
  return lines;
}

class LineReaderTest : public ::testing::TestWithParam<size_t> {};

TEST_P(LineReaderTest, SplitsOnNewlines) {
  using V = std::vector<std::string>;
  size_t block = GetParam();
  EXPECT_EQ(Lines("a\nbb\n\nccc\n", block), (V{"a", "bb", "", "ccc"}));
  EXPECT_EQ(Lines("no final newline", block), (V{"no final newline"}));
  EXPECT_EQ(Lines("x\r\ny\r\n", block), (V{"x", "y"}));
  EXPECT_EQ(Lines("crlf at end\r", block), (V{"crlf at end"}));
  EXPECT_EQ(Lines("", block), V{});
  EXPECT_EQ(Lines("\n", block), (V{""}));
  EXPECT_EQ(Lines("inner\rcr\n", block), (V{"inner\rcr"}));
}

TEST_P(LineReaderTest, KnowsWhetherTheLastLineHasALineEnd) {
  for (const auto& [text, cut] : std::vector<std::pair<std::string, bool>>{
           {"a\nb\n", false}, {"a\nb", true}, {"a\r\n", false}}) {
    auto src = OpenMemoryInput(text, "mem");
    LineReader reader(src.get(), GetParam());
    std::string_view line;
    std::vector<bool> seen;
    while (reader.ReadLine(&line)) seen.push_back(reader.last_line_unterminated());
    ASSERT_FALSE(seen.empty());
    // Only the last line can be cut, and only when no line end follows it.
    for (size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_FALSE(seen[i]) << text;
    EXPECT_EQ(seen.back(), cut) << text;
  }
}

TEST_P(LineReaderTest, LongLinesSpanBlocks) {
  std::string text;
  std::vector<std::string> expected;
  for (int i = 0; i < 200; ++i) {
    expected.push_back(std::string(static_cast<size_t>(i * 7 % 50), 'a' + i % 26));
    text += expected.back() + (i % 3 ? "\n" : "\r\n");
  }
  EXPECT_EQ(Lines(text, GetParam()), expected);
}

TEST_P(LineReaderTest, PaddingAfterEveryLineIsReadable) {
  // The reader's number parser loads 8 bytes at a time; after the last line they are zeros.
  for (std::string_view text : {"1 2\n33 4444", "55555\r\n", "x", "12345678\n123456789"}) {
    auto src = OpenMemoryInput(text, "mem");
    LineReader reader(src.get(), GetParam());
    std::string_view line;
    std::string after;
    while (reader.ReadLine(&line)) after.assign(line.data() + line.size(), LineReader::kPadding);
    if (text.back() != '\n') {
      EXPECT_EQ(after, std::string(LineReader::kPadding, '\0')) << text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, LineReaderTest, ::testing::Values(1, 2, 3, 16, 4096));

TEST(LineReaderLimitTest, OverlongLineIsAnError) {
  std::string text = "ok\n" + std::string(LineReader::kMaxLineSize + 10, 'x');
  auto src = OpenMemoryInput(text, "big");
  LineReader reader(src.get(), 1 << 20);
  std::string_view line;
  ASSERT_TRUE(reader.ReadLine(&line));
  try {
    reader.ReadLine(&line);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "big:2: expected a line shorter than 64 MiB, got a longer one");
  }
}

}  // namespace
}  // namespace cg_inject
