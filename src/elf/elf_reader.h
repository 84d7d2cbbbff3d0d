// The one place that talks to LIEF: turns an ELF file into an ObjectImage.
#pragma once

#include <memory>
#include <string>

#include "cg_inject/object_catalog.h"

namespace cg_inject {

/// Reads the ELF executable or shared object at `file_path` with LIEF 0.9; the image's path()
/// is `image_path` (the name the profile uses, before any root prefix). Returns null and sets
/// `*why_absent` to a short reason when the file is missing, unreadable, not a regular file, not
/// a little-endian ET_EXEC/ET_DYN ELF file, or malformed (see CheckElfHeader); LIEF exceptions are
/// caught here and become reasons too. Never throws for a bad file.
///
/// Symbols: defined STT_FUNC and STT_GNU_IFUNC entries of .symtab and .dynsym with a non-zero
/// address. At one address the preferred name has the fewest leading underscores, then the
/// strongest binding (global/unique, weak, local), then is the shortest, then sorts first. The
/// first two rules match what Valgrind 3.19 prints for libc's `getpid` (weak) over `__getpid`
/// (global).
std::unique_ptr<ObjectImage> TryOpenElfObject(const std::string& file_path,
                                              const std::string& image_path,
                                              std::string* why_absent);

}  // namespace cg_inject
