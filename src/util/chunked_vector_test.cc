#include "util/chunked_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace cg_inject {
namespace {

// Small chunks (4 entries) so that a few appends cross several chunk boundaries.
using Small = ChunkedVector<uint64_t, 2>;

TEST(ChunkedVectorTest, IndexesAcrossChunks) {
  Small v;
  for (uint64_t i = 0; i < 21; ++i) EXPECT_EQ(v.emplace_back(i * 10), i * 10);
  ASSERT_EQ(v.size(), 21u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], i * 10) << i;
  std::vector<uint64_t> seen;
  for (uint64_t x : v) seen.push_back(x);
  ASSERT_EQ(seen.size(), 21u);
  EXPECT_EQ(seen.front(), 0u);
  EXPECT_EQ(seen.back(), 200u);
}

TEST(ChunkedVectorTest, ReferencesSurviveAppends) {
  Small v;
  uint64_t& first = v.emplace_back(uint64_t{7});
  uint64_t& fifth = (v.push_back(1), v.push_back(2), v.push_back(3), v.emplace_back(uint64_t{5}));
  for (uint64_t i = 0; i < 100; ++i) v.push_back(i);
  EXPECT_EQ(&first, &v[0]);
  EXPECT_EQ(&fifth, &v[4]);
  EXPECT_EQ(first, 7u);
  EXPECT_EQ(fifth, 5u);
}

TEST(ChunkedVectorTest, ClearEmptiesAndRefillsFromZero) {
  Small v;
  for (uint64_t i = 1; i <= 10; ++i) v.push_back(i);
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.begin(), v.end());
  // Entries made after a clear start value-initialized, not with the old contents.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v.emplace_back(), 0u) << i;
  EXPECT_EQ(v.size(), 6u);
  v.push_back(42);
  EXPECT_EQ(v[6], 42u);
}

// Tables indexed by ids (NameTable's upstream ids, the writer's function ids) grow to an id at
// once; the entries between read as empty, also where a cleared table had values.
TEST(ChunkedVectorTest, ResizeGrowsWithEmptyEntries) {
  Small v;
  for (uint64_t i = 1; i <= 6; ++i) v.push_back(i);
  v.clear();
  v.resize(11);
  ASSERT_EQ(v.size(), 11u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], 0u) << i;
  v[10] = 5;
  uint64_t* tenth = &v[10];
  v.resize(40);
  EXPECT_EQ(tenth, &v[10]);
  EXPECT_EQ(v[10], 5u);
  EXPECT_EQ(v[39], 0u);
  v.resize(3);
  EXPECT_EQ(v.size(), 3u);
  v.resize(12);
  EXPECT_EQ(v[10], 0u);  // entries past a shrink come back empty
}

}  // namespace
}  // namespace cg_inject
