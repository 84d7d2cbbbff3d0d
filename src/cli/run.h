// The entry function of cg-inject: options in, exit code out. main.cc only parses the command
// line and maps the result; tests call RunCgInject directly with an injectable environment.
#pragma once

#include <cstdio>
#include <string>

#include "sources/discovery.h"

namespace cg_inject {

struct CliOptions;

/// Exit codes, listed in man/cg-inject.1.
enum class ExitCode : int {
  kOk = 0,
  kInputError = 1,   // bad input, I/O error
  kUsage = 2,        // bad command line
  kCheckFailed = 3,  // an invariant of the result failed: a bug, nothing written
  kCannotRun = 126,  // record: valgrind exists but cannot be run
  kNotFound = 127,   // record: valgrind not found
  kInterrupted = 130,
};

/// What the run may know about its surroundings; tests replace every field.
struct RunEnvironment {
  DiscoveryRoots roots = DiscoveryRoots::FromEnvironment();
  std::FILE* err = stderr;
  bool stdin_is_terminal = false;
  bool stdout_is_terminal = false;
  bool stderr_is_terminal = false;  // progress is shown only on a terminal (unless told)

  /// Reads the terminal flags of the real process (isatty, TERM != dumb).
  static RunEnvironment FromProcess();
};

/// Runs cg-inject: loads the symbol sources (given and discovered), rewrites every input into its
/// output, checks the invariants, prints what was used and, if asked, the stats. Never throws;
/// errors are printed as "cg-inject: ..." on env.err and mapped to an exit code.
ExitCode RunCgInject(const CliOptions& options, const RunEnvironment& env);

}  // namespace cg_inject
