#include "rewrite/function_memos.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(FunctionMemosTest, OneMemoPerNumberUntilCleared) {
  FunctionMemos memos;
  EXPECT_EQ(memos.Find(0), nullptr);  // no number: the producer gave none
  FunctionMemo* first = memos.Find(1);
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->known);
  first->known = true;
  first->accounting = 7;
  FunctionMemo* later = memos.Find(5000);  // past a chunk: the earlier memo stays where it is
  ASSERT_NE(later, nullptr);
  EXPECT_FALSE(later->known);
  EXPECT_EQ(memos.Find(1), first);
  EXPECT_EQ(first->accounting, 7u);
  memos.Clear();  // a new part numbers afresh
  EXPECT_FALSE(memos.Find(1)->known);
}

TEST(FunctionMemosTest, NumberFarAheadHasNoMemo) {
  FunctionMemos memos;
  // The reader's numbers are dense; a number far past them would only grow the table.
  EXPECT_EQ(memos.Find(4000000000u), nullptr);
  EXPECT_NE(memos.Find(3), nullptr);
}

}  // namespace
}  // namespace cg_inject
