// What the ELF files behind a profile's `ob=` names say: where each object's code lies and which
// function holds an address. Callgrind writes a real object's instruction addresses as ELF virtual
// addresses (it subtracts the load bias; checked with Valgrind 3.19 on a PIE and a non-PIE build),
// so they compare directly with the extents and symbols here, while JIT code in `ob=???` sits at
// absolute runtime addresses. The injector uses this to tell the two apart inside one block and to
// give cost lines at object addresses to the object's own function.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cg_inject {

class Diagnostics;
struct ObjectStubs;

/// A function symbol (STT_FUNC or STT_GNU_IFUNC, defined) from .symtab, .dynsym or the separate
/// debug file's .symtab. The reader skips size-0 symbols, as Valgrind does; in-memory images may
/// have them.
struct ElfSymbol {
  uint64_t addr = 0;      // ELF virtual address (st_value)
  uint64_t size = 0;      // st_size
  std::string_view name;  // as stored, not demangled; glibc's .symtab has "memcpy@@GLIBC_2.14"

  /// True when `a` lies in [addr, addr + size); a symbol of size 0 contains only its own address.
  bool Contains(uint64_t a) const { return a == addr || a - addr < size; }
};

/// A PT_LOAD program header: [addr, addr + size) in ELF virtual addresses (p_vaddr, p_memsz).
struct LoadSegment {
  uint64_t addr = 0;
  uint64_t size = 0;
  bool executable = false;  // PF_X

  uint64_t end() const { return addr + size; }
  bool Contains(uint64_t a) const { return a - addr < size; }
};

/// One ELF object: its loaded extent and its function symbols, queryable by address and name.
/// Immutable once built (the name index is made on the first lookup by name, thread-safely);
/// movable, not copyable (symbols view names in storage the image owns).
class ObjectImage {
 public:
  /// Builds an image from parts. `symbols` may hold several entries at one address (aliases such
  /// as `getpid`/`__getpid`): the first one given with a non-zero size (else the first one) is the
  /// primary entry returned by lookups, the names of the others become aliases of it, so callers
  /// order `symbols` by preference. Exact duplicates (same name and address) are dropped.
  /// `debug_file` names the separate debug file some symbols came from ("" if none).
  /// `names` keeps the bytes the symbols' names view alive (the ELF reader's map of the file,
  /// whose string tables then stay on disk until a name is read); without it the names are
  /// copied, and need to live only until the constructor returns.
  ObjectImage(std::string path, bool is_pie, std::vector<LoadSegment> segments,
              std::vector<ElfSymbol> symbols, std::string debug_file = "",
              std::shared_ptr<const void> names = nullptr);
  ObjectImage(ObjectImage&&) = default;
  ObjectImage& operator=(ObjectImage&&) = default;
  ObjectImage(const ObjectImage&) = delete;
  ObjectImage& operator=(const ObjectImage&) = delete;

  /// The path the image was read from (or given to the constructor).
  const std::string& path() const { return path_; }
  /// The separate debug file whose .symtab was read too, or "" (see ObjectCatalogOptions).
  const std::string& debug_file() const { return debug_file_; }
  /// True for ET_DYN objects (PIE executables, shared libraries): their addresses are relative to
  /// a load base chosen at run time (usually starting at 0), so a JIT address can coincide with
  /// one numerically. False for ET_EXEC, whose addresses are also the runtime ones: no JIT code
  /// can sit there.
  bool is_pie() const { return is_pie_; }
  /// [extent_begin, extent_end) spans every PT_LOAD segment; both 0 without segments.
  uint64_t extent_begin() const { return extent_begin_; }
  uint64_t extent_end() const { return extent_end_; }
  bool InExtent(uint64_t addr) const { return addr - extent_begin_ < extent_end_ - extent_begin_; }
  /// True when some PT_LOAD segment is executable.
  bool has_code() const { return has_code_; }
  /// True when `addr` lies in an executable PT_LOAD segment.
  bool IsCode(uint64_t addr) const;
  const std::vector<LoadSegment>& segments() const { return segments_; }

