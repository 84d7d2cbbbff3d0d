#include "elf/valgrind_name.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

// Expected strings are as Callgrind 3.19 printed them for these ELF names.
TEST(ValgrindFunctionNameTest, DemanglesCxxNames) {
  EXPECT_EQ(ValgrindFunctionName("_ZNSt6localeD1Ev"), "std::locale::~locale()");
  EXPECT_EQ(ValgrindFunctionName("_ZNSt7codecvtIcc11__mbstate_tEC1Em"),
            "std::codecvt<char, char, __mbstate_t>::codecvt(unsigned long)");
  EXPECT_EQ(
      ValgrindFunctionName("_ZNSt9basic_iosIcSt11char_traitsIcEE4initEPSt15basic_streambufIcS1_E"),
      "std::basic_ios<char, std::char_traits<char> >::init(std::basic_streambuf<char, "
      "std::char_traits<char> >*)");
}

TEST(ValgrindFunctionNameTest, KeepsCNamesAndVersions) {
  EXPECT_EQ(ValgrindFunctionName("getpid"), "getpid");
  EXPECT_EQ(ValgrindFunctionName("memcpy@@GLIBC_2.14"), "memcpy@@GLIBC_2.14");
  EXPECT_EQ(ValgrindFunctionName("__libc_start_main@@GLIBC_2.34"), "__libc_start_main@@GLIBC_2.34");
  // Not a valid mangling: left alone.
  EXPECT_EQ(ValgrindFunctionName("_Zfoo"), "_Zfoo");
  EXPECT_EQ(ValgrindFunctionName(""), "");
}

TEST(ValgrindFunctionNameTest, BelowMain) {
  EXPECT_EQ(ValgrindFunctionName("__libc_start_call_main"), "(below main)");
  EXPECT_EQ(ValgrindFunctionName("_start"), "(below main)");
  EXPECT_EQ(ValgrindFunctionName("__libc_start_main"), "(below main)");
  EXPECT_TRUE(IsBelowMainName("generic_start_main.isra.0"));
  EXPECT_FALSE(IsBelowMainName("_start_thread"));
  EXPECT_FALSE(IsBelowMainName("main"));
}

}  // namespace
}  // namespace cg_inject
