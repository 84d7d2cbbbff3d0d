#include "sources/name_location.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

struct Case {
  std::string_view name;
  std::string_view function;
  std::string_view file;
  uint32_t line_no;
  std::string_view convention;
};

// Names are real ones from ../shared/corpus (perf maps and jitdumps) unless marked.
constexpr Case kCases[] = {
    // CPython 3.12 perf trampolines (blazesym-python312-sample.map).
    {"py::_find_and_load:<frozen importlib._bootstrap>", "_find_and_load",
     "<frozen importlib._bootstrap>", 0, "cpython"},
    {"py::_createenviron.<locals>.decode:<frozen os>", "_createenviron.<locals>.decode",
     "<frozen os>", 0, "cpython"},
    {"py::fib:/home/user/fib.py", "fib", "/home/user/fib.py", 0, "cpython"},  // made up
    {"py::<module>:C:\\x.py", "<module>", "C:\\x.py", 0, "cpython"},          // made up
    // V8 (parca-nodejs-perf-map.map, parca-nodejs.dump).
    {"LazyCompile:~REPLServer.self.writer repl.js:514", "REPLServer.self.writer", "repl.js", 514,
     "v8"},
    {"LazyCompile:~formatValue internal/util/inspect.js:456", "formatValue",
     "internal/util/inspect.js", 456, "v8"},
    {"LazyCompile:~lastIndexOf native array.js:618", "lastIndexOf", "native array.js", 618, "v8"},
    {"LazyCompile:*getPotentialParent /usr/src/app/node_modules/heap-js/dist/heap-js.umd.js:764",
     "getPotentialParent", "/usr/src/app/node_modules/heap-js/dist/heap-js.umd.js", 764, "v8"},
    {"Script:~ evalmachine.<anonymous>:1", "(script)", "evalmachine.<anonymous>", 1, "v8"},
    {"Function:^compileForInternalLoader node:internal/bootstrap/loaders:300",
     "compileForInternalLoader", "node:internal/bootstrap/loaders", 300, "v8"},
    {"Function:^SafeMap node:internal/per_context/primordials:360", "SafeMap",
     "node:internal/per_context/primordials", 360, "v8"},
    {"LazyCompile:*fib /usr/src/app/main.js:1", "fib", "/usr/src/app/main.js", 1, "v8"},
    {"JS:*fib /app/main.js:1:13", "fib", "/app/main.js", 1, "v8"},         // newer V8, made up
    {"JS:~get length /app/a.js:7:3", "get length", "/app/a.js", 7, "v8"},  // made up
    {"LazyCompile:~ /app/a.js:3", "(anonymous)", "/app/a.js", 3, "v8"},    // made up
    // V8 15 in Deno 2.9 (captured from tests/data/deno/prog.js, tests/data/deno): tier marks
    // with OSR's `o` before and context specialization's `'` after the tier; every tier is the
    // function. Scripts are file:// URLs, the runtime's own modules ext: ones.
    {"JS:~fib file:///work/d/prog.js:2:13", "fib", "/work/d/prog.js", 2, "v8"},
    {"JS:^fib file:///work/d/prog.js:2:13", "fib", "/work/d/prog.js", 2, "v8"},
    {"JS:+'fib file:///work/d/prog.js:2:13", "fib", "/work/d/prog.js", 2, "v8"},
    {"JS:*'fib file:///work/d/prog.js:2:13", "fib", "/work/d/prog.js", 2, "v8"},
    {"JS:o+sumTo file:///work/d/prog.js:5:15", "sumTo", "/work/d/prog.js", 5, "v8"},
    {"JS:o*sumTo file:///work/d/prog.js:5:15", "sumTo", "/work/d/prog.js", 5, "v8"},
    {"Script:~ file:///work/d/prog.js:1:1", "(script)", "/work/d/prog.js", 1, "v8"},
    {"JS:~ ext:runtime_main/js/99_main.js:1:10206", "(anonymous)", "ext:runtime_main/js/99_main.js",
     1, "v8"},
    {"JS:^defineGlobalProperties ext:core/01_core.js:940:34", "defineGlobalProperties",
     "ext:core/01_core.js", 940, "v8"},
    // Made up: a function named o, interpreted and not; `'` only after an optimized tier; other
    // schemes stay; percent escapes are decoded, broken ones kept; file://localhost/.
    {"JS:~o /a.js:3:1", "o", "/a.js", 3, "v8"},
    {"JS:o /a.js:3:1", "o", "/a.js", 3, "v8"},
    {"JS:*o /a.js:3:1", "o", "/a.js", 3, "v8"},
    {"JS:~'q /a.js:3:1", "'q", "/a.js", 3, "v8"},
    {"JS:*f node:internal/util:10:3", "f", "node:internal/util", 10, "v8"},
    {"JS:*f https://deno.land/std/fmt/colors.ts:7:1", "f", "https://deno.land/std/fmt/colors.ts", 7,
     "v8"},
    {"JS:*f file:///tmp/a%20b/c%2Bd.js:3:1", "f", "/tmp/a b/c+d.js", 3, "v8"},
    {"JS:*f file:///tmp/100%25.js:3:1", "f", "/tmp/100%.js", 3, "v8"},
    {"JS:*f file:///tmp/x%zz%4.js:3:1", "f", "/tmp/x%zz%4.js", 3, "v8"},
    {"JS:*f file:///tmp/x%00.js:3:1", "f", "/tmp/x%00.js", 3, "v8"},
    {"JS:*f file://localhost/tmp/x.js:3:1", "f", "/tmp/x.js", 3, "v8"},
    {"JS:*f file://host/tmp/x.js:3:1", "f", "file://host/tmp/x.js", 3, "v8"},
    // JavaScriptCore in Bun 1.x (captured from tests/data/bun/prog.js): every tier of a JS
    // function is the function; thunks, inline caches and LLInt entries keep their names.
    {"JSC-Baseline: fib#EoE7sP", "fib", "", 0, "jsc"},
    {"JSC-DFG: fib#EoE7sP", "fib", "", 0, "jsc"},
    {"JSC-FTL: fib#EoE7sP", "fib", "", 0, "jsc"},
    {"JSC-Thunk: DefaultCall", "JSC-Thunk: DefaultCall", "", 0, ""},
    {"JSC-LLIntThunk: function for call", "JSC-LLIntThunk: function for call", "", 0, ""},
    {"JSC-InlineCache: GetById Load handler", "JSC-InlineCache: GetById Load handler", "", 0, ""},
    {"JSC-DFGOSREntry: unspecified", "JSC-DFGOSREntry: unspecified", "", 0, ""},
    // Made up in CodeBlock::dumpSimpleName's shapes.
    {"JSC-Baseline: #AbCdEf", "(anonymous)", "", 0, "jsc"},
    {"JSC-DFG: <global>#AbCdEf", "<global>", "", 0, "jsc"},
    {"JSC-FTL: #secret#AbCdEf", "#secret", "", 0, "jsc"},
    {"JSC-FTL: f#<no-hash>", "f", "", 0, "jsc"},
    {"JSC-DFG: ", "JSC-DFG: ", "", 0, ""},
    // V8 kinds without a location stay whole.
    {"Builtin:ArrayPrototypePush", "Builtin:ArrayPrototypePush", "", 0, ""},
    {"BytecodeHandler:ForInContinue.Wide", "BytecodeHandler:ForInContinue.Wide", "", 0, ""},
    {"RegExp:[{(]", "RegExp:[{(]", "", 0, ""},
    // LuaJIT and MoarVM (made up in their documented shapes).
    {"TRACE_12::bench/fib.lua:7", "TRACE_12", "bench/fib.lua", 7, "luajit"},
    {"infix:<+>(gen/moar/CORE.c.setting:1234)", "infix:<+>", "gen/moar/CORE.c.setting", 1234,
     "moarvm"},
    // PHP opcache (parca-php.dump).
    {"JIT$/app/demo.php", "{main}", "/app/demo.php", 1, "php"},  // top-level code: line 1
    {"JIT$Fibonacci", "Fibonacci", "", 0, "php"},
    {"JIT$$interrupt_handler", "JIT$$interrupt_handler", "", 0, ""},
    // PHP 8.2 opcache, captured from tests/data/php/prog.php (function mode: JIT$, tracing:
    // TRACE-N$NAME$LINE; LINE is where the trace starts, not the function's line: dropped).
    {"JIT$/tmp/rt-cap/prog.php", "{main}", "/tmp/rt-cap/prog.php", 1, "php"},
    {"JIT$Calc::fib", "Calc::fib", "", 0, "php"},
    {"TRACE-1$/tmp/rt-cap/prog.php$15", "{main}", "/tmp/rt-cap/prog.php", 1, "php"},
    {"TRACE-2$fib$10", "fib", "", 0, "php"},
    {"TRACE-4$fib$11", "fib", "", 0, "php"},
    {"TRACE-7$Calc::fib$5", "Calc::fib", "", 0, "php"},
    {"jit$$trace_exit_0", "jit$$trace_exit_0", "", 0, ""},
    {"TRACE-x$fib$10", "TRACE-x$fib$10", "", 0, ""},  // made up: not a trace number
    {"TRACE-2$fib", "TRACE-2$fib", "", 0, ""},        // made up: no line
    // Erlang/OTP 25 +JPperf, captured from tests/data/erlang/jitprobe.erl: the perf map's names
    // start with '$', the jitdump's do not; the prologue is its function.
    {"$jitprobe:fib/1", "jitprobe:fib/1", "", 0, "erlang"},
    {"jitprobe:fib/1", "jitprobe:fib/1", "", 0, "erlang"},
    {"$jitprobe:fib/1-CodeInfoPrologue", "jitprobe:fib/1", "", 0, "erlang"},
    {"jitprobe:fib/1-CodeInfoPrologue", "jitprobe:fib/1", "", 0, "erlang"},
    {"$erl_init:'-restart/0-fun-0-'/0-CodeInfoPrologue", "erl_init:'-restart/0-fun-0-'/0", "", 0,
     "erlang"},
    {"$jitprobe::codeHeader", "jitprobe::codeHeader", "", 0, "erlang"},
    {"jitprobe::codeHeader", "jitprobe::codeHeader", "", 0, "erlang"},
    {"$global::apply_fun_shared", "global::apply_fun_shared", "", 0, "erlang"},
    {"global::apply_fun_shared", "global::apply_fun_shared", "", 0, ""},
    // A module whose name needs quotes (every Elixir module), as OTP 25 writes it: quoted in its
    // functions' names, raw in its helpers'; a quote inside an atom is escaped. Elixir's modules
    // are written as Elixir writes them (elixir_name_test has the rules).
    {"$'Elixir.Foo':'my-fun'/1-CodeInfoPrologue", "Foo.\"my-fun\"/1", "", 0, "erlang"},
    {"$'Elixir.Foo':'my-fun'/1", "Foo.\"my-fun\"/1", "", 0, "erlang"},
    {"'Elixir.Foo':run/1-CodeInfoPrologue", "Foo.run/1", "", 0, "erlang"},
    {"$Elixir.Foo::codeHeader", "Foo::codeHeader", "", 0, "erlang"},
    {"$'it\\'s:here':f/0", "'it\\'s:here':f/0", "", 0, "erlang"},
    // Elixir 1.14 on OTP 25 (tests/data/elixir: the perf map and the jitdump).
    {"$'Elixir.Shop.Main':run/1", "Shop.Main.run/1", "", 0, "erlang"},
    {"'Elixir.Shop.Main':run/1", "Shop.Main.run/1", "", 0, "erlang"},
    {"$'Elixir.Shop.Main':'-build/1-fun-0-'/2", "anonymous fn/2 in Shop.Main.build/1", "", 0,
     "erlang"},
    {"'Elixir.Shop.Item':'__struct__'/1-CodeInfoPrologue", "Shop.Item.__struct__/1", "", 0,
     "erlang"},
    {"$'Elixir.Shop.Item':'-inlined-__info__/1-'/1", "Shop.Item.\"-inlined-__info__/1-\"/1", "", 0,
     "erlang"},
    {"$Elixir.Shop.Main::codeFooter", "Shop.Main::codeFooter", "", 0, "erlang"},
    {"$'Elixir.Kernel':'+'/2", "Kernel.+/2", "", 0, "erlang"},              // made up
    {"$elixir_utils:split/1", "elixir_utils:split/1", "", 0, "erlang"},     // Elixir's Erlang ones
    {"$'Elixir.Foo'::codeHeader", "$'Elixir.Foo'::codeHeader", "", 0, ""},  // made up
    {"$'Elixir.Foo:run/1", "$'Elixir.Foo:run/1", "", 0, ""},                // unterminated
    {"$'Elixir.Foo'run/1", "$'Elixir.Foo'run/1", "", 0, ""},                // no colon
    {"$Elixir.Foo:run/1", "$Elixir.Foo:run/1", "", 0, ""},  // an unquoted module needs none
    // Mono 6.8 --jitmap, captured from tests/data/mono/Prog.cs: kept whole.
    {"Probe.Calc:Fib (int)", "Probe.Calc:Fib (int)", "", 0, "mono"},
    {"Probe.Calc:Sum (int[])", "Probe.Calc:Sum (int[])", "", 0, "mono"},
    {"System.Exception:.ctor (string)", "System.Exception:.ctor (string)", "", 0, "mono"},
    {"(wrapper managed-to-native) System.Buffer:InternalMemcpy (byte*,byte*,int)",
     "(wrapper managed-to-native) System.Buffer:InternalMemcpy (byte*,byte*,int)", "", 0, "mono"},
    {"(wrapper runtime-invoke) <Module>:runtime_invoke_void__this___object "
     "(object,intptr,intptr,intptr)",
     "(wrapper runtime-invoke) <Module>:runtime_invoke_void__this___object "
     "(object,intptr,intptr,intptr)",
     "", 0, "mono"},
    {"generic_trampoline_jit", "generic_trampoline_jit", "", 0, ""},
    {"(null)", "(unnamed JIT code)", "", 0, "null"},
    // HotSpot perf-map-agent descriptors (made up).
    {"Ljava/lang/String;::hashCode", "java.lang.String::hashCode", "", 0, "java"},
    {"Interpreter", "Interpreter", "", 0, ""},
    // Ruby YJIT/ZJIT (label@path:line as yjit's iseq_get_location writes it; made up).
    {"[JIT] block in <main>@/app/bench.rb:12", "block in <main>", "/app/bench.rb", 12, "ruby"},
    {"zjit::fib@/app/fib.rb:1", "fib", "/app/fib.rb", 1, "ruby"},
    {"user@example.com", "user@example.com", "", 0, ""},
    // No convention: Julia, .NET, wasmtime (corpus).
    {"julia_fibonacci_16", "julia_fibonacci_16", "", 0, ""},
    {"stub<1> AllocateTemporaryEntryPoints<PRECODE_STUB>",
     "stub<1> AllocateTemporaryEntryPoints<PRECODE_STUB>", "", 0, ""},
    {"bool [System.Private.CoreLib] System.SpanHelpers::Contains(char&,char,int32)"
     "[OptimizedTier1]",
     "bool [System.Private.CoreLib] System.SpanHelpers::Contains(char&,char,int32)"
     "[OptimizedTier1]",
     "", 0, ""},
    {"std::rt::lang_start::{{closure}}::hd74d86521ea754a1",
     "std::rt::lang_start::{{closure}}::hd74d86521ea754a1", "", 0, ""},
    // Near misses.
    {"LazyCompile:~f file.js:0", "LazyCompile:~f file.js:0", "", 0, ""},  // line 0 is no line
    {"f(int:x)", "f(int:x)", "", 0, ""},
    {"TRACE_x::a.lua:1", "TRACE_x::a.lua:1", "", 0, ""},
    {"py::", "(anonymous)", "", 0, "cpython"},
};

