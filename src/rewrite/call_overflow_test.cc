#include "rewrite/call_overflow.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace cg_inject {
namespace {

TEST(CallOverflowTest, SumsEachEdgeOverItsLines) {
  CallOverflow edges;
  const FunctionKey a{1, 1, 1}, b{1, 1, 2}, c{1, 1, 3};
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
  edges.Caller({1, 1, 1});
  edges.Call({1, 1, 2}, huge);
  edges.Call({1, 1, 2}, huge);
  EXPECT_EQ(edges.CountAbove(UINT64_MAX - 1), 1);
}

}  // namespace
}  // namespace cg_inject
