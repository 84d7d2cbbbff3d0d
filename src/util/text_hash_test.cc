#include "util/text_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

namespace cg_inject {
namespace {

TEST(TextHashTest, SameTextSameHashWhereverItIs) {
  std::string a = "bench::ns3::Class793::method30170(std::vector<int> const&)";
  std::string b = "xx" + a;
  EXPECT_EQ(HashText(a), HashText(std::string_view(b).substr(2)));
  EXPECT_EQ(TextHash{}(a), static_cast<size_t>(HashText(a)));
}

// Every byte of every length counts: texts that differ in one byte, or only in length (a prefix,
// trailing NULs), hash apart. Lengths cover each path (0, 1-3, 4-7, 8-16, longer).
TEST(TextHashTest, EveryByteAndTheLengthCount) {
  std::unordered_set<uint64_t> seen;
  size_t texts = 0;
  for (size_t n = 0; n <= 70; ++n) {
    std::string base(n, 'a');
    for (size_t i = 0; i < n; ++i) base[i] = static_cast<char>('a' + (i * 7) % 26);
    ++texts;
    seen.insert(HashText(base));
    ++texts;
    seen.insert(HashText(base + std::string(1, '\0')));
    for (size_t i = 0; i < n; ++i) {
      std::string changed = base;
      changed[i] ^= 1;
      ++texts;
      seen.insert(HashText(changed));
    }
  }
  EXPECT_EQ(seen.size(), texts);
}

// The tables take the top bits of hash * golden ratio (FlatHashMap): names that share long
// prefixes and differ in a few digits, as C++ methods and JIT names do, must spread over them.
TEST(TextHashTest, SimilarNamesSpreadOverTableSlots) {
  constexpr int kBits = 16;
  constexpr int kNames = 1 << kBits;
  std::vector<int> load(size_t{1} << kBits, 0);
  for (int i = 0; i < kNames; ++i) {
    std::string name = "bench::ns" + std::to_string(i % 61) + "::Class" + std::to_string(i % 997) +
                       "::method" + std::to_string(i) + "(std::vector<int> const&)";
    uint64_t slot = (HashText(name) * 0x9E3779B97F4A7C15ull) >> (64 - kBits);
    ++load[slot];
  }
  // Random placement of 2^16 names in 2^16 slots: about 1/e of the slots stay empty and no slot
  // holds more than about 9.
  int empty = int(std::count(load.begin(), load.end(), 0));
  EXPECT_GT(empty, kNames * 0.34);
  EXPECT_LT(empty, kNames * 0.40);
  EXPECT_LE(*std::max_element(load.begin(), load.end()), 12);
}

}  // namespace
}  // namespace cg_inject
