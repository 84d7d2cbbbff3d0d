// Demangling uses the C++ runtime's __cxa_demangle, which shares libiberty's demangler with
// Valgrind's, so their output agrees (checked against Callgrind's own output, see the header).
#include "elf/valgrind_name.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace cg_inject {

bool IsBelowMainName(std::string_view elf_name) {
  // Exact names only: Callgrind prints "__libc_start_main@@GLIBC_2.34" as it is.
  for (std::string_view exact :
       {"__libc_start_main", "__libc_start_call_main", "generic_start_main", "_start"}) {
    if (elf_name == exact) return true;
  }
  return elf_name.starts_with("__libc_start_main.") || elf_name.starts_with("generic_start_main.");
}

std::string ValgrindFunctionName(std::string_view elf_name) {
  if (IsBelowMainName(elf_name)) return "(below main)";
  if (!elf_name.starts_with("_Z")) return std::string(elf_name);
  const std::string mangled(elf_name);  // __cxa_demangle needs a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, decltype(&free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &free);
  if (status != 0 || demangled == nullptr) return mangled;
  return demangled.get();
}

}  // namespace cg_inject