TEST(NameLocationTest, Table) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    NameLocation location = ParseNameLocation(c.name);
    EXPECT_EQ(location.function, c.function);
    EXPECT_EQ(location.file, c.file);
    EXPECT_EQ(location.line_no, c.line_no);
    EXPECT_EQ(location.convention, c.convention);
  }
}

// Every trace of one function is that function: the traces' start lines must not make them
// different definitions.
TEST(NameLocationTest, TracesOfOneFunctionAreOneDefinition) {
  NameLocation a = ParseNameLocation("TRACE-2$fib$10");
  NameLocation b = ParseNameLocation("TRACE-4$fib$11");
  NameLocation f = ParseNameLocation("JIT$fib");
  EXPECT_EQ(a.function, b.function);
  EXPECT_EQ(a.line_no, b.line_no);
  EXPECT_EQ(a.line_no, f.line_no);
  EXPECT_EQ(a.file, b.file);
}

// JavaScriptCore's hash is the definition's tag; a V8 name needs none (it has a position).
TEST(NameLocationTest, JscHashIsTheDefinitionTag) {
  std::string name = "JSC-DFG: fib#EoE7sP";
  NameLocation location = ParseNameLocation(name);
  EXPECT_EQ(location.definition_tag, "#EoE7sP");
  EXPECT_EQ(location.definition_tag.data(), name.data() + 12);
  EXPECT_EQ(ParseNameLocation("JSC-FTL: #secret#AbCdEf").definition_tag, "#AbCdEf");
  EXPECT_EQ(ParseNameLocation("JSC-FTL: f#<no-hash>").definition_tag, "");
  EXPECT_EQ(ParseNameLocation("JSC-FTL: f#").definition_tag, "");
  EXPECT_EQ(ParseNameLocation("JSC-FTL: f").definition_tag, "");
  EXPECT_EQ(ParseNameLocation("JS:*'fib file:///a.js:2:13").definition_tag, "");
}

