// Reads real ELF files (this test executable, the loaded libc) and checks the results against
// what the dynamic loader reports for the same objects in this process: dl_iterate_phdr gives
// each object's load bias and in-memory program headers, dlsym the runtime address of a symbol.
// ELF address = runtime address - load bias, for PIE and non-PIE builds alike.
#include "elf/elf_reader.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "elf/elf_test_util.h"

// A function this test looks for in its own executable's .symtab. extern "C" for a plain name;
// the loop keeps it longer than one instruction.
extern "C" __attribute__((noinline, used)) int CgInjectElfTestProbe(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum = sum * 3 + i;
  return sum;
}

namespace cg_inject {
namespace {

struct LoadedObject {
  std::string path;  // as the loader knows it; "" for the main program
  uint64_t bias = 0;
  uint64_t extent_begin = ~uint64_t{0};
  uint64_t extent_end = 0;
  std::string build_id;  // hex, from the GNU build-id note in memory; "" if none
  bool found = false;
};

// The GNU build ID in a PT_NOTE segment mapped at `notes` (`size` bytes), as lowercase hex.
std::string BuildIdFromNotes(const unsigned char* notes, uint64_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t{3}; };
  for (uint64_t at = 0; at + sizeof(ElfW(Nhdr)) <= size;) {
    ElfW(Nhdr) nh;
    memcpy(&nh, notes + at, sizeof nh);
    const uint64_t name_at = at + sizeof nh;
    const uint64_t desc_at = name_at + align4(nh.n_namesz);
    if (desc_at + nh.n_descsz > size) break;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
        memcmp(notes + name_at, "GNU", 4) == 0) {
      std::string hex;
      for (uint64_t i = 0; i < nh.n_descsz; ++i) {
        hex.push_back(kHex[notes[desc_at + i] >> 4]);
        hex.push_back(kHex[notes[desc_at + i] & 0xf]);
      }
      return hex;
    }
    at = desc_at + align4(nh.n_descsz);
  }
  return "";
}

// The loaded object containing runtime address `addr`, from the loader's own program headers.
LoadedObject FindLoadedObject(const void* addr) {
  struct Query {
    uint64_t addr;
    LoadedObject result;
  } query{reinterpret_cast<uint64_t>(addr), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        LoadedObject obj;
        obj.bias = info->dlpi_addr;
        obj.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        bool contains = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
          obj.extent_begin = std::min<uint64_t>(obj.extent_begin, ph.p_vaddr);
          obj.extent_end = std::max<uint64_t>(obj.extent_end, ph.p_vaddr + ph.p_memsz);
          if (q->addr - info->dlpi_addr - ph.p_vaddr < ph.p_memsz) contains = true;
        }
        for (int i = 0; i < info->dlpi_phnum && obj.build_id.empty(); ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          obj.build_id = BuildIdFromNotes(
              reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr), ph.p_memsz);
        }
        if (!contains) return 0;
        obj.found = true;
        q->result = obj;
        return 1;
      },
      &query);
  return query.result;
}

std::unique_ptr<ObjectImage> Open(const std::string& path, std::string* why_absent,
                                  const ObjectCatalogOptions& options = {}) {
  return TryOpenElfObject(path, options, why_absent);
}

TEST(ElfReaderTest, ReadsOwnExecutable) {
  const void* probe = reinterpret_cast<const void*>(&CgInjectElfTestProbe);
  const LoadedObject loaded = FindLoadedObject(probe);
  ASSERT_TRUE(loaded.found);
  std::string why;
  // The root prefix is prepended to open the file but the image keeps the profile's name.
  ObjectCatalogOptions options;
  options.root = "/proc/self";
  std::unique_ptr<ObjectImage> image = Open("/exe", &why, options);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_EQ(image->path(), "/exe");
  EXPECT_EQ(why, "");

  EXPECT_EQ(image->extent_begin(), loaded.extent_begin);
  EXPECT_EQ(image->extent_end(), loaded.extent_end);
  // A PIE executable is loaded at a non-zero bias; a non-PIE one at its link addresses.
  EXPECT_EQ(image->is_pie(), loaded.bias != 0);
  EXPECT_TRUE(image->has_code());

  const uint64_t probe_addr = reinterpret_cast<uint64_t>(probe) - loaded.bias;
  EXPECT_TRUE(image->IsCode(probe_addr));
  const ElfSymbol* s = image->LookupSymbol(probe_addr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "CgInjectElfTestProbe");
  EXPECT_EQ(s->addr, probe_addr);
  ASSERT_GT(s->size, 1u);
  EXPECT_EQ(image->LookupSymbol(probe_addr + s->size - 1), s);
  EXPECT_EQ(image->FindSymbol("CgInjectElfTestProbe"), s);
  EXPECT_EQ(CgInjectElfTestProbe(3), 5);  // (0 * 3 + 1) * 3 + 2
}

