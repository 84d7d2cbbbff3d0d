#include "callgrind/string_interner.h"

#include <gtest/gtest.h>

#include <string>

namespace cg_inject {
namespace {

TEST(StringInternerTest, SameTextSameIdAndOneCopy) {
  StringInterner interner;
  std::string a = "main";
  Name main = interner.Intern(a);
  EXPECT_EQ(main.id, 1u);
  a = "xxxx";  // the interner copied the text
  EXPECT_EQ(main.text, "main");
  Name again = interner.Intern(std::string("main"));
  EXPECT_EQ(again.id, main.id);
  EXPECT_EQ(again.text.data(), main.text.data());
  EXPECT_EQ(interner.Find("main").id, main.id);
  EXPECT_EQ(interner.Find("main").text.data(), main.text.data());
  EXPECT_EQ(interner.Find("mai").id, 0u);
  EXPECT_EQ(interner.Intern("mai").id, 2u);
  EXPECT_EQ(interner.size(), 2u);
}

TEST(StringInternerTest, EmptyTextHasAnIdAndPointsAtAByte) {
  StringInterner interner;
  Name empty = interner.Intern("");
  EXPECT_NE(empty.id, 0u);
  EXPECT_EQ(interner.Intern(std::string_view()).id, empty.id);
  EXPECT_NE(empty.text.data(), nullptr);
  EXPECT_TRUE(empty.text.empty());
}

// Views stay valid while the table grows and new blocks are added (one text over a block).
TEST(StringInternerTest, TextsStayValidAcrossGrowth) {
  StringInterner interner;
  std::string_view first = interner.Intern("first").text;
  std::string big(300 << 10, 'x');
  std::string_view big_copy = interner.Intern(big).text;
  for (int i = 0; i < 100000; ++i) interner.Intern("name" + std::to_string(i));
  EXPECT_EQ(first, "first");
  EXPECT_EQ(big_copy, big);
  EXPECT_EQ(interner.Find("name99999").id, 100002u);
  EXPECT_EQ(interner.Find("name777").text, "name777");
  EXPECT_EQ(interner.size(), 100002u);
}

}  // namespace
}  // namespace cg_inject
