#include "cli/valgrind_choice.h"

#include <unistd.h>

#include <filesystem>

namespace cg_inject {

std::string BundledValgrindDir(const std::string& self_exe) {
  std::filesystem::path bin = std::filesystem::path(self_exe).parent_path();
  return (bin.parent_path() / "lib" / "cg-inject" / "valgrind").string();
}

ValgrindChoice ChooseValgrind(const std::string& explicit_valgrind, const std::string& self_exe) {
  ValgrindChoice c;
  if (!explicit_valgrind.empty()) {
    c.program = explicit_valgrind;
    c.message = "cg-inject: recording with " + explicit_valgrind + " (--valgrind)";
    return c;
  }
  if (!self_exe.empty()) {
    std::string dir = BundledValgrindDir(self_exe);
    std::string launcher = dir + "/bin/valgrind";
    // The launcher and the tool both: an install without the tools cannot run.
    std::string lib = dir + "/libexec/valgrind";
    if (::access(launcher.c_str(), X_OK) == 0 && ::access(lib.c_str(), R_OK | X_OK) == 0) {
      c.program = launcher;
      c.valgrind_lib = lib;
      c.message = "cg-inject: recording with the Valgrind installed with cg-inject (" + dir +
                  "), whose Callgrind follows JIT code entered and left by jumps";
      return c;
    }
  }
  c.program = "valgrind";
  c.message =
      "cg-inject: recording with valgrind from PATH; its call graphs of JIT code entered by jumps "
      "(PHP tracing JIT, Erlang, Node) may be wrong (see cg-inject(1), -Dbundled_valgrind)";
  return c;
}

}  // namespace cg_inject
