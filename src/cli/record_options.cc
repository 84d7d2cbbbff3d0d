// Hand-rolled like options.cc: a few long options, -o/-j/-v/-q, and the `--` grammar that
// separates cg-inject's options, Valgrind's and the program's.
#include "cli/record_options.h"

#include <charconv>

namespace cg_inject {
namespace {

constexpr std::string_view kHelp =
    R"(Usage: cg-inject record [OPTIONS] [-- VALGRIND OPTIONS --] PROGRAM [ARGS]

Runs PROGRAM under Valgrind's Callgrind with --dump-instr=yes, with the switches that make JIT
runtimes write perf maps and jitdumps (Node, Deno, Bun, Java, CPython 3.12+, .NET, MoarVM, Julia,
wasmtime, PHP, Erlang, Mono) and the Valgrind options they need, then injects every Callgrind file it wrote (one per process, part and thread) with its process's
sources and prints the stats. DIR gets callgrind.out.PID (raw), callgrind.out.PID.jit (named:
open it with kcachegrind or callgrind_annotate) and the process's perf-PID.map / jit-PID.dump.

Options:
  -o, --output-dir DIR  Where the files go (default: the current directory; created if missing).
      --valgrind PATH   The valgrind to run. Default: the Valgrind installed with cg-inject
                        (-Dbundled_valgrind=enabled), else valgrind from PATH. The bundled
                        one's Callgrind follows JIT code entered and left by jumps (PHP's
                        tracing JIT, Erlang, Node); a distribution's makes those jumps calls
                        that never return (inclusive costs far above 100%).
      --no-runtime-env  Set no runtime switch.
      --no-runtime-env=LIST
                        Set none for these runtimes (comma-separated: node,deno,bun,java,
                        python,dotnet,moarvm,julia,wasmtime,php,erlang,mono).
      --clean           Remove the raw Callgrind files, maps and dumps after injecting.
      --stats=FORMAT    Summary format: text (default) or json; --no-stats for none.
  -j, --jobs N          Inject at most N files at once (default: one per core).
  -v, --verbose         More messages (the command line and environment that were run).
  -q, --quiet           Errors only (no summary unless --stats is given); Valgrind gets -q.
  -h, --help            Show this help and exit.

Valgrind options go between two `--`: cg-inject record -- --trace-children=yes -- sh run.sh
(--tool and --callgrind-out-file are set by record and refused there). A PROGRAM that is a
script or a shell (sh, bash, dash, env) is run with --trace-children=yes, so that the runtime it
execs is what Callgrind profiles (unless --trace-children is given there).

Exit status: PROGRAM's own (128+N when a signal N ended it), unless recording or injecting
failed: 1 no profile written, an empty profile (the program exec'd one Valgrind did not follow),
no symbol source for a process that ran JIT code, or a bad input; 2 usage error; 3 a consistency
check failed; 126 PROGRAM or valgrind cannot be run; 127 PROGRAM or valgrind not found (the
message says which).
)";

constexpr std::string_view kShortUsage =
    "usage: cg-inject record [OPTIONS] [-- VALGRIND OPTIONS --] PROGRAM [ARGS]\n"
    "try 'cg-inject record --help' for more information\n";

bool ParseJobs(std::string_view text, int* jobs) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *jobs);
  return ec == std::errc() && end == text.data() + text.size() && *jobs > 0;
}

/// Splits "a,b" and checks every name; returns the bad one, or empty.
std::string AddRuntimeList(std::string_view list, RuntimeSelection* selection) {
  while (true) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    if (!IsKnownRuntime(name)) return std::string(name);
    selection->disabled.emplace(name);
    if (comma == std::string_view::npos) return "";
    list.remove_prefix(comma + 1);
  }
}

/// Valgrind options that record sets itself.
std::string CheckValgrindArg(std::string_view arg) {
  if (arg.starts_with("--tool=") && arg != "--tool=callgrind")
    return "record runs Callgrind; '" + std::string(arg) + "' is not allowed";
  if (arg.starts_with("--callgrind-out-file"))
    return "record names the Callgrind files itself; use -o DIR instead of '" + std::string(arg) +
           "'";
  return "";
}

}  // namespace

