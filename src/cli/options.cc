// Hand-rolled option parsing: getopt_long keeps global state, which tests cannot reset, and the
// grammar here is small (long options with `=` or a separate value, a few short flags, `--`).
#include "cli/options.h"

#include <functional>
#include <map>

namespace cg_inject {
namespace {

constexpr std::string_view kHelp =
    R"(Usage: cg-inject [OPTIONS] -i CALLGRIND_OUT [-o OUTPUT]
       cg-inject record [OPTIONS] [-- VALGRIND OPTIONS --] PROGRAM [ARGS]
                        (record and inject in one step: cg-inject record --help)

Rewrites a Callgrind profile so that JIT-compiled code gets the names, source files and lines
that the runtime wrote to a perf map (/tmp/perf-PID.map) or a jitdump (jit-PID.dump), on the
callee side (ob/fl/fn) and on every caller side (cob/cfi/cfn), keeping every cost.

Input and output:
  -i, --input FILE      Callgrind file to read, plain or zstd-compressed; "-" reads stdin.
                        Repeatable; several inputs (parts, per-thread files) get one output each.
  -o, --output FILE     Where to write (default: stdout for one input, INPUT.jit for several;
                        a directory puts INPUT's basename + suffix there). Replaced atomically.
      --suffix SUFFIX   Output suffix with several inputs (default: .jit).
      --zstd            Compress the output with zstd (implied by an output name ending in .zst).
      --no-compress     Write names in full instead of Callgrind's "(id) name" compression.
      --in-place        Allow the output to be the input file itself.
  -f, --force           Write even if a consistency check fails; read from a terminal.

Symbol sources:
      --perf-map FILE   Read a perf map (START SIZE name per line). Repeatable.
      --jitdump FILE    Read a jitdump (perf's binary JIT description). Repeatable.
      --jit-dir DIR     Also look in DIR for perf-PID.map and jit-PID.dump (and JavaScriptCore's
                        jit-TID-PID.dump). Repeatable.
      --no-discover     Do not look for sources by the profile's pid (/tmp/perf-PID.map,
                        ./jit-PID.dump, /tmp/jit-PID.dump, ~/.debug/jit/*/jit-PID.dump, and
                        JavaScriptCore's jit-TID-PID.dump in . and /tmp, /tmp/jit-TID-PID-XXXXXX).

Machine code (KCachegrind's "Machine Code" tab, objdump, addr2line):
      --elf-dir DIR     Write the ELF images of the JIT code (jitdump CODE_LOAD records, MoarVM
                        moar-jit.PID/ code files beside the perf map)
                        into DIR (created if missing) instead of beside the output file.
      --elf-path=MODE   How ob= names an image: absolute (default) or relative (its bare name,
                        found by KCachegrind beside the profile, so both can move together;
                        not with --elf-dir).
      --no-elf          Write no images; ob= names the symbol source as without images.
                        Images are written by default when the output is a file.

Reports:
      --stats[=FORMAT]  Print what was resolved to stderr; FORMAT is text (default) or json.
      --callgraph FILE  Write the canonical call graph of the result as JSON (functions, self and
                        inclusive cost, call edges): diff it across runs or against a reference.
  -v, --verbose         More messages on stderr (repeatable).
  -q, --quiet           Errors only.
      --progress        Show progress on stderr (default: only when stderr is a terminal).
      --no-progress     Never show progress.
  -h, --help            Show this help and exit.
  -V, --version         Show the version and exit.

Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 a consistency check failed
(no output written unless --force), 130 interrupted.
)";

constexpr std::string_view kShortUsage =
    "usage: cg-inject [OPTIONS] -i CALLGRIND_OUT [-o OUTPUT]\n"
    "try 'cg-inject --help' for more information\n";

}  // namespace

std::string_view HelpText() { return kHelp; }
std::string_view ShortUsage() { return kShortUsage; }

ParsedCommandLine ParseCommandLine(const std::vector<std::string_view>& args) {
  ParsedCommandLine parsed;
  CliOptions& o = parsed.options;

  using ValueSetter = std::function<void(std::string_view)>;
  auto append = [](std::vector<std::string>* list) {
    return [list](std::string_view v) { list->emplace_back(v); };
  };
  auto assign = [](std::string* s) { return [s](std::string_view v) { *s = v; }; };
  const std::map<std::string_view, ValueSetter> with_value = {
      {"--input", append(&o.inputs)},
      {"-i", append(&o.inputs)},
      {"--output", assign(&o.output)},
      {"-o", assign(&o.output)},
      {"--suffix", assign(&o.suffix)},
      {"--perf-map", append(&o.perf_maps)},
      {"--jitdump", append(&o.jitdumps)},
      {"--jit-dir", append(&o.jit_dirs)},
      {"--callgraph", assign(&o.callgraph_path)},
      {"--elf-dir", assign(&o.elf_dir)},
  };
  using FlagSetter = std::function<void()>;
  const std::map<std::string_view, FlagSetter> flags = {
      {"--zstd", [&] { o.zstd_output = true; }},
      {"--no-compress", [&] { o.compress_names = false; }},
      {"--in-place", [&] { o.in_place = true; }},
      {"--force", [&] { o.force = true; }},
      {"-f", [&] { o.force = true; }},
      {"--no-discover", [&] { o.discover = false; }},
      {"--stats", [&] { o.stats = StatsFormat::kText; }},
      {"--verbose", [&] { ++o.verbosity; }},
      {"-v", [&] { ++o.verbosity; }},
      {"-vv", [&] { o.verbosity += 2; }},
      {"--quiet", [&] { o.verbosity = 0; }},
      {"-q", [&] { o.verbosity = 0; }},
      {"--progress", [&] { o.progress = true; }},
      {"--no-progress", [&] { o.progress = false; }},
      {"--help", [&] { o.help = true; }},
      {"-h", [&] { o.help = true; }},
      {"--version", [&] { o.version = true; }},
      {"-V", [&] { o.version = true; }},
      {"--no-elf", [&] { o.elf_images = false; }},
  };

  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (only_positional || arg == "-" || !arg.starts_with("-")) {
      o.inputs.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string_view name = arg;
    std::optional<std::string_view> inline_value;
    if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    } else if (!arg.starts_with("--") && arg.size() > 2 && with_value.count(arg.substr(0, 2))) {
      // Short option with an attached value: -ofile.
      name = arg.substr(0, 2);
      inline_value = arg.substr(2);
    }
    if (name == "--stats" && inline_value) {
      if (*inline_value == "text") {
        o.stats = StatsFormat::kText;
      } else if (*inline_value == "json") {
        o.stats = StatsFormat::kJson;
      } else {
        parsed.error = "--stats: expected text or json, got '" + std::string(*inline_value) + "'";
        return parsed;
      }
      continue;
    }
    if (name == "--elf-path") {
      std::string_view mode = inline_value          ? *inline_value
                              : i + 1 < args.size() ? args[++i]
                                                    : std::string_view();
      if (mode == "absolute" || mode == "relative") {
        o.elf_relative = mode == "relative";
        continue;
      }
      parsed.error = "--elf-path: expected absolute or relative, got '" + std::string(mode) + "'";
      return parsed;
    }
    if (auto it = with_value.find(name); it != with_value.end()) {
      if (!inline_value) {
        if (i + 1 >= args.size()) {
          parsed.error = std::string(name) + ": missing value";
          return parsed;
        }
        inline_value = args[++i];
      }
      if (inline_value->empty()) {
        parsed.error = std::string(name) + ": empty value";
        return parsed;
      }
      it->second(*inline_value);
      continue;
    }
    if (auto it = flags.find(name); it != flags.end() && !inline_value) {
      it->second();
      continue;
    }
    parsed.error = "unknown option '" + std::string(arg) + "'";
    return parsed;
  }
  if (o.help || o.version) return parsed;
  if (o.inputs.empty()) {
    parsed.error = "no input: give a Callgrind file with -i FILE (or - for stdin)";
  } else if (o.inputs.size() > 1 && o.output == "-") {
    parsed.error = "-o -: several inputs cannot all go to stdout";
  } else if (o.elf_relative && !o.elf_dir.empty()) {
    parsed.error = "--elf-path=relative: images in --elf-dir are named by absolute path";
  }
  return parsed;
}

}  // namespace cg_inject
