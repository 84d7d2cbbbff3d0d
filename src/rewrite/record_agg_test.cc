#include "rewrite/record_agg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cg_inject/error.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

TEST(CostPoolTest, AppendKeepsTheLineAndFillsMissingEventsWithZeros) {
  CostPool pool;
  pool.Reset(3);
  const uint64_t full[] = {1, 2, 3}, short_line[] = {7}, long_line[] = {4, 5, 6, 9};
  size_t a = pool.Append(full);
  size_t b = pool.Append(short_line);
  size_t c = pool.Append(long_line);  // the reader refuses more costs than events; kept to 3
  EXPECT_THAT(pool.Get(a), ElementsAre(1, 2, 3));
  EXPECT_THAT(pool.Get(b), ElementsAre(7, 0, 0));
  EXPECT_THAT(pool.Get(c), ElementsAre(4, 5, 6));
  // The same as Alloc then Add, which sums into a vector.
  size_t d = pool.Alloc();
  pool.Add(d, short_line);
  pool.Add(d, full);
  EXPECT_THAT(pool.Get(d), ElementsAre(8, 2, 3));
  EXPECT_THAT(pool.Get(a), ElementsAre(1, 2, 3));
}

TEST(CostPoolTest, AddPast64BitsThrows) {
  CostPool pool;
  pool.Reset(1);
  const uint64_t big[] = {UINT64_MAX};
  size_t a = pool.Append(big);
  const uint64_t one[] = {1};
  EXPECT_THROW(pool.Add(a, one), InputError);
}

TEST(RecordAggTest, CallsToOneKeyMergeAndKeepTheirTargetsKind) {
  CostPool pool;
  pool.Reset(1);
  RecordAgg agg;
  CallKey key;
  key.target = FunctionKey{1, 2, 3};
  const uint64_t ten[] = {10}, five[] = {5};
  agg.AddCall(&pool, key, 2, ten, /*named_target=*/true);
  agg.AddCall(&pool, key, 1, five, /*named_target=*/true);
  CallKey other = key;
  other.target.function = 4;
  agg.AddCall(&pool, other, 1, five);
  ASSERT_EQ(agg.calls.size(), 2u);
  const CallValue* merged = agg.calls.find(key);
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->count, 3u);
  EXPECT_THAT(pool.Get(merged->inclusive), ElementsAre(15));
  EXPECT_TRUE(merged->named_target);
  EXPECT_FALSE(agg.calls.find(other)->named_target);
}

}  // namespace
}  // namespace cg_inject
