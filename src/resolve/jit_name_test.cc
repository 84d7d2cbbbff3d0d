#include "resolve/jit_name.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

TEST(JitNameTest, ParsesCallgrindAddressNames) {
  JitName j;
  ASSERT_TRUE(ParseJitFunctionName("0x0000000004838030", &j));
  EXPECT_EQ(j.addr, 0x4838030u);
  EXPECT_EQ(j.suffix, "");
  ASSERT_TRUE(ParseJitFunctionName("0x1000'12", &j));
  EXPECT_EQ(j.addr, 0x1000u);
  EXPECT_EQ(j.suffix, "'12");
}

TEST(JitNameTest, RejectsOtherNames) {
  JitName j;
  EXPECT_FALSE(ParseJitFunctionName("main", &j));
  EXPECT_FALSE(ParseJitFunctionName("0x", &j));
  EXPECT_FALSE(ParseJitFunctionName("0x12g4", &j));
  EXPECT_FALSE(ParseJitFunctionName("0x1000'", &j));
  EXPECT_FALSE(ParseJitFunctionName("0x1000'2a", &j));
  EXPECT_FALSE(ParseJitFunctionName("0x11112222333344445", &j));  // 17 digits
  EXPECT_FALSE(ParseJitFunctionName("0x1000 [PLT]", &j));
}

TEST(JitNameTest, UnknownObject) {
  EXPECT_TRUE(IsUnknownObject("???"));
  EXPECT_TRUE(IsUnknownObject(""));
  EXPECT_FALSE(IsUnknownObject("/usr/bin/node"));
}

}  // namespace
}  // namespace cg_inject
