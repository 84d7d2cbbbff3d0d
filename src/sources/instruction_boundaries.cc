// Instruction-length decoding with Capstone (capstone 4, Debian 12's libcapstone-dev). Only the
// lengths matter, so operand details stay off, and cs_disasm_iter reuses one cs_insn.
#include "sources/instruction_boundaries.h"

#include <capstone/capstone.h>

namespace cg_inject {

InstructionBoundaries DecodeInstructionBoundaries(std::string_view code, uint32_t elf_machine) {
  InstructionBoundaries result;
  cs_arch arch;
  cs_mode mode;
  if (elf_machine == kElfMachineX86_64) {
    arch = CS_ARCH_X86;
    mode = CS_MODE_64;
  } else if (elf_machine == kElfMachineAArch64) {
    arch = CS_ARCH_ARM64;
    mode = CS_MODE_LITTLE_ENDIAN;
  } else {
    return result;
  }
  csh handle;
  if (cs_open(arch, mode, &handle) != CS_ERR_OK) return result;
  cs_insn* insn = cs_malloc(handle);
  result.is_start.assign(code.size(), false);
  const auto* bytes = reinterpret_cast<const uint8_t*>(code.data());
  size_t offset = 0;
  while (offset < code.size()) {
    const uint8_t* cursor = bytes + offset;
    size_t remaining = code.size() - offset;
    uint64_t address = offset;
    if (cs_disasm_iter(handle, &cursor, &remaining, &address, insn)) {
      result.is_start[offset] = true;
      offset = static_cast<size_t>(cursor - bytes);
      continue;
    }
    if (arch == CS_ARCH_ARM64 && code.size() - offset >= 4) {
      // A literal-pool word: still a 4-byte slot on the instruction grid.
      result.is_start[offset] = true;
      offset += 4;
      continue;
    }
    break;
  }
  result.decoded_size = offset;
  result.is_start.resize(offset);
  cs_free(insn, 1);
  cs_close(&handle);
  return result;
}

}  // namespace cg_inject
