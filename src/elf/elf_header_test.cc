#include "elf/elf_header.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace cg_inject {
namespace {

// Headers are built from <elf.h>'s structs (not from the offsets the checker uses), the way a
// linker would write them on this little-endian host.
Elf64_Ehdr Header64() {
  Elf64_Ehdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = EM_X86_64;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  h.e_phoff = sizeof(Elf64_Ehdr);
  h.e_phentsize = sizeof(Elf64_Phdr);
  h.e_phnum = 4;
  h.e_shoff = 4096;
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shnum = 10;
  return h;
}

Elf32_Ehdr Header32() {
  Elf32_Ehdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS32;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_EXEC;
  h.e_machine = EM_386;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf32_Ehdr);
  h.e_phoff = sizeof(Elf32_Ehdr);
  h.e_phentsize = sizeof(Elf32_Phdr);
  h.e_phnum = 3;
  h.e_shoff = 2000;
  h.e_shentsize = sizeof(Elf32_Shdr);
  h.e_shnum = 5;
  return h;
}

template <typename Header>
std::string Bytes(const Header& h) {
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

// Large enough for both tables of Header64() (phdrs end at 288, shdrs at 4736).
constexpr uint64_t kFileSize = 10000;

std::string Check(const std::string& bytes, uint64_t file_size = kFileSize) {
  ElfHeaderFacts facts;
  return CheckElfHeader(bytes, file_size, &facts);
}

TEST(ElfHeaderTest, AcceptsSharedObject64) {
  ElfHeaderFacts facts;
  EXPECT_EQ(CheckElfHeader(Bytes(Header64()), kFileSize, &facts), "");
  EXPECT_TRUE(facts.is_64);
  EXPECT_EQ(facts.type, ET_DYN);
  EXPECT_EQ(facts.machine, EM_X86_64);
  EXPECT_EQ(facts.phnum, 4);
  EXPECT_EQ(facts.shnum, 10);
}

TEST(ElfHeaderTest, AcceptsExecutable32) {
  ElfHeaderFacts facts;
  EXPECT_EQ(CheckElfHeader(Bytes(Header32()), kFileSize, &facts), "");
  EXPECT_FALSE(facts.is_64);
  EXPECT_EQ(facts.type, ET_EXEC);
  EXPECT_EQ(facts.machine, EM_386);
  EXPECT_EQ(facts.phnum, 3);
  EXPECT_EQ(facts.shnum, 5);
}

TEST(ElfHeaderTest, AcceptsThisTestExecutable) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(file.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr h;
  memcpy(&h, file.data(), sizeof h);
  ElfHeaderFacts facts;
  EXPECT_EQ(CheckElfHeader(std::string_view(file).substr(0, kElfHeaderBytes), file.size(), &facts),
            "");
  EXPECT_EQ(facts.type, h.e_type);
  EXPECT_EQ(facts.phnum, h.e_phnum);
}

TEST(ElfHeaderTest, RejectsNonElf) {
  EXPECT_EQ(Check(""), "not an ELF file");
  EXPECT_EQ(Check("#!/bin/sh\necho hello\n"), "not an ELF file");
  EXPECT_EQ(Check("\x7f"
                  "EL"),
            "not an ELF file");
}

TEST(ElfHeaderTest, RejectsUnknownClassAndEncoding) {
  Elf64_Ehdr h = Header64();
  h.e_ident[EI_CLASS] = 3;
  EXPECT_EQ(Check(Bytes(h)), "unknown ELF class 3");
  h = Header64();
  h.e_ident[EI_DATA] = ELFDATA2MSB;
  EXPECT_EQ(Check(Bytes(h)), "big-endian ELF files are not supported");
  h.e_ident[EI_DATA] = 0;
  EXPECT_EQ(Check(Bytes(h)), "unknown ELF data encoding 0");
}

TEST(ElfHeaderTest, RejectsTruncatedHeader) {
  const std::string bytes = Bytes(Header64());
  EXPECT_EQ(Check(bytes.substr(0, 63), 63), "truncated ELF header");
  // All bytes present but the file claims to be shorter than its own header.
  EXPECT_EQ(Check(bytes, 40), "truncated ELF header");
  // A 32-bit header needs only 52 bytes.
  EXPECT_EQ(Check(Bytes(Header32()).substr(0, 52), 2000 + 5 * sizeof(Elf32_Shdr)), "");
}

TEST(ElfHeaderTest, RejectsObjectsThatAreNotLoadable) {
  Elf64_Ehdr h = Header64();
  h.e_type = ET_REL;
  EXPECT_EQ(Check(Bytes(h)), "relocatable object (ET_REL), not loadable");
  h.e_type = ET_CORE;
  EXPECT_EQ(Check(Bytes(h)), "core file, not an object");
  h.e_type = 0xfe00;  // ET_LOOS
  EXPECT_EQ(Check(Bytes(h)), "ELF type 65024 is neither ET_EXEC nor ET_DYN");
}

TEST(ElfHeaderTest, ProgramHeadersMustFitInFile) {
  Elf64_Ehdr h = Header64();
  const uint64_t phdrs_end = h.e_phoff + 4 * sizeof(Elf64_Phdr);
  h.e_shnum = 0;  // keep the section table out of this test
  EXPECT_EQ(Check(Bytes(h), phdrs_end), "");
  EXPECT_EQ(Check(Bytes(h), phdrs_end - 1), "program headers end past the end of the file");
  h.e_phoff = ~uint64_t{0} - 8;  // offset + size wraps around in 64 bits
  EXPECT_EQ(Check(Bytes(h)), "program headers end past the end of the file");
}

TEST(ElfHeaderTest, RejectsOddProgramHeaderCounts) {
  Elf64_Ehdr h = Header64();
  h.e_phnum = 0;
  EXPECT_EQ(Check(Bytes(h)), "no program headers");
  h.e_phnum = PN_XNUM;
  EXPECT_EQ(Check(Bytes(h)), "extended program header numbering is not supported");
  h = Header64();
  h.e_phentsize = sizeof(Elf32_Phdr);
  EXPECT_EQ(Check(Bytes(h)), "program header entry size 32, expected 56");
}

TEST(ElfHeaderTest, SectionHeadersMustFitInFileWhenPresent) {
  Elf64_Ehdr h = Header64();
  const uint64_t shdrs_end = h.e_shoff + 10 * sizeof(Elf64_Shdr);
  EXPECT_EQ(Check(Bytes(h), shdrs_end), "");
  EXPECT_EQ(Check(Bytes(h), shdrs_end - 1), "section headers end past the end of the file");
  h.e_shentsize = 40;
  EXPECT_EQ(Check(Bytes(h)), "section header entry size 40, expected 64");
  // Without section headers the offset is not used (stripped by sstrip, or extended numbering).
  h = Header64();
  h.e_shnum = 0;
  h.e_shoff = ~uint64_t{0};
  EXPECT_EQ(Check(Bytes(h)), "");
}

}  // namespace
}  // namespace cg_inject
