#include "rewrite/cycle_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cg_inject
