// ReadObjectStubs: the program headers, the dynamic section's DT_FLAGS_1 and the PLT slots of an
// ELF64 file. Like objdump, a slot is named by the relocation of the GOT entry its jump reads
// (JUMP_SLOT in .rela.plt for lazy .plt slots, GLOB_DAT in .rela.dyn for .plt.got ones), so the
// name does not depend on the order of the slots or on which linker laid them out.
#include "elf/object_image_stubs.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "elf/elf_header.h"
#include "elf/name_ends.h"
#include "elf/object_file_map.h"

namespace cg_inject {
namespace {

constexpr uint16_t kEtExec = 2;
constexpr uint16_t kEtDyn = 3;
constexpr uint16_t kEmX86_64 = 62;
constexpr uint16_t kEmAArch64 = 183;
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPfX = 1;
constexpr uint32_t kShtRela = 4;
constexpr uint32_t kShtDynamic = 6;
constexpr uint64_t kShfExecInstr = 4;
constexpr int64_t kDtNull = 0;
constexpr int64_t kDtFlags1 = 0x6ffffffb;
constexpr uint64_t kDf1Pie = 0x08000000;

/// Little-endian reads that fail instead of reading past the end of the file.
class Bytes {
 public:
  explicit Bytes(std::string_view bytes) : bytes_(bytes) {}
  bool Has(uint64_t offset, uint64_t size) const {
    return offset <= bytes_.size() && size <= bytes_.size() - offset;
  }
  template <typename T>
  T Read(uint64_t offset) const {  // callers check Has first
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof value);
    return value;
  }
  std::string_view View(uint64_t offset, uint64_t size) const {
    return Has(offset, size) ? bytes_.substr(offset, size) : std::string_view();
  }

