// Turns an ELF file into an ObjectImage, reading only its headers and symbol tables over mmap.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cg_inject/object_catalog.h"

namespace cg_inject {

/// Reads the ELF executable or shared object that a profile calls `image_path` (the file opened
/// is options.root + image_path), ELF32 or ELF64, plus its separate debug file when
/// options.use_debug_files (see ObjectCatalogOptions). Returns null and sets `*why_absent` to a
/// short reason when the file is missing, unreadable, not a regular file (opening never blocks,
/// even on a FIFO), not a little-endian ET_EXEC/ET_DYN ELF file, or malformed (see
/// CheckElfHeader; a symbol table or its string table ending past the end of the file). A debug
/// file that cannot be read is skipped. Never throws for a bad file.
///
/// Symbols: defined STT_FUNC and STT_GNU_IFUNC entries of .symtab (and the debug file's .symtab)
/// with a non-zero address and size, as Valgrind 3.19 reads them, and those of .dynsym at
/// addresses no .symtab entry has (elsewhere a .dynsym name is never the one Valgrind prints, so
/// it is not read). At one address the primary name is the one Valgrind prints: the shortest
/// without its version suffix, then "name@@VER" before "name@VER" before "name", then byte order.
/// Names are read from the file's map, which the image keeps (its pages leave the resident set).
std::unique_ptr<ObjectImage> TryOpenElfObject(const std::string& image_path,
                                              const ObjectCatalogOptions& options,
                                              std::string* why_absent);

/// TryOpenElfObject over `bytes` (a whole ELF file in memory) without debug files: for tests and
/// fuzzers, which feed exactly-sized buffers so that any read past the end is caught.
std::unique_ptr<ObjectImage> ReadElfObject(const std::string& image_path, std::string_view bytes,
                                           std::string* why_absent);

}  // namespace cg_inject
