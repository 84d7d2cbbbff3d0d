#include "rewrite/reuse_split.h"
#include "rewrite/synth_edge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SplitProportionallyTest, SharesAddUpAndFollowWeights) {
  EXPECT_THAT(SplitProportionally(100, std::vector<uint64_t>{1, 3}), ElementsAre(25, 75));
  // The last share takes the rounding rest.
  EXPECT_THAT(SplitProportionally(10, std::vector<uint64_t>{1, 1, 1}), ElementsAre(3, 3, 4));
  // All weights 0: equal shares.
  EXPECT_THAT(SplitProportionally(9, std::vector<uint64_t>{0, 0, 0}), ElementsAre(3, 3, 3));
  EXPECT_THAT(SplitProportionally(5, std::vector<uint64_t>{}), IsEmpty());
  // Products past 2^64 do not wrap.
  std::vector<uint64_t> big{UINT64_MAX / 2, UINT64_MAX / 2};
  std::vector<uint64_t> shares = SplitProportionally(UINT64_MAX, big);
  EXPECT_EQ(shares[0] + shares[1], UINT64_MAX);
  EXPECT_EQ(shares[0], UINT64_MAX / 2);
}

// Issue 33 defect 1: a split call keeps at least one call on every version it enters, and the
// counts add up to the input's.
TEST(SplitCallCountTest, EveryVersionCalledGetsAtLeastOneCall) {
  // Enough calls: as SplitProportionally where no share is 0 ...
  EXPECT_THAT(SplitCallCount(4, std::vector<uint64_t>{3, 1}), ElementsAre(3, 1));
  EXPECT_THAT(CalledVersions(4, std::vector<uint64_t>{3, 1}), ElementsAre(0, 1));
  // ... and a share rounded to 0 takes one call from the largest (3393 * 1 / 3394 is 0: tsc's
  // calls=3393 line became calls=0 and calls=3393).
  EXPECT_THAT(SplitProportionally(3393, std::vector<uint64_t>{1, 3393}), ElementsAre(0, 3393));
  EXPECT_THAT(SplitCallCount(3393, std::vector<uint64_t>{1, 3393}), ElementsAre(1, 3392));
  EXPECT_THAT(SplitCallCount(3, std::vector<uint64_t>{1, 0, 100}), ElementsAre(1, 1, 1));
  // Fewer calls than versions: only that many versions are entered, those of largest weight
  // (earlier ones on ties).
  EXPECT_THAT(SplitProportionally(1, std::vector<uint64_t>{3, 1}), ElementsAre(0, 1));
  EXPECT_THAT(SplitCallCount(1, std::vector<uint64_t>{3, 1}), ElementsAre(1, 0));
  EXPECT_THAT(CalledVersions(1, std::vector<uint64_t>{3, 1}), ElementsAre(0));
  EXPECT_THAT(SplitCallCount(1, std::vector<uint64_t>{2, 2}), ElementsAre(1, 0));
  EXPECT_THAT(CalledVersions(2, std::vector<uint64_t>{1, 5, 1}), ElementsAre(0, 1));
  EXPECT_THAT(SplitCallCount(2, std::vector<uint64_t>{1, 5, 1}), ElementsAre(1, 1, 0));
  // No calls (no Callgrind writes that): one version keeps the line as it was.
  EXPECT_THAT(CalledVersions(0, std::vector<uint64_t>{1, 5}), ElementsAre(1));
  EXPECT_THAT(SplitCallCount(0, std::vector<uint64_t>{1, 5}), ElementsAre(0, 0));
  EXPECT_THAT(SplitCallCount(7, std::vector<uint64_t>{}), IsEmpty());
  // Every count from 1 to 50 over four weights: at least 1 each where called, the sum kept.
  std::vector<uint64_t> weights{1000, 1, 0, 7};
  for (uint64_t count = 1; count <= 50; ++count) {
    std::vector<uint64_t> shares = SplitCallCount(count, weights);
    EXPECT_EQ(std::accumulate(shares.begin(), shares.end(), uint64_t{0}), count);
    std::vector<size_t> called = CalledVersions(count, weights);
    EXPECT_EQ(called.size(), std::min<uint64_t>(count, weights.size()));
    for (size_t i : called) EXPECT_GE(shares[i], 1u) << "count " << count << " version " << i;
  }
}

