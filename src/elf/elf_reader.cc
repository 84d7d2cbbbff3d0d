// ELF objects read through a read-only memory map, touching only the ELF header, the program
// headers, the section headers and the symbol and string tables, plus the separate debug files
// that Valgrind also reads (GNU build-id and .gnu_debuglink conventions, as in GDB's "Separate
// Debug Files" manual section). Spec: System V gABI 4.1 "ELF Header", "Sections", "Symbol Table",
// "Program Header", "Note Section"; field offsets below are those of ELFCLASS32 and ELFCLASS64.
//
// Why not LIEF (which this file used up to issue 24): LIEF 0.9's Parser::parse reads the whole file
// and copies every section, symbol and relocation. For the 99 MB /usr/bin/node (110k .symtab and
// 75k .dynsym entries) that was 0.9-3.2 s and 265 MB peak RSS, on every Node profile, to find a
// few symbols. Here the work is one pass over each symbol table, and the image's names are views
// into the map, whose pages leave the resident set once the image is built: a name is read back
// from the page cache when a lookup returns it (a few hundred of node's 110k, issue 24).
// Why not elfutils' libelf: it would do the same reads over its own mmap, but adds a library to
// every build for the ~200 lines below, and its checks are not ours to state (we reject a symbol
// table that ends past the file, a string table without its final NUL, ...) .
//
// Every offset and count comes from a hostile file: each is checked against the mapped size with
// overflow-safe arithmetic before a byte is read, and fields are memcpy'd into integers (never
// a struct cast). The one thing a map cannot guard is the file shrinking while it is mapped
// (SIGBUS, which the CLI reports naming the profile's objects), like every other mmap-based ELF
// tool.
#include "elf/elf_reader.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <string_view>
#include <tuple>
#include <vector>

#include "elf/elf_header.h"
#include "elf/name_ends.h"
#include "elf/object_file_map.h"
#include "util/flat_hash_map.h"

namespace cg_inject {
namespace {

constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtNote = 4;
constexpr uint32_t kPfX = 1;
constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kShtDynsym = 11;
constexpr uint8_t kSttFunc = 2;
constexpr uint8_t kSttGnuIfunc = 10;
constexpr uint32_t kNtGnuBuildId = 3;
constexpr uint16_t kTypeDyn = 3;

// Little-endian fields of a mapped file; callers check bounds with Fits() first.
class Fields {
 public:
  explicit Fields(std::string_view bytes) : bytes_(bytes) {}

  uint64_t size() const { return bytes_.size(); }
  bool Fits(uint64_t offset, uint64_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }
  // A field of `length` 1, 2, 4 or 8 bytes, memcpy'd and put in host order.
  uint64_t Read(uint64_t offset, uint64_t length) const {
    uint64_t v = 0;
    if constexpr (std::endian::native == std::endian::little) {
      // Fixed-size copies, which compile to one load: a memcpy call per field was a fifth of
      // reading node's symbol tables.
      const char* at = bytes_.data() + offset;
      switch (length) {
        case 1:
          return static_cast<uint8_t>(*at);
        case 2:
          return Load<uint16_t>(at);
        case 4:
          return Load<uint32_t>(at);
        case 8:
          return Load<uint64_t>(at);
        default:
          memcpy(&v, at, length);
      }
    } else {
      for (uint64_t i = length; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes_[offset + i]);
    }
    return v;
  }
  std::string_view Slice(uint64_t offset, uint64_t length) const {
    return bytes_.substr(offset, length);
  }

 private:
  template <typename T>
  static T Load(const char* at) {
    T v;
    memcpy(&v, at, sizeof v);
    return v;
  }

  std::string_view bytes_;
};

// Where the fields of a section header, a program header and a symbol lie, per class.
struct Layout {
  uint64_t word;  // size of an address or offset field
  uint64_t ph_size, ph_type, ph_flags, ph_offset, ph_vaddr, ph_filesz, ph_memsz;
  uint64_t sh_size, sh_name, sh_type, sh_offset, sh_bytes, sh_link;
  uint64_t sym_size, st_name, st_info, st_shndx, st_value, st_size;
};
constexpr Layout kLayout32 = {4, 32, 0,  24, 4,  8, 16, 20, 40, 0,
                              4, 16, 20, 24, 16, 0, 12, 14, 4,  8};
constexpr Layout kLayout64 = {8, 56, 0, 4, 8, 16, 32, 40, 64, 0, 4, 24, 32, 40, 24, 0, 4, 6, 8, 16};

struct Section {
  uint32_t name = 0;  // offset in the section name table
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
};

// One checked ELF file: its bytes (a map of the file, or memory given by the caller), header
// facts and section headers.
struct ElfFile {
  std::shared_ptr<ObjectFileMap> map;  // null for memory given by the caller
  std::string_view bytes;
  ElfHeaderFacts facts;
  const Layout* layout = nullptr;
  std::vector<Section> sections;
  std::string_view section_names;  // .shstrtab, or empty

