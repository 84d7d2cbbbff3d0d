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
  EXPECT_THAT(guard.Decide().apart, ElementsAre(body));
}

TEST(CycleGuardTest, PiecesInOneInputCycleStayMerged) {
  // A function entered at two places that reach each other through a helper, both ways: the
  // input has that cycle already, and merged it is the same cycle, renamed.
  CycleGuard guard;
  uint32_t a1 = guard.AddPiece(1, 0);
  uint32_t a2 = guard.AddPiece(1, 0x10);
  uint32_t helper = guard.AddPiece(2, 0);
  guard.AddCall(a1, helper);
  guard.AddCall(helper, a2);
  guard.AddCall(a2, helper);
  guard.AddCall(helper, a1);
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
}

// The bundled Valgrind's Node capture (tests/data/node/prof): sumTo's entry block is in one
// large cycle with V8's BaselineOutOfLinePrologue (recursion through the interpreter), which
// "calls" sumTo's body. Merged, the body joins the cycle its function was in, and nothing else
// does: no cycle the input did not have, so nothing is kept apart. The body's own callee stays
// off the cycle either way.
TEST(CycleGuardTest, ABodyJoiningItsFunctionsInputCycleStaysMerged) {
  CycleGuard guard;
  uint32_t caller = guard.AddPiece(0, 0);
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t body = guard.AddPiece(1, 0x14);
  uint32_t prologue = guard.AddPiece(2, 0);
  uint32_t interpreter = guard.AddPiece(3, 0);
  uint32_t add = guard.AddPiece(4, 0);
  guard.AddCall(caller, entry);
  guard.AddCall(entry, prologue);
  guard.AddCall(prologue, interpreter);
  guard.AddCall(interpreter, entry);
  guard.AddCall(prologue, body);
  guard.AddCall(body, add);
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
}

// Node's iterator builtins "call" next's body (a return into it); next's entry is in the
// interpreter's cycle. Merged, the builtins would join that cycle: the body stays apart.
TEST(CycleGuardTest, ABodyThatPullsOthersIntoACycleStaysApart) {
  CycleGuard guard;
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t body = guard.AddPiece(1, 0x53);
  uint32_t interpreter = guard.AddPiece(2, 0);
  uint32_t iterator_next = guard.AddPiece(3, 0);
  guard.AddCall(entry, interpreter);
  guard.AddCall(interpreter, entry);
  guard.AddCall(interpreter, iterator_next);
  guard.AddCall(iterator_next, body);
  EXPECT_THAT(guard.Decide().apart, ElementsAre(body));
}

TEST(CycleGuardTest, AnEntryBlockIsNeverKeptApart) {
  // Two versions of one function (baseline and optimized code), each entered at its start, the
  // second reached from the first through a helper: merged they make a cycle, which is counted
  // but written merged.
  CycleGuard guard;
  uint32_t baseline = guard.AddPiece(1, 0);
  uint32_t optimized = guard.AddPiece(1, 0);
  uint32_t helper = guard.AddPiece(2, 0);
  guard.AddCall(baseline, helper);
  guard.AddCall(helper, optimized);
  CycleGuard::Decision decision = guard.Decide();
  EXPECT_THAT(decision.apart, IsEmpty());
  EXPECT_EQ(decision.left_merged, 1u);
}

TEST(CycleGuardTest, CodeThatMayNotStayWithTheBlockIsMerged) {
  // A real object's code that a JIT block ran: its machine code is not in the JIT block's image.
  CycleGuard guard;
  uint32_t jit = guard.AddPiece(0, 0);
  uint32_t builtin = guard.AddPiece(1, 0);
  uint32_t builtin_in_jit = guard.AddRanPiece(1, jit, 0x20, /*can_stay=*/false);
  uint32_t helper = guard.AddPiece(2, 0);
  guard.AddCall(jit, builtin_in_jit);
  guard.AddCall(builtin, helper);
  guard.AddCall(helper, jit);
  CycleGuard::Decision decision = guard.Decide();
  EXPECT_THAT(decision.apart, IsEmpty());
  EXPECT_EQ(decision.left_merged, 1u);
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
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
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
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
}

// Bun under Valgrind 3.19: the UnlinkedCall thunk's block ran the code of the "function for
// call" thunk (a tail jump), whose calls reach the UnlinkedCall thunk again. Moved to its
// function, that code would close a cycle; the function's own block keeps the function.
TEST(CycleGuardTest, CodeRanByAnotherBlockStaysThereWhenItWouldCloseACycle) {
  CycleGuard guard;
  uint32_t unlinked = guard.AddPiece(0, 0);
  uint32_t for_call_in_unlinked = guard.AddRanPiece(1, unlinked, 0, /*can_stay=*/true);
  uint32_t for_call = guard.AddPiece(1, 0);
  uint32_t js = guard.AddPiece(2, 0);
  uint32_t callee = guard.AddPiece(3, 0);
  guard.AddCall(unlinked, for_call_in_unlinked);
  guard.AddCall(for_call_in_unlinked, callee);
  guard.AddCall(for_call, js);
  guard.AddCall(js, unlinked);
  EXPECT_THAT(guard.Decide().apart, ElementsAre(for_call_in_unlinked));
}

