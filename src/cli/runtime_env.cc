// The runtime table. Sources: Node's `node --v8-options` and its NODE_OPTIONS allow-list (both
// --perf-prof and --perf-basic-prof are allowed there); HotSpot's -XX:+DumpPerfMapAtExit
// (diagnostic, JDK 17+); CPython's "Python support for the Linux perf profiler" (3.12+); .NET's
// "Export perf maps and jit dumps" (1 = both, 2 = jitdump only, 3 = perf map only); MoarVM's
// docs/jit/ (MVM_JIT_PERF_MAP); Julia's "External Profiling" (ENABLE_JITPROFILING, LLVM's perf
// listener, which writes under $JITDUMPDIR or $HOME); wasmtime's `--profile=jitdump` (no
// environment variable exists); PHP's opcache.jit_debug bits (ext/opcache/jit/zend_jit.h:
// 0x10 ZEND_JIT_DEBUG_PERF writes /tmp/perf-PID.map, 0x20 ZEND_JIT_DEBUG_PERF_DUMP
// /tmp/jit-PID.dump; PHP 8.2 writes the map with 0x20 alone too, measured), and PHP's rule that
// an empty entry in PHP_INI_SCAN_DIR stands for the default directory; Erlang's `erl` manual
// (+JPperf true: map and dump; OTP 24-25 then map JIT code once, RWX, instead of the dual
// mapping whose rewritten code Valgrind does not see; OTP 26's +JMsingle does that alone);
// Mono's `--jitmap` (mono(1)), read from MONO_ENV_OPTIONS too; Deno's DENO_V8_FLAGS
// (comma-separated V8 flags, `deno run --v8-flags=--help`); Bun's BUN_JSC_* variables
// (JavaScriptCore's options, `BUN_JSC_dumpOptions=3`: useJITDump, jitDumpDirectory) and
// BUN_OPTIONS (command-line options, such as --preload, read by every bun process).
// LuaJIT has no run-time switch (a build with -DLUAJIT_USE_PERFTOOLS writes /tmp/perf-PID.map on
// its own), so it has no entry here.
#include "cli/runtime_env.h"

#include <algorithm>
#include <array>
#include <sstream>

