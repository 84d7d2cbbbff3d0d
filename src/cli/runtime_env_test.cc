#include "cli/runtime_env.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

using Env = std::vector<std::string>;

TEST(RuntimeEnvTest, SetsEverySwitchInAnEmptyEnvironment) {
  std::vector<std::string> changes;
  Env env = PlanRuntimeEnv({"PATH=/bin"}, {}, "/tmp/ini", &changes);
  EXPECT_EQ(env,
            (Env{"PATH=/bin", "NODE_OPTIONS=--perf-prof --perf-basic-prof",
                 "DENO_V8_FLAGS=--perf-basic-prof,--perf-prof,--interpreted-frames-native-stack",
                 "BUN_JSC_useJITDump=1", "BUN_JSC_jitDumpDirectory=/tmp/ini",
                 "BUN_OPTIONS=--preload=/tmp/ini/cg-inject-bun-exit.js",
                 "JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
                 "PYTHONPERFSUPPORT=1", "DOTNET_PerfMapEnabled=1", "MVM_JIT_PERF_MAP=1",
                 "ENABLE_JITPROFILING=1", "PHP_INI_SCAN_DIR=:/tmp/ini", "ERL_FLAGS=+JPperf true",
                 "MONO_ENV_OPTIONS=--jitmap"}));
  EXPECT_EQ(changes.size(), 13u);
}

TEST(RuntimeEnvTest, AppendsToOptionListsAndKeepsTheUsersOwnValues) {
  std::vector<std::string> changes;
  Env env = PlanRuntimeEnv(
      {"NODE_OPTIONS=--max-old-space-size=100", "DOTNET_PerfMapEnabled=2", "JAVA_TOOL_OPTIONS="},
      {}, "", &changes);
  EXPECT_EQ(env[0], "NODE_OPTIONS=--max-old-space-size=100 --perf-prof --perf-basic-prof");
  EXPECT_EQ(env[1], "DOTNET_PerfMapEnabled=2");  // jitdumps only: the user's choice
  EXPECT_EQ(env[2], "JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit");
  EXPECT_EQ(std::count(changes.begin(), changes.end(), "DOTNET_PerfMapEnabled=2"), 0);
}

TEST(RuntimeEnvTest, AlreadyPresentSwitchIsNotAppendedTwice) {
  Env env = PlanRuntimeEnv({"NODE_OPTIONS=--perf-prof --perf-basic-prof"}, {}, "", nullptr);
  EXPECT_EQ(env[0], "NODE_OPTIONS=--perf-prof --perf-basic-prof");
}

TEST(RuntimeEnvTest, SwitchesOff) {
  RuntimeSelection none;
  none.all_off = true;
  EXPECT_EQ(PlanRuntimeEnv({"A=1"}, none, "/tmp/ini", nullptr), Env{"A=1"});
  EXPECT_EQ(PlanIniText(none), "");
  RuntimeSelection some;
  some.disabled = {"node",   "deno",   "bun", "java",   "python",
                   "dotnet", "moarvm", "php", "erlang", "mono"};
  EXPECT_EQ(PlanRuntimeEnv({}, some, "/tmp/ini", nullptr), Env{"ENABLE_JITPROFILING=1"});
  EXPECT_EQ(PlanIniText(some), "");
}

// PHP reads single settings from no variable: record writes an ini file and lists its directory
// after the default one (the empty entry), or after the user's own list.
TEST(RuntimeEnvTest, PhpGetsAnIniDirectoryThatKeepsTheDefaultOne) {
  EXPECT_EQ(PlanIniText({}),
            "opcache.enable_cli=1\nopcache.jit_buffer_size=32M\nopcache.jit=tracing\n"
            "opcache.jit_debug=0x30\nopcache.file_update_protection=0\n");
  EXPECT_EQ(PlanRuntimeEnv({"PHP_INI_SCAN_DIR=/etc/php/mine"}, {}, "/tmp/d", nullptr)[0],
            "PHP_INI_SCAN_DIR=/etc/php/mine:/tmp/d");
  Env env = PlanRuntimeEnv({}, {}, "/tmp/d", nullptr);
  EXPECT_EQ(std::count(env.begin(), env.end(), "PHP_INI_SCAN_DIR=:/tmp/d"), 1);
  // No directory (it could not be created): no PHP switch, the others stay.
  env = PlanRuntimeEnv({}, {}, "", nullptr);
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.starts_with("PHP_INI_SCAN_DIR="); }),
            0);
  EXPECT_EQ(std::count(env.begin(), env.end(), "ERL_FLAGS=+JPperf true"), 1);
}

