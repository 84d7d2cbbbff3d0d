#include "callgrind/part_totals.h"

#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

// One name in two files is two functions: each has its own inclusive sum, so neither overflows
// here although their sum would.
TEST(PartTotalsTest, SameNameInAnotherFileIsAnotherFunction) {
  PartTotals totals;
  totals.Reset(1);
  size_t event = 0;
  bool inclusive = false;
  totals.Function(1, 2, 3);
  EXPECT_TRUE(totals.AddCall(std::vector<uint64_t>{UINT64_MAX - 1}, &event));
  totals.Function(1, 4, 3);  // same name id 3, file 4
  EXPECT_TRUE(totals.AddCall(std::vector<uint64_t>{UINT64_MAX - 1}, &event));
  EXPECT_TRUE(totals.AddCost(std::vector<uint64_t>{1}, &event, &inclusive));
  totals.Function(1, 2, 3);  // back to the first: its sum is still UINT64_MAX - 1
  EXPECT_TRUE(totals.AddCost(std::vector<uint64_t>{1}, &event, &inclusive));
  EXPECT_FALSE(totals.AddCost(std::vector<uint64_t>{1}, &event, &inclusive));
  EXPECT_TRUE(inclusive);
  EXPECT_EQ(event, 0u);
}

// The reader's message names the first sum that would pass 2^64, in event order, the part's
// total before the function's.
TEST(PartTotalsTest, OverflowNamesTheFirstEventAndWhichSum) {
  PartTotals totals;
  totals.Reset(3);
  size_t event = 9;
  bool inclusive = false;
  totals.Function(1, 1, 1);
  EXPECT_TRUE(totals.AddCall(std::vector<uint64_t>{0, UINT64_MAX, 0}, &event));
  EXPECT_FALSE(totals.AddCost(std::vector<uint64_t>{1, 1, 0}, &event, &inclusive));
  EXPECT_EQ(event, 1u);
  EXPECT_TRUE(inclusive);
  EXPECT_EQ(totals.sums()[0], 1u);  // the events before the failing one are added

  totals.Reset(3);
  totals.Function(1, 1, 1);
  EXPECT_TRUE(totals.AddCost(std::vector<uint64_t>{0, 0, UINT64_MAX}, &event, &inclusive));
  EXPECT_FALSE(totals.AddCost(std::vector<uint64_t>{2, 0, 1}, &event, &inclusive));
  EXPECT_EQ(event, 2u);
  EXPECT_FALSE(inclusive);
  EXPECT_EQ(totals.sums()[0], 2u);
}

TEST(PartTotalsTest, ResetStartsOver) {
  PartTotals totals;
  totals.Reset(2);
  size_t event = 0;
  bool inclusive = false;
  totals.Function(1, 1, 1);
  EXPECT_TRUE(totals.AddCost(std::vector<uint64_t>{5, 6}, &event, &inclusive));
  EXPECT_THAT(totals.sums(), ElementsAre(5, 6));
  totals.Reset(1);
  EXPECT_THAT(totals.sums(), ElementsAre(0));
  totals.Function(1, 1, 1);
  EXPECT_TRUE(totals.AddCall(std::vector<uint64_t>{UINT64_MAX}, &event));
}

TEST(PartTotalsTest, CostLists) {
  EXPECT_EQ(ParseCostList("1 0x10", 3), (std::vector<uint64_t>{1, 16, 0}));
  EXPECT_EQ(ParseCostList("", 1), (std::vector<uint64_t>{0}));
  EXPECT_EQ(ParseCostList("1 2", 1), std::nullopt);
  EXPECT_EQ(ParseCostList("1x", 1), std::nullopt);
  EXPECT_EQ(FormatCostList(std::vector<uint64_t>{3, 0, 18446744073709551615u}),
            "3 0 18446744073709551615");
}

}  // namespace
}  // namespace cg_inject