  Fields fields() const { return Fields(bytes); }

  // The NUL-terminated string at `offset` of `table`, or "" when it runs off the table.
  static std::string_view StringAt(std::string_view table, uint64_t offset) {
    if (offset >= table.size()) return {};
    const size_t end = table.find('\0', offset);
    if (end == std::string_view::npos) return {};
    return table.substr(offset, end - offset);
  }
  // Section names are short (".gnu_debuglink"): looked for within a window, so that 65,000
  // headers naming one long run of letters cost no more than the headers.
  std::string_view SectionName(const Section& s) const {
    return StringAt(section_names.substr(0, std::min<uint64_t>(section_names.size(),
                                                               uint64_t(s.name) + kSectionNameMax)),
                    s.name);
  }
  static constexpr uint64_t kSectionNameMax = 256;
  std::string_view Contents(const Section& s) const {
    return fields().Fits(s.offset, s.size) ? fields().Slice(s.offset, s.size) : std::string_view();
  }
};

// Checks `bytes` as an ELF file: header (CheckElfHeader), section headers, and every symbol table
// and its string table inside the file. Returns "" or why it cannot be used.
std::string ParseElf(std::string_view bytes, ElfFile* elf) {
  elf->bytes = bytes;
  const Fields f = elf->fields();
  std::string reason = CheckElfHeader(f.Slice(0, kElfHeaderBytes), f.size(), &elf->facts);
  if (!reason.empty()) return reason;
  const Layout& l = elf->facts.is_64 ? kLayout64 : kLayout32;
  elf->layout = &l;
  // CheckElfHeader made sure the section header table lies inside the file. e_shnum 0 (no
  // sections, or extended numbering, which no loadable object needs) leaves the table empty.
  for (uint64_t i = 0; i < elf->facts.shnum; ++i) {
    const uint64_t at = elf->facts.shoff + i * l.sh_size;
    Section s;
    s.name = static_cast<uint32_t>(f.Read(at + l.sh_name, 4));
    s.type = static_cast<uint32_t>(f.Read(at + l.sh_type, 4));
    s.offset = f.Read(at + l.sh_offset, l.word);
    s.size = f.Read(at + l.sh_bytes, l.word);
    s.link = static_cast<uint32_t>(f.Read(at + l.sh_link, 4));
    elf->sections.push_back(s);
  }
  if (elf->facts.shstrndx < elf->sections.size()) {
    elf->section_names = elf->Contents(elf->sections[elf->facts.shstrndx]);
  }
  uint64_t table_bytes = 0;
  for (const Section& s : elf->sections) {
    if (s.type != kShtSymtab && s.type != kShtDynsym) continue;
    const std::string name(elf->SectionName(s));
    if (!f.Fits(s.offset, s.size)) {
      return "symbol table " + name + " ends past the end of the file";
    }
    if (s.link >= elf->sections.size() ||
        !f.Fits(elf->sections[s.link].offset, elf->sections[s.link].size)) {
      return "string table of symbol table " + name + " ends past the end of the file";
    }
    table_bytes += s.size;  // each at most the file's size: no overflow for 65,535 of them
  }
  // Each symbol table is read once, so reading costs what the file holds, unless section headers
  // describe one table many times (65,000 headers over one table made reading quadratic, issue
  // 36): such a file is no object a linker wrote, and reading it is refused, not bounded
  // silently.
  if (table_bytes > f.size()) {
    return "skipped: its symbol tables add up to " + std::to_string(table_bytes) +
           " bytes, more than the file's " + std::to_string(f.size()) +
           " (section headers describing one table again and again)";
  }
  return "";
}

// Maps `path` and parses it (ParseElf).
std::string OpenElf(const std::string& path, ElfFile* elf) {
  elf->map = std::make_shared<ObjectFileMap>();
  std::string reason = elf->map->Open(path);
  if (!reason.empty()) return reason;
  return ParseElf(elf->map->bytes(), elf);
}

// A function symbol while the tables are read: its name is a view into the mapped string table,
// so the duplicates between .symtab, .dynsym and a debug file cost no allocation.
struct Candidate {
  uint64_t addr = 0;
  uint64_t size = 0;
  std::string_view name;
  bool indirect = false;  // STT_GNU_IFUNC
};

// Valgrind 3.19 picks one name per address. In `ls` and C++ test profiles with libc6-dbg
// installed its choice among each address's names always followed: the shortest name without its
// version suffix (getpid over __getpid, bcmp over memcmp, lseek over llseek@GLIBC_2.2.5); then a
// default version ("memcpy@@GLIBC_2.14", as glibc's .symtab writes them) over another version
// ("__acos_finite@GLIBC_2.15") over none; then byte order (_Exit over _exit). Binding played no
// part. Asked only where an address has several names.
bool Preferred(const Candidate& a, const Candidate& b) {
  auto rank = [](const Candidate& c) {
    const size_t at = c.name.find('@');
    const size_t base_length = at == std::string_view::npos ? c.name.size() : at;
    const int version = at == std::string_view::npos ? 2 : c.name.substr(at, 2) == "@@" ? 0 : 1;
    return std::tuple(base_length, version, c.name, c.size);
  };
  return rank(a) < rank(b);
}

bool ByAddress(const Candidate& a, const Candidate& b) { return a.addr < b.addr; }

// Appends the function symbols of every section of `type` (.symtab or .dynsym), except those at
// an address in `skip`, whose names are then never read. Names that do not end within
// NameEnds::kQuickScan bytes are resolved after the tables are read, each byte of the file
// scanned once (name_ends.h).
void CollectFunctions(const ElfFile& elf, uint32_t type, std::vector<Candidate>* out,
                      const FlatHashMap<uint64_t, NoValue>* skip = nullptr) {
  const Layout& l = *elf.layout;
  const Fields f = elf.fields();
  NameEnds names(elf.bytes);
  const size_t first = out->size();
  bool long_names = false;
  for (const Section& s : elf.sections) {
    if (s.type != type) continue;
    // OpenElf checked both tables against the file.
    const Section& strings = elf.sections[s.link];
    const uint64_t count = s.size / l.sym_size;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t at = s.offset + i * l.sym_size;
      const uint8_t info = static_cast<uint8_t>(f.Read(at + l.st_info, 1));
      const uint8_t sym_type = info & 0xf;
      if (sym_type != kSttFunc && sym_type != kSttGnuIfunc) continue;
      // shndx 0 is SHN_UNDEF: an import, whose value is 0 or a PLT address, not this function.
      // Size-0 symbols (crtstuff's deregister_tm_clones, frame_dummy) are skipped because
      // Valgrind skips them too: it prints their code as `0x...`, and a name here would not match.
      const uint64_t shndx = f.Read(at + l.st_shndx, 2);
      const uint64_t value = f.Read(at + l.st_value, l.word);
      const uint64_t size = f.Read(at + l.st_size, l.word);
      if (shndx == 0 || value == 0 || size == 0) continue;
      if (skip != nullptr && skip->contains(value)) continue;
      std::string_view name;
      const uint64_t name_offset = f.Read(at + l.st_name, 4);
      if (!names.Quick(strings.offset, strings.offset + strings.size, name_offset, &name)) {
        // A long name: found below, kept under its index for now.
        names.Later(strings.offset, strings.offset + strings.size, name_offset,
                    uint32_t(out->size() - first));
        long_names = true;
      } else if (name.empty()) {
        continue;
      }
      Candidate c;
      c.addr = value;
      c.size = size;
      c.name = name;
      c.indirect = sym_type == kSttGnuIfunc;
      out->push_back(c);
    }
  }
  if (!long_names) return;
  for (const NameEnds::Resolved& r : names.Resolve()) (*out)[first + r.tag].name = r.name;
  // A name no NUL ends inside its table is no name.
  out->erase(std::remove_if(out->begin() + std::ptrdiff_t(first), out->end(),
                            [](const Candidate& c) { return c.name.empty(); }),
             out->end());
}

// The GNU build ID in the notes `notes`, as lowercase hex, or "". Note headers are three 4-byte
// words in both classes; name and description are padded to 4 bytes. `*budget` is what may still
// be read of the file's notes: headers describing one block of notes many times read it once.
std::string BuildIdFromNotes(const Fields& f, uint64_t* budget) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto align4 = [](uint64_t n) { return n + (-n & 3); };
  if (f.size() > *budget) {
    *budget = 0;
    return "";
  }
  *budget -= f.size();
  for (uint64_t at = 0; f.Fits(at, 12);) {
    const uint64_t namesz = f.Read(at, 4);
    const uint64_t descsz = f.Read(at + 4, 4);
    const uint64_t type = f.Read(at + 8, 4);
    const uint64_t name_at = at + 12;
    const uint64_t desc_at = name_at + align4(namesz);  // 32-bit sizes: no overflow
    if (!f.Fits(name_at, namesz) || !f.Fits(desc_at, descsz)) break;
    if (type == kNtGnuBuildId && namesz == 4 && f.Slice(name_at, 4) == std::string_view("GNU", 4)) {
      std::string hex;
      for (uint64_t i = 0; i < descsz; ++i) {
        const uint8_t byte = static_cast<uint8_t>(f.Read(desc_at + i, 1));
        hex.push_back(kHex[byte >> 4]);
        hex.push_back(kHex[byte & 0xf]);
      }
      return hex;
    }
    at = desc_at + align4(descsz);
  }
  return "";
}

