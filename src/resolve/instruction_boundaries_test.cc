#include "resolve/instruction_boundaries.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

TEST(InstructionBoundariesTest, X86) {
  // push rbp (1) ; mov rbp,rsp (3) ; ret (1)  -> starts at 0, 1, 4; the ret transfers control
  EXPECT_THAT(DecodeInstructionStarts(std::string("\x55\x48\x89\xe5\xc3", 5), CodeArch::kX86_64),
              ElementsAre(1, 1, 0, 0, kInstructionStart | kControlTransfer));
}

TEST(InstructionBoundariesTest, X86CallsAreFlagged) {
  // call rel32 (5) ; mov eax,1 (5) ; call rax (2) ; nop (1)
  constexpr uint8_t kTransfer = kInstructionStart | kControlTransfer;
  EXPECT_THAT(DecodeInstructionStarts(
                  std::string("\xe8\x00\x00\x00\x00\xb8\x01\x00\x00\x00\xff\xd0\x90", 13),
                  CodeArch::kX86_64),
              ElementsAre(kTransfer, 0, 0, 0, 0, 1, 0, 0, 0, 0, kTransfer, 0, 1));
}

// Callgrind makes a call of a jump into another function and of a return into code that is not
// the caller's (issue 23 item 8), so every instruction that leaves the block is flagged; the
// instructions around each one are not.
struct X86Transfer {
  const char* name;
  std::string bytes;
};

class X86TransferTest : public testing::TestWithParam<X86Transfer> {};

TEST_P(X86TransferTest, IsFlaggedAndItsNeighboursAreNot) {
  // mov eax,1 (5) ; the instruction ; mov ecx,2 (5)
  const std::string before("\xb8\x01\x00\x00\x00", 5), after("\xb9\x02\x00\x00\x00", 5);
  const std::string& insn = GetParam().bytes;
  std::vector<uint8_t> starts = DecodeInstructionStarts(before + insn + after, CodeArch::kX86_64);
  ASSERT_EQ(starts.size(), before.size() + insn.size() + after.size());
  std::vector<uint8_t> expected(starts.size(), 0);
  expected[0] = kInstructionStart;
  expected[before.size()] = kInstructionStart | kControlTransfer;
  expected[before.size() + insn.size()] = kInstructionStart;
  EXPECT_EQ(starts, expected) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, X86TransferTest,
    testing::Values(X86Transfer{"call_rel32", std::string("\xe8\x10\x00\x00\x00", 5)},
                    X86Transfer{"call_rax", std::string("\xff\xd0", 2)},
                    X86Transfer{"call_mem_rip", std::string("\xff\x15\x10\x00\x00\x00", 6)},
                    X86Transfer{"jmp_rel8", std::string("\xeb\x10", 2)},
                    X86Transfer{"jmp_rel32", std::string("\xe9\x10\x00\x00\x00", 5)},
                    X86Transfer{"jmp_rax", std::string("\xff\xe0", 2)},
                    X86Transfer{"jmp_mem_rip", std::string("\xff\x25\x10\x00\x00\x00", 6)},
                    X86Transfer{"bnd_jmp_mem_rip", std::string("\xf2\xff\x25\x10\x00\x00\x00", 7)},
                    X86Transfer{"jne_rel8", std::string("\x75\x10", 2)},
                    X86Transfer{"je_rel32", std::string("\x0f\x84\x10\x00\x00\x00", 6)},
                    X86Transfer{"jl_rel32", std::string("\x0f\x8c\x10\x00\x00\x00", 6)},
                    X86Transfer{"jrcxz", std::string("\xe3\x10", 2)},
                    X86Transfer{"loop", std::string("\xe2\x10", 2)},
                    X86Transfer{"ret", std::string("\xc3", 1)},
                    X86Transfer{"ret_imm16", std::string("\xc2\x08\x00", 3)},
                    X86Transfer{"rep_ret", std::string("\xf3\xc3", 2)}),
    [](const testing::TestParamInfo<X86Transfer>& info) { return std::string(info.param.name); });

TEST(InstructionBoundariesTest, X86OtherInstructionsAreNotTransfers) {
  // push rbp ; mov rbp,rsp ; cmp eax,ecx ; cmove eax,ecx ; lea rax,[rip+0x10] ; syscall ; nop
  std::string code("\x55\x48\x89\xe5\x39\xc8\x0f\x44\xc1\x48\x8d\x05\x10\x00\x00\x00\x0f\x05\x90",
                   19);
  for (uint8_t flags : DecodeInstructionStarts(code, CodeArch::kX86_64))
    EXPECT_EQ(flags & kControlTransfer, 0);
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
  constexpr uint8_t kRet = kInstructionStart | kControlTransfer;
  std::string code("\xc0\x03\x5f\xd6\x1f\x20\x03\xd5\xff\xff\xff\xff", 12);
  EXPECT_THAT(DecodeInstructionStarts(code, CodeArch::kAArch64),
              ElementsAre(kRet, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0));
  EXPECT_THAT(DecodeInstructionStarts(code.substr(0, 6), CodeArch::kAArch64),
              ElementsAre(kRet, 0, 0, 0, 1, 0));
}