  /// The function containing `addr` (see ElfSymbol::Contains), or null. When symbols nest, the
  /// one with the highest start wins. O(log n) unless symbols overlap.
  const ElfSymbol* LookupSymbol(uint64_t addr) const;
  /// The primary symbol named `name` (directly or as an alias); with several (local symbols of
  /// different files share names) the lowest address. Null if none. O(log n).
  const ElfSymbol* FindSymbol(std::string_view name) const;
  /// Every primary symbol named `name` (directly or as an alias), by address.
  std::vector<const ElfSymbol*> FindSymbols(std::string_view name) const;
  /// The names of other symbols at `symbol`'s address (not including symbol.name).
  std::vector<std::string_view> AliasesOf(const ElfSymbol& symbol) const;

  /// Primary symbols sorted by address, one per address.
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }

  /// The addresses of STT_GNU_IFUNC symbols (a resolver that picks the function a call reaches:
  /// libc's strcpy runs __strcpy_avx2), as the ELF reader found them; any order.
  void SetIndirect(std::vector<uint64_t> addresses);
  /// True when a symbol named `name` (directly or as an alias) is an STT_GNU_IFUNC.
  bool IsIndirect(std::string_view name) const;

 private:
  std::string path_;
  std::string debug_file_;
  bool is_pie_ = false;
  bool has_code_ = false;
  uint64_t extent_begin_ = 0;
  uint64_t extent_end_ = 0;
  std::vector<LoadSegment> segments_;
  std::shared_ptr<const void> names_;          // what the names view (the constructor's `names`)
  std::unique_ptr<char[]> copied_names_;       // or a copy of them
  std::vector<ElfSymbol> symbols_;             // by addr, unique addr
  std::vector<uint64_t> max_end_;              // max_end_[i] = max end of symbols_[0..i]
  std::vector<std::string_view> alias_names_;  // grouped by owner, in symbols_ order
  std::vector<uint32_t> alias_begin_;          // symbols_[i]'s aliases: [alias_begin_[i], [i + 1])
  std::vector<uint64_t> indirect_;             // SetIndirect's addresses, sorted
  // (name, index into symbols_), sorted by name then address. Built by the first lookup by
  // name (ByName), once even when several threads ask.
  const std::vector<std::pair<std::string_view, uint32_t>>& ByName() const;
  mutable std::unique_ptr<std::once_flag> by_name_once_ = std::make_unique<std::once_flag>();
  mutable std::vector<std::pair<std::string_view, uint32_t>> by_name_;
};

struct ObjectCatalogOptions {
  /// Prefix put in front of every object path before opening it, like perf's --symfs, for
  /// profiles recorded on another machine or in a container. Empty: paths as written.
  std::string root;
  /// Also read .symtab from the object's separate debug file when there is one (Debian's -dbg
  /// packages, e.g. libc6-dbg): first <root><debug_dir>/.build-id/xx/yyyy.debug for the object's
  /// GNU build ID, then its .gnu_debuglink name next to the object, in the object's .debug/
  /// directory and under <root><debug_dir>/<object's directory>/, with a matching build ID when the
  /// object has one. Valgrind reads these files too, so names it prints for stripped libraries
  /// (`__strlen_avx2`) are found here as well.
  bool use_debug_files = true;
  std::string debug_dir = "/usr/lib/debug";
  /// When the profile was written (its file's modification time, ns since the epoch; 0 when
  /// unknown): an object modified later is not the file the profile ran (ObjectCatalog::Changed).
  int64_t profile_mtime_ns = 0;
};

/// Object path -> ObjectImage, opened lazily on first lookup: only the program headers, section
/// headers and symbol tables are read, through a memory map (elf_reader.cc). Objects that are
/// missing, not regular files (a FIFO is never waited on), unreadable, not ELF
/// executables/shared objects, or rejected as malformed are "absent": counted, reported once to
/// Diagnostics (kind "elf: object absent"), never an error. Not thread-safe.
class ObjectCatalog {
 public:
  explicit ObjectCatalog(ObjectCatalogOptions options = {}, Diagnostics* diagnostics = nullptr);
  ~ObjectCatalog();
  ObjectCatalog(const ObjectCatalog&) = delete;
  ObjectCatalog& operator=(const ObjectCatalog&) = delete;

