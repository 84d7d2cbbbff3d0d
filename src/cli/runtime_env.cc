// The runtime table. Sources: Node's `node --v8-options` and its NODE_OPTIONS allow-list (both
// --perf-prof and --perf-basic-prof are allowed there); HotSpot's -XX:+DumpPerfMapAtExit
// (diagnostic, JDK 17+); CPython's "Python support for the Linux perf profiler" (3.12+); .NET's
// "Export perf maps and jit dumps" (1 = both, 2 = jitdump only, 3 = perf map only); MoarVM's
// docs/jit/ (MVM_JIT_PERF_MAP); Julia's "External Profiling" (ENABLE_JITPROFILING, LLVM's perf
// listener, which writes under $JITDUMPDIR or $HOME); wasmtime's `--profile=jitdump` (no
// environment variable exists). LuaJIT has no run-time switch (a build with
// -DLUAJIT_USE_PERFTOOLS writes /tmp/perf-PID.map on its own), so it has no entry here.
#include "cli/runtime_env.h"

#include <algorithm>
#include <array>

namespace cg_inject {
namespace {

// clang-format off
constexpr std::array<RuntimeSwitch, 7> kSwitches = {{
    // Both: the jitdump has code bytes and line tables; the map is the fallback when a Node
    // build cannot write the dump.
    {"node", "NODE_OPTIONS", "--perf-prof --perf-basic-prof", true, "", "node nodejs",
     "./jit-PID.dump (--perf-prof), /tmp/perf-PID.map (--perf-basic-prof)"},
    {"java", "JAVA_TOOL_OPTIONS", "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit", true,
     "", "java", "/tmp/perf-PID.map, at exit"},
    {"python", "PYTHONPERFSUPPORT", "1", false, "", "python python3", "/tmp/perf-PID.map"},
    {"dotnet", "DOTNET_PerfMapEnabled", "1", false, "", "dotnet",
     "/tmp/perf-PID.map, /tmp/jit-PID.dump"},
    {"moarvm", "MVM_JIT_PERF_MAP", "1", false, "", "moar raku rakudo perl6",
     "/tmp/perf-PID.map"},
    {"julia", "ENABLE_JITPROFILING", "1", false, "", "julia",
     "$JITDUMPDIR or $HOME: .debug/jit/*/jit-PID.dump"},
    {"wasmtime", "", "", false, "--profile=jitdump", "wasmtime", "./jit-PID.dump"},
}};
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

const RuntimeSwitch* LookupRuntimeForProgram(std::string_view program) {
  std::string_view name = Basename(program);
  for (const RuntimeSwitch& s : kSwitches) {
    if (ListHas(s.programs, name) || ListHas(s.programs, StripVersion(name))) return &s;
  }
  return nullptr;
}

bool IsKnownRuntime(std::string_view name) {
  return std::any_of(kSwitches.begin(), kSwitches.end(),
                     [&](const RuntimeSwitch& s) { return s.runtime == name; });
}

std::vector<std::string> PlanRuntimeEnv(const std::vector<std::string>& environ,
                                        const RuntimeSelection& selection,
                                        std::vector<std::string>* changes) {
  std::vector<std::string> env = environ;
  for (const RuntimeSwitch& s : kSwitches) {
    if (s.variable.empty() || !selection.Enabled(s.runtime)) continue;
    const std::string prefix = std::string(s.variable) + "=";
    auto it = std::find_if(env.begin(), env.end(),
                           [&](const std::string& e) { return e.starts_with(prefix); });
    std::string entry;
    if (it == env.end()) {
      entry = prefix + std::string(s.value);
      env.push_back(entry);
    } else if (s.append) {
      std::string_view old = std::string_view(*it).substr(prefix.size());
      if (old.find(s.value) != std::string_view::npos) continue;  // the user set it already
      entry = *it + (old.empty() ? "" : " ") + std::string(s.value);
      *it = entry;
    } else {
      continue;  // the user's own value wins (e.g. DOTNET_PerfMapEnabled=2 for jitdumps only)
    }
    if (changes) changes->push_back(entry);
  }
  return env;
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
