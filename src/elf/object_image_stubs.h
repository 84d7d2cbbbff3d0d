// What an object's ELF file says about code that Callgrind leaves in `ob=???`. Valgrind's debug
// info knows an object's .text (and .plt, whose calls Callgrind skips), but not its other
// executable sections: the .plt.got and .plt.sec stubs, .init, .fini. Callgrind puts the code
// there in `???` and names it by its runtime address, where it looks like unnamed JIT code (issue
// 23 item 7: mono-sgen's and beam.smp's .plt.got entries for free, strcmp, malloc). For an object
// whose load address a profile implies (an ET_EXEC, or the program's own PIE executable, which
// Valgrind maps at kValgrindPieBase), this tells whose code such an address is and what objdump
// calls it; a shared library's load address is learnt from one of its stubs (SlotBias).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cg_inject/object_catalog.h"

namespace cg_inject {

/// Where Valgrind's loader (coregrind/m_ume/elf.c, 3.19 and the bundled build) maps a PIE
/// executable: two thirds into the client's executable area rounded down, raised to this address
/// when lower, which it is on amd64 and arm64 Linux. Checked on captures: beam.smp's .plt.got at
/// 0x67100 ran at 0x16f100, a test PIE's free@plt at 0x1070 at 0x109070.
inline constexpr uint64_t kValgrindPieBase = 0x108000;
/// The page size every load bias is a multiple of (4 KiB pages; larger pages are multiples).
inline constexpr uint64_t kLoadAlign = 0x1000;

/// A PLT slot: [addr, addr + size), named "NAME@plt" as objdump prints it.
struct PltSlot {
  uint64_t addr = 0;
  uint64_t size = 0;
  /// NAME: the symbol its GOT entry's relocation names, a view into the object's file (a slot
  /// copied a name for itself: 2,000 slots of one 1 MB name took 1.9 GB, issue 36 item 2).
  std::string_view symbol;

  bool Contains(uint64_t a) const { return a - addr < size; }
  /// "NAME@plt".
  std::string Name() const { return std::string(symbol) + "@plt"; }
};

/// The facts ReadObjectStubs gathers.
struct ObjectStubs {
  bool fixed_addresses = false;  // ET_EXEC: ELF addresses are the runtime ones
  // ET_DYN with DF_1_PIE in DT_FLAGS_1: a PIE executable, never a shared library (linkers set
  // the flag for -pie links since binutils 2.26, and glibc 2.30 on refuses to dlopen such an
  // object), so in one process's profile it is the program Valgrind loaded.
  bool pie_executable = false;
  std::vector<LoadSegment> code;  // executable PT_LOAD segments
  // One entry per PLT slot (.plt, .plt.got, .plt.sec) whose jump goes through a GOT entry that a
  // relocation names: "NAME@plt" as objdump prints it, the slot's address and size; by address.
  std::vector<PltSlot> plt;
  std::vector<uint32_t> by_page_offset;  // indices into `plt` by address % kLoadAlign
  /// Why the object's tables were not read (a file whose section headers describe one table
  /// many times: reading it would cost more than the file holds), or "". Its facts are then
  /// empty.
  std::string skipped;
  /// What the slots' symbols view (the file's map), when read from a file.
  std::shared_ptr<const void> names;

  /// True when `addr` (an ELF address) lies in an executable segment.
  bool IsCode(uint64_t addr) const;
  /// The PLT slot holding `addr`, or null.
  const PltSlot* PltSlotAt(uint64_t addr) const;
  /// A shared library's load bias, from a stub Callgrind wrote in `???` at `runtime_addr` whose
  /// block calls a function Callgrind names `target` (libc's malloc@plt calls malloc): the bias
  /// under which `runtime_addr` is the start of a slot named `target`@plt. Loaders map an object
  /// at a page boundary, so the bias is a multiple of kLoadAlign; nullopt when no slot fits, or
  /// when slots under two biases do.
  std::optional<uint64_t> SlotBias(uint64_t runtime_addr, std::string_view target) const;
};

/// Reads `bytes`, a whole ELF file (checked with CheckElfHeader first; every table is read only
/// where it lies inside `bytes`). A file that cannot be read gives an empty ObjectStubs, never an
/// error. PLT slots are decoded for x86-64 (`jmp *GOT(%rip)`, after an `endbr64`/`bnd` when
/// there is one) and AArch64 (`adrp x16` + `ldr x17, [x16, #off]`); ELF32 objects and other
/// machines give none. The slots' symbols view `bytes`. Time and memory are linear in the size
/// of `bytes`: tables of one kind (relocations, dynamic sections, PLT sections) that add up to
/// more than the file are not read (ObjectStubs::skipped says so).
ObjectStubs ReadObjectStubs(std::string_view bytes);

/// ReadObjectStubs on the file at `path` (mapped read-only; a file that is missing, not regular
/// (a FIFO is never waited on) or not ELF gives an empty ObjectStubs).
ObjectStubs ReadObjectStubsFile(const std::string& path);

}  // namespace cg_inject
