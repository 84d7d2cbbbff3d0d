#include "util/flat_hash_map.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <string>
#include <string_view>

namespace cg_inject {
namespace {

struct StringHash {
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

TEST(FlatHashMapTest, FindsWhatWasInserted) {
  FlatHashMap<uint64_t, int> map;
  EXPECT_EQ(map.find(uint64_t{7}), nullptr);
  auto [value, inserted] = map.try_emplace(uint64_t{7});
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*value, 0);
  *value = 70;
  auto [again, inserted_again] = map.try_emplace(uint64_t{7});
  EXPECT_FALSE(inserted_again);
  EXPECT_EQ(*again, 70);
  map[uint64_t{8}] = 80;
  EXPECT_EQ(map.size(), 2u);
  ASSERT_NE(map.find(uint64_t{8}), nullptr);
  EXPECT_EQ(*map.find(uint64_t{8}), 80);
  EXPECT_FALSE(map.contains(uint64_t{9}));
}

// Dense small ids are what the callers key by; each must stay reachable across every growth.
TEST(FlatHashMapTest, DenseIdsSurviveGrowth) {
  FlatHashMap<uint32_t, uint32_t> map;
  for (uint32_t i = 0; i < 100000; ++i) map[i] = i * 3;
  EXPECT_EQ(map.size(), 100000u);
  for (uint32_t i = 0; i < 100000; ++i) {
    const uint32_t* v = map.find(i);
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, i * 3);
  }
  EXPECT_EQ(map.find(uint32_t{100000}), nullptr);
}

TEST(FlatHashMapTest, StringKeysFoundByView) {
  FlatHashMap<std::string, int, StringHash> map;
  map[std::string_view("main")] = 1;
  map[std::string("fn=0x1")] = 2;
  std::string_view probe = "main";
  ASSERT_NE(map.find(probe), nullptr);
  EXPECT_EQ(*map.find(probe), 1);
  EXPECT_EQ(map.find(std::string_view("mai")), nullptr);
}

// Erase moves later entries of a probe run back; checked against std::map under random inserts
// and erases that make long runs (a small key space in a table that does not grow).
TEST(FlatHashMapTest, EraseKeepsEveryOtherEntryReachable) {
  FlatHashMap<uint64_t, uint64_t> map;
  std::map<uint64_t, uint64_t> model;
  std::mt19937_64 random(12345);
  for (int step = 0; step < 200000; ++step) {
    uint64_t key = random() % 500;
    if (random() % 3 == 0) {
      EXPECT_EQ(map.erase(key), model.erase(key) == 1);
    } else {
      map[key] = step;
      model[key] = step;
    }
    if (step % 1000 == 0) {
      ASSERT_EQ(map.size(), model.size());
      for (uint64_t k = 0; k < 500; ++k) {
        auto it = model.find(k);
        const uint64_t* v = map.find(k);
        if (it == model.end()) {
          EXPECT_EQ(v, nullptr) << k;
        } else {
          ASSERT_NE(v, nullptr) << k;
          EXPECT_EQ(*v, it->second);
        }
      }
    }
  }
}

TEST(FlatHashMapTest, IterationVisitsEachEntryOnce) {
  FlatHashMap<uint32_t, uint32_t> map;
  for (uint32_t i = 1; i <= 1000; ++i) map[i * 7919] = i;
  map.erase(uint32_t{7919});
  uint64_t key_sum = 0, value_sum = 0, count = 0;
  for (const auto& slot : map) {
    key_sum += slot.key;
    value_sum += slot.value;
    ++count;
  }
  EXPECT_EQ(count, 999u);
  EXPECT_EQ(value_sum, 1000u * 1001 / 2 - 1);
  EXPECT_EQ(key_sum, 7919ull * (1000 * 1001 / 2 - 1));
}

// A table cleared for reuse keeps its capacity: a few entries in thousands of slots are each
// visited once, in slot order, wherever they lie (empty runs are skipped eight tags at a time).
TEST(FlatHashMapTest, IterationOfAFewEntriesInALargeTableFindsEachInSlotOrder) {
  FlatHashMap<uint64_t, uint32_t> map;
  map.reserve(3000);
  const size_t capacity = map.capacity();
  std::mt19937_64 random(42);
  for (int round = 0; round < 500; ++round) {
    map.clear();
    std::map<uint64_t, uint32_t> want;
    const int n = round % 25;
    for (int i = 0; i < n; ++i) {
      const uint64_t key = random();
      map[key] = uint32_t(i);
      want[key] = uint32_t(i);
    }
    ASSERT_EQ(map.capacity(), capacity);
    std::map<uint64_t, uint32_t> got;
    uintptr_t previous = 0;
    for (const auto& slot : map) {
      EXPECT_TRUE(got.emplace(slot.key, slot.value).second) << "visited twice: " << slot.key;
      EXPECT_LT(previous, reinterpret_cast<uintptr_t>(&slot)) << "not in slot order";
      previous = reinterpret_cast<uintptr_t>(&slot);
    }
    EXPECT_EQ(got, want) << "round " << round;
  }
}

TEST(FlatHashMapTest, ClearKeepsCapacityAndForgetsEntries) {
  FlatHashMap<uint32_t, int> map;
  map.reserve(1000);
  size_t capacity = map.capacity();
  EXPECT_GE(capacity * 7, 1000u * 8);
  for (uint32_t i = 0; i < 1000; ++i) map[i] = 1;
  EXPECT_EQ(map.capacity(), capacity);  // reserved: no growth
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.capacity(), capacity);
  EXPECT_EQ(map.find(uint32_t{5}), nullptr);
  map[uint32_t{5}] = 2;
  EXPECT_EQ(*map.find(uint32_t{5}), 2);
}