 private:
  std::string_view bytes_;
};

struct Section {
  std::string_view name;
  uint32_t type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0, entsize = 0;
  uint32_t link = 0;
};

std::vector<Section> ReadSections(const Bytes& file, const ElfHeaderFacts& h) {
  std::vector<Section> sections;
  if (h.shnum == 0) return sections;
  for (uint64_t i = 0; i < h.shnum; ++i) {
    const uint64_t at = h.shoff + i * 64;
    if (!file.Has(at, 64)) return {};
    Section s;
    s.type = file.Read<uint32_t>(at + 4);
    s.flags = file.Read<uint64_t>(at + 8);
    s.addr = file.Read<uint64_t>(at + 16);
    s.offset = file.Read<uint64_t>(at + 24);
    s.size = file.Read<uint64_t>(at + 32);
    s.link = file.Read<uint32_t>(at + 40);
    s.entsize = file.Read<uint64_t>(at + 56);
    sections.push_back(s);
  }
  // Names, from the section-name string table. Section names are short (".plt.got"): a name is
  // looked for within a window, so 65,000 headers naming one long run of letters cost no more
  // than the headers.
  if (h.shstrndx < sections.size()) {
    const Section& strtab = sections[h.shstrndx];
    std::string_view names = file.View(strtab.offset, strtab.size);
    for (uint64_t i = 0; i < h.shnum; ++i) {
      const uint32_t name = file.Read<uint32_t>(h.shoff + i * 64);
      if (name >= names.size()) continue;
      std::string_view rest = names.substr(name, 64);
      const size_t end = rest.find('\0');
      if (end != std::string_view::npos) sections[i].name = rest.substr(0, end);
    }
  }
  return sections;
}

/// Why the sections of the kinds a reader loops over add up to more than the file, or "": a
/// linker writes each table once, so reading them all costs what the file holds, while section
/// headers that describe one table thousands of times made it quadratic (65,000 SHT_RELA
/// headers over one 100,000-entry block: 103 s, issue 36 item 1).
std::string OverlappingTables(uint64_t file_size, const std::vector<Section>& sections) {
  uint64_t rela = 0, dynamic = 0, plt = 0;
  for (const Section& s : sections) {
    // What the loops below may read of it: up to the end of the file, at most its size, so 65,535
    // of them cannot overflow.
    const uint64_t bytes = s.offset < file_size ? std::min(s.size, file_size - s.offset) : 0;
    if (s.type == kShtRela) rela += bytes;
    if (s.type == kShtDynamic) dynamic += bytes;
    if (s.name == ".plt" || s.name == ".plt.got" || s.name == ".plt.sec") plt += bytes;
  }
  auto say = [&](const char* what, uint64_t bytes) {
    return "skipped: its " + std::string(what) + " add up to " + std::to_string(bytes) +
           " bytes, more than the file's " + std::to_string(file_size) +
           " (section headers describing one table again and again)";
  };
  if (rela > file_size) return say("relocation sections", rela);
  if (dynamic > file_size) return say("dynamic sections", dynamic);
  if (plt > file_size) return say("PLT sections", plt);
  return "";
}

bool IsPieExecutable(const Bytes& file, const std::vector<Section>& sections) {
  for (const Section& s : sections) {
    if (s.type != kShtDynamic) continue;
    for (uint64_t at = s.offset; at + 16 <= s.offset + s.size && file.Has(at, 16); at += 16) {
      const int64_t tag = file.Read<int64_t>(at);
      if (tag == kDtNull) break;
      if (tag == kDtFlags1) return (file.Read<uint64_t>(at + 8) & kDf1Pie) != 0;
    }
  }
  return false;
}

/// GOT address -> the name of the symbol its relocation names, from every SHT_RELA section whose
/// symbol table (sh_link) is readable. Names are views into `bytes`; each byte of the file is
/// looked at for a name's end once at most (name_ends.h), however the names overlap.
std::unordered_map<uint64_t, std::string_view> GotNames(std::string_view bytes, const Bytes& file,
                                                        const std::vector<Section>& sections) {
  std::unordered_map<uint64_t, std::string_view> names;
  NameEnds ends(bytes);
  std::vector<uint64_t> long_name_gots;  // by NameEnds tag
  for (const Section& rela : sections) {
    if (rela.type != kShtRela || rela.link >= sections.size()) continue;
    const Section& symtab = sections[rela.link];
    if (symtab.link >= sections.size()) continue;
    const Section& strtab = sections[symtab.link];
    if (file.View(strtab.offset, strtab.size).size() != strtab.size || strtab.size == 0) continue;
    for (uint64_t at = rela.offset; at + 24 <= rela.offset + rela.size && file.Has(at, 24);
         at += 24) {
      const uint64_t got = file.Read<uint64_t>(at);
      const uint64_t symbol = file.Read<uint64_t>(at + 8) >> 32;
      if (symbol == 0 || symbol >= symtab.size / 24) continue;  // IRELATIVE: no symbol
      const uint64_t sym_at = symtab.offset + symbol * 24;
      if (!file.Has(sym_at, 24)) continue;
      const uint32_t name = file.Read<uint32_t>(sym_at);
      if (name == 0) continue;
      std::string_view found;
      if (!ends.Quick(strtab.offset, strtab.offset + strtab.size, name, &found)) {
        ends.Later(strtab.offset, strtab.offset + strtab.size, name,
                   uint32_t(long_name_gots.size()));
        long_name_gots.push_back(got);
        continue;
      }
      if (!found.empty()) names.emplace(got, found);  // empty: runs off its string table
    }
  }
  for (const NameEnds::Resolved& r : ends.Resolve()) {
    if (!r.name.empty()) names.emplace(long_name_gots[r.tag], r.name);
  }
  return names;
}

/// The GOT address a PLT slot's jump reads, or nullopt when the slot holds no such jump (lazy
/// .plt's first entry, which reads GOT+16 with no relocation, is then left nameless by GotNames).
std::optional<uint64_t> SlotGot(std::string_view slot, uint64_t slot_addr, uint16_t machine) {
  if (machine == kEmX86_64) {
    // jmp *disp32(%rip): ff 25, after an endbr64 (f3 0f 1e fa) or a bnd prefix (f2) if any.
    for (size_t i = 0; i + 6 <= slot.size(); ++i) {
      if (uint8_t(slot[i]) != 0xff || uint8_t(slot[i + 1]) != 0x25) continue;
      int32_t disp;
      std::memcpy(&disp, slot.data() + i + 2, 4);
      return slot_addr + i + 6 + uint64_t(int64_t(disp));
    }
    return std::nullopt;
  }
  if (machine == kEmAArch64) {
    // adrp x16, PAGE ; ldr x17, [x16, #OFF] (then add x16, x16, #OFF ; br x17).
    for (size_t i = 0; i + 8 <= slot.size(); i += 4) {
      uint32_t adrp, ldr;
      std::memcpy(&adrp, slot.data() + i, 4);
      std::memcpy(&ldr, slot.data() + i + 4, 4);
      if ((adrp & 0x9F00001Fu) != 0x90000010u) continue;  // adrp x16
      if ((ldr & 0xFFC003FFu) != 0xF9400211u) continue;   // ldr x17, [x16, #imm12 * 8]
      const uint64_t immlo = (adrp >> 29) & 3, immhi = (adrp >> 5) & 0x7FFFF;
      int64_t pages = int64_t((immhi << 2) | immlo);
      if (pages & (int64_t{1} << 20)) pages -= int64_t{1} << 21;  // sign of the 21-bit field
      const uint64_t page = ((slot_addr + i) & ~uint64_t{0xFFF}) + uint64_t(pages * 4096);
      return page + ((ldr >> 10) & 0xFFF) * 8;
    }
  }
  return std::nullopt;
}

}  // namespace

