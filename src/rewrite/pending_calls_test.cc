#include "rewrite/pending_calls.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(PendingCallsTest, ACallWaitsUntilItsTargetIsTaken) {
  PendingCalls pending;
  FunctionKey target{1, 1, 7};
  EXPECT_TRUE(pending.Take(target).empty());
  pending.Add(target).count = 3;
  pending.Add(target).count = 4;
  pending.Add(FunctionKey{1, 1, 8}).count = 5;
  std::vector<PendingCall> calls = pending.Take(target);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].count, 3u);  // in the order they came
  EXPECT_EQ(calls[1].count, 4u);
  EXPECT_TRUE(pending.Take(target).empty());  // taken: none wait any more
  EXPECT_EQ(pending.Take(FunctionKey{1, 1, 8}).size(), 1u);
}

TEST(PendingCallsTest, TakeAllOrdersTargetsByTheirIds) {
  PendingCalls pending;
  // Many targets, so that the hash table's order is unlikely to be the ids' by chance.
  for (uint32_t f = 40; f > 0; --f) pending.Add(FunctionKey{2, f % 3, f}).count = f;
  pending.Add(FunctionKey{1, 9, 9}).count = 100;
  auto all = pending.TakeAll();
  ASSERT_EQ(all.size(), 41u);
  EXPECT_EQ(all[0].first, (FunctionKey{1, 9, 9}));
  for (size_t i = 1; i + 1 < all.size(); ++i) {
    const FunctionKey& a = all[i].first;
    const FunctionKey& b = all[i + 1].first;
    EXPECT_TRUE(std::tie(a.object, a.file, a.function) < std::tie(b.object, b.file, b.function));
    EXPECT_EQ(all[i].second.at(0).count, a.function);
  }
  EXPECT_TRUE(pending.TakeAll().empty());
  EXPECT_TRUE(pending.Take(FunctionKey{1, 9, 9}).empty());
}

TEST(PendingCallsTest, ClearDropsEveryCall) {
  PendingCalls pending;
  pending.Add(FunctionKey{1, 2, 3});
  pending.Clear();
  EXPECT_TRUE(pending.Take(FunctionKey{1, 2, 3}).empty());
  EXPECT_TRUE(pending.TakeAll().empty());
}

}  // namespace
}  // namespace cg_inject