// A cleared table's keys come back with fresh values (the injector sums into them), whether
// its slots are plain data (cleared by their tags alone) or own memory.
TEST(FlatHashMapTest, KeysInsertedAfterClearStartFromDefaultValues) {
  FlatHashMap<uint32_t, uint64_t> plain;
  FlatHashMap<std::string, std::string> owning;
  for (uint32_t i = 0; i < 100; ++i) {
    plain[i] += 7;
    owning[std::to_string(i)] += "x";
  }
  plain.clear();
  owning.clear();
  for (uint32_t i = 0; i < 100; ++i) {
    EXPECT_EQ(plain.find(i), nullptr);
    auto [value, inserted] = plain.try_emplace(i);
    EXPECT_TRUE(inserted);
    EXPECT_EQ(*value, 0u) << i;
    EXPECT_EQ(owning[std::to_string(i)], "") << i;
  }
}

TEST(FlatHashMapTest, MovedFromMapIsEmptyAndUsable) {
  FlatHashMap<uint32_t, int> from;
  for (uint32_t i = 0; i < 100; ++i) from[i] = int(i);
  FlatHashMap<uint32_t, int> to = std::move(from);
  EXPECT_EQ(to.size(), 100u);
  EXPECT_EQ(*to.find(uint32_t{42}), 42);
  EXPECT_TRUE(from.empty());  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(from.find(uint32_t{42}), nullptr);
  from[uint32_t{7}] = 7;
  EXPECT_EQ(*from.find(uint32_t{7}), 7);
  int visited = 0;
  for (const auto& slot : from) visited += slot.value;
  EXPECT_EQ(visited, 7);
}

// A set keeps keys only (8 bytes a slot for a pointer key) and hands out the stored key.
TEST(FlatHashMapTest, SetStoresKeysOnly) {
  static_assert(sizeof(FlatHashMap<const char*, NoValue>::Slot) == sizeof(const char*));
  static const char kTexts[] = "abc";
  FlatHashMap<const char*, NoValue> set;
  EXPECT_TRUE(set.try_emplace(kTexts + 1).second);
  EXPECT_FALSE(set.try_emplace(kTexts + 1).second);
  const char* const* stored = set.find_key(kTexts + 1);
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(*stored, kTexts + 1);
  EXPECT_EQ(set.find_key(kTexts + 2), nullptr);
}

std::string KeyOfString(const std::deque<std::string>& table, uint32_t i) { return table[i]; }
using StringIndex =
    KeyIndex<std::string, std::hash<std::string>, std::deque<std::string>, KeyOfString>;

// The index stores positions only: every lookup, and every rehash while it grows, reads the key
// from the table, so a wrong position or a rehash by the slot's number would lose entries.
TEST(KeyIndexTest, FindsEachKeyAtItsPositionAcrossGrowth) {
  std::deque<std::string> table;
  StringIndex index(&table);
  for (uint32_t i = 0; i < 50000; ++i) {
    std::string key = "function_" + std::to_string(i * 7919 % 100003);
    auto [at, inserted] = index.insert(key, uint32_t(table.size()));
    ASSERT_TRUE(inserted) << key;
    ASSERT_EQ(at, table.size());
    table.push_back(key);
  }
  EXPECT_EQ(index.size(), table.size());
  for (uint32_t i = 0; i < table.size(); ++i) {
    const uint32_t* at = index.find(table[i]);
    ASSERT_NE(at, nullptr) << table[i];
    EXPECT_EQ(*at, i);
  }
  EXPECT_EQ(index.find(std::string("function_100004")), nullptr);
}

TEST(KeyIndexTest, AKnownKeyKeepsItsFirstPosition) {
  std::deque<std::string> table{"a", "b"};
  StringIndex index(&table);
  EXPECT_TRUE(index.insert("a", 0).second);
  EXPECT_TRUE(index.insert("b", 1).second);
  auto [at, inserted] = index.insert("a", 2);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(at, 0u);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find("a"), nullptr);
}

}  // namespace
}  // namespace cg_inject
