// Where instructions start in a piece of JIT code, decoded with Capstone. The symbol index uses
// it to tell which of several code versions that lived at one address a set of profiled
// instruction addresses belongs to: the right version has an instruction starting at each.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cg_inject {

/// Instruction starts over the first `decoded_size` bytes of some code; nothing is known about
/// bytes after that (undecodable bytes, or an architecture Capstone is not asked to decode).
struct InstructionBoundaries {
  std::vector<bool> is_start;  // indexed by offset; size() == decoded_size
  uint64_t decoded_size = 0;

  /// True when `offset` is known not to start an instruction.
  bool IsKnownMiddle(uint64_t offset) const { return offset < decoded_size && !is_start[offset]; }
};

inline constexpr uint32_t kElfMachineX86_64 = 62;
inline constexpr uint32_t kElfMachineAArch64 = 183;

/// Decodes `code` for ELF machine `elf_machine` (x86-64 and AArch64; others decode nothing).
/// x86-64 stops at the first undecodable byte; AArch64 instructions are all 4 bytes, so data
/// words in the code (literal pools) are stepped over.
InstructionBoundaries DecodeInstructionBoundaries(std::string_view code, uint32_t elf_machine);

}  // namespace cg_inject
