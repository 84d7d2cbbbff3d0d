// ELF64 writer for JIT code images (System V gABI, "ELF-64 Object File Format"; DWARF 4, section
// 6.2 for the line program). It plans, then writes: every section's bytes except .text are built
// first (they do not depend on file offsets), then offsets are assigned, one buffer is allocated
// and each piece is copied into its slice, and last the build-id is the SHA-1 of the whole file
// with the build-id bytes still zero.
//
// Layout: ELF header, program headers, the code ranges (each at a file offset congruent to its
// address modulo the page size, as a loader would need; a gap under a page between two functions
// is zero-filled inside one range, which costs no more file space than page alignment would),
// then the non-allocated sections, then the section headers.
//
// Why a writer of our own: Debian's LIEF 0.9.0 cannot create an ELF from scratch and corrupts
// .symtab when adding symbols. perf's genelf (tools/perf/util/genelf.c) writes one function per
// file with libelf; one file per version set keeps KCachegrind's single `ob=` per function.
#include "elf/jit_image_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "util/sha1.h"

namespace cg_inject {
namespace {

constexpr uint64_t kPageSize = 0x1000;
constexpr uint64_t kEhdrSize = 64, kPhdrSize = 56, kShdrSize = 64, kSymSize = 24;
constexpr uint32_t kBuildIdSize = 20;  // SHA-1, like ld --build-id=sha1

void Put8(std::string* out, uint8_t v) { out->push_back(char(v)); }
void Put16(std::string* out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out->push_back(char(v >> (8 * i)));
}
void Put32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(char(v >> (8 * i)));
}
void Put64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(char(v >> (8 * i)));
}
void PutUleb(std::string* out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v) byte |= 0x80;
    out->push_back(char(byte));
  } while (v);
}
void PutSleb(std::string* out, int64_t v) {
  bool more = true;
  while (more) {
    uint8_t byte = v & 0x7f;
    v >>= 7;  // arithmetic shift (C++20)
    more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
    if (more) byte |= 0x80;
    out->push_back(char(byte));
  }
}
void PutCString(std::string* out, std::string_view s) {
  out->append(s);
  out->push_back('\0');
}
void Patch32(std::string* buf, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*buf)[at + size_t(i)] = char(v >> (8 * i));
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// A run of functions that share one PT_LOAD and one .text section.
struct CodeRange {
  uint64_t addr = 0, size = 0;
  uint64_t file_offset = 0;
  std::vector<const JitImageFunction*> functions;
};

/// A section other than .text: its bytes and header fields.
struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t addralign = 1, entsize = 0;
  uint32_t link = 0, info = 0;
  std::string bytes;
  uint64_t file_offset = 0;
};

Section MakeSection(std::string name, uint32_t type, uint64_t addralign = 1) {
  Section s;
  s.name = std::move(name);
  s.type = type;
  s.addralign = addralign;
  return s;
}

constexpr uint32_t kShtProgbits = 1, kShtSymtab = 2, kShtStrtab = 3, kShtNote = 7;
constexpr uint64_t kShfAlloc = 2, kShfExecinstr = 4;

std::vector<CodeRange> PlanRanges(const JitImageSpec& spec, std::string_view display_name) {
  std::vector<const JitImageFunction*> sorted;
  for (const JitImageFunction& f : spec.functions) {
    if (f.code.empty()) ThrowForFile(display_name, "a JIT image function has no code bytes");
    if (f.addr + f.code.size() < f.addr)
      ThrowForFile(display_name, "a JIT image function wraps around the address space");
    sorted.push_back(&f);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const JitImageFunction* a, const JitImageFunction* b) { return a->addr < b->addr; });
  std::vector<CodeRange> ranges;
  for (const JitImageFunction* f : sorted) {
    if (!ranges.empty()) {
      CodeRange& last = ranges.back();
      uint64_t end = last.addr + last.size;
      if (f->addr < end)
        ThrowForFile(display_name, "JIT image functions overlap at " + Hex(f->addr));
      if (f->addr - end < kPageSize) {
        last.size = f->addr + f->code.size() - last.addr;
        last.functions.push_back(f);
        continue;
      }
    }
    ranges.push_back({f->addr, f->code.size(), 0, {f}});
  }
  // Section indices are 16-bit below SHN_LORESERVE (0xff00); 8 other sections follow the ranges.
  if (ranges.size() + 8 >= 0xff00)
    ThrowForFile(display_name, "too many separate code ranges for one ELF image");
  return ranges;
}

