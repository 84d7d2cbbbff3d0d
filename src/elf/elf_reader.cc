// ELF objects through LIEF 0.9 (Debian's liblief-dev), plus the separate debug files that
// Valgrind also reads (GNU build-id and .gnu_debuglink conventions, as in GDB's "Separate Debug
// Files" manual section). LIEF 0.9 needs guarding at this boundary:
// - Parser::parse crashes with SIGSEGV on a file that is not ELF (a text file, /dev/null, a
//   directory), although LIEF::ELF::is_elf says false; it throws LIEF::bad_file for a missing
//   file; it returns an empty or partial Binary, silently, when e_phoff or e_shoff point past the
//   end of the file or the class byte is unknown. So CheckElfHeader vets the header first and the
//   program header count LIEF reports is compared with e_phnum afterwards.
// - Binary::is_pie() is true only with a PT_INTERP segment, so it says false for ordinary shared
//   libraries (libz.so.1); ET_DYN from the header is what tells relative from absolute addresses.
// - It reads the whole file into memory and copies section contents: /usr/bin/node (94 MiB,
//   110k .symtab and 75k .dynsym entries) takes 0.9 s on an idle machine (2-2.7 s with both
//   cores busy) and 270 MiB peak RSS; libc.so.6 25-45 ms plus 65 ms for its libc6-dbg file. Over
//   90% of that is inside LIEF; the Binary is dropped as soon as the image is built.
// This file must not include <elf.h>: its ET_*/PT_* macros would break LIEF's enum declarations.
#include "elf/elf_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <LIEF/ELF.hpp>
#include <LIEF/logging.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <tuple>
#include <vector>

#include "elf/elf_header.h"

namespace cg_inject {
namespace {

using LIEF::ELF::ELF_SECTION_TYPES;
using LIEF::ELF::ELF_SEGMENT_FLAGS;
using LIEF::ELF::ELF_SYMBOL_TYPES;
using LIEF::ELF::SEGMENT_TYPES;

// Reads the header bytes and checks them (see CheckElfHeader). Returns "" when LIEF may parse.
std::string PrecheckFile(const std::string& path, ElfHeaderFacts* facts, uint64_t* file_size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return strerror(errno);
  struct stat st;
  std::string reason;
  char header[kElfHeaderBytes];
  size_t have = 0;
  if (fstat(fd, &st) != 0) {
    reason = strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    reason = "not a regular file";
  } else {
    while (have < sizeof header) {
      const ssize_t n = pread(fd, header + have, sizeof header - have, static_cast<off_t>(have));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        reason = strerror(errno);
        break;
      }
      if (n == 0) break;
      have += static_cast<size_t>(n);
    }
  }
  close(fd);
  if (!reason.empty()) return reason;
  *file_size = static_cast<uint64_t>(st.st_size);
  return CheckElfHeader(std::string_view(header, have), *file_size, facts);
}

// Preference among names at one address, smaller first; see RankName.
struct Candidate {
  ElfSymbol symbol;
  int version_rank = 0;
  size_t base_length = 0;
};

// Valgrind 3.19 picks one name per address. In `ls` and C++ test profiles with libc6-dbg
// installed its choice among each address's names always followed: the shortest name without its
// version suffix (getpid over __getpid, bcmp over memcmp, lseek over llseek@GLIBC_2.2.5); then a
// default version ("memcpy@@GLIBC_2.14", as glibc's .symtab writes them) over another version
// ("__acos_finite@GLIBC_2.15") over none; then byte order (_Exit over _exit). Binding played no
// part.
void RankName(Candidate* c) {
  const std::string& name = c->symbol.name;
  const size_t at = name.find('@');
  c->base_length = at == std::string::npos ? name.size() : at;
  c->version_rank = at == std::string::npos ? 2 : name.compare(at, 2, "@@") == 0 ? 0 : 1;
}

template <typename Symbols>
void CollectFunctions(const Symbols& symbols, std::vector<Candidate>* out) {
  for (const LIEF::ELF::Symbol& s : symbols) {
    const ELF_SYMBOL_TYPES type = s.type();
    if (type != ELF_SYMBOL_TYPES::STT_FUNC && type != ELF_SYMBOL_TYPES::STT_GNU_IFUNC) continue;
    // shndx 0 is SHN_UNDEF: an import, whose value is 0 or a PLT address, not this function.
    // Size-0 symbols (crtstuff's deregister_tm_clones, frame_dummy) are skipped because Valgrind
    // skips them too: it prints their code as `0x...`, and a name here would not match.
    if (s.shndx() == 0 || s.value() == 0 || s.size() == 0 || s.name().empty()) continue;
    Candidate c;
    c.symbol.addr = s.value();
    c.symbol.size = s.size();
    c.symbol.name = s.name();
    RankName(&c);
    out->push_back(std::move(c));
  }
}

// A parsed file that passed every check LIEF 0.9 needs around it.
struct ParsedElf {
  std::unique_ptr<LIEF::ELF::Binary> binary;
  ElfHeaderFacts facts;
};

// Prechecks, parses and validates `path`. Returns "" or why it cannot be used; never throws.
std::string ParseElf(const std::string& path, ParsedElf* parsed) {
  uint64_t file_size = 0;
  std::string reason = PrecheckFile(path, &parsed->facts, &file_size);
  if (!reason.empty()) return reason;
  // LIEF 0.9 logs through easylogging++; keep its messages off our stderr.
  static const bool logging_disabled = [] {
    LIEF::Logger::disable();
    return true;
  }();
  (void)logging_disabled;
  try {
    parsed->binary = LIEF::ELF::Parser::parse(path);
  } catch (const std::exception& e) {
    return std::string("LIEF: ") + e.what();
  } catch (...) {
    return "LIEF: unknown exception";
  }
  if (!parsed->binary) return "LIEF could not parse it";
  const LIEF::ELF::Binary& binary = *parsed->binary;
  const size_t phnum = binary.segments().size();
  if (phnum != parsed->facts.phnum) {
    return "LIEF read " + std::to_string(phnum) + " of " + std::to_string(parsed->facts.phnum) +
           " program headers";
  }
  for (const LIEF::ELF::Section& section : binary.sections()) {
    if (section.type() != ELF_SECTION_TYPES::SHT_SYMTAB &&
        section.type() != ELF_SECTION_TYPES::SHT_DYNSYM) {
      continue;
    }
    if (section.file_offset() > file_size || section.size() > file_size - section.file_offset()) {
      return "symbol table " + section.name() + " ends past the end of the file";
    }
  }
  return "";
}

// The GNU build ID as lowercase hex, or "".
std::string BuildId(const LIEF::ELF::Binary& binary) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const LIEF::ELF::Note& note : binary.notes()) {
    if (note.type() != LIEF::ELF::NOTE_TYPES::NT_GNU_BUILD_ID) continue;
    for (uint8_t byte : note.description()) {
      hex.push_back(kHex[byte >> 4]);
      hex.push_back(kHex[byte & 0xf]);
    }
    break;
  }
  return hex;
}

