// Command-line options of cg-inject and their parser. Parsing is separate from running so tests
// can check every flag without touching files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cg_inject {

enum class StatsFormat { kNone, kText, kJson };

/// Verbosity levels: 0 (-q) errors only; 1 (default) errors, warnings and which symbol sources
/// were used; 2 (-v) also progress notes per input; 3 (-vv) also every skipped perf-map line.
struct CliOptions {
  std::vector<std::string> inputs;     // -i FILE or positional; "-" = stdin
  std::string output;                  // -o FILE (or a directory with several inputs); "-" = stdout
  std::string suffix = ".jit";         // output name = input + suffix when several inputs, no -o
  std::vector<std::string> perf_maps;  // --perf-map FILE, repeatable
  std::vector<std::string> jitdumps;   // --jitdump FILE, repeatable
  std::vector<std::string> jit_dirs;   // --jit-dir DIR, repeatable
  bool discover = true;                // --no-discover turns off the pid-based search
  bool compress_names = true;          // --no-compress
  bool zstd_output = false;            // --zstd, or an output name ending in .zst
  bool force = false;                  // -f/--force
  bool in_place = false;               // --in-place
  StatsFormat stats = StatsFormat::kNone;  // --stats[=text|json]
  std::string callgraph_path;              // --callgraph FILE: canonical call graph of the result
  int verbosity = 1;
  std::optional<bool> progress;  // --progress / --no-progress; unset = only on a terminal
  bool help = false;
  bool version = false;

  // ELF images of the JIT code, for KCachegrind's machine-code view (src/elf/jit_image_plan.h).
  bool elf_images = true;     // --no-elf turns them off
  std::string elf_dir;        // --elf-dir DIR: write them there (default: beside the output)
  bool elf_relative = false;  // --elf-path=relative: ob= holds the bare name (default absolute)
};

/// The result of parsing: options, or a one-line error naming the bad argument.
struct ParsedCommandLine {
  CliOptions options;
  std::string error;  // empty on success
};

ParsedCommandLine ParseCommandLine(const std::vector<std::string_view>& args);

/// The text of --help (also the basis of man/cg-inject.1; keep them in step).
std::string_view HelpText();
/// Two lines shown under a usage error.
std::string_view ShortUsage();

}  // namespace cg_inject
