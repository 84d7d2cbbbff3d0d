#include "util/arena.h"

#include <gtest/gtest.h>

#include <string>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

TEST(ArenaTest, CopiesOutliveTheirSource) {
  Arena arena;
  std::vector<std::string_view> copies;
  for (int i = 0; i < 300000; ++i) {
    std::string text = "name_" + std::to_string(i);
    copies.push_back(arena.Copy(text));
  }
  // 300,000 short strings (2.5 MB) span several blocks; every view still reads its own text.
  EXPECT_GT(arena.bytes_reserved(), size_t{1} << 20);
  for (int i = 0; i < 300000; ++i) EXPECT_EQ(copies[size_t(i)], "name_" + std::to_string(i));
}

TEST(ArenaTest, EmptyCopyAllocatesNothing) {
  Arena arena;
  EXPECT_TRUE(arena.Copy("").empty());
  EXPECT_EQ(arena.bytes_reserved(), 0u);
}

TEST(ArenaTest, BigPieceGetsItsOwnBlockAndKeepsTheCurrentOne) {
  Arena arena;
  std::string_view a = arena.Copy("a");
  std::string big(3 << 20, 'x');
  std::string_view copy = arena.Copy(big);
  std::string_view b = arena.Copy("b");
  EXPECT_EQ(copy, big);
  // "b" went into the first block, right after "a".
  EXPECT_EQ(b.data(), a.data() + 1);
  EXPECT_EQ(arena.bytes_reserved(), (size_t{1} << 20) + big.size());
}

TEST(ArenaTest, ArraysAreAligned) {
  Arena arena;
  arena.Copy("odd");
  std::vector<LineEntry> lines = {{0x10, 1, 0, 0}, {0x20, 2, 0, 1}};
  std::span<const LineEntry> copy = arena.CopyArray(std::span<const LineEntry>(lines));
  ASSERT_EQ(copy.size(), 2u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % alignof(LineEntry), 0u);
  EXPECT_EQ(copy[1].addr, 0x20u);
  EXPECT_EQ(copy[1].file_index, 1u);
}

TEST(StringPoolTest, InternsOnce) {
  Arena arena;
  StringPool pool(&arena);
  std::string first = "/app/src/module1.js";
  std::string second = first;
  uint32_t a = pool.Intern(first);
  uint32_t b = pool.Intern(second);
  EXPECT_EQ(a, b);
  EXPECT_EQ(pool.Text(a), first);
  EXPECT_NE(pool.Text(a).data(), first.data());
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.Intern(""), 0u);
  EXPECT_TRUE(pool.Text(0).empty());
  EXPECT_EQ(pool.Text(pool.Intern("other")), "other");
}

}  // namespace
}  // namespace cg_inject