// Two versions at 0x1000: A's instructions at 0x1000 and 0x1004, B's at 0x1000 and 0x1006.
class FindReuseSplitTest : public ::testing::Test {
 protected:
  static SymbolIndex* AddTwo(SymbolIndex* index) {
    CodeVersionSpec v;
    v.start = 0x1000;
    v.size = 0x10;
    index->Add(v);
    index->Add(v);
    index->Finish();
    return index;
  }
  FitsFn Fits() {
    return [this](const CodeVersion& v, uint64_t addr) {
      if (addr == 0x1000) return true;
      return &v == &a_ ? addr == 0x1004 : addr == 0x1006;
    };
  }
  SymbolIndex index_;
  // Members initialize in order: the versions exist before a_ and b_ refer to them.
  const CodeVersion& a_ = AddTwo(&index_)->version(0);
  const CodeVersion& b_ = index_.version(1);
  std::vector<const CodeVersion*> both_{&a_, &b_};
};

TEST_F(FindReuseSplitTest, EachVersionWithOwnCodeGetsItsShare) {
  std::vector<uint64_t> entry{40, 4}, own_a{30, 3}, own_b{10, 1}, call{100, 10};
  std::vector<BlockLine> lines{
      {0x1000, entry, false}, {0x1004, own_a, false}, {0x1006, own_b, false}, {0x1006, call, true}};
  ReuseSplit split = FindReuseSplit(both_, lines, 2, Fits());
  ASSERT_EQ(split.versions.size(), 2u);
  EXPECT_EQ(split.versions[0], &a_);
  EXPECT_EQ(split.versions[1], &b_);
  // Entry counts: the first event at each version's lowest own address.
  EXPECT_THAT(split.entry_counts, ElementsAre(30, 10));
  // Weights: own lines whole, the shared entry 3:1, the call's inclusive cost to B.
  EXPECT_THAT(split.weights[0], ElementsAre(30 + 30, 3 + 3));
  EXPECT_THAT(split.weights[1], ElementsAre(10 + 10 + 100, 1 + 1 + 10));
  // Nothing is lost: the weights add up to every line's cost.
  EXPECT_EQ(split.weights[0][0] + split.weights[1][0], 40u + 30 + 10 + 100);

  std::vector<size_t> at;
  VersionsAt(split, 0x1000, Fits(), &at);
  EXPECT_THAT(at, ElementsAre(0, 1));
  VersionsAt(split, 0x1006, Fits(), &at);
  EXPECT_THAT(at, ElementsAre(1));
}

TEST_F(FindReuseSplitTest, OneVersionWithOwnCodeIsNoSplit) {
  std::vector<uint64_t> entry{40}, own_a{30};
  std::vector<BlockLine> lines{{0x1000, entry, false}, {0x1004, own_a, false}};
  EXPECT_TRUE(FindReuseSplit(both_, lines, 1, Fits()).empty());
  // One candidate: never split.
  EXPECT_TRUE(FindReuseSplit(std::vector<const CodeVersion*>{&a_}, lines, 1, Fits()).empty());
}

TEST_F(FindReuseSplitTest, CallSitesAloneDoNotMakeAVersionAnOwner) {
  // B has only a call site of its own: entry counts come from cost lines only.
  std::vector<uint64_t> entry{40}, own_a{30}, call{100};
  std::vector<BlockLine> lines{
      {0x1000, entry, false}, {0x1004, own_a, false}, {0x1006, call, true}};
  EXPECT_TRUE(FindReuseSplit(both_, lines, 1, Fits()).empty());
}

TEST(SynthEdgeTest, CallCountPrefersJumpsThenEntryThenLowestAddress) {
  SynthEdge e;
  SymbolIndex index;
  CodeVersionSpec spec;
  spec.start = 0x2000;
  index.Add(spec);
  const CodeVersion& v = index.version(0);
  Position p;
  e.NoteMoved(0x2010, p, 0, 7, &v, false);
  EXPECT_EQ(e.CallCount(true), 7u);  // the lowest moved address ran 7 times
  e.NoteMoved(0x2000, p, 0, 5, &v, true);
  EXPECT_EQ(e.CallCount(true), 5u);   // the entry ran 5 times
  EXPECT_EQ(e.CallCount(false), 1u);  // not Ir: no count to trust
  e.jump_count = 3;
  EXPECT_EQ(e.CallCount(true), 3u);
  EXPECT_EQ(e.moved_lines, 2);
  EXPECT_EQ(e.min_addr, 0x2000u);
  SynthEdge none;
  none.NoteMoved(0x2010, p, 0, 0, &v, false);
  EXPECT_EQ(none.CallCount(true), 1u);  // never 0
}

}  // namespace
}  // namespace cg_inject