// The GNU build ID from the note sections, else from PT_NOTE segments (a file without section
// headers), or "".
std::string BuildId(const ElfFile& elf) {
  uint64_t budget = elf.bytes.size();
  for (const Section& s : elf.sections) {
    if (s.type != kShtNote) continue;
    std::string id = BuildIdFromNotes(Fields(elf.Contents(s)), &budget);
    if (!id.empty()) return id;
  }
  budget = elf.bytes.size();  // the segments hold the same notes as the sections
  const Layout& l = *elf.layout;
  const Fields f = elf.fields();
  for (uint64_t i = 0; i < elf.facts.phnum; ++i) {
    const uint64_t at = elf.facts.phoff + i * l.ph_size;
    if (f.Read(at + l.ph_type, 4) != kPtNote) continue;
    const uint64_t offset = f.Read(at + l.ph_offset, l.word);
    const uint64_t size = f.Read(at + l.ph_filesz, l.word);
    if (!f.Fits(offset, size)) continue;
    std::string id = BuildIdFromNotes(Fields(f.Slice(offset, size)), &budget);
    if (!id.empty()) return id;
  }
  return "";
}

// The file name stored in .gnu_debuglink (a NUL-terminated name, then padding and a CRC), or "".
std::string DebugLinkName(const ElfFile& elf) {
  for (const Section& s : elf.sections) {
    if (elf.SectionName(s) != ".gnu_debuglink") continue;
    const std::string_view content = elf.Contents(s);
    const size_t nul = content.find('\0');
    if (nul == std::string_view::npos) return "";
    std::string name(content.substr(0, nul));
    // A link is a plain file name; anything else would let a file point outside the debug dirs.
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return "";
    }
    return name;
  }
  return "";
}

