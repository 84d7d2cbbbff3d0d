#include "rewrite/function_memos.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(FunctionMemosTest, OneMemoPerObjectFileAndFunction) {
  FunctionMemos memos;
  bool added = false;
  FunctionMemo& f = memos.Find(1, 2, 3, &added);
  EXPECT_TRUE(added);
  f.accounting = 7;
  EXPECT_EQ(&memos.Find(1, 2, 3, &added), &f);
  EXPECT_FALSE(added);
  // The same name in another file or object is another function.
  FunctionMemo& other_file = memos.Find(1, 5, 3, &added);
  EXPECT_TRUE(added);
  EXPECT_NE(&other_file, &f);
  FunctionMemo& other_object = memos.Find(4, 2, 3, &added);
  EXPECT_TRUE(added);
  EXPECT_NE(&other_object, &other_file);
  EXPECT_EQ(&memos.Find(1, 5, 3, &added), &other_file);
  EXPECT_FALSE(added);
  EXPECT_EQ(&memos.Find(1, 2, 3, &added), &f);
  EXPECT_EQ(f.accounting, 7u);
  EXPECT_EQ(memos.size(), 3u);
}

TEST(FunctionMemosTest, MemosStayWhereTheyAreAsTheTableGrows) {
  FunctionMemos memos;
  bool added = false;
  FunctionMemo* first = &memos.Find(0, 0, 1, &added);
  for (uint32_t name = 2; name < 20000; ++name) memos.Find(0, 0, name, &added);
  EXPECT_EQ(&memos.Find(0, 0, 1, &added), first);
  // A name id far past the dense ones (a hostile or huge profile) is found all the same.
  FunctionMemo* far = &memos.Find(0, 0, 4000000000u, &added);
  EXPECT_TRUE(added);
  EXPECT_EQ(&memos.Find(0, 0, 4000000000u, &added), far);
  EXPECT_FALSE(added);
}

TEST(FunctionMemosTest, ClearForgetsThePart) {
  FunctionMemos memos;
  bool added = false;
  memos.Find(1, 1, 1, &added).accounting = 3;
  memos.Clear();
  EXPECT_EQ(memos.size(), 0u);
  EXPECT_EQ(memos.Find(1, 1, 1, &added).accounting, 0u);
  EXPECT_TRUE(added);
}

}  // namespace
}  // namespace cg_inject
