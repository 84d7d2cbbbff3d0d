#include "rewrite/record_agg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

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

TEST(RecordAggTest, CostsAtOneKeySumIntoOneLineWhereverThePoolGrew) {
  CostPool pool;
  pool.Reset(2);
  RecordAgg agg;
  CostKey a{Position{{0x10, 3, 0}}, 1}, b{Position{{0x10, 3, 0}}, 2}, c{Position{{0x14, 4, 0}}, 1};
  const uint64_t one[] = {1, 10}, two[] = {2, 20};
  agg.AddCost(&pool, a, one);
  pool.Append(two);  // something else in the pool between the lines
  agg.AddCost(&pool, b, two);
  agg.AddCost(&pool, a, two);
  agg.AddCost(&pool, c, one);
  agg.AddCost(&pool, b, one);
  std::map<std::pair<uint64_t, uint32_t>, std::vector<uint64_t>> sums;
  agg.ForEachCost(pool, [&](const Position& pos, uint32_t file, size_t offset) {
    auto costs = pool.Get(offset);
    EXPECT_TRUE(
        sums.emplace(std::pair(pos.values[0], file), std::vector(costs.begin(), costs.end()))
            .second);
  });
  EXPECT_EQ(sums.size(), 3u);
  EXPECT_THAT(sums[std::pair(uint64_t{0x10}, 1u)], ElementsAre(3, 30));
  EXPECT_THAT(sums[std::pair(uint64_t{0x10}, 2u)], ElementsAre(3, 30));
  EXPECT_THAT(sums[std::pair(uint64_t{0x14}, 1u)], ElementsAre(1, 10));
}

TEST(RecordAggTest, CostsWithoutEventsAreLinesAllTheSame) {
  CostPool pool;
  pool.Reset(0);  // a profile whose events: line names none
  RecordAgg agg;
  agg.AddCost(&pool, CostKey{Position{{1, 0, 0}}, 1}, {});
  agg.AddCost(&pool, CostKey{Position{{2, 0, 0}}, 1}, {});
  int lines = 0;
  agg.ForEachCost(pool, [&](const Position&, uint32_t, size_t offset) {
    EXPECT_TRUE(pool.Get(offset).empty());
    ++lines;
  });
  EXPECT_EQ(lines, 2);
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