// Finds, opens and checks the separate debug file of the object at `image_path`. Returns it and
// sets `*debug_path` to its path (without the root prefix), or null when there is none that fits.
std::unique_ptr<ElfFile> OpenDebugFile(const std::string& image_path, const ElfFile& elf,
                                       const ObjectCatalogOptions& options,
                                       std::string* debug_path) {
  const std::string build_id = BuildId(elf);
  std::vector<std::string> candidates;
  if (build_id.size() > 2) {
    candidates.push_back(options.debug_dir + "/.build-id/" + build_id.substr(0, 2) + "/" +
                         build_id.substr(2) + ".debug");
  }
  if (const std::string link = DebugLinkName(elf); !link.empty()) {
    const size_t slash = image_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : image_path.substr(0, slash);
    candidates.push_back(dir + "/" + link);
    candidates.push_back(dir + "/.debug/" + link);
    candidates.push_back(options.debug_dir + dir + "/" + link);
  }
  for (const std::string& candidate : candidates) {
    if (candidate == image_path) continue;
    const std::string file = options.root + candidate;
    if (access(file.c_str(), R_OK) != 0) continue;
    auto debug = std::make_unique<ElfFile>();
    if (!OpenElf(file, debug.get()).empty()) continue;
    // A stale debug file from another build would attach wrong names to addresses.
    if (!build_id.empty() && BuildId(*debug) != build_id) continue;
    *debug_path = candidate;
    return debug;
  }
  return nullptr;
}