// A few functions of libc that are not IFUNCs (dlsym would return the chosen implementation).
const char* const kLibcFunctions[] = {"getpid", "qsort", "fork", "abort", "exit", "atexit"};

// The libc this test runs with, as the loader placed it.
class LoadedLibcTest : public testing::Test {
 protected:
  void SetUp() override {
    libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (libc == nullptr) GTEST_SKIP() << "libc.so.6 is not loaded: not a glibc system";
    getpid_addr = dlsym(libc, "getpid");
    ASSERT_NE(getpid_addr, nullptr);
    loaded = FindLoadedObject(getpid_addr);
    ASSERT_TRUE(loaded.found);
    ASSERT_FALSE(loaded.path.empty());
  }
  void TearDown() override {
    if (libc != nullptr) dlclose(libc);
  }
  void* libc = nullptr;
  void* getpid_addr = nullptr;
  LoadedObject loaded;
};

TEST_F(LoadedLibcTest, ReadsLoadedLibc) {
  std::string why;
  std::unique_ptr<ObjectImage> image = Open(loaded.path, &why);
  ASSERT_NE(image, nullptr) << loaded.path << ": " << why;
  EXPECT_TRUE(image->is_pie());  // shared objects are ET_DYN
  EXPECT_EQ(image->extent_begin(), loaded.extent_begin);
  EXPECT_EQ(image->extent_end(), loaded.extent_end);
  EXPECT_GT(image->symbols().size(), 1000u);

  for (const char* name : kLibcFunctions) {
    SCOPED_TRACE(name);
    void* runtime = dlsym(libc, name);
    if (runtime == nullptr) continue;
    const uint64_t addr = reinterpret_cast<uint64_t>(runtime) - loaded.bias;
    const ElfSymbol* by_name = image->FindSymbol(name);
    ASSERT_NE(by_name, nullptr);
    EXPECT_EQ(by_name->addr, addr);
    EXPECT_EQ(image->LookupSymbol(addr), by_name);
    EXPECT_TRUE(image->IsCode(addr));
    // The loader's own name for the address (dladdr) is the primary name or an alias of it.
    Dl_info info;
    ASSERT_NE(dladdr(runtime, &info), 0);
    ASSERT_NE(info.dli_sname, nullptr);
    EXPECT_EQ(image->FindSymbol(info.dli_sname), by_name) << info.dli_sname;
  }

  // glibc exports getpid both as weak `getpid` and global `__getpid`; Valgrind 3.19 names it
  // `getpid`, and so does the reader's preference (shortest name first).
  void* alias = dlsym(libc, "__getpid");
  if (alias == getpid_addr) {
    const ElfSymbol* s = image->FindSymbol("__getpid");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->name, "getpid");
    EXPECT_THAT(image->AliasesOf(*s), ::testing::Contains("__getpid"));
  }
}

