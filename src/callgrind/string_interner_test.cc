#include "callgrind/string_interner.h"

#include <gtest/gtest.h>

#include <string>

namespace cg_inject {
namespace {

TEST(StringInternerTest, SameTextSameIdAndOneCopy) {
  StringInterner interner;
  std::string a = "main";
  uint32_t id = interner.Intern(a);
  EXPECT_EQ(id, 1u);
  a = "xxxx";  // the interner copied the text
  EXPECT_EQ(interner.Text(id), "main");
  EXPECT_EQ(interner.Intern(std::string("main")), id);
  EXPECT_EQ(interner.Find("main"), id);
  EXPECT_EQ(interner.Find("mai"), 0u);
  EXPECT_EQ(interner.Intern("mai"), 2u);
  EXPECT_EQ(interner.size(), 2u);
}

TEST(StringInternerTest, EmptyTextHasAnIdAndPointsAtAByte) {
  StringInterner interner;
  uint32_t id = interner.Intern("");
  EXPECT_NE(id, 0u);
  EXPECT_EQ(interner.Intern(std::string_view()), id);
  EXPECT_NE(interner.Text(id).data(), nullptr);
  EXPECT_TRUE(interner.Text(id).empty());
}

// Views stay valid while the table grows and new blocks are added (one text over a block).
TEST(StringInternerTest, TextsStayValidAcrossGrowth) {
  StringInterner interner;
  std::string_view first = interner.Text(interner.Intern("first"));
  std::string big(300 << 10, 'x');
  uint32_t big_id = interner.Intern(big);
  for (int i = 0; i < 100000; ++i) interner.Intern("name" + std::to_string(i));
  EXPECT_EQ(first, "first");
  EXPECT_EQ(interner.Text(big_id), big);
  EXPECT_EQ(interner.Find("name99999"), 100002u);
  EXPECT_EQ(interner.Text(interner.Find("name777")), "name777");
}

}  // namespace
}  // namespace cg_inject
