#include "rewrite/accounting.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cg_inject/error.h"

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

TEST(CostAccountingTest, SumsPast64BitsThrowInsteadOfWrapping) {
  constexpr uint64_t kMax = UINT64_MAX;
  const std::string kMessage =
      "expected cost sums below 2^64, got an overflow adding up the merged pieces of one "
      "function (the profile's costs are too large to merge)";
  FunctionKey f{1, 1, 1}, g{1, 1, 2};
  CostAccounting self;
  self.Reset(1);
  self.Function(f);
  self.Cost(std::vector<uint64_t>{kMax});
  self.Function(g);  // the part total wraps although each function does not
  try {
    self.Cost(std::vector<uint64_t>{1});
    ADD_FAILURE() << "no overflow";
  } catch (const InputError& e) {
    EXPECT_EQ(e.what(), kMessage);
  }
  CostAccounting calls;
  calls.Reset(1);
  calls.Function(f);
  calls.Call(g, std::vector<uint64_t>{kMax});
  EXPECT_THROW(calls.Call(g, std::vector<uint64_t>{1}), InputError);
  CostAccounting inclusive;  // self and calls each fit, their sum does not
  inclusive.Reset(1);
  inclusive.Function(f);
  inclusive.Cost(std::vector<uint64_t>{1});
  inclusive.Call(g, std::vector<uint64_t>{kMax});
  EXPECT_THROW(inclusive.Inclusive(f), InputError);
}

}  // namespace
}  // namespace cg_inject
