#include "cli/recorded_files.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

using Paths = std::vector<std::string>;

TEST(RecordedFilesTest, GroupsByPidWithPartsBeforeTheFinalDump) {
  std::vector<DirEntry> entries = {
      {"callgrind.out.200", 10},
      {"callgrind.out.100.2", 10},
      {"callgrind.out.100", 10},
      {"callgrind.out.100.1", 10},
      {"app.js", 10},
      {"callgrind.out.100.jit", 10},
      {"callgrind.out.old", 10},
      {"perf-100.map", 10},
  };
  std::vector<RecordedProcess> p = GroupRecordedProfiles("/d", entries, {});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].pid, 100u);
  EXPECT_EQ(p[0].profiles,
            (Paths{"/d/callgrind.out.100.1", "/d/callgrind.out.100.2", "/d/callgrind.out.100"}));
  EXPECT_EQ(p[1].pid, 200u);
  EXPECT_EQ(p[1].profiles, Paths{"/d/callgrind.out.200"});
}

TEST(RecordedFilesTest, PerThreadFilesReplaceTheEmptyWholeRunFile) {
  std::vector<DirEntry> entries = {
      {"callgrind.out.7", 0}, {"callgrind.out.7-02", 5}, {"callgrind.out.7-01", 5}};
  std::vector<RecordedProcess> p = GroupRecordedProfiles(".", entries, {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].profiles, (Paths{"callgrind.out.7-01", "callgrind.out.7-02"}));
}

TEST(RecordedFilesTest, FilesThatWereThereBeforeAreNotOurs) {
  std::vector<DirEntry> entries = {{"callgrind.out.7", 5}, {"callgrind.out.8", 5}};
  std::vector<RecordedProcess> p = GroupRecordedProfiles(".", entries, {"callgrind.out.7"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].pid, 8u);
}

TEST(RecordedFilesTest, ARewrittenFileIsNewEvenUnderAnOldName) {
  std::vector<DirEntry> before = {
      {"a", 5, 100, 1}, {"b", 5, 100, 2}, {"c", 5, 100, 3}, {"d", 5, 100, 4}};
  std::vector<DirEntry> after = {
      {"a", 5, 100, 1}, {"b", 6, 100, 2}, {"c", 5, 101, 3}, {"d", 5, 100, 9}, {"e", 5, 100, 5}};
  EXPECT_EQ(UnchangedNames(before, after), std::set<std::string>{"a"});
}

TEST(RecordedFilesTest, OnlyCallgrindsOwnSuffixes) {
  std::vector<DirEntry> entries = {{"callgrind.out.7.0", 5},
                                   {"callgrind.out.7-", 5},
                                   {"callgrind.out.7.1x", 5},
                                   {"callgrind.out.", 5},
                                   {"callgrind.out.7.1-03", 5}};
  std::vector<RecordedProcess> p = GroupRecordedProfiles(".", entries, {});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].profiles, Paths{"callgrind.out.7.1-03"});
}

}  // namespace
}  // namespace cg_inject
