// ELF header check. Spec: System V ABI, "ELF Header" (gABI 4.1, generic; fields at the offsets
// below for ELFCLASS32 and ELFCLASS64). Fields are assembled from bytes, never read through a
// struct cast.
#include "elf/elf_header.h"

#include <cstring>
#include <string>

namespace cg_inject {
namespace {

constexpr uint8_t kClass32 = 1;
constexpr uint8_t kClass64 = 2;
constexpr uint8_t kDataLittleEndian = 1;
constexpr uint8_t kDataBigEndian = 2;
constexpr uint16_t kTypeExec = 2;
constexpr uint16_t kTypeDyn = 3;
constexpr uint16_t kTypeRel = 1;
constexpr uint16_t kTypeCore = 4;
// e_phnum of 0xffff means the real count is in section 0's sh_info; the reader does not read it.
constexpr uint16_t kPnXnum = 0xffff;

// Field offsets and entry sizes per class.
struct Layout {
  uint64_t header_size, type, machine, phoff, shoff, phentsize, phnum, shentsize, shnum, shstrndx;
  uint64_t addr_bytes, phdr_size, shdr_size;
};
constexpr Layout kLayout32 = {52, 16, 18, 28, 32, 42, 44, 46, 48, 50, 4, 32, 40};
constexpr Layout kLayout64 = {64, 16, 18, 32, 40, 54, 56, 58, 60, 62, 8, 56, 64};

// Little-endian fields, assembled byte by byte so the host's byte order does not matter.
uint64_t ReadLittle(std::string_view bytes, uint64_t offset, uint64_t size) {
  uint64_t v = 0;
  for (uint64_t i = size; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[offset + i]);
  return v;
}

uint16_t Read16(std::string_view bytes, uint64_t offset) {
  return static_cast<uint16_t>(ReadLittle(bytes, offset, 2));
}

// True when a table of `count` entries of `entry_size` bytes at `offset` fits in `file_size`.
bool TableFits(uint64_t offset, uint64_t count, uint64_t entry_size, uint64_t file_size) {
  // count and entry_size are 16-bit, so their product cannot overflow.
  return offset <= file_size && count * entry_size <= file_size - offset;
}

}  // namespace

std::string CheckElfHeader(std::string_view bytes, uint64_t file_size, ElfHeaderFacts* facts) {
  if (bytes.size() < 16 || memcmp(bytes.data(),
                                  "\x7f"
                                  "ELF",
                                  4) != 0)
    return "not an ELF file";
  const uint8_t elf_class = static_cast<uint8_t>(bytes[4]);
  const uint8_t data = static_cast<uint8_t>(bytes[5]);
  if (elf_class != kClass32 && elf_class != kClass64) {
    return "unknown ELF class " + std::to_string(elf_class);
  }
  if (data == kDataBigEndian) return "big-endian ELF files are not supported";
  if (data != kDataLittleEndian) return "unknown ELF data encoding " + std::to_string(data);
  const Layout& layout = elf_class == kClass64 ? kLayout64 : kLayout32;
  if (bytes.size() < layout.header_size || file_size < layout.header_size) {
    return "truncated ELF header";
  }

  ElfHeaderFacts f;
  f.is_64 = elf_class == kClass64;
  f.type = Read16(bytes, layout.type);
  f.machine = Read16(bytes, layout.machine);
  if (f.type == kTypeRel) return "relocatable object (ET_REL), not loadable";
  if (f.type == kTypeCore) return "core file, not an object";
  if (f.type != kTypeExec && f.type != kTypeDyn) {
    return "ELF type " + std::to_string(f.type) + " is neither ET_EXEC nor ET_DYN";
  }

  const uint64_t phoff = ReadLittle(bytes, layout.phoff, layout.addr_bytes);
  const uint64_t shoff = ReadLittle(bytes, layout.shoff, layout.addr_bytes);
  const uint16_t phentsize = Read16(bytes, layout.phentsize);
  const uint16_t shentsize = Read16(bytes, layout.shentsize);
  f.phnum = Read16(bytes, layout.phnum);
  f.shnum = Read16(bytes, layout.shnum);
  f.shstrndx = Read16(bytes, layout.shstrndx);
  f.phoff = phoff;
  f.shoff = shoff;
  if (f.phnum == kPnXnum) return "extended program header numbering is not supported";
  if (f.phnum == 0) return "no program headers";
  if (phentsize != layout.phdr_size) {
    return "program header entry size " + std::to_string(phentsize) + ", expected " +
           std::to_string(layout.phdr_size);
  }
  if (!TableFits(phoff, f.phnum, phentsize, file_size)) {
    return "program headers end past the end of the file";
  }
  // e_shnum 0 with e_shoff set means the count is in section 0 (extended numbering); such a file
  // is read without sections (extents only), so only check a table that claims entries.
  if (f.shnum != 0) {
    if (shentsize != layout.shdr_size) {
      return "section header entry size " + std::to_string(shentsize) + ", expected " +
             std::to_string(layout.shdr_size);
    }
    if (!TableFits(shoff, f.shnum, shentsize, file_size)) {
      return "section headers end past the end of the file";
    }
  }
  *facts = f;
  return "";
}

}  // namespace cg_inject
