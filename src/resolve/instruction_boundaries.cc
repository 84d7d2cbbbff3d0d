// Instruction-length decoding with Capstone (capstone 4, Debian 12's libcapstone-dev). Only the
// lengths matter, so operand details stay off, and cs_disasm_iter reuses one cs_insn.
//
// The sweep is linear from the start of the code. JIT code can embed data (constant pools, jump
// tables), after which a sweep may lose sync; VersionChooser therefore does not reject an address
// that fits no version's boundaries but falls back to any version that contains it.
#include "resolve/instruction_boundaries.h"

#include <capstone/capstone.h>

namespace cg_inject {

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
      // BL imm26; BLR Xn; BLRAA/BLRAAZ/BLRAB/BLRABZ (pointer authentication).
      if ((w & 0xFC000000u) == 0x94000000u || (w & 0xFFFFFC1Fu) == 0xD63F0000u ||
          (w & 0xFEFFF800u) == 0xD63F0800u)
        starts[i] |= kCallInstruction;
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
    // The instruction id needs no operand details.
    if (insn->id == X86_INS_CALL || insn->id == X86_INS_LCALL) starts[offset] |= kCallInstruction;
    offset = static_cast<size_t>(cursor - bytes);
  }
  cs_free(insn, 1);
  cs_close(&handle);
  return starts;
}

}  // namespace cg_inject
