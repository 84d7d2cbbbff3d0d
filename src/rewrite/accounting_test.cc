#include "rewrite/accounting.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

TEST(CostAccountingTest, InclusiveIsSelfPlusCallsAcrossRepeatedBlocks) {
  CostAccounting acc;
  acc.Reset(2);
  FunctionKey main{1, 2, 3}, f{1, 2, 4};
  acc.Function(main);
  acc.Cost(std::vector<uint64_t>{5, 1});
  acc.Call(f, std::vector<uint64_t>{10, 2});
  acc.Function(f);
  acc.Cost(std::vector<uint64_t>{10, 2});
  acc.Function(main);  // a second block of main adds up
  acc.Cost(std::vector<uint64_t>{1, 0});
  EXPECT_THAT(acc.Inclusive(main), ElementsAre(16, 3));
  EXPECT_THAT(acc.Inclusive(f), ElementsAre(10, 2));
  EXPECT_THAT(acc.totals(), ElementsAre(16, 3));
  EXPECT_TRUE(acc.MissingTargets().empty());
  EXPECT_THAT(acc.Inclusive(FunctionKey{9, 9, 9}), ElementsAre(0, 0));
}

TEST(CostAccountingTest, TargetsWithoutBlocksAreMissing) {
  CostAccounting acc;
  acc.Reset(1);
  acc.Function(FunctionKey{1, 1, 1});
  acc.Call(FunctionKey{1, 1, 2}, std::vector<uint64_t>{4});
  ASSERT_EQ(acc.MissingTargets().size(), 1u);
  EXPECT_EQ(acc.MissingTargets()[0], (FunctionKey{1, 1, 2}));
  // Records before any block are not counted (the injector counts both sides the same way).
  CostAccounting empty;
  empty.Reset(1);
  empty.Cost(std::vector<uint64_t>{7});
  EXPECT_THAT(empty.totals(), ElementsAre(0));
}

}  // namespace
}  // namespace cg_inject
