#include "sources/elixir_name.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(ElixirNameTest, AtomValue) {
  EXPECT_EQ(AtomValue("run"), "run");
  EXPECT_EQ(AtomValue("'Elixir.Shop.Main'"), "Elixir.Shop.Main");
  EXPECT_EQ(AtomValue("'it\\'s'"), "it's");
  EXPECT_EQ(AtomValue("'a\\\\b'"), "a\\b");
  EXPECT_EQ(AtomValue("'"), "'");
}

TEST(ElixirNameTest, Alias) {
  EXPECT_EQ(ElixirAlias("Elixir.Shop.Main"), "Shop.Main");
  EXPECT_EQ(ElixirAlias("Elixir.Enum"), "Enum");
  EXPECT_EQ(ElixirAlias("Elixir.HTTP2.Frame_V1"), "HTTP2.Frame_V1");
  // Not aliases: Erlang's modules and atoms that only look a bit like one.
  EXPECT_EQ(ElixirAlias("lists"), "");
  EXPECT_EQ(ElixirAlias("Elixir"), "");
  EXPECT_EQ(ElixirAlias("Elixir."), "");
  EXPECT_EQ(ElixirAlias("Elixir.foo"), "");
  EXPECT_EQ(ElixirAlias("Elixir.Shop..Main"), "");
  EXPECT_EQ(ElixirAlias("Elixir.Shop.Main."), "");
  EXPECT_EQ(ElixirAlias("Elixir.Shop-Main"), "");
}

TEST(ElixirNameTest, FunctionNames) {
  // Names from the perf map of an Elixir 1.14 script under OTP 25 (tests/data/elixir).
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "run", "1"), "Shop.Main.run/1");
  EXPECT_EQ(ElixirFunctionName("Shop.Item", "__struct__", "1"), "Shop.Item.__struct__/1");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "-build/1-fun-0-", "2"),
            "anonymous fn/2 in Shop.Main.build/1");
  EXPECT_EQ(ElixirFunctionName("Shop.Item", "-__struct__/1-inlined-0-", "2"),
            "anonymous fn/2 in Shop.Item.__struct__/1");
  EXPECT_EQ(ElixirFunctionName("Shop.Item", "-inlined-__info__/1-", "1"),
            "Shop.Item.\"-inlined-__info__/1-\"/1");
  // Made up in the shapes Elixir writes.
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "-build/1-fun-2-", "1"),
            "anonymous fn/1 in Shop.Main.build/1 #2");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "-valid?/1-fun-0-", "1"),
            "anonymous fn/1 in Shop.Main.valid?/1");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "-MACRO-def/2-fun-0-", "1"),
            "anonymous fn/1 in Shop.Main.\"MACRO-def\"/2");
  EXPECT_EQ(ElixirFunctionName("Kernel", "+", "2"), "Kernel.+/2");
  EXPECT_EQ(ElixirFunctionName("Kernel", "..//", "3"), "Kernel...///3");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "valid?", "1"), "Shop.Main.valid?/1");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "save!", "1"), "Shop.Main.save!/1");
  EXPECT_EQ(ElixirFunctionName("Kernel", "MACRO-def", "2"), "Kernel.\"MACRO-def\"/2");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "Run", "0"), "Shop.Main.\"Run\"/0");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "say \"hi\"", "0"), "Shop.Main.\"say \\\"hi\\\"\"/0");
  EXPECT_EQ(ElixirFunctionName("Shop.Main", "a?b", "0"), "Shop.Main.\"a?b\"/0");
  // Near misses of the anonymous shape stay names.
  EXPECT_EQ(ElixirFunctionName("M", "-x-", "0"), "M.\"-x-\"/0");
  EXPECT_EQ(ElixirFunctionName("M", "-f/1-fun-x-", "0"), "M.\"-f/1-fun-x-\"/0");
  EXPECT_EQ(ElixirFunctionName("M", "-/1-fun-0-", "0"), "M.\"-/1-fun-0-\"/0");
}

}  // namespace
}  // namespace cg_inject