// A file URL without escapes is a piece of the name; a decoded one lives in the location, and
// every copy or move points at its own (short paths live inside the string object).
TEST(NameLocationTest, DecodedFileFollowsCopiesAndMoves) {
  std::string plain = "JS:*f file:///tmp/x.js:3:1";
  EXPECT_EQ(ParseNameLocation(plain).file.data(), plain.data() + 13);
  NameLocation a = ParseNameLocation("JS:*f file:///a%20b.js:3:1");
  ASSERT_EQ(a.file, "/a b.js");
  NameLocation copy = a;
  NameLocation assigned;
  assigned = a;
  NameLocation moved = std::move(a);
  for (const NameLocation* l : {&copy, &assigned, &moved}) {
    EXPECT_EQ(l->file, "/a b.js");
    EXPECT_EQ(l->file.data(), l->decoded_file.data());
  }
  NameLocation b = ParseNameLocation(plain);
  NameLocation c;
  c = std::move(b);
  EXPECT_EQ(c.file.data(), plain.data() + 13);
}

TEST(NameLocationTest, FileViewPointsIntoName) {
  std::string name = "py::f:/a.py";
  NameLocation location = ParseNameLocation(name);
  EXPECT_EQ(location.file.data(), name.data() + 6);
}

}  // namespace
}  // namespace cg_inject