/// The rows of `f`'s line table inside its code, by address; of equal addresses the last one
/// (as CodeVersion::LookupLine reads them).
std::vector<LineEntry> RowsOf(const JitImageFunction& f) {
  std::vector<LineEntry> rows;
  for (const LineEntry& e : f.lines)
    if (e.addr >= f.addr && e.addr - f.addr < f.code.size() && e.file_index < f.files.size())
      rows.push_back(e);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const LineEntry& a, const LineEntry& b) { return a.addr < b.addr; });
  std::vector<LineEntry> last_per_addr;
  for (size_t i = 0; i < rows.size(); ++i)
    if (i + 1 == rows.size() || rows[i + 1].addr != rows[i].addr) last_per_addr.push_back(rows[i]);
  return last_per_addr;
}

/// .debug_line: one DWARF 4 line-number program, one sequence per function with rows.
std::string BuildDebugLine(const std::vector<CodeRange>& ranges, int64_t* row_count) {
  std::map<std::string_view, uint32_t> file_numbers;  // DWARF 4 file numbers start at 1
  std::vector<std::string_view> files;
  std::string program;
  for (const CodeRange& r : ranges) {
    for (const JitImageFunction* f : r.functions) {
      std::vector<LineEntry> rows = RowsOf(*f);
      if (rows.empty()) continue;
      Put8(&program, 0);  // DW_LNE_set_address
      PutUleb(&program, 9);
      Put8(&program, 2);
      Put64(&program, f->addr);
      uint64_t addr = f->addr;
      int64_t line = 1;
      uint32_t file = 1;
      for (const LineEntry& e : rows) {
        std::string_view name = f->files[e.file_index];
        auto [it, inserted] = file_numbers.try_emplace(name, uint32_t(files.size() + 1));
        if (inserted) files.push_back(name);
        if (it->second != file) {
          file = it->second;
          Put8(&program, 4);  // DW_LNS_set_file
          PutUleb(&program, file);
        }
        if (int64_t(e.line_no) != line) {
          Put8(&program, 3);  // DW_LNS_advance_line
          PutSleb(&program, int64_t(e.line_no) - line);
          line = e.line_no;
        }
        if (e.addr != addr) {
          Put8(&program, 2);  // DW_LNS_advance_pc (minimum_instruction_length 1)
          PutUleb(&program, e.addr - addr);
          addr = e.addr;
        }
        if (e.discriminator) {
          Put8(&program, 0);  // DW_LNE_set_discriminator
          std::string operand;
          PutUleb(&operand, e.discriminator);
          PutUleb(&program, 1 + operand.size());
          Put8(&program, 4);
          program += operand;
        }
        Put8(&program, 1);  // DW_LNS_copy
        ++*row_count;
      }
      Put8(&program, 2);  // advance to the end of the function, then end the sequence
      PutUleb(&program, f->addr + f->code.size() - addr);
      Put8(&program, 0);
      PutUleb(&program, 1);
      Put8(&program, 1);  // DW_LNE_end_sequence
    }
  }

  std::string header;                  // from minimum_instruction_length to the end of file_names
  Put8(&header, 1);                    // minimum_instruction_length
  Put8(&header, 1);                    // maximum_operations_per_instruction
  Put8(&header, 1);                    // default_is_stmt
  Put8(&header, uint8_t(int8_t(-5)));  // line_base
  Put8(&header, 14);                   // line_range
  Put8(&header, 13);                   // opcode_base
  for (uint8_t n : {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1}) Put8(&header, n);
  Put8(&header, 0);  // include_directories: none (names are used as the JIT wrote them)
  for (std::string_view name : files) {
    PutCString(&header, name);
    PutUleb(&header, 0);  // directory: the compilation directory (none)
    PutUleb(&header, 0);  // mtime
    PutUleb(&header, 0);  // length
  }
  Put8(&header, 0);

  std::string out;
  Put32(&out, 0);  // unit_length, patched below
  Put16(&out, 4);  // version
  Put32(&out, uint32_t(header.size()));
  out += header;
  out += program;
  Patch32(&out, 0, uint32_t(out.size() - 4));
  return out;
}

