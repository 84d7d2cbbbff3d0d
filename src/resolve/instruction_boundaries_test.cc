#include "resolve/instruction_boundaries.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

TEST(InstructionBoundariesTest, X86) {
  // push rbp (1) ; mov rbp,rsp (3) ; ret (1)  -> starts at 0, 1, 4
  EXPECT_THAT(DecodeInstructionStarts(std::string("\x55\x48\x89\xe5\xc3", 5), CodeArch::kX86_64),
              ElementsAre(1, 1, 0, 0, 1));
}

TEST(InstructionBoundariesTest, X86CallsAreFlagged) {
  // call rel32 (5) ; mov eax,1 (5) ; call rax (2) ; ret (1)
  constexpr uint8_t kCall = kInstructionStart | kCallInstruction;
  EXPECT_THAT(DecodeInstructionStarts(
                  std::string("\xe8\x00\x00\x00\x00\xb8\x01\x00\x00\x00\xff\xd0\xc3", 13),
                  CodeArch::kX86_64),
              ElementsAre(kCall, 0, 0, 0, 0, 1, 0, 0, 0, 0, kCall, 0, 1));
}

TEST(InstructionBoundariesTest, X86ResyncsAfterUndecodableBytes) {
  // mov rbp,rsp then 0x06 (push es, invalid in 64-bit mode): the byte is stepped over and the
  // sweep goes on with the nops after it.
  EXPECT_THAT(
      DecodeInstructionStarts(std::string("\x48\x89\xe5\x06\x90\x90", 6), CodeArch::kX86_64),
      ElementsAre(1, 0, 0, 1, 1, 1));
}

TEST(InstructionBoundariesTest, X86InstructionCutOffAtTheEnd) {
  // nop, then the first two bytes of a 5-byte mov eax,imm32: each leftover byte is undecodable.
  EXPECT_THAT(DecodeInstructionStarts(std::string("\x90\xb8\x01", 3), CodeArch::kX86_64),
              ElementsAre(1, 1, 1));
}

TEST(InstructionBoundariesTest, AArch64) {
  // ret ; nop ; a data word (literal pool): still a 4-byte slot on the instruction grid
  std::string code("\xc0\x03\x5f\xd6\x1f\x20\x03\xd5\xff\xff\xff\xff", 12);
  EXPECT_THAT(DecodeInstructionStarts(code, CodeArch::kAArch64),
              ElementsAre(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0));
  EXPECT_THAT(DecodeInstructionStarts(code.substr(0, 6), CodeArch::kAArch64),
              ElementsAre(1, 0, 0, 0, 1, 0));
}

TEST(InstructionBoundariesTest, AArch64CallsAreFlagged) {
  // bl #8 ; blr x1 ; b #8 ; ret
  constexpr uint8_t kCall = kInstructionStart | kCallInstruction;
  std::string code("\x02\x00\x00\x94\x20\x00\x3f\xd6\x02\x00\x00\x14\xc0\x03\x5f\xd6", 16);
  EXPECT_THAT(DecodeInstructionStarts(code, CodeArch::kAArch64),
              ElementsAre(kCall, 0, 0, 0, kCall, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0));
}

TEST(InstructionBoundariesTest, UnknownArchContradictsNothing) {
  EXPECT_THAT(DecodeInstructionStarts(std::string("\x48\x89\xe5", 3), CodeArch::kUnknown),
              ElementsAre(1, 1, 1));
  EXPECT_TRUE(DecodeInstructionStarts("", CodeArch::kX86_64).empty());
}

TEST(InstructionBoundariesTest, ElfMachines) {
  EXPECT_EQ(CodeArchOfElfMachine(62), CodeArch::kX86_64);
  EXPECT_EQ(CodeArchOfElfMachine(183), CodeArch::kAArch64);
  EXPECT_EQ(CodeArchOfElfMachine(0), CodeArch::kUnknown);
  EXPECT_EQ(CodeArchOfElfMachine(3), CodeArch::kUnknown);  // i386: not decoded
}

}  // namespace
}  // namespace cg_inject
