// Options of `cg-inject record [OPTIONS] [-- VALGRIND OPTIONS --] PROGRAM ARGS` and their
// parser, apart from running so tests can check every form without starting anything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/options.h"
#include "cli/runtime_env.h"

namespace cg_inject {

struct RecordOptions {
  std::string valgrind = "valgrind";       // --valgrind PATH; a bare name is searched in PATH
  bool valgrind_given = false;             // --valgrind was given (else: ChooseValgrind)
  std::string output_dir = ".";            // -o, --output-dir DIR: raw and injected files
  std::vector<std::string> valgrind_args;  // between `--` and `--`
  std::vector<std::string> program;        // PROGRAM ARGS
  RuntimeSelection runtimes;               // --no-runtime-env[=LIST]
  bool clean = false;                      // --clean: remove raw files after injecting
  StatsFormat stats = StatsFormat::kText;  // --stats=json, --no-stats
  int jobs = 0;                            // -j N; 0 = one per core
  int verbosity = 1;                       // as for the main command
  bool help = false;
};

struct ParsedRecordCommandLine {
  RecordOptions options;
  std::string error;  // empty on success
};

/// Parses the arguments after "record". The first `--` ends cg-inject's options; when the word
/// after it starts with '-', Valgrind options follow up to a second `--`. Without `--` the first
/// word that is not an option is PROGRAM.
ParsedRecordCommandLine ParseRecordCommandLine(const std::vector<std::string_view>& args);

/// The text of `cg-inject record --help`.
std::string_view RecordHelpText();
/// Two lines shown under a usage error of `record`.
std::string_view RecordShortUsage();

}  // namespace cg_inject
