#include "elf/name_ends.h"

#include <gtest/gtest.h>

#include <string>

namespace cg_inject {
namespace {

TEST(NameEndsTest, ShortNamesEndAtTheirNul) {
  const std::string file = std::string("xx\0free\0malloc\0", 15);
  NameEnds ends(file);
  std::string_view name;
  ASSERT_TRUE(ends.Quick(2, file.size(), 1, &name));
  EXPECT_EQ(name, "free");
  ASSERT_TRUE(ends.Quick(2, file.size(), 3, &name));  // a suffix is a name too
  EXPECT_EQ(name, "ee");
  ASSERT_TRUE(ends.Quick(2, file.size(), 13, &name));  // outside the table
  EXPECT_EQ(name, "");
}

TEST(NameEndsTest, NameRunningOffItsTableIsEmpty) {
  const std::string file = std::string("\0abc\0def", 8);
  NameEnds ends(file);
  std::string_view name = "unset";
  ASSERT_TRUE(ends.Quick(0, 6, 5, &name));  // "d" is the table's last byte, no NUL
  EXPECT_EQ(name, "");
}

TEST(NameEndsTest, LongOverlappingNamesAreResolvedTogether) {
  // One run of letters, names starting at each of its first 1,000 bytes: every one is longer
  // than the quick scan, and each ends at the run's NUL.
  const size_t run = 1000 + 4 * NameEnds::kQuickScan;
  const std::string file = std::string(1, '\0') + std::string(run, 'a') + std::string("\0b\0", 3);
  NameEnds ends(file);
  for (uint32_t i = 0; i < 1000; ++i) {
    std::string_view name;
    ASSERT_FALSE(ends.Quick(0, file.size(), 1 + i, &name));
    ends.Later(0, file.size(), 1 + i, i);
  }
  // Given out of order too.
  ends.Later(0, file.size(), 999 + 1, 5000);
  ends.Later(0, file.size(), 0, 6000);
  std::vector<NameEnds::Resolved> resolved = ends.Resolve();
  ASSERT_EQ(resolved.size(), 1002u);
  for (const NameEnds::Resolved& r : resolved) {
    if (r.tag == 6000) {
      EXPECT_EQ(r.name, "");  // starts at a NUL
    } else {
      const uint32_t i = r.tag == 5000 ? 999 : r.tag;
      EXPECT_EQ(r.name.size(), run - i) << r.tag;
      EXPECT_EQ(r.name.data(), file.data() + 1 + i);
    }
  }
  EXPECT_TRUE(ends.Resolve().empty());
}

TEST(NameEndsTest, LongNameMustEndInsideItsTable) {
  const size_t run = 2 * NameEnds::kQuickScan;
  const std::string file = std::string(run, 'a') + std::string("\0", 1);
  NameEnds ends(file);
  std::string_view name;
  ASSERT_FALSE(ends.Quick(0, run, 0, &name));
  ends.Later(0, run, 0, 1);       // the NUL lies past the table's end
  ends.Later(0, run + 1, 10, 2);  // this table holds it
  std::vector<NameEnds::Resolved> resolved = ends.Resolve();
  ASSERT_EQ(resolved.size(), 2u);
  EXPECT_EQ(resolved[0].tag, 1u);
  EXPECT_EQ(resolved[0].name, "");
  EXPECT_EQ(resolved[1].tag, 2u);
  EXPECT_EQ(resolved[1].name.size(), run - 10);
}

}  // namespace
}  // namespace cg_inject