TEST_F(LoadedLibcTest, StrippedLibcIsNamedFromDynsym) {
  // Debian's libc has no .symtab: without its debug file every name comes from .dynsym, which
  // the reader reads only where no .symtab names the address (here: everywhere).
  ObjectCatalogOptions options;
  options.use_debug_files = false;
  std::string why;
  std::unique_ptr<ObjectImage> image = Open(loaded.path, &why, options);
  ASSERT_NE(image, nullptr) << loaded.path << ": " << why;
  EXPECT_GT(image->symbols().size(), 1000u);
  for (const char* name : kLibcFunctions) {
    SCOPED_TRACE(name);
    void* runtime = dlsym(libc, name);
    if (runtime == nullptr) continue;
    const ElfSymbol* s = image->LookupSymbol(reinterpret_cast<uint64_t>(runtime) - loaded.bias);
    ASSERT_NE(s, nullptr);
    Dl_info info;
    ASSERT_NE(dladdr(runtime, &info), 0);
    ASSERT_NE(info.dli_sname, nullptr);
    // dladdr gives one of the address's .dynsym names; the image's is the preferred one of them.
    EXPECT_EQ(image->FindSymbol(info.dli_sname), s) << info.dli_sname;
  }
}

TEST_F(LoadedLibcTest, ReadsLibcDebugFileWhenInstalled) {
  // strlen is an IFUNC: dlsym runs its resolver and returns the implementation chosen for this
  // CPU (__strlen_avx2, __strlen_evex, ...), a local function that only the debug file names.
  void* impl = dlsym(libc, "strlen");
  ASSERT_NE(impl, nullptr);
  ASSERT_EQ(FindLoadedObject(impl).path, loaded.path);
  ASSERT_GT(loaded.build_id.size(), 2u);
  const std::string debug_file = "/usr/lib/debug/.build-id/" + loaded.build_id.substr(0, 2) + "/" +
                                 loaded.build_id.substr(2) + ".debug";
  if (access(debug_file.c_str(), R_OK) != 0) {
    GTEST_SKIP() << debug_file << " is missing (Debian: apt-get install libc6-dbg)";
  }
  const uint64_t addr = reinterpret_cast<uint64_t>(impl) - loaded.bias;

  std::string why;
  std::unique_ptr<ObjectImage> image = Open(loaded.path, &why);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_EQ(image->debug_file(), debug_file);
  const ElfSymbol* s = image->LookupSymbol(addr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->addr, addr);
  EXPECT_EQ(s->name.rfind("__strlen_", 0), 0u) << s->name;
  EXPECT_EQ(image->FindSymbol(s->name), s);

  ObjectCatalogOptions no_debug;
  no_debug.use_debug_files = false;
  std::unique_ptr<ObjectImage> plain = Open(loaded.path, &why, no_debug);
  ASSERT_NE(plain, nullptr) << why;
  EXPECT_EQ(plain->debug_file(), "");
  EXPECT_EQ(plain->FindSymbol(s->name), nullptr);
  EXPECT_LT(plain->symbols().size(), image->symbols().size());
}

TEST(ElfReaderTest, ReadsBinTrue) {
  if (access("/bin/true", R_OK) != 0) GTEST_SKIP() << "/bin/true is not readable";
  std::string why;
  std::unique_ptr<ObjectImage> image = Open("/bin/true", &why);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_TRUE(image->has_code());
  EXPECT_LT(image->extent_begin(), image->extent_end());
}