std::string_view RecordHelpText() { return kHelp; }
std::string_view RecordShortUsage() { return kShortUsage; }

ParsedRecordCommandLine ParseRecordCommandLine(const std::vector<std::string_view>& args) {
  ParsedRecordCommandLine parsed;
  RecordOptions& o = parsed.options;
  size_t i = 0;
  auto fail = [&](std::string message) {
    parsed.error = std::move(message);
    return parsed;
  };
  // Returns the value of option `name` (inline after '=' or attached, or the next argument).
  auto value = [&](std::string_view arg, std::string_view name, std::string* out) {
    if (arg.size() > name.size()) {
      std::string_view rest = arg.substr(name.size());
      if (rest.front() == '=') rest.remove_prefix(1);
      *out = std::string(rest);
      return !out->empty();
    }
    if (i + 1 >= args.size()) return false;
    *out = std::string(args[++i]);
    return !out->empty();
  };

  bool stats_given = false;
  for (; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      if (i < args.size() && args[i].starts_with("-")) {
        for (; i < args.size() && args[i] != "--"; ++i) {
          if (std::string bad = CheckValgrindArg(args[i]); !bad.empty()) return fail(bad);
          o.valgrind_args.emplace_back(args[i]);
        }
        if (i == args.size())
          return fail("Valgrind options after '--' must end with another '--' before PROGRAM");
        ++i;
      }
      break;
    }
    if (!arg.starts_with("-") || arg == "-") break;
    std::string v;
    auto is = [&](std::string_view name) {
      return arg == name || (arg.starts_with(name) && arg.size() > name.size() &&
                             (arg[name.size()] == '=' || !name.starts_with("--")));
    };
    if (is("-o") || is("--output-dir")) {
      if (!value(arg, arg.starts_with("--") ? "--output-dir" : "-o", &v))
        return fail(std::string(arg) + ": missing value");
      o.output_dir = v;
    } else if (is("--valgrind")) {
      if (!value(arg, "--valgrind", &v)) return fail("--valgrind: missing value");
      o.valgrind = v;
      o.valgrind_given = true;
    } else if (is("-j") || is("--jobs")) {
      if (!value(arg, arg.starts_with("--") ? "--jobs" : "-j", &v) || !ParseJobs(v, &o.jobs))
        return fail(std::string(arg) + ": expected a positive number");
    } else if (arg == "--no-runtime-env") {
      o.runtimes.all_off = true;
    } else if (arg.starts_with("--no-runtime-env=")) {
      if (std::string bad = AddRuntimeList(arg.substr(17), &o.runtimes); !bad.empty())
        return fail(
            "--no-runtime-env: unknown runtime '" + bad +
            "' (node, deno, bun, java, python, dotnet, moarvm, julia, wasmtime, php, erlang, "
            "mono)");
    } else if (arg == "--clean") {
      o.clean = true;
    } else if (arg == "--no-stats") {
      o.stats = StatsFormat::kNone;
      stats_given = true;
    } else if (arg == "--stats" || arg == "--stats=text") {
      o.stats = StatsFormat::kText;
      stats_given = true;
    } else if (arg == "--stats=json") {
      o.stats = StatsFormat::kJson;
      stats_given = true;
    } else if (arg == "-v" || arg == "--verbose") {
      ++o.verbosity;
    } else if (arg == "-q" || arg == "--quiet") {
      o.verbosity = 0;
    } else if (arg == "-h" || arg == "--help") {
      o.help = true;
      return parsed;
    } else {
      return fail("record: unknown option '" + std::string(arg) + "'");
    }
  }
  for (; i < args.size(); ++i) o.program.emplace_back(args[i]);
  if (o.verbosity == 0 && !stats_given) o.stats = StatsFormat::kNone;  // -q: errors only
  if (o.program.empty()) return fail("record: no PROGRAM to run");
  return parsed;
}

}  // namespace cg_inject