TEST(InstructionBoundariesTest, AArch64TransfersAreFlagged) {
  // bl #8 ; blr x1 ; b #8 ; ret ; nop
  constexpr uint8_t kTransfer = kInstructionStart | kControlTransfer;
  std::string code(
      "\x02\x00\x00\x94\x20\x00\x3f\xd6\x02\x00\x00\x14\xc0\x03\x5f\xd6\x1f\x20\x03\xd5", 20);
  EXPECT_THAT(DecodeInstructionStarts(code, CodeArch::kAArch64),
              ElementsAre(kTransfer, 0, 0, 0, kTransfer, 0, 0, 0, kTransfer, 0, 0, 0, kTransfer, 0,
                          0, 0, 1, 0, 0, 0));
}

// Every AArch64 branch (the encodings as GNU as writes them), and instructions that share most
// of their bits with one but transfer nothing.
struct AArch64Word {
  const char* name;
  uint32_t word;
  bool transfer;
};

class AArch64WordTest : public testing::TestWithParam<AArch64Word> {};

TEST_P(AArch64WordTest, IsFlaggedExactlyWhenItLeavesTheBlock) {
  const uint32_t w = GetParam().word;
  std::string code;
  for (int k = 0; k < 4; ++k) code.push_back(char((w >> (8 * k)) & 0xff));
  code += std::string("\x1f\x20\x03\xd5", 4);  // nop
  std::vector<uint8_t> starts = DecodeInstructionStarts(code, CodeArch::kAArch64);
  uint8_t expected = kInstructionStart | (GetParam().transfer ? kControlTransfer : 0);
  EXPECT_THAT(starts, ElementsAre(expected, 0, 0, 0, kInstructionStart, 0, 0, 0))
      << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, AArch64WordTest,
    testing::Values(AArch64Word{"b", 0x14000002, true},       // b #8
                    AArch64Word{"b_back", 0x17fffffe, true},  // b #-8
                    AArch64Word{"bl", 0x94000002, true},      // bl #8
                    AArch64Word{"b_eq", 0x54000040, true},    // b.eq #8
                    AArch64Word{"b_ne", 0x54000041, true},    // b.ne #8
                    AArch64Word{"bc_eq", 0x54000050, true},   // bc.eq #8 (FEAT_HBC)
                    AArch64Word{"cbz_w", 0x34000040, true},   // cbz w0, #8
                    AArch64Word{"cbnz_x", 0xb5000041, true},  // cbnz x1, #8
                    AArch64Word{"tbz", 0x36080040, true},     // tbz w0, #1, #8
                    AArch64Word{"tbnz_x", 0xb7f80040, true},  // tbnz x0, #63, #8
                    AArch64Word{"br", 0xd61f0220, true},      // br x17
                    AArch64Word{"blr", 0xd63f0020, true},     // blr x1
                    AArch64Word{"ret", 0xd65f03c0, true},     // ret
                    AArch64Word{"ret_x1", 0xd65f0020, true},  // ret x1
                    AArch64Word{"braaz", 0xd61f083f, true},   // braaz x1
                    AArch64Word{"braa", 0xd71f0822, true},    // braa x1, x2
                    AArch64Word{"blraaz", 0xd63f083f, true},  // blraaz x1
                    AArch64Word{"blrab", 0xd73f0c22, true},   // blrab x1, x2
                    AArch64Word{"retaa", 0xd65f0bff, true},   // retaa
                    AArch64Word{"retab", 0xd65f0fff, true},   // retab
                    AArch64Word{"nop", 0xd503201f, false},    // nop
                    AArch64Word{"adrp", 0x90000010, false},   // adrp x16, 0
                    AArch64Word{"add", 0x91000000, false},    // add x0, x0, #0
                    AArch64Word{"ldr", 0xf9400211, false},    // ldr x17, [x16]
                    AArch64Word{"mov", 0xaa0103e0, false},    // mov x0, x1
                    AArch64Word{"eret", 0xd69f03e0, false},   // eret (not in user code)
                    AArch64Word{"svc", 0xd4000001, false},    // svc #0
                    AArch64Word{"data", 0xffffffff, false}),  // a literal-pool word
    [](const testing::TestParamInfo<AArch64Word>& info) { return std::string(info.param.name); });

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