// A temporary file removed when the test ends, pass or fail.
class ScopedTempFile {
 public:
  explicit ScopedTempFile(const std::string& contents) {
    const char* dir = getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/cg-inject-elf-XXXXXX";
    const int fd = mkstemp(path_.data());
    EXPECT_GE(fd, 0) << strerror(errno);
    if (fd < 0) return;
    EXPECT_EQ(write(fd, contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
    close(fd);
  }
  ~ScopedTempFile() { unlink(path_.c_str()); }
  ScopedTempFile(const ScopedTempFile&) = delete;
  ScopedTempFile& operator=(const ScopedTempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string AbsentReason(const std::string& path) {
  std::string why;
  std::unique_ptr<ObjectImage> image = Open(path, &why);
  EXPECT_EQ(image, nullptr);
  return why;
}

// A temporary directory tree; the files and directories made through it are removed at the end.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    const char* dir = getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/cg-inject-elf-XXXXXX";
    EXPECT_NE(mkdtemp(path_.data()), nullptr) << strerror(errno);
  }
  ~ScopedTempDir() {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) remove(it->c_str());
    rmdir(path_.c_str());
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

  /// Writes `contents` to path() + `relative`, making the directories on the way.
  void Write(const std::string& relative, const std::string& contents) {
    for (size_t slash = relative.find('/', 1); slash != std::string::npos;
         slash = relative.find('/', slash + 1)) {
      const std::string dir = path_ + relative.substr(0, slash);
      if (mkdir(dir.c_str(), 0700) == 0) made_.push_back(dir);
    }
    const std::string file = path_ + relative;
    std::ofstream out(file, std::ios::binary);
    out << contents;
    made_.push_back(file);
  }

 private:
  std::string path_;
  std::vector<std::string> made_;
};

TEST(ElfReaderTest, DebugFileMustCarryTheSameBuildId) {
  const LoadedObject self = FindLoadedObject(reinterpret_cast<const void*>(&CgInjectElfTestProbe));
  ASSERT_TRUE(self.found);
  if (self.build_id.size() <= 2) GTEST_SKIP() << "this test executable has no GNU build ID";
  const std::string relative =
      "/.build-id/" + self.build_id.substr(0, 2) + "/" + self.build_id.substr(2) + ".debug";
  ObjectCatalogOptions options;

  // A copy of the executable itself is a valid debug file for it: same build ID.
  ScopedTempDir good;
  good.Write(relative, ReadWholeFile("/proc/self/exe"));
  options.debug_dir = good.path();
  std::string why;
  std::unique_ptr<ObjectImage> image = Open("/proc/self/exe", &why, options);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_EQ(image->debug_file(), good.path() + relative);

  // Another ELF file under that name is stale and ignored; the object itself still opens.
  if (access("/bin/true", R_OK) != 0) GTEST_SKIP() << "/bin/true is not readable";
  ScopedTempDir stale;
  stale.Write(relative, ReadWholeFile("/bin/true"));
  options.debug_dir = stale.path();
  image = Open("/proc/self/exe", &why, options);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_EQ(image->debug_file(), "");
  EXPECT_NE(image->FindSymbol("CgInjectElfTestProbe"), nullptr);

  // So is a file that is not ELF at all (LIEF would crash on it).
  ScopedTempDir junk;
  junk.Write(relative, "not an ELF file");
  options.debug_dir = junk.path();
  image = Open("/proc/self/exe", &why, options);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_EQ(image->debug_file(), "");
}

struct RawSymbol {
  uint64_t addr, size;
  std::string name;
};

// Defined function symbols of a 64-bit ELF file's .symtab, read with <elf.h> alone.
std::vector<RawSymbol> ReadSymtabFunctions(const std::string& file) {
  std::vector<RawSymbol> out;
  Elf64_Ehdr eh;
  if (file.size() < sizeof eh) return out;
  memcpy(&eh, file.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return out;
  auto section = [&](uint64_t index) {
    Elf64_Shdr sh;
    memcpy(&sh, file.data() + eh.e_shoff + index * sizeof sh, sizeof sh);
    return sh;
  };
  for (uint64_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr symtab = section(i);
    if (symtab.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr strtab = section(symtab.sh_link);
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      memcpy(&sym, file.data() + symtab.sh_offset + at, sizeof sym);
      const int type = ELF64_ST_TYPE(sym.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF) continue;
      out.push_back({sym.st_value, sym.st_size, file.data() + strtab.sh_offset + sym.st_name});
    }
  }
  return out;
}

TEST(ElfReaderTest, AgreesWithSymtabOfOwnExecutable) {
  const std::string file = ReadWholeFile("/proc/self/exe");
  const std::vector<RawSymbol> raw = ReadSymtabFunctions(file);
  ASSERT_GT(raw.size(), 100u) << "the test executable should not be stripped";
  std::string why;
  std::unique_ptr<ObjectImage> image = Open("/proc/self/exe", &why);
  ASSERT_NE(image, nullptr) << why;
  int64_t sized = 0;
  for (const RawSymbol& r : raw) {
    SCOPED_TRACE(r.name);
    const ElfSymbol* s = image->LookupSymbol(r.addr);
    if (r.size == 0) {
      // Skipped as Valgrind skips them, unless another symbol covers the address.
      if (s != nullptr) {
        EXPECT_NE(s->name, r.name);
      }
      continue;
    }
    ++sized;
    ASSERT_NE(s, nullptr);
    if (s->addr != r.addr) continue;  // inside an enclosing symbol; the innermost starts later
    if (s->name != r.name) {
      EXPECT_THAT(image->AliasesOf(*s), ::testing::Contains(r.name));
      EXPECT_LE(s->name.size(), r.name.size());  // the shorter name is primary
    }
    EXPECT_NE(image->FindSymbol(r.name), nullptr);
  }
  EXPECT_GT(sized, 100);
}

TEST(ElfReaderTest, MissingFileIsAbsent) {
  EXPECT_EQ(AbsentReason("/nonexistent/cg-inject/libnothing.so"), strerror(ENOENT));
}

TEST(ElfReaderTest, DirectoryIsAbsent) {
  // (LIEF 0.9, the reader before issue 24, crashed on a directory.)
  EXPECT_EQ(AbsentReason("/"), "not a regular file");
}

TEST(ElfReaderTest, TextFileIsAbsent) {
  // (LIEF 0.9, the reader before issue 24, crashed with SIGSEGV on non-ELF input.)
  ScopedTempFile text("#!/bin/sh\nexit 0\n");
  EXPECT_EQ(AbsentReason(text.path()), "not an ELF file");
  ScopedTempFile empty("");
  EXPECT_EQ(AbsentReason(empty.path()), "not an ELF file");
}

TEST(ElfReaderTest, TruncatedObjectIsAbsent) {
  const std::string self = ReadWholeFile("/proc/self/exe");
  ASSERT_GT(self.size(), 4096u);
  // The header survives but the program headers right after it do not.
  ScopedTempFile header_only(self.substr(0, 64 + 8));
  EXPECT_EQ(AbsentReason(header_only.path()), "program headers end past the end of the file");
  // Section headers sit at the end of a linked file, so any cut loses them.
  ScopedTempFile cut(self.substr(0, self.size() - 1));
  EXPECT_EQ(AbsentReason(cut.path()), "section headers end past the end of the file");
}

TEST(ElfReaderTest, SymbolTablePastEndOfFileIsAbsent) {
  std::string self = ReadWholeFile("/proc/self/exe");
  Elf64_Ehdr eh;
  ASSERT_GE(self.size(), sizeof eh);
  memcpy(&eh, self.data(), sizeof eh);
  ASSERT_EQ(eh.e_ident[EI_CLASS], ELFCLASS64);
  bool patched = false;
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    const uint64_t at = eh.e_shoff + static_cast<uint64_t>(i) * sizeof sh;
    memcpy(&sh, self.data() + at, sizeof sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    sh.sh_offset = self.size() - sh.sh_size / 2;  // starts inside, ends outside the file
    memcpy(self.data() + at, &sh, sizeof sh);
    patched = true;
  }
  ASSERT_TRUE(patched) << "the test executable has no .symtab";
  ScopedTempFile broken(self);
  EXPECT_EQ(AbsentReason(broken.path()), "symbol table .symtab ends past the end of the file");
}

TEST(ElfReaderTest, NoProgramHeadersIsAbsent) {
  std::string self = ReadWholeFile("/proc/self/exe");
  Elf64_Ehdr eh;
  ASSERT_GE(self.size(), sizeof eh);
  memcpy(&eh, self.data(), sizeof eh);
  eh.e_phnum = 0;
  memcpy(self.data(), &eh, sizeof eh);
  ScopedTempFile no_phdrs(self);
  EXPECT_EQ(AbsentReason(no_phdrs.path()), "no program headers");
}

TEST(ElfReaderTest, FifoIsAbsentWithoutBlocking) {
  // open() of a FIFO without O_NONBLOCK waits for a writer: this test would hang (issue 22 item 8).
  ScopedTempDir dir;
  const std::string fifo = dir.path() + "/lib.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << strerror(errno);
  EXPECT_EQ(AbsentReason(fifo), "not a regular file");
  unlink(fifo.c_str());
}

// A minimal ELF file built field by field, for either class: header, one PT_LOAD, and sections
// null, .text, .symtab, .strtab, .shstrtab. Offsets of the parts are kept so tests can break them.
struct TinySymbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = STT_FUNC;
  uint16_t shndx = 1;  // .text
};

class TinyElf {
 public:
  TinyElf(bool is_64, std::vector<TinySymbol> symbols) : is_64_(is_64) {
    const uint64_t ehdr = is_64 ? 64 : 52, phdr = is_64 ? 56 : 32, shdr = is_64 ? 64 : 40;
    const uint64_t sym = is_64 ? 24 : 16;
    std::string strtab(1, '\0');
    std::vector<uint64_t> name_at;
    for (const TinySymbol& s : symbols) {
      name_at.push_back(strtab.size());
      strtab += s.name + '\0';
    }
    const std::string shstrtab = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 34);
    strtab_offset_ = ehdr + phdr;
    const uint64_t shstrtab_offset = strtab_offset_ + strtab.size();
    symtab_offset_ = (shstrtab_offset + shstrtab.size() + 7) & ~uint64_t{7};
    const uint64_t symtab_size = (symbols.size() + 1) * sym;
    shoff_ = symtab_offset_ + symtab_size;
    bytes_.assign(shoff_ + 5 * shdr, '\0');

    memcpy(bytes_.data(),
           "\x7f"
           "ELF",
           4);
    bytes_[4] = is_64 ? ELFCLASS64 : ELFCLASS32;
    bytes_[5] = ELFDATA2LSB;
    bytes_[6] = EV_CURRENT;
    const uint64_t w = is_64 ? 8 : 4;  // address-sized fields
    Put(16, 2, ET_DYN);
    Put(18, 2, is_64 ? EM_AARCH64 : EM_386);
    Put(20, 4, EV_CURRENT);
    Put(24 + w, w, ehdr);           // e_phoff
    Put(24 + 2 * w, w, shoff_);     // e_shoff
    Put(24 + 3 * w + 4, 2, ehdr);   // e_ehsize
    Put(24 + 3 * w + 6, 2, phdr);   // e_phentsize
    Put(24 + 3 * w + 8, 2, 1);      // e_phnum
    Put(24 + 3 * w + 10, 2, shdr);  // e_shentsize
    Put(24 + 3 * w + 12, 2, 5);     // e_shnum
    Put(24 + 3 * w + 14, 2, 4);     // e_shstrndx

    // PT_LOAD, R+X, [0x10000, 0x10000 + 0x3000).
    const uint64_t ph = ehdr;
    Put(ph, 4, PT_LOAD);
    if (is_64) {
      Put(ph + 4, 4, PF_R | PF_X);
      Put(ph + 16, 8, 0x10000);
      Put(ph + 40, 8, 0x3000);
    } else {
      Put(ph + 8, 4, 0x10000);
      Put(ph + 20, 4, 0x3000);
      Put(ph + 24, 4, PF_R | PF_X);
    }

    memcpy(bytes_.data() + strtab_offset_, strtab.data(), strtab.size());
    memcpy(bytes_.data() + shstrtab_offset, shstrtab.data(), shstrtab.size());
    for (size_t i = 0; i < symbols.size(); ++i) {
      const uint64_t at = symtab_offset_ + (i + 1) * sym;
      const TinySymbol& s = symbols[i];
      const uint8_t info = static_cast<uint8_t>((STB_GLOBAL << 4) | s.type);
      Put(at, 4, name_at[i]);
      if (is_64) {
        Put(at + 4, 1, info);
        Put(at + 6, 2, s.shndx);
        Put(at + 8, 8, s.value);
        Put(at + 16, 8, s.size);
      } else {
        Put(at + 4, 4, s.value);
        Put(at + 8, 4, s.size);
        Put(at + 12, 1, info);
        Put(at + 14, 2, s.shndx);
      }
    }
    // Section headers: name, type, offset, size, link.
    Section(1, 1, SHT_PROGBITS, 0x1000, 0x2000, 0);
    Section(2, 7, SHT_SYMTAB, symtab_offset_, symtab_size, 3);
    Section(3, 15, SHT_STRTAB, strtab_offset_, strtab.size(), 0);
    Section(4, 23, SHT_STRTAB, shstrtab_offset, shstrtab.size(), 0);
  }

  // Sets section `index`'s sh_offset or sh_link.
  void SetSectionOffset(int index, uint64_t offset) {
    Put(SectionAt(index) + (is_64_ ? 24 : 16), is_64_ ? 8 : 4, offset);
  }
  void SetSectionLink(int index, uint32_t link) {
    Put(SectionAt(index) + (is_64_ ? 40 : 24), 4, link);
  }
  uint64_t strtab_offset() const { return strtab_offset_; }
  std::string& bytes() { return bytes_; }

 private:
  uint64_t SectionAt(int index) const {
    return shoff_ + static_cast<uint64_t>(index) * (is_64_ ? 64 : 40);
  }
  void Put(uint64_t offset, uint64_t size, uint64_t value) {
    for (uint64_t i = 0; i < size; ++i) bytes_[offset + i] = static_cast<char>(value >> (8 * i));
  }
  void Section(int index, uint32_t name, uint32_t type, uint64_t offset, uint64_t size,
               uint32_t link) {
    const uint64_t at = SectionAt(index);
    const uint64_t w = is_64_ ? 8 : 4;
    Put(at, 4, name);
    Put(at + 4, 4, type);
    Put(at + 8 + 2 * w, w, offset);
    Put(at + 8 + 3 * w, w, size);
    Put(at + 8 + 4 * w, 4, link);
  }

  bool is_64_;
  uint64_t strtab_offset_ = 0;
  uint64_t symtab_offset_ = 0;
  uint64_t shoff_ = 0;
  std::string bytes_;
};

std::vector<TinySymbol> TinySymbols() {
  return {
      {"tiny_main", 0x11000, 0x40},
      {"tiny_data", 0x12000, 0x10, STT_OBJECT},         // not a function
      {"tiny_import", 0, 0, STT_FUNC, SHN_UNDEF},       // an import
      {"tiny_resolver", 0x11040, 0x20, STT_GNU_IFUNC},  // an IFUNC is a function
      {"tiny_empty", 0x11080, 0},                       // size 0: skipped, as Valgrind does
  };
}

class TinyElfTest : public testing::TestWithParam<bool> {};

TEST_P(TinyElfTest, ReadsSegmentsAndFunctionSymbols) {
  TinyElf elf(GetParam(), TinySymbols());
  ScopedTempFile file(elf.bytes());
  std::string why;
  std::unique_ptr<ObjectImage> image = Open(file.path(), &why);
  ASSERT_NE(image, nullptr) << why;
  EXPECT_TRUE(image->is_pie());
  EXPECT_EQ(image->extent_begin(), 0x10000u);
  EXPECT_EQ(image->extent_end(), 0x13000u);
  EXPECT_TRUE(image->IsCode(0x11000));
  std::vector<std::string> names;
  for (const ElfSymbol& s : image->symbols()) names.emplace_back(s.name);
  EXPECT_THAT(names, testing::ElementsAre("tiny_main", "tiny_resolver"));
  const ElfSymbol* main = image->LookupSymbol(0x1103f);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->name, "tiny_main");
  EXPECT_EQ(main->size, 0x40u);
  EXPECT_EQ(image->LookupSymbol(0x11080), nullptr);
}

