#include "util/id_slots.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(IdSlotsTest, UnboundIdsHaveNoSlotOrAnEmptyOne) {
  IdSlots<uint32_t> slots;
  EXPECT_EQ(slots.Find(0), nullptr);
  slots.Bind(3) = 30;
  EXPECT_EQ(slots[3], 30u);
  const uint32_t* near = slots.Find(2);  // in the array: an empty slot
  EXPECT_TRUE(near == nullptr || *near == 0);
  EXPECT_EQ(slots.Find(1u << 30), nullptr);
}

TEST(IdSlotsTest, FarIdsStaySeparateUntilTheArrayReachesThem) {
  IdSlots<uint32_t> slots;
  // A far id first (Bun's first function id is 134,916), then ids counting up to it: every
  // slot keeps its value when the array grows over the far ones.
  const uint32_t far = 4'000'000'000u;
  slots.Bind(far) = 1;
  slots.Bind(200'000) = 2;
  for (uint32_t id = 1; id <= 150'000; ++id) slots.Bind(id) = id + 10;
  ASSERT_NE(slots.Find(far), nullptr);
  EXPECT_EQ(slots[far], 1u);
  ASSERT_NE(slots.Find(200'000), nullptr);
  EXPECT_EQ(slots[200'000], 2u);
  for (uint32_t id = 1; id <= 150'000; ++id) ASSERT_EQ(slots[id], id + 10) << id;
  slots.Bind(200'000) = 3;  // bound again: the same slot
  EXPECT_EQ(slots[200'000], 3u);
  slots.clear();
  EXPECT_EQ(slots.Find(far), nullptr);
  EXPECT_TRUE(slots.Find(5) == nullptr || *slots.Find(5) == 0);
}

}  // namespace
}  // namespace cg_inject
