#include "callgrind/profile_summary.h"

#include <string>

#include <gtest/gtest.h>

#include "callgrind/callgrind_reader.h"
#include "cg_inject/io.h"

namespace cg_inject {
namespace {

ProfileSummary Summary(std::string_view text) {
  auto in = OpenMemoryInput(text, "in.cg");
  ProfileSummary summary;
  ReadCallgrind(*in, summary);
  return summary;
}

// cl-format.xml's extended example: main calls func1 once and func2 three times, func1 calls
// func2 twice; the spec states main's inclusive cost is 820.
constexpr std::string_view kSpecExample =
    "# callgrind format\nevents: Instructions\n"
    "fl=file1.c\nfn=main\n16 20\ncfn=func1\ncalls=1 50\n16 400\n"
    "cfi=file2.c\ncfn=func2\ncalls=3 20\n16 400\n"
    "fn=func1\n51 100\ncfi=file2.c\ncfn=func2\ncalls=2 20\n51 300\n"
    "fl=file2.c\nfn=func2\n20 700\n";

TEST(ProfileSummaryTest, SelfInclusiveAndEdgesOfTheSpecExample) {
  ProfileSummary summary = Summary(kSpecExample);
  EXPECT_EQ(summary.ToText(),
            "part 0\n"
            "header events: Instructions\n"
            "positions line\n"
            "events Instructions\n"
            "totals 820\n"
            "records cost=3 call=3 jump=0 followed=0 executed=0\n"
            "function ob= fl=file1.c fn=func1\n"
            "  self 100\n  inclusive 400\n  called 1 inclusive 400\n"
            "function ob= fl=file1.c fn=main\n"
            "  self 20\n  inclusive 820\n  called 0 inclusive 0\n"
            "function ob= fl=file2.c fn=func2\n"
            "  self 700\n  inclusive 700\n  called 5 inclusive 700\n"
            "call ob= fl=file1.c fn=func1 -> ob= fl=file2.c fn=func2\n"
            "  count 2 lines 1 inclusive 300\n"
            "call ob= fl=file1.c fn=main -> ob= fl=file1.c fn=func1\n"
            "  count 1 lines 1 inclusive 400\n"
            "call ob= fl=file1.c fn=main -> ob= fl=file2.c fn=func2\n"
            "  count 3 lines 1 inclusive 400\n");
}

TEST(ProfileSummaryTest, JsonEscapesNames) {
  ProfileSummary summary = Summary("# callgrind format\nevents: A B\nfn=<a \"q\" \\ b>\n1 1\n");
  EXPECT_EQ(
      summary.ToJson(),
      "{\"parts\":[{\"headers\":[[\"events\",\"A B\"]],\"positions\":\"line\","
      "\"events\":[\"A\",\"B\"],\"totals\":[1,0],\"records\":{\"cost\":1,\"call\":0,"
      "\"jump\":0,\"followed\":0,\"executed\":0},\"functions\":[{\"key\":{\"object\":\"\","
      "\"file\":\"\",\"function\":\"<a \\\"q\\\" \\\\ b>\"},\"self\":[1,0],\"inclusive\":[1,0],"
      "\"called\":0,\"called_inclusive\":[0,0]}],\"calls\":[]}]}\n");
}

TEST(ProfileSummaryTest, RecursionCountsBothInclusiveViews) {
  // A'2 calls itself: inclusive (self + outgoing) and called-inclusive differ.
  ProfileSummary summary = Summary(
      "# callgrind format\nevents: Ir\nfn=A\n1 10\ncfn=A'2\ncalls=1 1\n1 90\n"
      "fn=A'2\n1 50\ncfn=A'2\ncalls=4 1\n1 40\n");
  const auto& fns = summary.parts()[0].functions;
  const FunctionTotals& a2 = fns.at(FunctionKey{"", "", "A'2"});
  EXPECT_EQ(a2.self, std::vector<uint64_t>{50});
  EXPECT_EQ(a2.inclusive, std::vector<uint64_t>{90});
  EXPECT_EQ(a2.called_inclusive, std::vector<uint64_t>{130});
  EXPECT_EQ(a2.calls_in, 5u);
  EXPECT_EQ(summary.parts()[0].totals, std::vector<uint64_t>{60});
}

TEST(ProfileSummaryTest, CompareReportsDifferences) {
  ProfileSummary a = Summary(kSpecExample);
  EXPECT_EQ(CompareSummaries(a, Summary(kSpecExample)), "");
  std::string changed(kSpecExample);
  changed.replace(changed.find("20 700"), 6, "20 701");
  EXPECT_EQ(CompareSummaries(a, Summary(changed)),
            "part 0: totals 820 vs 821\n"
            "part 0: function differs: ob= fl=file2.c fn=func2: self 700 vs 701, inclusive 700 "
            "vs 701\n"
            "part 0: record digests differ\n");
  // Same totals, moved to another line: only the digest sees it.
  std::string moved(kSpecExample);
  moved.replace(moved.find("20 700"), 6, "21 700");
  EXPECT_EQ(CompareSummaries(a, Summary(moved)), "part 0: record digests differ\n");
  std::string renamed(kSpecExample);
  renamed.replace(renamed.find("fn=func1\n51"), 8, "fn=funcX");
  std::string diff = CompareSummaries(a, Summary(renamed), 2);
  // func1 is still called by main, so it remains, with no cost of its own.
  EXPECT_EQ(diff,
            "part 0: function differs: ob= fl=file1.c fn=func1: self 100 vs 0, inclusive 400 vs "
            "0\n"
            "part 0: function added: ob= fl=file1.c fn=funcX\n... and 3 more\n");
}

}  // namespace
}  // namespace cg_inject
