#include "rewrite/cycle_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace cg_inject {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Deno under Valgrind 3.19: words' baseline code calls the builtin BaselineOutOfLinePrologue,
// which jumps back into words' body; Callgrind wrote that as a call into a block of the body.
// Merged, words -> builtin -> words would be a cycle the input did not have.
TEST(CycleGuardTest, ABodyEnteredFromACalleeStaysApart) {
  CycleGuard guard;
  uint32_t caller = guard.AddPiece(0, 0);
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t body = guard.AddPiece(1, 0x14);
  uint32_t builtin = guard.AddPiece(2, 0);
  guard.AddCall(caller, entry);
  guard.AddCall(entry, builtin);
  guard.AddCall(builtin, body);
  EXPECT_THAT(guard.PiecesToKeepApart(), ElementsAre(body));
}

TEST(CycleGuardTest, PiecesThatReachEachOtherStayApartToo) {
  // A function entered at two places that reach each other through a helper, both ways: the
  // input has a cycle, but each piece's cost is inside the other's calls; the entry keeps the
  // function.
  CycleGuard guard;
  uint32_t a1 = guard.AddPiece(1, 0);
  uint32_t a2 = guard.AddPiece(1, 0x10);
  uint32_t helper = guard.AddPiece(2, 0);
  guard.AddCall(a1, helper);
  guard.AddCall(helper, a2);
  guard.AddCall(a2, helper);
  guard.AddCall(helper, a1);
  EXPECT_THAT(guard.PiecesToKeepApart(), ElementsAre(a2));
}

TEST(CycleGuardTest, APieceCallingItselfThroughOthersIsTheInputsRecursion) {
  // One piece re-entered through another function (Callgrind's f'2 -> g -> f'2): no other piece.
  CycleGuard guard;
  uint32_t f = guard.AddPiece(1, 0);
  uint32_t f_body = guard.AddPiece(1, 0x20);
  uint32_t g = guard.AddPiece(2, 0);
  guard.AddCall(f, g);
  guard.AddCall(g, f);
  guard.AddCall(f_body, f);  // a jump back to the entry: internal, not through another function
  EXPECT_THAT(guard.PiecesToKeepApart(), IsEmpty());
}

TEST(CycleGuardTest, PiecesOffEveryCycleStayMerged) {
  // Two entries of one function called from unrelated places (--instr-atstart=no rebuilds a
  // frame at its return address): no cycle, nothing to keep apart.
  CycleGuard guard;
  uint32_t main_fn = guard.AddPiece(0, 0);
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t middle = guard.AddPiece(1, 0x10);
  uint32_t leaf = guard.AddPiece(2, 0);
  guard.AddCall(main_fn, entry);
  guard.AddCall(main_fn, middle);
  guard.AddCall(entry, leaf);
  guard.AddCall(middle, leaf);
  EXPECT_THAT(guard.PiecesToKeepApart(), IsEmpty());
}

// Bun under Valgrind 3.19: the UnlinkedCall thunk's block ran the code of the "function for
// call" thunk (a tail jump), whose calls reach the UnlinkedCall thunk again. Moved to its
// function, that code would close a cycle; the function's own block keeps the function.
TEST(CycleGuardTest, CodeRanByAnotherBlockStaysThereWhenItWouldCloseACycle) {
  CycleGuard guard;
  uint32_t unlinked = guard.AddPiece(0, 0);
  uint32_t for_call_in_unlinked = guard.AddPiece(1, 0, /*ran_by_other=*/true);
  uint32_t for_call = guard.AddPiece(1, 0);
  uint32_t js = guard.AddPiece(2, 0);
  uint32_t callee = guard.AddPiece(3, 0);
  guard.AddCall(unlinked, for_call_in_unlinked);
  guard.AddCall(for_call_in_unlinked, callee);
  guard.AddCall(for_call, js);
  guard.AddCall(js, unlinked);
  EXPECT_THAT(guard.PiecesToKeepApart(), ElementsAre(for_call_in_unlinked));
}

TEST(CycleGuardTest, ADeeperLevelEnteredElsewhereStaysApart) {
  // f -> g -> f entered mid-function -> g: the second f is a deeper level that Callgrind did not
  // name f'2; merged, its cost would count twice in f's inclusive cost.
  CycleGuard guard;
  uint32_t f = guard.AddPiece(1, 0);
  uint32_t g = guard.AddPiece(2, 0);
  uint32_t f_deeper = guard.AddPiece(1, 0x30);
  guard.AddCall(f, g);
  guard.AddCall(g, f_deeper);
  guard.AddCall(f_deeper, g);
  EXPECT_THAT(guard.PiecesToKeepApart(), ElementsAre(f_deeper));
}