TEST_P(TinyElfTest, NameRunningOffItsStringTableIsSkipped) {
  TinyElf elf(GetParam(), {{"first", 0x11000, 0x10}, {"last", 0x11010, 0x10}});
  // The string table's final NUL (after "last") becomes a letter: that name has no end.
  const size_t last_nul = elf.bytes().find(std::string("last\0", 5));
  ASSERT_NE(last_nul, std::string::npos);
  elf.bytes()[last_nul + 4] = 'X';
  ScopedTempFile file(elf.bytes());
  std::string why;
  std::unique_ptr<ObjectImage> image = Open(file.path(), &why);
  ASSERT_NE(image, nullptr) << why;
  ASSERT_EQ(image->symbols().size(), 1u);
  EXPECT_EQ(image->symbols()[0].name, "first");
}

TEST_P(TinyElfTest, StringTablePastEndOfFileIsAbsent) {
  TinyElf elf(GetParam(), TinySymbols());
  elf.SetSectionOffset(3, elf.bytes().size() - 4);  // .strtab starts inside, ends outside
  ScopedTempFile file(elf.bytes());
  EXPECT_EQ(AbsentReason(file.path()),
            "string table of symbol table .symtab ends past the end of the file");
}

TEST_P(TinyElfTest, StringTableLinkOutOfRangeIsAbsent) {
  TinyElf elf(GetParam(), TinySymbols());
  elf.SetSectionLink(2, 0xffff);
  ScopedTempFile file(elf.bytes());
  EXPECT_EQ(AbsentReason(file.path()),
            "string table of symbol table .symtab ends past the end of the file");
}

