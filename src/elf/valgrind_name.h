// The name Callgrind prints (`fn=`) for an ELF function symbol, so the injector can match ELF
// symbols to the profile's own function blocks.
#pragma once

#include <string>
#include <string_view>

namespace cg_inject {

/// What Valgrind 3.19 with its default options prints for the function whose primary ELF name
/// (ObjectImage's choice) is `elf_name`: C++ names demangled (--demangle=yes), and the functions
/// that run before main renamed "(below main)" (--show-below-main=no). Version suffixes stay
/// ("memcpy@@GLIBC_2.14"), as Callgrind prints them. Checked on `ls` and C++ test-program profiles
/// with libc6-dbg installed: every function Callgrind named matched.
std::string ValgrindFunctionName(std::string_view elf_name);

/// True for the names Valgrind shows as "(below main)": __libc_start_main,
/// __libc_start_call_main, generic_start_main (and their gcc clones "name.xxx"), _start.
bool IsBelowMainName(std::string_view elf_name);

}  // namespace cg_inject