  /// The image of the object at `path` as the profile writes it (`ob=` value), or null when
  /// absent. Names that are not absolute paths ("???", "[vdso]") give null without being counted
  /// as absent. Each path is opened at most once; the pointer stays valid for the catalog's life.
  const ObjectImage* Lookup(std::string_view path);
  /// False when the object at `path` certainly has load-relative addresses (its ELF header says
  /// ET_DYN, or it is no readable ELF file), without reading its tables: one 64-byte read, so
  /// every object of a profile can be asked. True for ET_EXEC; Lookup then tells the rest.
  bool MayHaveFixedAddresses(std::string_view path);
  /// What the object at `path` says about its code outside .text and its load address (its PLT
  /// slots' names, whether it is a PIE executable: src/elf/object_image_stubs.h), read on the
  /// first call through a memory map. Null for names that are not absolute paths; an object that
  /// cannot be read gives empty facts, without a warning (Lookup warns for it when asked); one
  /// whose tables add up to more than the file (ObjectStubs::skipped) gives empty facts with a
  /// warning ("elf: object skipped"). Not thread-safe; the pointer stays valid for the catalog's
  /// life.
  const ObjectStubs* Stubs(std::string_view path);
  /// Whether the object at `path` changed since the profile was written: modified after it
  /// (options.profile_mtime_ns), or found changed by MarkChanged. Such an object's stubs are not
  /// read (Stubs gives empty facts), and one warning names it ("elf: object changed"). One stat
  /// per path.
  bool Changed(std::string_view path);
  /// Records that the object at `path` is not the file the profile ran (`why` says how that was
  /// found), with one warning.
  void MarkChanged(std::string_view path, const std::string& why);
  /// Reads the object at `path` ahead of its first Lookup (when MayHaveFixedAddresses: Lookup
  /// reads only such objects whole) and Stubs, on a thread of its own while nothing else uses
  /// the catalog (the program, while the symbol sources load). Says nothing: what Lookup and
  /// Stubs then find here is said by them when they are asked, as if they had read it then, and
  /// nothing is said of what they are never asked.
  void Preload(std::string_view path);
  /// Registers `image` under `path` (in-memory images for tests, or objects found elsewhere),
  /// replacing what was there. Returns the stored image.
  const ObjectImage* Add(std::string path, ObjectImage image);

  struct AbsentObject {
    std::string path;
    std::string reason;  // e.g. "No such file or directory", "not an ELF file"
  };
  /// Distinct absent objects in the order they were first looked up.
  const std::vector<AbsentObject>& absent() const { return absent_; }
  /// Number of objects read successfully from disk.
  int64_t opened() const { return opened_; }

 private:
  ObjectCatalogOptions options_;
  Diagnostics* diagnostics_;
  // null value = absent; std::less<> allows lookup by string_view without a copy.
  std::map<std::string, std::unique_ptr<ObjectImage>, std::less<>> images_;
  std::vector<AbsentObject> absent_;
  std::map<std::string, bool, std::less<>> fixed_;  // MayHaveFixedAddresses answers
  std::map<std::string, std::unique_ptr<ObjectStubs>, std::less<>> stubs_;
  std::map<std::string, bool, std::less<>> changed_;  // Changed's answers
  std::unique_ptr<ObjectStubs> no_stubs_;             // what Stubs gives a changed object
  int64_t opened_ = 0;
  // Preload's findings, taken by the first Lookup and Stubs of each path.
  struct Preloaded {
    std::unique_ptr<ObjectImage> image;
    std::string why_absent;
  };
  std::map<std::string, Preloaded, std::less<>> preloaded_images_;
  std::map<std::string, std::unique_ptr<ObjectStubs>, std::less<>> preloaded_stubs_;
};

}  // namespace cg_inject