TEST_P(TinyElfTest, EveryCorruptByteIsRefusedOrReadWithinTheFile) {
  // Each byte of a valid file set to a few hostile values, then each cut of it: read from an
  // exactly-sized heap buffer, so ASan reports any byte read past the end. Whatever is accepted
  // has only named, sized functions.
  TinyElf elf(GetParam(), TinySymbols());
  const std::string original = elf.bytes();
  int64_t accepted = 0, refused = 0;
  auto read = [&](const std::string& bytes) {
    std::unique_ptr<char[]> buffer(new char[bytes.size()]);
    memcpy(buffer.get(), bytes.data(), bytes.size());
    std::string why;
    std::unique_ptr<ObjectImage> image =
        ReadElfObject("/tiny.so", std::string_view(buffer.get(), bytes.size()), &why);
    if (image == nullptr) {
      EXPECT_NE(why, "");
      ++refused;
      return;
    }
    ++accepted;
    for (const ElfSymbol& s : image->symbols()) {
      EXPECT_NE(s.name, "");
      EXPECT_NE(s.size, 0u);
    }
  };
  for (size_t at = 0; at < original.size(); ++at) {
    for (const uint8_t value : {0x00, 0x7f, 0x80, 0xff}) {
      std::string bytes = original;
      bytes[at] = static_cast<char>(value);
      read(bytes);
    }
  }
  for (size_t cut = 1; cut < original.size(); ++cut) read(original.substr(0, cut));
  // Most single-byte changes (names, values, padding) still make a readable file.
  EXPECT_GT(accepted, refused);
}

