// Which valgrind `cg-inject record` runs: --valgrind PATH when given, else the Valgrind installed
// with cg-inject (meson -Dbundled_valgrind=enabled: PREFIX/lib/cg-inject/valgrind, built from
// Debian's source with subprojects/valgrind-patches/), else valgrind from PATH. The bundled one
// matters for JIT runtimes: a distribution's Callgrind 3.19 turns the jumps by which PHP's tracing
// JIT, Erlang and Node enter and leave JIT code into calls that never return, and their profiles'
// inclusive costs run to thousands of percent (self costs are right either way).
#pragma once

#include <string>

namespace cg_inject {

struct ValgrindChoice {
  std::string program;       // argv[0] for the child: a path, or a bare name searched in PATH
  std::string valgrind_lib;  // VALGRIND_LIB for the child ("" = leave it alone)
  std::string message;       // one line for stderr: which valgrind runs and why
};

/// `explicit_valgrind` is --valgrind's value ("" when not given); `self_exe` is the path of the
/// running cg-inject (/proc/self/exe), whose ../lib/cg-inject/valgrind is the bundled Valgrind.
/// The bundled Valgrind was built for the build tree's prefix, so the child gets VALGRIND_LIB
/// pointing at the installed copy's tools (the tree is relocatable that way: DESTDIR, moves).
ValgrindChoice ChooseValgrind(const std::string& explicit_valgrind, const std::string& self_exe);

/// PREFIX/lib/cg-inject/valgrind for an executable at PREFIX/bin/cg-inject.
std::string BundledValgrindDir(const std::string& self_exe);

}  // namespace cg_inject
