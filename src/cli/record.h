// `cg-inject record`: run a program under Callgrind with the runtime switches set, then inject
// every profile it wrote. The injection of each process goes through RunCgInject, the same entry
// as the plain command.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sources/discovery.h"

namespace cg_inject {

struct RecordOptions;

/// What RunRecord may know about its surroundings; tests replace the fields.
struct RecordEnvironment {
  std::vector<std::string> environ;  // "NAME=VALUE", the program's environment before switches
  DiscoveryRoots roots;              // where runtimes write maps and dumps (cwd = the program's)
  std::FILE* err = stderr;

  /// The real process: ::environ, /tmp, ".", $JITDUMPDIR or $HOME (LLVM's jitdump directory).
  static RecordEnvironment FromProcess();
};

/// Records and injects. Returns the exit status described in `cg-inject record --help`: the
/// program's own, or a cg-inject code when recording or injecting failed. Never throws.
int RunRecord(const RecordOptions& options, const RecordEnvironment& env);

}  // namespace cg_inject
