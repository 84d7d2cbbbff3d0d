#include "rewrite/position_columns.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

PositionLayout Layout(std::initializer_list<PositionKind> kinds) {
  PositionLayout layout;
  layout.count = 0;
  for (PositionKind kind : kinds) layout.kinds[layout.count++] = kind;
  return layout;
}

Position Pos(uint64_t a, uint64_t b = 0, uint64_t c = 0) { return Position{{a, b, c}}; }

TEST(PositionColumnsTest, InstrWithoutLineGainsALineColumnAtTheEnd) {
  PositionColumns columns;
  columns.Set(Layout({PositionKind::kInstr}), /*may_add_line=*/true);
  EXPECT_TRUE(columns.has_instr());
  EXPECT_TRUE(columns.adds_line());
  EXPECT_EQ(columns.out_layout(), Layout({PositionKind::kInstr, PositionKind::kLine}));
  // A stale value in the new column (positions are copied whole) does not leak out.
  EXPECT_EQ(columns.Plain(Pos(0x1000, 77)), Pos(0x1000, 0));
  EXPECT_EQ(columns.WithLine(Pos(0x1000), 12), Pos(0x1000, 12));
  EXPECT_EQ(columns.Instr(Pos(0x1000, 12)), 0x1000u);
}

TEST(PositionColumnsTest, NoLineAddedWithoutSourcesOrWithoutRoom) {
  PositionColumns columns;
  columns.Set(Layout({PositionKind::kInstr}), /*may_add_line=*/false);
  EXPECT_FALSE(columns.adds_line());
  EXPECT_EQ(columns.out_layout(), Layout({PositionKind::kInstr}));
  EXPECT_EQ(columns.WithLine(Pos(0x1000), 12), Pos(0x1000));  // no line column to set

  PositionLayout full = Layout({PositionKind::kBb, PositionKind::kOther, PositionKind::kInstr});
  columns.Set(full, /*may_add_line=*/true);
  EXPECT_FALSE(columns.adds_line());
  EXPECT_EQ(columns.out_layout(), full);
  EXPECT_EQ(columns.Instr(Pos(1, 2, 3)), 3u);
}

TEST(PositionColumnsTest, AnExistingLineColumnIsSetWhereItIs) {
  PositionColumns columns;
  columns.Set(Layout({PositionKind::kLine, PositionKind::kInstr}), /*may_add_line=*/true);
  EXPECT_FALSE(columns.adds_line());
  EXPECT_EQ(columns.Plain(Pos(5, 0x2000)), Pos(5, 0x2000));
  EXPECT_EQ(columns.WithLine(Pos(5, 0x2000), 9), Pos(9, 0x2000));
  Position out = Pos(5, 0x2000);
  columns.SetInstr(&out, 0x2004);
  columns.SetLine(&out, 10);
  EXPECT_EQ(out, Pos(10, 0x2004));
}

TEST(PositionColumnsTest, LineOnlyLayoutHasNoInstrAndResetForgetsTheLast) {
  PositionColumns columns;
  columns.Set(Layout({PositionKind::kLine}), /*may_add_line=*/true);
  EXPECT_FALSE(columns.has_instr());
  Position out = Pos(5);
  columns.SetInstr(&out, 0x2004);  // no instr column: unchanged
  EXPECT_EQ(out, Pos(5));

  columns.Set(Layout({PositionKind::kInstr}), /*may_add_line=*/true);
  columns.Reset();
  EXPECT_FALSE(columns.has_instr());
  EXPECT_FALSE(columns.adds_line());
  EXPECT_EQ(columns.out_layout(), PositionLayout{});
}

}  // namespace
}  // namespace cg_inject
