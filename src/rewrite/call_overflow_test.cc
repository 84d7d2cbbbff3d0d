#include "rewrite/call_overflow.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace cg_inject {
namespace {

TEST(CallOverflowTest, SumsEachEdgeOverItsLines) {
  CallOverflow edges;
  const uint32_t a = 1, b = 2, c = 3;
  std::vector<uint64_t> six{6, 1000}, five{5, 0};
  edges.Caller(a);
  edges.Call(b, six);
  edges.Call(c, five);
  edges.Caller(b);
  edges.Call(c, five);
  edges.Caller(a);
  edges.Call(b, six);  // a -> b: 12 in all
  EXPECT_EQ(edges.CountAbove(11), 1);
  EXPECT_EQ(edges.CountAbove(12), 0);  // equal to the total is not above it
  EXPECT_EQ(edges.CountAbove(4), 3);
  edges.Reset();
  EXPECT_EQ(edges.CountAbove(0), 0);
}

TEST(CallOverflowTest, SumsSaturate) {
  CallOverflow edges;
  std::vector<uint64_t> huge{UINT64_MAX - 1};
  edges.Caller(1);
  edges.Call(2, huge);
  edges.Call(2, huge);
  EXPECT_EQ(edges.CountAbove(UINT64_MAX - 1), 1);
}

// Sums are kept in 32 bits until they reach 2^32 - 1, then in 64: both sides of that line.
TEST(CallOverflowTest, SumsPastThirtyTwoBitsStayExact) {
  CallOverflow edges;
  std::vector<uint64_t> half{uint64_t{1} << 31}, almost{uint64_t{UINT32_MAX} - 1}, one{1};
  edges.Caller(1);
  edges.Call(2, half);
  edges.Call(2, half);    // 2^32: past 32 bits
  edges.Call(3, almost);  // 2^32 - 2: still 32 bits
  edges.Call(4, almost);
  edges.Call(4, one);  // 2^32 - 1: the first sum that does not fit
  edges.Call(2, one);  // 2^32 + 1, added where it moved
  EXPECT_EQ(edges.CountAbove(uint64_t{1} << 32), 1);
  EXPECT_EQ(edges.CountAbove(uint64_t{UINT32_MAX}), 1);
  EXPECT_EQ(edges.CountAbove(uint64_t{UINT32_MAX} - 1), 2);
  EXPECT_EQ(edges.CountAbove(uint64_t{UINT32_MAX} - 2), 3);
  edges.Reset();
  EXPECT_EQ(edges.CountAbove(0), 0);
}

}  // namespace
}  // namespace cg_inject
