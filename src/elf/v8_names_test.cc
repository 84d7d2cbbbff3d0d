#include "elf/v8_names.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

// Pairs seen in a Node 20.20.2 perf map and /usr/bin/node's .symtab (same address and size).
TEST(V8BuiltinElfNameTest, Builtins) {
  EXPECT_EQ(V8BuiltinElfName("Builtin:CallWithArrayLike"), "Builtins_CallWithArrayLike");
  EXPECT_EQ(V8BuiltinElfName("Builtin:DeoptimizationEntry_Eager"),
            "Builtins_DeoptimizationEntry_Eager");
}

TEST(V8BuiltinElfNameTest, BytecodeHandlersWithOperandScales) {
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Ldar"), "Builtins_LdarHandler");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:LdaZero"), "Builtins_LdaZeroHandler");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Ldar.Wide"), "Builtins_LdarWideHandler");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Ldar.ExtraWide"), "Builtins_LdarExtraWideHandler");
  // The prefix bytecodes themselves.
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Wide"), "Builtins_WideHandler");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:DebugBreak1.Wide"),
            "Builtins_DebugBreak1WideHandler");
}

TEST(V8BuiltinElfNameTest, ShortStarSharesOneHandler) {
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Star0"), "Builtins_ShortStarHandler");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Star15"), "Builtins_ShortStarHandler");
  // Star (with a register operand) is an ordinary bytecode.
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Star"), "Builtins_StarHandler");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Star.Wide"), "Builtins_StarWideHandler");
}

TEST(V8BuiltinElfNameTest, OtherNamesAreNotBuiltins) {
  EXPECT_EQ(V8BuiltinElfName("JS:~prepareMainThreadExecution node:internal/x:52:36"), "");
  EXPECT_EQ(V8BuiltinElfName("Eval:~ node:internal/main/eval_string:1:1"), "");
  EXPECT_EQ(V8BuiltinElfName("Builtins_CallWithArrayLike"), "");
  EXPECT_EQ(V8BuiltinElfName("Builtin:"), "");
  EXPECT_EQ(V8BuiltinElfName("Builtin:Call With"), "");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:"), "");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:Ldar.Quad"), "");
  EXPECT_EQ(V8BuiltinElfName("BytecodeHandler:.Wide"), "");
  EXPECT_EQ(V8BuiltinElfName(""), "");
}

}  // namespace
}  // namespace cg_inject