// Deno's V8 flags are a comma-separated list: ours go after the user's own.
TEST(RuntimeEnvTest, DenoFlagsAreAppendedWithACommaAndBunGetsItsDirectory) {
  Env env = PlanRuntimeEnv({"DENO_V8_FLAGS=--max-old-space-size=100", "BUN_OPTIONS=--smol"}, {},
                           "/tmp/rec", nullptr);
  EXPECT_EQ(env[0],
            "DENO_V8_FLAGS=--max-old-space-size=100,--perf-basic-prof,--perf-prof,"
            "--interpreted-frames-native-stack");
  EXPECT_EQ(env[1], "BUN_OPTIONS=--smol --preload=/tmp/rec/cg-inject-bun-exit.js");
  EXPECT_EQ(std::count(env.begin(), env.end(), "BUN_JSC_jitDumpDirectory=/tmp/rec"), 1);
  // The user's own directory wins; without record's directory Bun gets the switch alone.
  env = PlanRuntimeEnv({"BUN_JSC_jitDumpDirectory=/mine"}, {}, "/tmp/rec", nullptr);
  EXPECT_EQ(env[0], "BUN_JSC_jitDumpDirectory=/mine");
  env = PlanRuntimeEnv({}, {}, "", nullptr);
  EXPECT_EQ(std::count(env.begin(), env.end(), "BUN_JSC_useJITDump=1"), 1);
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) {
                            return e.starts_with("BUN_JSC_jitDumpDirectory=") ||
                                   e.starts_with("BUN_OPTIONS=");
                          }),
            0);
}

// record writes PHP's ini file and Bun's exit wait into its directory.
TEST(RuntimeEnvTest, DirectoryFilesOfTheSelectedRuntimes) {
  std::vector<std::pair<std::string, std::string>> files = PlanDirFiles({});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, kIniFileName);
  EXPECT_EQ(files[0].second, PlanIniText({}));
  EXPECT_EQ(files[1].first, "cg-inject-bun-exit.js");
  EXPECT_NE(files[1].second.find("process.on(\"exit\""), std::string::npos);
  EXPECT_NE(files[1].second.find("BUN_JSC_jitDumpDirectory"), std::string::npos);
  RuntimeSelection no_bun;
  no_bun.disabled = {"bun"};
  EXPECT_EQ(PlanDirFiles(no_bun).size(), 1u);
  RuntimeSelection none;
  none.all_off = true;
  EXPECT_TRUE(PlanDirFiles(none).empty());
  EXPECT_EQ(SwitchesOf("bun").size(), 3u);
  EXPECT_EQ(SwitchesOf("deno").size(), 1u);
  EXPECT_TRUE(SwitchesOf("ruby").empty());
}

TEST(RuntimeEnvTest, ErlangAndMonoOptionListsAreAppendedTo) {
  Env env = PlanRuntimeEnv({"ERL_FLAGS=+S 1", "MONO_ENV_OPTIONS=--debug"}, {}, "", nullptr);
  EXPECT_EQ(env[0], "ERL_FLAGS=+S 1 +JPperf true");
  EXPECT_EQ(env[1], "MONO_ENV_OPTIONS=--debug --jitmap");
}

