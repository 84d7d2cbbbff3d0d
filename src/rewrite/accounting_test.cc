#include "rewrite/accounting.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cg_inject/error.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

TEST(CostAccountingTest, InclusiveIsSelfPlusCallsAcrossRepeatedBlocks) {
  CostAccounting acc;
  acc.Reset(2);
  FunctionKey main{1, 2, 3}, f{1, 2, 4};
  acc.Function(main);
  acc.Cost(std::vector<uint64_t>{5, 1});
  acc.Call(f, std::vector<uint64_t>{10, 2});
  acc.Function(f);
  acc.Cost(std::vector<uint64_t>{10, 2});
  acc.Function(main);  // a second block of main adds up
  acc.Cost(std::vector<uint64_t>{1, 0});
  EXPECT_THAT(acc.Inclusive(main), ElementsAre(16, 3));
  EXPECT_THAT(acc.Inclusive(f), ElementsAre(10, 2));
  EXPECT_THAT(acc.totals(), ElementsAre(16, 3));
  ASSERT_NE(acc.Find(f), nullptr);
  EXPECT_TRUE(acc.Find(f)->called && acc.Find(f)->defined);
  EXPECT_THAT(acc.Inclusive(FunctionKey{9, 9, 9}), ElementsAre(0, 0));
}

// FindViolations tells a target that had no block in the input (no block is owed) by these flags.
TEST(CostAccountingTest, TargetsWithoutBlocksAreCalledButNotDefined) {
  CostAccounting acc;
  acc.Reset(1);
  acc.Function(FunctionKey{1, 1, 1});
  acc.Call(FunctionKey{1, 1, 2}, std::vector<uint64_t>{4});
  const CostAccounting::Entry* target = acc.Find(FunctionKey{1, 1, 2});
  ASSERT_NE(target, nullptr);
  EXPECT_TRUE(target->called);
  EXPECT_FALSE(target->defined);
  EXPECT_FALSE(acc.Find(FunctionKey{1, 1, 1})->called);
  // Records before any block are not counted (the injector counts both sides the same way).
  CostAccounting empty;
  empty.Reset(1);
  empty.Cost(std::vector<uint64_t>{7});
  EXPECT_THAT(empty.totals(), ElementsAre(0));
}

// A renamed JIT function's block: its costs count in the totals, it gets no entry (and no
// sums), and a call to it made earlier keeps it from being a missing target.
TEST(CostAccountingTest, TotalsOnlyBlocksCountInTotalsWithoutAnEntry) {
  CostAccounting acc;
  acc.Reset(1);
  FunctionKey main{1, 1, 1}, jit{2, 2, 2}, called_jit{2, 2, 3};
  acc.Function(main);
  acc.Call(called_jit, std::vector<uint64_t>{3});
  acc.TotalsOnly(jit);
  acc.Cost(std::vector<uint64_t>{5});
  acc.CallCost(std::vector<uint64_t>{9});  // no sums to add it to
  acc.TotalsOnly(called_jit);
  acc.Cost(std::vector<uint64_t>{3});
  EXPECT_THAT(acc.totals(), ElementsAre(8));
  EXPECT_EQ(acc.Find(jit), nullptr);
  EXPECT_EQ(acc.functions().size(), 2u);  // main and the call target
  ASSERT_NE(acc.Find(called_jit), nullptr);
  EXPECT_TRUE(acc.Find(called_jit)->defined);  // its block came after the call
  EXPECT_FALSE(acc.HasSums(called_jit));
  EXPECT_THAT(acc.Inclusive(main), ElementsAre(3));
}

TEST(CostAccountingTest, SumsPast64BitsThrowInsteadOfWrapping) {
  constexpr uint64_t kMax = UINT64_MAX;
  const std::string kMessage =
      "expected cost sums below 2^64, got an overflow adding up the merged pieces of one "
      "function (the profile's costs are too large to merge)";
  FunctionKey f{1, 1, 1}, g{1, 1, 2};
  CostAccounting self;
  self.Reset(1);
  self.Function(f);
  self.Cost(std::vector<uint64_t>{kMax});
  self.Function(g);  // the part total wraps although each function does not
  try {
    self.Cost(std::vector<uint64_t>{1});
    ADD_FAILURE() << "no overflow";
  } catch (const InputError& e) {
    EXPECT_EQ(e.what(), kMessage);
  }
  CostAccounting calls;
  calls.Reset(1);
  calls.Function(f);
  calls.Call(g, std::vector<uint64_t>{kMax});
  EXPECT_THROW(calls.Call(g, std::vector<uint64_t>{1}), InputError);
  CostAccounting inclusive;  // self and calls each fit, their sum does not
  inclusive.Reset(1);
  inclusive.Function(f);
  inclusive.Cost(std::vector<uint64_t>{1});
  inclusive.Call(g, std::vector<uint64_t>{kMax});
  EXPECT_THROW(inclusive.Inclusive(f), InputError);
}