namespace cg_inject {
namespace {

// Deno's V8 flags (`deno run --v8-flags=--help`): both files, as for Node, and a named copy of
// the interpreter's entry trampoline for each interpreted function, so that interpreted code is
// its function's in the call graph instead of one Builtin:InterpreterEntryTrampoline for all.
// Measured on tests/data/deno/prog.js under Valgrind 3.19: 171.4M instructions with it, 174.4M
// without (no cost seen); the trampoline's 1.81% of the run became 1.40% in JS:~NAME copies.
constexpr std::string_view kDenoV8Flags =
    "--perf-basic-prof,--perf-prof,--interpreted-frames-native-stack";

// JavaScriptCore writes its jitdump on a thread of its own (a WorkQueue, PerfLog.cpp), one record
// at a time, and Bun exits without waiting for it: under Valgrind a short program left a dump with
// thunks only (26 of 117 records; 67% of the run unnamed). No JSC option waits for the writer, so
// record has Bun preload this script: at exit it waits until the dump has not grown for a second
// (at most a minute), which lets the writer thread finish.
constexpr std::string_view kBunExitWait =
    R"(// Written by cg-inject record, preloaded through BUN_OPTIONS.
// JavaScriptCore writes its jitdump on a thread of its own and Bun exits without waiting for it:
// at exit, wait until the dump has not grown for a second (at most a minute).
"use strict";
const fs = require("node:fs");
process.on("exit", () => {
  const dir = process.env.BUN_JSC_jitDumpDirectory;
  if (!dir) return;
  const suffix = "-" + process.pid + ".dump";
  const size = () => {
    try {
      for (const name of fs.readdirSync(dir)) {
        if (name.startsWith("jit-") && name.endsWith(suffix)) return fs.statSync(dir + "/" + name).size;
      }
    } catch {}
    return -1;
  };
  const start = Date.now();
  let last = size();
  for (let still = 0; still < 10 && Date.now() - start < 60000;) {
    Bun.sleepSync(100);
    const now = size();
    still = now === last ? still + 1 : 0;
    last = now;
  }
});
)";

// clang-format off
constexpr RuntimeSwitch kSwitches[] = {
    // Both: the jitdump has code bytes and line tables; the map is the fallback when a Node
    // build cannot write the dump. V8 optimizes on a background thread; under Valgrind's default
    // scheduling that thread may never run before the program ends, and then no optimized code
    // runs at all (1 of 5 runs of tests/e2e/node/workload.js: 0.0004% of the cost in JIT code
    // instead of 6%, 27% more instructions); with fair scheduling 5 of 5 ran it.
    {"node", "NODE_OPTIONS", "--perf-prof --perf-basic-prof", true, "", "node nodejs",
     "./jit-PID.dump (--perf-prof), /tmp/perf-PID.map (--perf-basic-prof)", "",
     "--fair-sched=yes"},
    // V8 15 in Deno 2.x: the same V8 flags as Node's, in Deno's comma-separated list, and fair
    // scheduling for the same optimizing thread.
    {.runtime = "deno", .variable = "DENO_V8_FLAGS", .value = kDenoV8Flags, .append = true,
     .programs = "deno",
     .writes = "./jit-PID.dump (--perf-prof), /tmp/perf-PID.map (--perf-basic-prof)",
     .valgrind_options = "--fair-sched=yes", .separator = ','},
    // JavaScriptCore in Bun: a jitdump in record's directory (its name has the writer thread's id,
    // jit-TID-PID.dump), and the exit wait above.
    // Fair scheduling as for V8: on this 2-core host JavaScriptCore compiled on the main thread
    // (useConcurrentJIT=false) and the exit wait let the dump's writer finish with and without
    // it (134 and 133 code records, all of the JIT code named); where JSC compiles on threads
    // of its own, they need Valgrind's lock as V8's optimizing thread does.
    {.runtime = "bun", .variable = "BUN_JSC_useJITDump", .value = "1", .programs = "bun bunx",
     .writes = "jit-TID-PID.dump in BUN_JSC_jitDumpDirectory",
     .valgrind_options = "--fair-sched=yes"},
    {.runtime = "bun", .variable = "BUN_JSC_jitDumpDirectory", .value = kDirPlaceholder},
    {.runtime = "bun", .variable = "BUN_OPTIONS", .value = "--preload={dir}/cg-inject-bun-exit.js",
     .append = true, .dir_file = "cg-inject-bun-exit.js", .dir_file_text = kBunExitWait},
    // HotSpot takes SIGSEGV on purpose (implicit null checks) and resumes from the faulting
    // instruction's registers; Valgrind's default only keeps them exact at its block ends, and
    // javac crashed in C1 code without the option (measured with Valgrind 3.19, JDK 17).
    {"java", "JAVA_TOOL_OPTIONS", "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit", true,
     "", "java", "/tmp/perf-PID.map, at exit", "",
     "--vex-iropt-register-updates=allregs-at-mem-access"},
    {"python", "PYTHONPERFSUPPORT", "1", false, "", "python python3", "/tmp/perf-PID.map", "", ""},
    {"dotnet", "DOTNET_PerfMapEnabled", "1", false, "", "dotnet",
     "/tmp/perf-PID.map, /tmp/jit-PID.dump", "", ""},
    {"moarvm", "MVM_JIT_PERF_MAP", "1", false, "", "moar raku rakudo perl6",
     "/tmp/perf-PID.map", "", ""},
    {"julia", "ENABLE_JITPROFILING", "1", false, "", "julia",
     "$JITDUMPDIR or $HOME: .debug/jit/*/jit-PID.dump", "", ""},
    {"wasmtime", "", "", false, "--profile=jitdump", "wasmtime", "./jit-PID.dump", "", ""},
    // The CLI runs no JIT code unless opcache is on for it; a script changed less than 2 s
    // before the run is not cached (so not compiled) without file_update_protection=0. Both
    // debug bits: the jitdump is preferred, the map is the fallback after a signal.
    {"php", "PHP_INI_SCAN_DIR", "", false, "", "php php8 php-cgi",
     "/tmp/jit-PID.dump (jit_debug 0x20), /tmp/perf-PID.map (0x10)",
     "opcache.enable_cli=1\n"
     "opcache.jit_buffer_size=32M\n"
     "opcache.jit=tracing\n"
     "opcache.jit_debug=0x30\n"
     "opcache.file_update_protection=0\n", ""},
    // BEAM's threads wait for each other by spinning; under Valgrind's default scheduling (one
    // thread at a time, handed over unfairly) a run of 0.7G instructions took 49G and 7 minutes
    // in two of three runs (Valgrind 3.19, OTP 25); with fair scheduling it took 6-7 s in both
    // tries. erlc, escript (ELF programs) and Elixir's elixir, iex and mix (scripts) exec erl.
    {"erlang", "ERL_FLAGS", "+JPperf true", true, "",
     "erl beam beam.smp erlexec escript erlc elixir iex mix",
     "/tmp/perf-PID.map, /tmp/jit-PID.dump", "", "--fair-sched=yes"},
    {"mono", "MONO_ENV_OPTIONS", "--jitmap", true, "", "mono mono-sgen", "/tmp/perf-PID.map",
     "", ""},
};
// clang-format on

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// "python3.12" -> "python3", "julia-1.10" -> "julia": a '.' or '-' followed by a digit starts a
/// version suffix. "nodejs-helper" stays.
std::string_view StripVersion(std::string_view name) {
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    if ((name[i] == '.' || name[i] == '-') && name[i + 1] >= '0' && name[i + 1] <= '9')
      return name.substr(0, i);
  }
  return name;
}