TEST(CycleGuardTest, ADeeperLevelInTheInputsCycleStaysMerged) {
  // f -> g -> f entered mid-function -> g: the input has the cycle g <-> f's body; merged it is
  // f <-> g, the same cycle renamed.
  CycleGuard guard;
  uint32_t f = guard.AddPiece(1, 0);
  uint32_t g = guard.AddPiece(2, 0);
  uint32_t f_deeper = guard.AddPiece(1, 0x30);
  guard.AddCall(f, g);
  guard.AddCall(g, f_deeper);
  guard.AddCall(f_deeper, g);
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
}

// The cases below are ones the guard decides without looking at every function between a
// function and its piece (see Decide): each would fail if that shortcut were wrong.

// A body whose calls reach its function's entry through a helper that the entry does not reach:
// merged, the helper would join a cycle of the function. The helper lies between the body and
// the entry (body -> helper -> entry) and in neither's cycle.
TEST(CycleGuardTest, ABodyReachingItsEntryThroughAnotherFunctionStaysApart) {
  CycleGuard guard;
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t body = guard.AddPiece(1, 0x20);
  uint32_t helper = guard.AddPiece(2, 0);
  guard.AddCall(body, helper);
  guard.AddCall(helper, entry);
  EXPECT_THAT(guard.Decide().apart, ElementsAre(body));
}

// A body in a cycle with a helper (the input's recursion body -> helper -> body) that the
// function's entry calls, the entry in a cycle of its own with another function: merged, the
// two cycles become one. What lies between the entry and the body is the body's cycle, whose
// members were the body's partners already: nothing is pulled in, the body is merged.
TEST(CycleGuardTest, ABodyWhoseOwnCycleItsEntryCallsIntoStaysMerged) {
  CycleGuard guard;
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t body = guard.AddPiece(1, 0x20);
  uint32_t partner = guard.AddPiece(2, 0);
  uint32_t helper = guard.AddPiece(3, 0);
  guard.AddCall(entry, partner);
  guard.AddCall(partner, entry);
  guard.AddCall(body, helper);
  guard.AddCall(helper, body);
  guard.AddCall(entry, helper);
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
}

// Two bodies of one function, tried in turn. The first (in a cycle with a helper the entry
// calls) is merged, which puts the helper in the function's cycle; the second is called by that
// helper only, so nothing outside the function's cycle lies between it and the entry: merged.
TEST(CycleGuardTest, ABodyCalledFromTheCycleAnEarlierBodyJoinedStaysMerged) {
  CycleGuard guard;
  uint32_t entry = guard.AddPiece(1, 0);
  uint32_t first_body = guard.AddPiece(1, 0x10);
  uint32_t second_body = guard.AddPiece(1, 0x20);
  uint32_t partner = guard.AddPiece(2, 0);
  uint32_t helper = guard.AddPiece(3, 0);
  guard.AddCall(entry, partner);
  guard.AddCall(partner, entry);
  guard.AddCall(first_body, helper);
  guard.AddCall(helper, first_body);
  guard.AddCall(entry, helper);
  guard.AddCall(helper, second_body);
  EXPECT_THAT(guard.Decide().apart, IsEmpty());
}

// A block (a function of its own) ran three pieces of code of one function. Tried with the
// others apart, the first one's code (code_c) is in one cycle with the function through the
// merged code_b (block -> code_b -> code_c, in the block while apart) and is merged; moved to
// the function, that cycle is gone: the function no longer reaches the block, which still
// reaches it. So code_a, which leads to the function's body through `other`, makes a cycle
// the input did not have: it stays with the block. So does the body, entered from `other`.
TEST(CycleGuardTest, CodeMovedToItsFunctionCanEndTheCycleOfTheBlockThatRanIt) {
  CycleGuard guard;
  uint32_t block = guard.AddPiece(CycleGuard::kAlone, 0x11);
  uint32_t code_a = guard.AddRanPiece(0, block, 0x1, /*can_stay=*/true);
  uint32_t code_b = guard.AddRanPiece(0, block, 0, /*can_stay=*/true);
  uint32_t code_c = guard.AddRanPiece(0, block, 0, /*can_stay=*/true);
  uint32_t entry = guard.AddPiece(0, 0);
  uint32_t other = guard.AddPiece(1, 0x21);
  uint32_t body = guard.AddPiece(0, 0x1);
  guard.AddCall(block, code_a);
  guard.AddCall(block, code_b);
  guard.AddCall(block, code_c);
  guard.AddCall(code_a, other);
  guard.AddCall(code_b, code_c);
  guard.AddCall(code_c, other);
  guard.AddCall(entry, other);
  guard.AddCall(other, body);
  EXPECT_THAT(guard.Decide().apart, ElementsAre(code_a, body));
}

}  // namespace
}  // namespace cg_inject