// Builds the image of a parsed `elf`, with the symbols of its debug file when options ask. The
// image's names are views into the maps, which it keeps.
std::unique_ptr<ObjectImage> BuildImage(const std::string& image_path, ElfFile* elf,
                                        const ObjectCatalogOptions* options,
                                        std::string* why_absent) {
  const Layout& l = *elf->layout;
  const Fields f = elf->fields();
  std::vector<LoadSegment> segments;
  for (uint64_t i = 0; i < elf->facts.phnum; ++i) {
    const uint64_t at = elf->facts.phoff + i * l.ph_size;
    if (f.Read(at + l.ph_type, 4) != kPtLoad) continue;
    segments.push_back({f.Read(at + l.ph_vaddr, l.word), f.Read(at + l.ph_memsz, l.word),
                        (f.Read(at + l.ph_flags, 4) & kPfX) != 0});
  }
  if (segments.empty()) {
    *why_absent = "no PT_LOAD segments";
    return nullptr;
  }

  std::vector<Candidate> candidates;
  CollectFunctions(*elf, kShtSymtab, &candidates);
  std::string debug_file;
  std::unique_ptr<ElfFile> debug;
  if (options != nullptr && options->use_debug_files) {
    debug = OpenDebugFile(image_path, *elf, *options, &debug_file);
    if (debug) CollectFunctions(*debug, kShtSymtab, &candidates);
  }
  // By address, the whole preference asked only where an address has several names: sorting
  // with it as comparator was most of the time spent reading /usr/bin/node's 185k function
  // symbols (issue 24).
  std::sort(candidates.begin(), candidates.end(), ByAddress);
  // .dynsym only where no .symtab has a function. The linker writes every dynamic symbol into
  // .symtab too, under the same name or with its version appended ("memcpy@@GLIBC_2.14" for
  // .dynsym's "memcpy"): at such an address a .dynsym name would only be an alias, never the name
  // Valgrind prints (see Preferred), and reading node's 75k .dynsym names to find that out was a
  // fifth of the time spent reading it. Stripped objects have no .symtab: all of .dynsym counts.
  // A hash set: one cache miss a .dynsym entry, where a binary search of the sorted addresses
  // missed at most of its steps.
  FlatHashMap<uint64_t, NoValue> named;
  for (const Candidate& c : candidates) named.try_emplace(c.addr);
  std::vector<Candidate> dynamic;
  CollectFunctions(*elf, kShtDynsym, &dynamic, &named);
  named = {};
  std::sort(dynamic.begin(), dynamic.end(), ByAddress);
  const size_t first_dynamic = candidates.size();
  candidates.insert(candidates.end(), dynamic.begin(), dynamic.end());
  std::vector<Candidate>().swap(dynamic);
  std::inplace_merge(candidates.begin(), candidates.begin() + first_dynamic, candidates.end(),
                     ByAddress);
  std::vector<ElfSymbol> symbols;
  symbols.reserve(candidates.size());
  std::vector<uint64_t> indirect;
  for (const Candidate& c : candidates) {
    if (c.indirect) indirect.push_back(c.addr);
  }
  for (auto begin = candidates.begin(); begin != candidates.end();) {
    auto end = begin + 1;
    while (end != candidates.end() && end->addr == begin->addr) ++end;
    if (end - begin > 1) std::sort(begin, end, Preferred);
    // The same symbol in .symtab and the debug file's is one entry.
    for (auto c = begin; c != end; ++c) {
      if (c != begin && (c - 1)->size == c->size && (c - 1)->name == c->name) continue;
      symbols.push_back({c->addr, c->size, c->name});
    }
    begin = end;
  }
  std::vector<Candidate>().swap(candidates);

  // The names stay in the maps (memory given by the caller is copied instead).
  std::shared_ptr<const void> names;
  if (elf->map) {
    names = debug ? std::make_shared<
                        std::pair<std::shared_ptr<ObjectFileMap>, std::shared_ptr<ObjectFileMap>>>(
                        elf->map, debug->map)
                  : std::shared_ptr<const void>(elf->map);
  }
  auto image =
      std::make_unique<ObjectImage>(image_path, elf->facts.type == kTypeDyn, std::move(segments),
                                    std::move(symbols), std::move(debug_file), std::move(names));
  image->SetIndirect(std::move(indirect));
  // Nothing is read from the maps again but the names lookups return.
  if (elf->map) elf->map->DropPages();
  if (debug && debug->map) debug->map->DropPages();
  return image;
}

}  // namespace

std::unique_ptr<ObjectImage> TryOpenElfObject(const std::string& image_path,
                                              const ObjectCatalogOptions& options,
                                              std::string* why_absent) {
  ElfFile elf;
  *why_absent = OpenElf(options.root + image_path, &elf);
  if (!why_absent->empty()) return nullptr;
  return BuildImage(image_path, &elf, &options, why_absent);
}

std::unique_ptr<ObjectImage> ReadElfObject(const std::string& image_path, std::string_view bytes,
                                           std::string* why_absent) {
  ElfFile elf;
  *why_absent = ParseElf(bytes, &elf);
  if (!why_absent->empty()) return nullptr;
  return BuildImage(image_path, &elf, nullptr, why_absent);
}

}  // namespace cg_inject