bool ListHas(std::string_view list, std::string_view word) {
  while (!list.empty()) {
    size_t space = list.find(' ');
    if (list.substr(0, space) == word) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace

std::span<const RuntimeSwitch> RuntimeSwitches() { return kSwitches; }

std::vector<const RuntimeSwitch*> SwitchesOf(std::string_view runtime) {
  std::vector<const RuntimeSwitch*> of;
  for (const RuntimeSwitch& s : kSwitches) {
    if (s.runtime == runtime) of.push_back(&s);
  }
  return of;
}

std::vector<std::pair<std::string, std::string>> PlanDirFiles(const RuntimeSelection& selection) {
  std::vector<std::pair<std::string, std::string>> files;
  if (std::string ini = PlanIniText(selection); !ini.empty()) files.emplace_back(kIniFileName, ini);
  for (const RuntimeSwitch& s : kSwitches) {
    if (!s.dir_file.empty() && selection.Enabled(s.runtime))
      files.emplace_back(s.dir_file, s.dir_file_text);
  }
  return files;
}

const RuntimeSwitch* LookupRuntimeForProgram(std::string_view program) {
  std::string_view name = Basename(program);
  for (const RuntimeSwitch& s : kSwitches) {
    if (ListHas(s.programs, name) || ListHas(s.programs, StripVersion(name))) return &s;
  }
  return nullptr;
}

bool IsKnownRuntime(std::string_view name) {
  return std::any_of(std::begin(kSwitches), std::end(kSwitches),
                     [&](const RuntimeSwitch& s) { return s.runtime == name; });
}

std::vector<std::string> PlanRuntimeEnv(const std::vector<std::string>& environ,
                                        const RuntimeSelection& selection, const std::string& dir,
                                        std::vector<std::string>* changes) {
  std::vector<std::string> env = environ;
  for (const RuntimeSwitch& s : kSwitches) {
    if (s.variable.empty() || !selection.Enabled(s.runtime)) continue;
    const size_t placeholder = s.value.find(kDirPlaceholder);
    const bool needs_dir = !s.ini_text.empty() || placeholder != std::string_view::npos;
    if (needs_dir && dir.empty()) continue;
    std::string value(s.value);
    if (placeholder != std::string_view::npos)
      value.replace(placeholder, kDirPlaceholder.size(), dir);
    const std::string prefix = std::string(s.variable) + "=";
    auto it = std::find_if(env.begin(), env.end(),
                           [&](const std::string& e) { return e.starts_with(prefix); });
    std::string entry;
    if (!s.ini_text.empty()) {
      // A directory list: ":DIR" keeps the runtime's default directory (the empty entry); a
      // list of the user's keeps exactly what the user chose, plus DIR.
      std::string old = it == env.end() ? "" : it->substr(prefix.size());
      entry = prefix + old + ":" + dir;
      if (it == env.end()) {
        env.push_back(entry);
      } else {
        *it = entry;
      }
    } else if (it == env.end()) {
      entry = prefix + value;
      env.push_back(entry);
    } else if (s.append) {
      std::string_view old = std::string_view(*it).substr(prefix.size());
      if (old.find(value) != std::string_view::npos) continue;  // the user set it already
      entry = *it + (old.empty() ? "" : std::string(1, s.separator)) + value;
      *it = entry;
    } else {
      continue;  // the user's own value wins (e.g. DOTNET_PerfMapEnabled=2 for jitdumps only)
    }
    if (changes) changes->push_back(entry);
  }
  return env;
}

std::string PlanIniText(const RuntimeSelection& selection) {
  std::string text;
  for (const RuntimeSwitch& s : kSwitches) {
    if (!s.ini_text.empty() && selection.Enabled(s.runtime)) text += s.ini_text;
  }
  return text;
}

std::vector<std::string> PlanValgrindOptions(std::string_view program,
                                             const RuntimeSelection& selection) {
  std::vector<std::string> options;
  const RuntimeSwitch* s = LookupRuntimeForProgram(program);
  if (s == nullptr || !selection.Enabled(s->runtime)) return options;
  std::istringstream words{std::string(s->valgrind_options)};
  for (std::string word; words >> word;) options.push_back(word);
  return options;
}

std::vector<std::string> PlanProgramArgs(const std::vector<std::string>& program_args,
                                         const RuntimeSelection& selection) {
  std::vector<std::string> args = program_args;
  if (args.empty()) return args;
  const RuntimeSwitch* s = LookupRuntimeForProgram(args[0]);
  if (s == nullptr || s->program_flag.empty() || !selection.Enabled(s->runtime)) return args;
  if (std::find(args.begin(), args.end(), s->program_flag) != args.end()) return args;
  // `wasmtime run [OPTIONS] FILE` and the older `wasmtime [OPTIONS] FILE` both take it first.
  size_t at = args.size() > 1 && args[1] == "run" ? 2 : 1;
  args.insert(args.begin() + std::ptrdiff_t(at), std::string(s->program_flag));
  return args;
}

}  // namespace cg_inject