// The definition, one search per function as the first version did it: a piece is apart when a
// path that leaves its function's pieces reaches it, and it is not the one nearest the entry.
std::vector<uint32_t> SearchPerFunction(const std::vector<uint32_t>& output,
                                        const std::vector<uint64_t>& offset,
                                        const std::vector<bool>& ran_by_other,
                                        const std::vector<std::pair<uint32_t, uint32_t>>& calls) {
  std::vector<uint32_t> apart;
  for (uint32_t fn = 0; fn < 8; ++fn) {
    std::vector<uint32_t> pieces;
    for (uint32_t p = 0; p < output.size(); ++p)
      if (output[p] == fn) pieces.push_back(p);
    if (pieces.size() < 2) continue;
    std::vector<bool> seen(output.size(), false);
    std::vector<uint32_t> stack;
    for (auto [from, to] : calls)
      if (output[from] == fn && output[to] != fn && !seen[to]) seen[to] = true, stack.push_back(to);
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      for (auto [from, to] : calls)
        if (from == v && !seen[to]) seen[to] = true, stack.push_back(to);
    }
    uint32_t main_piece = pieces[0];
    for (uint32_t p : pieces)
      if (std::make_pair(bool(ran_by_other[p]), offset[p]) <
          std::make_pair(bool(ran_by_other[main_piece]), offset[main_piece]))
        main_piece = p;
    for (uint32_t p : pieces)
      if (p != main_piece && seen[p]) apart.push_back(p);
  }
  std::sort(apart.begin(), apart.end());
  return apart;
}

// The components and their DAG give what a search per function gives, on random graphs with
// cycles, self-calls, pieces of their own (kAlone) and pieces ran by other functions' blocks.
TEST(CycleGuardTest, AgreesWithASearchPerFunctionOnRandomGraphs) {
  std::mt19937 random(35);
  for (int round = 0; round < 2000; ++round) {
    const uint32_t n = 1 + random() % 24;
    std::vector<uint32_t> output(n);
    std::vector<uint64_t> offset(n);
    std::vector<bool> ran_by_other(n);
    CycleGuard guard;
    for (uint32_t p = 0; p < n; ++p) {
      output[p] = random() % 9 == 8 ? CycleGuard::kAlone : random() % 8;
      offset[p] = random() % 3 * 0x10;
      ran_by_other[p] = random() % 4 == 0;
      ASSERT_EQ(guard.AddPiece(output[p], offset[p], ran_by_other[p]), p);
    }
    std::vector<std::pair<uint32_t, uint32_t>> calls;
    const uint32_t edges = random() % (3 * n);
    for (uint32_t e = 0; e < edges; ++e) {
      calls.push_back({uint32_t(random() % n), uint32_t(random() % n)});
      guard.AddCall(calls.back().first, calls.back().second);
    }
    ASSERT_EQ(guard.PiecesToKeepApart(), SearchPerFunction(output, offset, ran_by_other, calls))
        << "round " << round;
  }
}

// More functions than one word of bits, over a long chain of components: each function's second
// piece is reached only through the chain from its first piece's call.
TEST(CycleGuardTest, ManyFunctionsAlongAChain) {
  CycleGuard guard;
  constexpr uint32_t kFunctions = 300;
  std::vector<uint32_t> second(kFunctions);
  std::vector<uint32_t> chain;
  for (uint32_t i = 0; i < 2 * kFunctions; ++i)
    chain.push_back(guard.AddPiece(CycleGuard::kAlone, 0));
  for (uint32_t i = 0; i + 1 < chain.size(); ++i) guard.AddCall(chain[i], chain[i + 1]);
  std::vector<uint32_t> expected;
  for (uint32_t f = 0; f < kFunctions; ++f) {
    uint32_t entry = guard.AddPiece(1000 + f, 0);
    second[f] = guard.AddPiece(1000 + f, 0x10);
    // Function f calls into the chain at 2f and its second piece is called from link 2f+1 when
    // f is even (reached), from before its entry point into the chain when odd (not reached).
    guard.AddCall(entry, chain[2 * f]);
    if (f % 2 == 0) {
      guard.AddCall(chain[2 * f + 1], second[f]);
      expected.push_back(second[f]);
    } else if (f > 0) {
      guard.AddCall(chain[2 * f - 1], second[f]);
    }
  }
  EXPECT_EQ(guard.PiecesToKeepApart(), expected);
}

}  // namespace
}  // namespace cg_inject