// A function started without sums counts in the totals only; a call target gets sums with its
// first block, not before.
TEST(CostAccountingTest, FunctionsWithoutSumsCountInTotalsOnly) {
  FunctionKey f{1, 1, 1}, g{1, 1, 2};
  CostAccounting acc;
  acc.Reset(2);
  acc.Function(f, /*sums=*/false);
  acc.Cost(std::vector<uint64_t>{4, 1});
  acc.Call(g, std::vector<uint64_t>{7, 2});
  EXPECT_FALSE(acc.HasSums(f));
  EXPECT_FALSE(acc.HasSums(g));  // a target, no block yet
  EXPECT_THAT(acc.Self(*acc.Find(f)), ElementsAre(0, 0));
  EXPECT_THAT(acc.Inclusive(f), ElementsAre(0, 0));
  EXPECT_THAT(acc.totals(), ElementsAre(4, 1));
  acc.Function(g);
  acc.Cost(std::vector<uint64_t>{3, 3});
  EXPECT_TRUE(acc.HasSums(g));
  EXPECT_THAT(acc.Self(*acc.Find(g)), ElementsAre(3, 3));
  EXPECT_THAT(acc.totals(), ElementsAre(7, 4));
}

// main calls f and g. The injector took main's call to f (a JIT target) and all of f's block
// out of the stream; what it wrote instead decides which invariants hold.
class FindViolationsTest : public ::testing::Test {
 protected:
  FindViolationsTest() {
    for (CostAccounting* acc : {&in_, &removed_, &added_}) acc->Reset(1);
    in_.Function(main_);
    in_.Cost(std::vector<uint64_t>{5});
    in_.Call(f_, std::vector<uint64_t>{10});
    in_.Call(g_, std::vector<uint64_t>{3}).pass_called = true;
    in_.current()->out_defined = true;  // main's block passed through
    in_.Function(f_);
    in_.Cost(std::vector<uint64_t>{10});
    in_.Function(g_);
    in_.Cost(std::vector<uint64_t>{3});
    in_.current()->out_defined = true;
    removed_.Function(main_);
    removed_.Call(f_, std::vector<uint64_t>{10});
    removed_.Function(f_);
    removed_.Cost(std::vector<uint64_t>{10});
  }
  // Writes main's call to `target` and `target`'s block with `self`.
  void WriteRenamed(const FunctionKey& target, uint64_t incl, uint64_t self, bool block = true) {
    added_.Function(main_);
    added_.Call(target, std::vector<uint64_t>{incl});
    in_.At(target).added_called = true;
    in_.At(main_).out_defined = true;
    if (!block) return;
    added_.Function(target);
    added_.Cost(std::vector<uint64_t>{self});
    in_.At(target).out_defined = true;
  }
  std::vector<std::string> Find() {
    auto exempt = [&](const FunctionKey& k) { return k == f_; };  // f is JIT code: renamed
    auto name = [](const FunctionKey& k) { return "fn" + std::to_string(k.function); };
    return FindViolations(in_, removed_, added_, exempt, name);
  }
  FunctionKey main_{1, 1, 1}, f_{2, 2, 2}, g_{1, 1, 3}, named_{3, 3, 4};
  CostAccounting in_, removed_, added_;
};

TEST_F(FindViolationsTest, FaithfulRewriteHasNone) {
  WriteRenamed(named_, 10, 10);
  EXPECT_THAT(Find(), ::testing::IsEmpty());
}

TEST_F(FindViolationsTest, LostSelfCostChangesTotals) {
  WriteRenamed(named_, 10, 9);
  EXPECT_THAT(Find(), ElementsAre("per-event totals changed: 18 -> 17"));
}

TEST_F(FindViolationsTest, LostCallCostChangesInclusive) {
  WriteRenamed(named_, 7, 10);
  EXPECT_THAT(Find(), ElementsAre("inclusive cost of fn1 changed: 18 -> 15"));
}

TEST_F(FindViolationsTest, WrittenTargetWithoutBlock) {
  WriteRenamed(named_, 10, 10, /*block=*/false);
  added_.Function(named_);  // keep the totals: the cost went to a block nobody defines
  added_.Cost(std::vector<uint64_t>{10});
  EXPECT_THAT(Find(), ElementsAre("call target fn4 has no function block"));
}

TEST_F(FindViolationsTest, PassedCallToDroppedBlock) {
  WriteRenamed(named_, 10, 10);
  in_.At(g_).out_defined = false;  // g's block never reached the output
  EXPECT_THAT(Find(), ElementsAre("call target fn3 has no function block"));
  // A target the input never defined either is no violation.
  in_.At(g_).defined = false;
  EXPECT_THAT(Find(), ::testing::IsEmpty());
}

// Without the input's own sum of a function, a changed inclusive cost still reports what moved.
TEST(FindViolationsWithoutSumsTest, SaysWhatMoved) {
  FunctionKey main{1, 1, 1}, f{2, 2, 2};
  CostAccounting in, removed, added;
  for (CostAccounting* acc : {&in, &removed, &added}) acc->Reset(1);
  in.Function(main, /*sums=*/false);
  in.Call(f, std::vector<uint64_t>{10});
  in.Function(f, /*sums=*/false);
  in.Cost(std::vector<uint64_t>{10});
  removed.Function(main);
  removed.Call(f, std::vector<uint64_t>{10});
  added.Function(main);
  added.Call(f, std::vector<uint64_t>{8});
  auto exempt = [&](const FunctionKey& k) { return k == f; };
  auto name = [](const FunctionKey& k) { return "fn" + std::to_string(k.function); };
  EXPECT_THAT(FindViolations(in, removed, added, exempt, name),
              ElementsAre("inclusive cost of fn1 changed: 10 taken out, 8 written instead"));
}

}  // namespace
}  // namespace cg_inject