/// .debug_abbrev and .debug_info: one compile unit without an address range, whose
/// DW_AT_stmt_list points at the line program. binutils (bfd's dwarf2.c) reads line tables only
/// through .debug_info units, and tries a unit without a range for every address.
void BuildDebugInfo(std::string* abbrev, std::string* info) {
  PutUleb(abbrev, 1);     // abbreviation code
  PutUleb(abbrev, 0x11);  // DW_TAG_compile_unit
  Put8(abbrev, 0);        // DW_CHILDREN_no
  PutUleb(abbrev, 0x25);  // DW_AT_producer
  PutUleb(abbrev, 0x08);  // DW_FORM_string
  PutUleb(abbrev, 0x03);  // DW_AT_name
  PutUleb(abbrev, 0x08);  // DW_FORM_string
  PutUleb(abbrev, 0x10);  // DW_AT_stmt_list
  PutUleb(abbrev, 0x17);  // DW_FORM_sec_offset
  Put8(abbrev, 0);
  Put8(abbrev, 0);
  Put8(abbrev, 0);  // end of the abbreviations

  Put32(info, 0);  // unit_length, patched below
  Put16(info, 4);  // version
  Put32(info, 0);  // debug_abbrev_offset
  Put8(info, 8);   // address_size
  PutUleb(info, 1);
  PutCString(info, "cg-inject");
  PutCString(info, "JIT code");
  Put32(info, 0);  // .debug_line offset
  Patch32(info, 0, uint32_t(info->size() - 4));
}

uint64_t AlignUp(uint64_t n, uint64_t align) { return (n + align - 1) / align * align; }

}  // namespace

namespace {

/// Plans the image of `spec` and hands its bytes, in file order, to `sink` (a callable taking a
/// std::string_view; pieces are only valid during the call): the code as views of the spec's (the
/// jitdump's map), never copied into one buffer, so an image costs its tables, not its size
/// (issue 35: the erlc capture's 7 MB image took 20 MB at the run's peak). The build id, a hash of
/// the bytes before it is filled in, goes in last through `patch(offset, bytes)` (a callable
/// overwriting bytes already sunk), or, without a `patch`, by a first pass that only hashes.
template <typename Sink, typename Patch>
void EmitJitImage(const JitImageSpec& spec, std::string_view display_name, JitImageLayout* layout,
                  Sink&& sink, Patch* patch) {
  std::vector<CodeRange> ranges = PlanRanges(spec, display_name);
  JitImageLayout sizes;
  sizes.code_ranges = int64_t(ranges.size());

  // Sections after the code ranges, in section-header order.
  const uint32_t first_other = uint32_t(ranges.size()) + 1;
  std::vector<Section> others(7);
  Section& note = others[0];
  note = MakeSection(".note.gnu.build-id", kShtNote, 4);
  Put32(&note.bytes, 4);             // n_namesz
  Put32(&note.bytes, kBuildIdSize);  // n_descsz
  Put32(&note.bytes, 3);             // NT_GNU_BUILD_ID
  note.bytes.append("GNU\0", 4);
  note.bytes.append(kBuildIdSize, '\0');  // filled in last
  others[1] = MakeSection(".debug_abbrev", kShtProgbits);
  others[2] = MakeSection(".debug_info", kShtProgbits);
  BuildDebugInfo(&others[1].bytes, &others[2].bytes);
  others[3] = MakeSection(".debug_line", kShtProgbits);
  others[3].bytes = BuildDebugLine(ranges, &sizes.line_rows);
  Section& symtab = others[4];
  Section& strtab = others[5];
  symtab = MakeSection(".symtab", kShtSymtab, 8);
  symtab.entsize = kSymSize;
  symtab.link = first_other + 5;  // .strtab
  symtab.info = 1;                // every symbol after the null one is global
  strtab = MakeSection(".strtab", kShtStrtab);
  symtab.bytes.append(kSymSize, '\0');  // the null symbol
  strtab.bytes.push_back('\0');
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (const JitImageFunction* f : ranges[i].functions) {
      Put32(&symtab.bytes, uint32_t(strtab.bytes.size()));
      PutCString(&strtab.bytes, f->name);
      Put8(&symtab.bytes, (1 << 4) | 2);  // STB_GLOBAL, STT_FUNC
      Put8(&symtab.bytes, 0);             // STV_DEFAULT
      Put16(&symtab.bytes, uint16_t(i + 1));
      Put64(&symtab.bytes, f->addr);
      Put64(&symtab.bytes, f->code.size());
      ++sizes.symbols;
    }
  }
  others[6] = MakeSection(".shstrtab", kShtStrtab);
  Section& shstrtab = others[6];
  shstrtab.bytes.push_back('\0');
  std::map<std::string, uint32_t> name_offsets;
  auto name_offset = [&](const std::string& name) {
    auto [it, inserted] = name_offsets.try_emplace(name, uint32_t(shstrtab.bytes.size()));
    if (inserted) PutCString(&shstrtab.bytes, name);
    return it->second;
  };
  const uint32_t text_name = name_offset(".text");
  for (Section& s : others) name_offset(s.name);

