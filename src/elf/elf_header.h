// A check of the ELF file header done before any other byte of an object is read: the reader
// (elf_reader.cc) then trusts the program and section header tables to lie inside the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cg_inject {

/// The header fields the ELF stage uses.
struct ElfHeaderFacts {
  bool is_64 = false;
  uint16_t type = 0;  // e_type: 2 = ET_EXEC, 3 = ET_DYN
  uint16_t machine = 0;
  uint16_t phnum = 0;
  uint16_t shnum = 0;
  uint16_t shstrndx = 0;  // e_shstrndx: the section holding section names
  uint64_t phoff = 0;     // e_phoff: the program header table, inside the file
  uint64_t shoff = 0;     // e_shoff: the section header table, inside the file when shnum != 0
};

/// Bytes needed from the start of the file for CheckElfHeader (the ELF64 header size).
inline constexpr uint64_t kElfHeaderBytes = 64;

/// Checks the ELF header at the start of `bytes` (at least the first kElfHeaderBytes of the file,
/// or the whole file if shorter) of a file of `file_size` bytes: magic, a known class,
/// little-endian data, ET_EXEC or ET_DYN, entry sizes matching the class, and program and section
/// header tables that lie inside the file. Returns "" and fills `*facts` when the object can be
/// read; otherwise a short reason ("not an ELF file", "program headers end past the end of the
/// file", ...).
std::string CheckElfHeader(std::string_view bytes, uint64_t file_size, ElfHeaderFacts* facts);

}  // namespace cg_inject
