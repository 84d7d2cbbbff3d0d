#include "cli/runtime_env.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

using Env = std::vector<std::string>;

TEST(RuntimeEnvTest, SetsEverySwitchInAnEmptyEnvironment) {
  std::vector<std::string> changes;
  Env env = PlanRuntimeEnv({"PATH=/bin"}, {}, &changes);
  EXPECT_EQ(env, (Env{"PATH=/bin", "NODE_OPTIONS=--perf-prof --perf-basic-prof",
                      "JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
                      "PYTHONPERFSUPPORT=1", "DOTNET_PerfMapEnabled=1", "MVM_JIT_PERF_MAP=1",
                      "ENABLE_JITPROFILING=1"}));
  EXPECT_EQ(changes.size(), 6u);
}

TEST(RuntimeEnvTest, AppendsToOptionListsAndKeepsTheUsersOwnValues) {
  std::vector<std::string> changes;
  Env env = PlanRuntimeEnv(
      {"NODE_OPTIONS=--max-old-space-size=100", "DOTNET_PerfMapEnabled=2", "JAVA_TOOL_OPTIONS="},
      {}, &changes);
  EXPECT_EQ(env[0], "NODE_OPTIONS=--max-old-space-size=100 --perf-prof --perf-basic-prof");
  EXPECT_EQ(env[1], "DOTNET_PerfMapEnabled=2");  // jitdumps only: the user's choice
  EXPECT_EQ(env[2], "JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit");
  EXPECT_EQ(std::count(changes.begin(), changes.end(), "DOTNET_PerfMapEnabled=2"), 0);
}

TEST(RuntimeEnvTest, AlreadyPresentSwitchIsNotAppendedTwice) {
  Env env = PlanRuntimeEnv({"NODE_OPTIONS=--perf-prof --perf-basic-prof"}, {}, nullptr);
  EXPECT_EQ(env[0], "NODE_OPTIONS=--perf-prof --perf-basic-prof");
}

TEST(RuntimeEnvTest, SwitchesOff) {
  RuntimeSelection none;
  none.all_off = true;
  EXPECT_EQ(PlanRuntimeEnv({"A=1"}, none, nullptr), Env{"A=1"});
  RuntimeSelection some;
  some.disabled = {"node", "java", "python", "dotnet", "moarvm"};
  EXPECT_EQ(PlanRuntimeEnv({}, some, nullptr), Env{"ENABLE_JITPROFILING=1"});
}

TEST(RuntimeEnvTest, ProgramsAreRecognizedByBasenameAndVersion) {
  ASSERT_NE(LookupRuntimeForProgram("/usr/bin/node"), nullptr);
  EXPECT_EQ(LookupRuntimeForProgram("/usr/bin/node")->runtime, "node");
  EXPECT_EQ(LookupRuntimeForProgram("python3.12")->runtime, "python");
  EXPECT_EQ(LookupRuntimeForProgram("java")->runtime, "java");
  EXPECT_EQ(LookupRuntimeForProgram("rakudo")->runtime, "moarvm");
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