  // Offsets.
  uint64_t offset = kEhdrSize + kPhdrSize * ranges.size();
  for (CodeRange& r : ranges) {
    offset += (r.addr - offset) & (kPageSize - 1);  // offset == addr (mod page size)
    r.file_offset = offset;
    offset += r.size;
    sizes.code_bytes += r.size;
  }
  for (Section& s : others) {
    offset = AlignUp(offset, s.addralign);
    s.file_offset = offset;
    offset += s.bytes.size();
  }
  const uint64_t shoff = AlignUp(offset, 8);
  const uint64_t shnum = first_other + others.size();
  const uint64_t file_size = shoff + kShdrSize * shnum;
  sizes.file_size = file_size;

  // The file: the ELF header and program headers, the code ranges, the other sections, the
  // section headers; zeros between them.
  std::string head;
  head.reserve(kEhdrSize + kPhdrSize * ranges.size());
  head.append(
      "\x7f"
      "ELF",
      4);
  Put8(&head, 2);        // ELFCLASS64
  Put8(&head, 1);        // ELFDATA2LSB
  Put8(&head, 1);        // EV_CURRENT
  head.append(9, '\0');  // ELFOSABI_NONE, ABI version, padding
  Put16(&head, 2);       // ET_EXEC: addresses are runtime addresses
  Put16(&head, spec.machine);
  Put32(&head, 1);  // EV_CURRENT
  Put64(&head, 0);  // e_entry
  Put64(&head, ranges.empty() ? 0 : kEhdrSize);
  Put64(&head, shoff);
  Put32(&head, 0);  // e_flags
  Put16(&head, kEhdrSize);
  Put16(&head, kPhdrSize);
  Put16(&head, uint16_t(ranges.size()));
  Put16(&head, kShdrSize);
  Put16(&head, uint16_t(shnum));
  Put16(&head, uint16_t(shnum - 1));  // .shstrtab is last

  for (const CodeRange& r : ranges) {
    Put32(&head, 1);      // PT_LOAD
    Put32(&head, 4 | 1);  // PF_R | PF_X
    Put64(&head, r.file_offset);
    Put64(&head, r.addr);  // p_vaddr
    Put64(&head, r.addr);  // p_paddr
    Put64(&head, r.size);  // p_filesz
    Put64(&head, r.size);  // p_memsz
    Put64(&head, kPageSize);
  }