TEST(RuntimeEnvTest, ValgrindOptionsFollowTheProgramsRuntime) {
  EXPECT_EQ(PlanValgrindOptions("/usr/bin/java", {}),
            Env{"--vex-iropt-register-updates=allregs-at-mem-access"});
  EXPECT_EQ(PlanValgrindOptions("erl", {}), Env{"--fair-sched=yes"});
  EXPECT_EQ(PlanValgrindOptions("/usr/lib/erlang/erts-13.1.5/bin/beam.smp", {}),
            Env{"--fair-sched=yes"});
  EXPECT_EQ(PlanValgrindOptions("node", {}), Env{"--fair-sched=yes"});
  EXPECT_EQ(PlanValgrindOptions("/opt/deno", {}), Env{"--fair-sched=yes"});
  EXPECT_EQ(PlanValgrindOptions("bun", {}), Env{"--fair-sched=yes"});
  // Erlang's and Elixir's launchers start BEAM too.
  for (const char* program : {"erlc", "/usr/bin/escript", "elixir", "/usr/bin/iex", "mix"})
    EXPECT_EQ(PlanValgrindOptions(program, {}), Env{"--fair-sched=yes"}) << program;
  EXPECT_EQ(PlanValgrindOptions("./prog", {}), Env{});
  RuntimeSelection off;
  off.disabled = {"java"};
  EXPECT_EQ(PlanValgrindOptions("java", off), Env{});
}

TEST(RuntimeEnvTest, ProgramsAreRecognizedByBasenameAndVersion) {
  ASSERT_NE(LookupRuntimeForProgram("/usr/bin/node"), nullptr);
  EXPECT_EQ(LookupRuntimeForProgram("/usr/bin/node")->runtime, "node");
  EXPECT_EQ(LookupRuntimeForProgram("python3.12")->runtime, "python");
  EXPECT_EQ(LookupRuntimeForProgram("java")->runtime, "java");
  EXPECT_EQ(LookupRuntimeForProgram("rakudo")->runtime, "moarvm");
  EXPECT_EQ(LookupRuntimeForProgram("/usr/bin/php8.2")->runtime, "php");
  EXPECT_EQ(LookupRuntimeForProgram("erl")->runtime, "erlang");
  EXPECT_EQ(LookupRuntimeForProgram("/usr/lib/erlang/erts-13.1.5/bin/beam.smp")->runtime, "erlang");
  EXPECT_EQ(LookupRuntimeForProgram("/usr/bin/elixir")->runtime, "erlang");
  EXPECT_EQ(LookupRuntimeForProgram("erlc")->runtime, "erlang");
  EXPECT_EQ(LookupRuntimeForProgram("mono")->runtime, "mono");
  EXPECT_EQ(LookupRuntimeForProgram("/work/node_modules/@deno/linux-x64-glibc/deno")->runtime,
            "deno");
  EXPECT_EQ(LookupRuntimeForProgram("bun")->runtime, "bun");
  EXPECT_EQ(LookupRuntimeForProgram("bun")->variable, "BUN_JSC_useJITDump");
  EXPECT_EQ(LookupRuntimeForProgram("bunx")->runtime, "bun");
  EXPECT_EQ(LookupRuntimeForProgram("./ls"), nullptr);
  EXPECT_EQ(LookupRuntimeForProgram("nodejs-helper"), nullptr);
}

TEST(RuntimeEnvTest, WasmtimeGetsItsFlagAfterRun) {
  EXPECT_EQ(PlanProgramArgs({"wasmtime", "run", "app.wasm"}, {}),
            (Env{"wasmtime", "run", "--profile=jitdump", "app.wasm"}));
  EXPECT_EQ(PlanProgramArgs({"/opt/wasmtime", "app.wasm"}, {}),
            (Env{"/opt/wasmtime", "--profile=jitdump", "app.wasm"}));
  EXPECT_EQ(PlanProgramArgs({"wasmtime", "--profile=jitdump", "a.wasm"}, {}),
            (Env{"wasmtime", "--profile=jitdump", "a.wasm"}));
  RuntimeSelection off;
  off.disabled = {"wasmtime"};
  EXPECT_EQ(PlanProgramArgs({"wasmtime", "a.wasm"}, off), (Env{"wasmtime", "a.wasm"}));
  EXPECT_EQ(PlanProgramArgs({"node", "a.js"}, {}), (Env{"node", "a.js"}));
}

}  // namespace
}  // namespace cg_inject