bool ObjectStubs::IsCode(uint64_t addr) const {
  return std::any_of(code.begin(), code.end(),
                     [addr](const LoadSegment& s) { return s.Contains(addr); });
}

const PltSlot* ObjectStubs::PltSlotAt(uint64_t addr) const {
  auto it = std::upper_bound(plt.begin(), plt.end(), addr,
                             [](uint64_t a, const PltSlot& s) { return a < s.addr; });
  if (it == plt.begin()) return nullptr;
  --it;
  return it->Contains(addr) ? &*it : nullptr;
}

std::optional<uint64_t> ObjectStubs::SlotBias(uint64_t runtime_addr,
                                              std::string_view target) const {
  std::optional<uint64_t> bias;
  // Only the slots at the address's offset in its page: a JIT profile may ask for thousands of
  // addresses, and libstdc++ has a thousand slots.
  auto offset = [this](uint32_t i) { return plt[i].addr % kLoadAlign; };
  auto first =
      std::lower_bound(by_page_offset.begin(), by_page_offset.end(), runtime_addr % kLoadAlign,
                       [&](uint32_t i, uint64_t off) { return offset(i) < off; });
  for (auto it = first; it != by_page_offset.end() && offset(*it) == runtime_addr % kLoadAlign;
       ++it) {
    const PltSlot& slot = plt[*it];
    if (slot.addr > runtime_addr || slot.symbol != target) continue;
    if (bias && *bias != runtime_addr - slot.addr) return std::nullopt;  // two slots fit
    bias = runtime_addr - slot.addr;
  }
  return bias;
}

ObjectStubs ReadObjectStubs(std::string_view bytes) {
  ObjectStubs stubs;
  ElfHeaderFacts h;
  if (!CheckElfHeader(bytes, bytes.size(), &h).empty() || !h.is_64) return stubs;
  Bytes file(bytes);
  for (uint64_t i = 0; i < h.phnum; ++i) {
    const uint64_t at = h.phoff + i * 56;
    if (!file.Has(at, 56)) break;
    if (file.Read<uint32_t>(at) != kPtLoad || (file.Read<uint32_t>(at + 4) & kPfX) == 0) continue;
    const uint64_t size = file.Read<uint64_t>(at + 40);
    if (size != 0) stubs.code.push_back({file.Read<uint64_t>(at + 16), size, true});
  }
  std::vector<Section> sections = ReadSections(file, h);
  stubs.skipped = OverlappingTables(bytes.size(), sections);
  if (!stubs.skipped.empty()) {
    stubs.code.clear();
    return stubs;
  }
  stubs.fixed_addresses = h.type == kEtExec;
  stubs.pie_executable = h.type == kEtDyn && IsPieExecutable(file, sections);
  // Shared libraries' slots too: a profile locates one by a stub's call (ObjectStubs::SlotBias).
  std::unordered_map<uint64_t, std::string_view> got_names = GotNames(bytes, file, sections);
  for (const Section& s : sections) {
    if (s.name != ".plt" && s.name != ".plt.got" && s.name != ".plt.sec") continue;
    if ((s.flags & kShfExecInstr) == 0) continue;
    std::string_view code = file.View(s.offset, s.size);
    // The linkers' slot sizes when sh_entsize does not say.
    const uint64_t slot_size = s.entsize != 0 ? s.entsize : s.name == ".plt.got" ? 8 : 16;
    for (uint64_t off = 0; off + slot_size <= code.size(); off += slot_size) {
      std::optional<uint64_t> got = SlotGot(code.substr(off, slot_size), s.addr + off, h.machine);
      if (!got) continue;
      auto name = got_names.find(*got);
      if (name == got_names.end()) continue;
      stubs.plt.push_back({s.addr + off, slot_size, name->second});
    }
  }
  std::sort(stubs.plt.begin(), stubs.plt.end(),
            [](const PltSlot& a, const PltSlot& b) { return a.addr < b.addr; });
  for (uint32_t i = 0; i < stubs.plt.size(); ++i) stubs.by_page_offset.push_back(i);
  std::stable_sort(stubs.by_page_offset.begin(), stubs.by_page_offset.end(),
                   [&](uint32_t a, uint32_t b) {
                     return stubs.plt[a].addr % kLoadAlign < stubs.plt[b].addr % kLoadAlign;
                   });
  return stubs;
}

ObjectStubs ReadObjectStubsFile(const std::string& path) {
  auto map = std::make_shared<ObjectFileMap>();
  if (!map->Open(path).empty()) return {};
  ObjectStubs stubs = ReadObjectStubs(map->bytes());
  // The slots' names stay in the map, read back from the page cache when a stub is named.
  map->DropPages();
  if (!stubs.plt.empty()) stubs.names = std::move(map);
  return stubs;
}

}  // namespace cg_inject