// The file name stored in .gnu_debuglink (a NUL-terminated name, then padding and a CRC), or "".
std::string DebugLinkName(const LIEF::ELF::Binary& binary) {
  if (!binary.has_section(".gnu_debuglink")) return "";
  const std::vector<uint8_t> content = binary.get_section(".gnu_debuglink").content();
  const auto nul = std::find(content.begin(), content.end(), uint8_t{0});
  std::string name(content.begin(), nul);
  // A link is a plain file name; anything else would let a file point outside the debug dirs.
  if (nul == content.end() || name.empty() || name.find('/') != std::string::npos || name == "." ||
      name == "..") {
    return "";
  }
  return name;
}

// Finds, parses and checks the separate debug file of the object at `image_path`. Returns its
// path (without the root prefix), or "" when there is none that fits.
std::string OpenDebugFile(const std::string& image_path, const LIEF::ELF::Binary& binary,
                          const ObjectCatalogOptions& options, ParsedElf* debug) {
  const std::string build_id = BuildId(binary);
  std::vector<std::string> candidates;
  if (build_id.size() > 2) {
    candidates.push_back(options.debug_dir + "/.build-id/" + build_id.substr(0, 2) + "/" +
                         build_id.substr(2) + ".debug");
  }
  if (const std::string link = DebugLinkName(binary); !link.empty()) {
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
    ParsedElf parsed;
    if (!ParseElf(file, &parsed).empty()) continue;
    // A stale debug file from another build would attach wrong names to addresses.
    if (!build_id.empty() && BuildId(*parsed.binary) != build_id) continue;
    *debug = std::move(parsed);
    return candidate;
  }
  return "";
}

std::unique_ptr<ObjectImage> BuildImage(const std::string& image_path,
                                        const ObjectCatalogOptions& options, const ParsedElf& main,
                                        std::string* why_absent) {
  const LIEF::ELF::Binary& binary = *main.binary;

  std::vector<LoadSegment> segments;
  for (const LIEF::ELF::Segment& seg : binary.segments()) {
    if (seg.type() != SEGMENT_TYPES::PT_LOAD) continue;
    segments.push_back(
        {seg.virtual_address(), seg.virtual_size(), seg.has(ELF_SEGMENT_FLAGS::PF_X)});
  }
  if (segments.empty()) {
    *why_absent = "no PT_LOAD segments";
    return nullptr;
  }

  std::vector<Candidate> candidates;
  CollectFunctions(binary.static_symbols(), &candidates);
  CollectFunctions(binary.dynamic_symbols(), &candidates);
  std::string debug_file;
  if (options.use_debug_files) {
    ParsedElf debug;
    debug_file = OpenDebugFile(image_path, binary, options, &debug);
    if (!debug_file.empty()) CollectFunctions(debug.binary->static_symbols(), &candidates);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::forward_as_tuple(a.symbol.addr, a.base_length, a.version_rank, a.symbol.name) <
           std::forward_as_tuple(b.symbol.addr, b.base_length, b.version_rank, b.symbol.name);
  });
  std::vector<ElfSymbol> symbols;
  symbols.reserve(candidates.size());
  for (Candidate& c : candidates) symbols.push_back(std::move(c.symbol));

  constexpr uint16_t kTypeDyn = 3;
  return std::make_unique<ObjectImage>(image_path, main.facts.type == kTypeDyn, std::move(segments),
                                       std::move(symbols), std::move(debug_file));
}

}  // namespace

std::unique_ptr<ObjectImage> TryOpenElfObject(const std::string& image_path,
                                              const ObjectCatalogOptions& options,
                                              std::string* why_absent) {
  ParsedElf main;
  *why_absent = ParseElf(options.root + image_path, &main);
  if (!why_absent->empty()) return nullptr;
  // Reading a parsed Binary is not expected to throw, but this is the LIEF boundary.
  try {
    return BuildImage(image_path, options, main, why_absent);
  } catch (const std::exception& e) {
    *why_absent = std::string("LIEF: ") + e.what();
  } catch (...) {
    *why_absent = "LIEF: unknown exception";
  }
  return nullptr;
}

}  // namespace cg_inject