TEST_P(TinyElfTest, SymbolTableDescribedManyTimesIsSkipped) {
  // Every header is read once, and each table once: 65,000 headers over one table made reading
  // quadratic (issue 36 item 1). A linker writes each table once, so such a file is refused,
  // saying why.
  TinyElf elf(GetParam(), TinySymbols());
  ScopedTempFile once(RepeatSection(elf.bytes(), GetParam(), 2, 1));
  std::string why;
  // Twice fits in the file: read (a file may have a .symtab and a .dynsym).
  EXPECT_NE(Open(once.path(), &why), nullptr) << why;
  ScopedTempFile many(RepeatSection(elf.bytes(), GetParam(), 2, 200));
  EXPECT_THAT(AbsentReason(many.path()),
              testing::MatchesRegex("skipped: its symbol tables add up to [0-9]+ bytes, more "
                                    "than the file's [0-9]+ \\(section headers describing one "
                                    "table again and again\\)"));
}

TEST_P(TinyElfTest, LongNamesAreReadWhole) {
  // Names past the reader's quick scan are found after the table is read (elf/name_ends.h).
  const std::string long_name(3000, 'L'), medium_name(300, 'M');
  TinyElf elf(GetParam(), {{"short", 0x11000, 0x10},
                           {long_name, 0x11010, 0x10},
                           {medium_name, 0x11020, 0x10},
                           {"tail", 0x11030, 0x10}});
  ScopedTempFile file(elf.bytes());
  std::string why;
  std::unique_ptr<ObjectImage> image = Open(file.path(), &why);
  ASSERT_NE(image, nullptr) << why;
  std::vector<std::string> names;
  for (const ElfSymbol& s : image->symbols()) names.emplace_back(s.name);
  EXPECT_THAT(names, testing::ElementsAre("short", long_name, medium_name, "tail"));
  EXPECT_EQ(image->FindSymbol(long_name)->addr, 0x11010u);
}

INSTANTIATE_TEST_SUITE_P(Classes, TinyElfTest, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Elf64" : "Elf32";
                         });

}  // namespace
}  // namespace cg_inject