  std::string section_headers;
  auto put_shdr = [&](uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
                      uint64_t file_offset, uint64_t size, uint32_t link, uint32_t info,
                      uint64_t addralign, uint64_t entsize) {
    Put32(&section_headers, name);
    Put32(&section_headers, type);
    Put64(&section_headers, flags);
    Put64(&section_headers, addr);
    Put64(&section_headers, file_offset);
    Put64(&section_headers, size);
    Put32(&section_headers, link);
    Put32(&section_headers, info);
    Put64(&section_headers, addralign);
    Put64(&section_headers, entsize);
  };
  section_headers.append(kShdrSize, '\0');  // SHN_UNDEF
  for (const CodeRange& r : ranges)
    put_shdr(text_name, kShtProgbits, kShfAlloc | kShfExecinstr, r.addr, r.file_offset, r.size, 0,
             0, 1, 0);
  for (const Section& s : others)
    put_shdr(name_offsets.at(s.name), s.type, 0, 0, s.file_offset, s.bytes.size(), s.link, s.info,
             s.addralign, s.entsize);

  // Bytes of code read since the source last gave its pages back.
  constexpr uint64_t kGiveBackEvery = 4 << 20;
  uint64_t code_read = 0;
  auto give_back = [&] {
    if (spec.give_back_code) spec.give_back_code();
    code_read = 0;
  };
  auto emit_all = [&](auto&& put) {
    uint64_t at = 0;
    auto zeros_to = [&](uint64_t to) {  // gaps stay zero
      static constexpr char kZeros[4096] = {};
      while (at < to) {
        const uint64_t n = std::min<uint64_t>(to - at, sizeof kZeros);
        put(std::string_view(kZeros, n));
        at += n;
      }
    };
    auto bytes = [&](std::string_view b) {
      put(b);
      at += b.size();
    };
    bytes(head);
    for (const CodeRange& r : ranges) {
      zeros_to(r.file_offset);
      for (const JitImageFunction* f : r.functions) {
        zeros_to(r.file_offset + (f->addr - r.addr));
        bytes(f->code);
        code_read += f->code.size();
        if (code_read >= kGiveBackEvery) give_back();
      }
    }
    for (const Section& s : others) {
      zeros_to(s.file_offset);
      bytes(s.bytes);
    }
    zeros_to(shoff);
    bytes(section_headers);
    give_back();
  };

  // The build-id: SHA-1 of the whole image with the id itself still zero, as `sha1sum` prints
  // it. Hashed as the bytes go out, the code read once (the dump's pages are given back as they
  // go, and a second pass faulted them all in again).
  Sha1 sha;
  static_assert(Sha1::kDigestSize == kBuildIdSize);
  if (patch != nullptr) {
    emit_all([&](std::string_view b) {
      sha.Update(b);
      sink(b);
    });
    const Sha1::Digest digest = sha.Final();
    (*patch)(note.file_offset + 16,
             std::string_view(reinterpret_cast<const char*>(digest.data()), kBuildIdSize));
  } else {
    emit_all([&](std::string_view b) { sha.Update(b); });
    const Sha1::Digest digest = sha.Final();
    for (size_t i = 0; i < kBuildIdSize; ++i) note.bytes[16 + i] = char(digest[i]);
    emit_all(sink);
  }
  if (layout) *layout = sizes;
}

}  // namespace

std::string BuildJitImage(const JitImageSpec& spec, std::string_view display_name,
                          JitImageLayout* layout) {
  std::string out;
  auto patch = [&](uint64_t offset, std::string_view bytes) {
    out.replace(offset, bytes.size(), bytes);
  };
  EmitJitImage(
      spec, display_name, layout, [&](std::string_view b) { out.append(b); }, &patch);
  return out;
}

JitImageLayout WriteJitImage(const std::string& path, const JitImageSpec& spec,
                             OutputGroup* group) {
  JitImageLayout layout;
  AtomicOutputFile file(path, group);
  auto sink = [&](std::string_view b) { file.Write(b); };
  auto patch = [&](uint64_t offset, std::string_view bytes) { file.WriteAt(offset, bytes); };
  // A device or FIFO at the image's path is written through, and cannot be written back into.
  EmitJitImage(spec, path, &layout, sink, file.CanWriteAt() ? &patch : nullptr);
  file.Commit();
  return layout;
}

}  // namespace cg_inject
