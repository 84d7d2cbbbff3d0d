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
