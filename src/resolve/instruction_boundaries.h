// Where instructions start in a piece of JIT code: the one decoder behind VersionChooser (and so
// behind the command line, the tests, the benchmarks and the fuzzers). It tells which of several
// code versions that lived at one address ran there: the right version has an instruction
// starting at each profiled instruction address.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "cg_inject/inject.h"

namespace cg_inject {

inline constexpr uint32_t kElfMachineX86_64 = 62;
inline constexpr uint32_t kElfMachineAArch64 = 183;

/// The architecture of ELF machine `elf_machine` (a jitdump header's e_machine); kUnknown for
/// 0 (not known) and for machines the decoder does not handle.
CodeArch CodeArchOfElfMachine(uint32_t elf_machine);

/// What DecodeInstructionStarts says of a byte: an instruction starts there (kInstructionStart),
/// and that instruction transfers control (kInstructionStart | kControlTransfer): a call, a jump
/// (conditional or not) or a return. Callgrind's call lines sit at the instruction that left the
/// basic block, and Callgrind makes a call not only of a call instruction but also of a jump into
/// another function and of a return into code that is not the caller's, so of several versions at
/// one address only one with a control transfer there can have made the call.
inline constexpr uint8_t kInstructionStart = 1;
inline constexpr uint8_t kControlTransfer = 2;

/// One flag per byte of `code`, nonzero where an instruction starts (above). x86-64 is swept
/// linearly with Capstone from offset 0; an undecodable byte (data in the code) is flagged and
/// stepped over, and the sweep resynchronizes after it. AArch64 instructions are all 4 bytes, so
/// every fourth offset starts one (literal-pool words included). For kUnknown, or when Capstone
/// cannot be opened, every offset is flagged as a start and none as a call: nothing is
/// contradicted, nothing known.
std::vector<uint8_t> DecodeInstructionStarts(std::string_view code, CodeArch arch);

}  // namespace cg_inject
