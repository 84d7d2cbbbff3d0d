// Instruction-length decoding with Capstone (capstone 4, Debian 12's libcapstone-dev). Only the
// lengths matter, so operand details stay off, and cs_disasm_iter reuses one cs_insn.
//
// The sweep is linear from the start of the code. JIT code can embed data (constant pools, jump
// tables), after which a sweep may lose sync; VersionChooser therefore does not reject an address
// that fits no version's boundaries but falls back to any version that contains it.
#include "resolve/instruction_boundaries.h"

#include <capstone/capstone.h>

namespace cg_inject {

namespace {

/// AArch64 instructions that leave their basic block: B, BL, B.cond (and BC.cond), CBZ/CBNZ,
/// TBZ/TBNZ, BR, BLR, RET, and their pointer-authenticating forms (BRAA..., BLRAA..., RETAA/AB).
bool AArch64TransfersControl(uint32_t w) {
  return (w & 0x7C000000u) == 0x14000000u ||  // B imm26 (bit 31 clear), BL imm26 (bit 31 set)
         (w & 0xFF000000u) == 0x54000000u ||  // B.cond, BC.cond
         (w & 0x7E000000u) == 0x34000000u ||  // CBZ, CBNZ (32- and 64-bit)
         (w & 0x7E000000u) == 0x36000000u ||  // TBZ, TBNZ
         (w & 0xFF9FFC1Fu) == 0xD61F0000u ||  // BR Xn, BLR Xn, RET Xn (opc 00, 01, 10)
         (w & 0xFE9FF800u) == 0xD61F0800u;    // BRAA(Z), BRAB(Z), BLRAA(Z), BLRAB(Z), RETAA/RETAB
}

/// x86-64 instructions that leave their basic block: calls, jumps (conditional ones and LOOPcc
/// included) and returns. By instruction id: Capstone's groups need operand details.
bool X86TransfersControl(unsigned id) {
  switch (id) {
    case X86_INS_CALL:
    case X86_INS_LCALL:
    case X86_INS_JMP:
    case X86_INS_LJMP:
    case X86_INS_JAE:
    case X86_INS_JA:
    case X86_INS_JBE:
    case X86_INS_JB:
    case X86_INS_JCXZ:
    case X86_INS_JECXZ:
    case X86_INS_JRCXZ:
    case X86_INS_JE:
    case X86_INS_JGE:
    case X86_INS_JG:
    case X86_INS_JLE:
    case X86_INS_JL:
    case X86_INS_JNE:
    case X86_INS_JNO:
    case X86_INS_JNP:
    case X86_INS_JNS:
    case X86_INS_JO:
    case X86_INS_JP:
    case X86_INS_JS:
    case X86_INS_LOOP:
    case X86_INS_LOOPE:
    case X86_INS_LOOPNE:
    case X86_INS_RET:
    case X86_INS_RETF:
    case X86_INS_RETFQ:
    case X86_INS_IRET:
    case X86_INS_IRETD:
    case X86_INS_IRETQ:
      return true;
    default:
      return false;
  }
}

}  // namespace

CodeArch CodeArchOfElfMachine(uint32_t elf_machine) {
  if (elf_machine == kElfMachineX86_64) return CodeArch::kX86_64;
  if (elf_machine == kElfMachineAArch64) return CodeArch::kAArch64;
  return CodeArch::kUnknown;
}

std::vector<uint8_t> DecodeInstructionStarts(std::string_view code, CodeArch arch) {
  std::vector<uint8_t> starts(code.size(), 0);
  if (arch == CodeArch::kAArch64) {
    for (size_t i = 0; i < code.size(); i += 4) {
      starts[i] = kInstructionStart;
      if (i + 4 > code.size()) continue;
      uint32_t w = 0;
      for (size_t k = 0; k < 4; ++k) w |= uint32_t(uint8_t(code[i + k])) << (8 * k);
      if (AArch64TransfersControl(w)) starts[i] |= kControlTransfer;
    }
    return starts;
  }
  csh handle;
  if (arch != CodeArch::kX86_64 || cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
    starts.assign(code.size(), 1);
    return starts;
  }
  cs_insn* insn = cs_malloc(handle);
  const auto* bytes = reinterpret_cast<const uint8_t*>(code.data());
  size_t offset = 0;
  while (offset < code.size()) {
    starts[offset] = kInstructionStart;
    const uint8_t* cursor = bytes + offset;
    size_t remaining = code.size() - offset;
    uint64_t address = offset;
    if (!cs_disasm_iter(handle, &cursor, &remaining, &address, insn)) {
      offset += 1;  // undecodable byte (data): step over it and resynchronize
      continue;
    }
    if (X86TransfersControl(insn->id)) starts[offset] |= kControlTransfer;
    offset = static_cast<size_t>(cursor - bytes);
  }
  cs_free(insn, 1);
  cs_close(&handle);
  return starts;
}

}  // namespace cg_inject
