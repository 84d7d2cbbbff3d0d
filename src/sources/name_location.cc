// Name conventions of JIT runtimes, as they write them into perf maps and jitdumps:
//   CPython 3.12+ perf trampolines   py::QUALNAME:FILE            (Python/perf_trampoline.c)
//   V8 --perf-basic-prof/--perf-prof  KIND:[o][TIER][']NAME FILE:LINE[:COL], KIND one of
//                                     LazyCompile, Function, JS, Script, Eval, ...; TIER one of
//                                     ~ ^ + * - (interpreted, baseline, maglev, turbofan, ...);
//                                     o: on-stack replacement, ': context-specialized (V8 12+);
//                                     FILE may be a file:///abs/path.js URL (Deno, ES modules)
//   JavaScriptCore --useJITDump       JSC-TIER: NAME#HASH for a JS function's code (TIER
//                                     Baseline, DFG, FTL), JSC-KIND: WHAT for the rest
//   LuaJIT                            TRACE_N::FILE:LINE
//   MoarVM                            NAME(FILE:LINE)
//   PHP opcache JIT, function mode    JIT$NAME, JIT$/path/script.php (the main script), JIT$$stub
//   PHP opcache JIT, tracing mode     TRACE-N$NAME$LINE, NAME as in JIT$ (zend_jit_trace.c names
//                                     a trace after its first op's function and line; the line
//                                     is where the trace starts, so it is not kept)
//   Erlang BEAMJIT (+JPperf)          [$]MODULE:FUNCTION/ARITY[-CodeInfoPrologue], $MODULE::HELPER
//                                     (perf map names start with '$', the jitdump's do not;
//                                     Elixir modules are 'Elixir.ALIAS', written ALIAS.FUNCTION)
//   Mono --jitmap                     [(wrapper KIND) ]NAMESPACE.CLASS:METHOD (ARGS), and
//                                     "(null)" for code Mono gave no name
//   HotSpot perf-map-agent            LPKG/CLASS;::METHOD (no location; only made readable)
//   Ruby YJIT / ZJIT                  [[JIT] |zjit::]LABEL@PATH:LINE (yjit iseq_get_location)
//   any runtime                       "(null)": printf's text for a null name
// Each row is one function; the first row that accepts a name wins. Names without a convention
// (Julia `julia_f_12`, .NET signatures, wasmtime Rust paths, V8 builtins, JSC's thunks) stay as
// they are.
#include "sources/name_location.h"

#include <array>
#include <charconv>

#include "sources/elixir_name.h"

namespace cg_inject {

NameLocation& NameLocation::operator=(const NameLocation& other) {
  if (this == &other) return *this;
  const bool owned = !other.decoded_file.empty() && other.file.data() == other.decoded_file.data();
  function = other.function;
  decoded_file = other.decoded_file;
  file = owned ? std::string_view(decoded_file) : other.file;
  line_no = other.line_no;
  column = other.column;
  definition_tag = other.definition_tag;
  convention = other.convention;
  return *this;
}

NameLocation& NameLocation::operator=(NameLocation&& other) noexcept {
  if (this == &other) return *this;
  // Checked before the move: a short decoded path lives inside the string object itself.
  const bool owned = !other.decoded_file.empty() && other.file.data() == other.decoded_file.data();
  function = std::move(other.function);
  decoded_file = std::move(other.decoded_file);
  file = owned ? std::string_view(decoded_file) : other.file;
  line_no = other.line_no;
  column = other.column;
  definition_tag = other.definition_tag;
  convention = other.convention;
  return *this;
}

namespace {

constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A local file URL (RFC 8089: `file:///abs/path.js`, or `file://localhost/abs/path.js`), as
// Deno and Node's ES modules name their scripts, becomes the path it names, so consumers find the
// source (callgrind_annotate and KCachegrind open `fl=` as a path). The path is a piece of the
// URL unless it has percent escapes (`%20` for a blank), which are decoded into `*decoded`; an
// escape that is no byte, or a NUL, is kept as written. Other schemes (`ext:`, `node:`,
// `https:`) name modules, not files here, and stay as they are.
void ReadFileUrl(std::string_view* file, std::string* decoded) {
  std::string_view path = *file;
  if (path.starts_with("file:///")) {
    path.remove_prefix(7);
  } else if (path.starts_with("file://localhost/")) {
    path.remove_prefix(16);
  } else {
    return;
  }
  if (path.find('%') == std::string_view::npos) {
    *file = path;
    return;
  }
  decoded->clear();
  for (size_t i = 0; i < path.size(); ++i) {
    const int high = path[i] == '%' && i + 2 < path.size() ? HexValue(path[i + 1]) : -1;
    const int low = high >= 0 ? HexValue(path[i + 2]) : -1;
    if (low >= 0 && (high | low) != 0) {
      decoded->push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      decoded->push_back(path[i]);
    }
  }
  *file = *decoded;
}

// Parses a whole string of decimal digits that fits in uint32_t and is not 0.
bool ParseLineNo(std::string_view text, uint32_t* line_no) {
  if (text.empty() || !IsDigit(text[0])) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *line_no);
  return ec == std::errc() && end == text.data() + text.size() && *line_no != 0;
}

// Splits "FILE:LINE" or "FILE:LINE:COL" (V8's newer JS: names add a column).
bool SplitFileLine(std::string_view text, std::string_view* file, uint32_t* line_no,
                   uint32_t* column = nullptr) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  uint32_t number = 0;
  if (!ParseLineNo(text.substr(colon + 1), &number)) return false;
  // A second number before it means the first was a column.
  size_t colon2 = text.rfind(':', colon - 1);
  uint32_t line_candidate = 0;
  if (colon2 != std::string_view::npos && colon2 > 0 &&
      ParseLineNo(text.substr(colon2 + 1, colon - colon2 - 1), &line_candidate)) {
    *file = text.substr(0, colon2);
    *line_no = line_candidate;
    if (column != nullptr) *column = number;
    return true;
  }
  *file = text.substr(0, colon);
  *line_no = number;
  return true;
}

bool ParseCpython(std::string_view name, NameLocation* out) {
  constexpr std::string_view kPrefix = "py::";
  if (!name.starts_with(kPrefix)) return false;
  std::string_view rest = name.substr(kPrefix.size());
  // Qualified names have no ':' ("Cls.f.<locals>.g"); file names may (`<frozen os>`, C:\...).
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    out->function = std::string(rest);
  } else {
    out->function = std::string(rest.substr(0, colon));
    out->file = rest.substr(colon + 1);
  }
  if (out->function.empty()) out->function = "(anonymous)";
  return true;
}

bool ParseV8(std::string_view name, NameLocation* out) {
  // Kinds that carry a script location. Builtin:, BytecodeHandler:, RegExp:, Stub: ... do not.
  static constexpr std::array<std::string_view, 7> kKinds = {
      "LazyCompile:",         "Function:",         "JS:", "Script:", "Eval:",
      "InterpretedFunction:", "OptimizedFunction:"};
  // Every kind starts with a capital from E to S; many names that reach this row (.NET
  // "stub<..>"/"void ...", Julia "julia_...", wasmtime "std::...") fail that before any compare.
  if (name.empty() || name[0] < 'E' || name[0] > 'S') return false;
  std::string_view kind;
  for (std::string_view k : kKinds) {
    if (name.starts_with(k)) kind = k;
  }
  if (kind.empty()) return false;
  std::string_view rest = name.substr(kind.size());
  // The tier marks of V8 15 (Deno 2.9; src/objects/code-kind.cc CodeKindToMarker, logging/
  // log.cc): `o` before the tier for on-stack-replacement code (Deno's map had `JS:o+sumTo` and
  // `JS:o*sumTo` exactly for the loop that --trace-osr said V8 entered by OSR), `'` after Maglev's
  // `+` or TurboFan's `*` for code specialized to one function context (`JS:+'fib`). Every tier
  // of a function is that function.
  auto is_tier = [](char c) { return std::string_view("~^+*-").find(c) != std::string_view::npos; };
  if (rest.size() > 1 && rest[0] == 'o' && is_tier(rest[1])) rest.remove_prefix(1);
  if (!rest.empty() && is_tier(rest[0])) {
    const bool optimized = rest[0] == '+' || rest[0] == '*';
    rest.remove_prefix(1);
    if (optimized && rest.starts_with('\'')) rest.remove_prefix(1);
  }
  // The location is the last blank-separated token; function names may contain blanks
  // ("get length"), file names in practice do not.
  size_t space = rest.rfind(' ');
  std::string_view location = space == std::string_view::npos ? rest : rest.substr(space + 1);
  std::string_view function = space == std::string_view::npos ? "" : rest.substr(0, space);
  std::string_view file;
  uint32_t line_no = 0;
  if (!SplitFileLine(location, &file, &line_no, &out->column)) return false;
  // Old V8 marks natives as "f native array.js:618": the marker belongs to the file.
  constexpr std::string_view kNative = " native";
  if (function.ends_with(kNative)) {
    function.remove_suffix(kNative.size());
    file = std::string_view(
        function.data() + function.size() + 1,
        static_cast<size_t>(file.data() + file.size() - (function.data() + function.size() + 1)));
  } else if (function == "native") {
    file = std::string_view(function.data(),
                            static_cast<size_t>(file.data() + file.size() - function.data()));
    function = {};
  }
  while (function.ends_with(' ')) function.remove_suffix(1);
  while (function.starts_with(' ')) function.remove_prefix(1);
  if (function.empty()) {
    out->function = kind == "Script:" || kind == "Eval:" ? "(script)" : "(anonymous)";
  } else {
    out->function = std::string(function);
  }
  ReadFileUrl(&file, &out->decoded_file);
  out->file = file;
  out->line_no = line_no;
  return true;
}

// JavaScriptCore's jitdump names (Bun's BUN_JSC_useJITDump=1; LinkBuffer::logJITCodeForJITDump):
// "JSC-" + the code's kind + ": " + what it is. A JS function's code, in each of the tiers
// Baseline, DFG and FTL, is CodeBlock::dumpSimpleName's `NAME#HASH`: the inferred name (empty for
// an anonymous function; `<global>`, `<eval>`, `<module>` for top-level code) and a hash of the
// source text, `<no-hash>` when there is none. Every tier of one function is that function; the
// hash tells two functions of one name apart (DefinitionNames shows it only then). The last '#'
// starts the hash: a private method's name has one of its own (`#secret#AbCdEf`). Thunks, inline
// caches and the LLInt's entries (`JSC-Thunk: DefaultCall`, `JSC-LLIntThunk: function for call`)
// are readable already and keep their whole name.
bool ParseJsc(std::string_view name, NameLocation* out) {
  if (!name.starts_with("JSC-")) return false;
  std::string_view rest;
  for (std::string_view kind : {std::string_view("JSC-Baseline: "), std::string_view("JSC-DFG: "),
                                std::string_view("JSC-FTL: ")}) {
    if (name.starts_with(kind)) rest = name.substr(kind.size());
  }
  if (rest.empty()) return false;
  const size_t hash = rest.rfind('#');
  std::string_view function = rest.substr(0, hash);
  if (hash != std::string_view::npos && hash + 1 < rest.size() &&
      rest.substr(hash) != "#<no-hash>") {
    out->definition_tag = rest.substr(hash);
  }
  out->function = function.empty() ? "(anonymous)" : std::string(function);
  return true;
}

bool ParseLuaJit(std::string_view name, NameLocation* out) {
  if (!name.starts_with("TRACE_")) return false;
  size_t sep = name.find("::");
  if (sep == std::string_view::npos) return false;
  std::string_view trace = name.substr(0, sep);
  for (char c : trace.substr(6)) {
    if (!IsDigit(c)) return false;
  }
  std::string_view file;
  uint32_t line_no = 0;
  if (!SplitFileLine(name.substr(sep + 2), &file, &line_no)) return false;
  out->function = std::string(trace);
  out->file = file;
  out->line_no = line_no;
  return true;
}

bool ParseMoarVm(std::string_view name, NameLocation* out) {
  if (!name.ends_with(')')) return false;
  size_t open = name.rfind('(');
  if (open == std::string_view::npos) return false;
  std::string_view inside = name.substr(open + 1, name.size() - open - 2);
  std::string_view file;
  uint32_t line_no = 0;
  if (!SplitFileLine(inside, &file, &line_no)) return false;
  std::string_view function = name.substr(0, open);
  out->function = function.empty() ? "(anonymous)" : std::string(function);
  out->file = file;
  out->line_no = line_no;
  return true;
}

bool ParsePhp(std::string_view name, NameLocation* out) {
  constexpr std::string_view kPrefix = "JIT$";
  if (!name.starts_with(kPrefix)) return false;
  std::string_view rest = name.substr(kPrefix.size());
  if (rest.empty() || rest[0] == '$') return false;  // JIT$$stub: VM helpers keep their name
  if (rest.find('/') != std::string_view::npos || rest.ends_with(".php")) {
    // The top-level code of a script is named after the script; PHP tools call it {main}. It
    // starts at the script's first line. Line 0 (unknown) in a file that no other cost line
    // names makes callgrind_annotate --auto=yes warn (its annotation has no line range).
    out->function = "{main}";
    out->file = rest;
    out->line_no = 1;
  } else {
    out->function = std::string(rest);
  }
  return true;
}

// "TRACE-3$fib$4", "TRACE-14$/path/prog.php$40", "TRACE-9$Calc::fib$3": every trace of fib is
// fib. The number is the line where the trace starts, not fib's: given as the line, it would
// split fib into one KCachegrind function per trace start (the injector names a definition by
// its line, output_functions.cc) and put the whole trace, loop body and all, on that one line.
// So the line is checked and dropped.
bool ParsePhpTrace(std::string_view name, NameLocation* out) {
  constexpr std::string_view kPrefix = "TRACE-";
  if (!name.starts_with(kPrefix)) return false;
  std::string_view rest = name.substr(kPrefix.size());
  size_t first = rest.find('$');
  size_t last = rest.rfind('$');
  if (first == std::string_view::npos || first == 0 || last == first) return false;
  for (char c : rest.substr(0, first)) {
    if (!IsDigit(c)) return false;
  }
  std::string_view function = rest.substr(first + 1, last - first - 1);
  uint32_t line_no = 0;
  if (function.empty() || !ParseLineNo(rest.substr(last + 1), &line_no)) return false;
  if (function.find('/') != std::string_view::npos || function.ends_with(".php")) {
    out->function = "{main}";
    out->file = function;
    out->line_no = 1;  // as for JIT$/path/script.php: line 0 alone in a file breaks annotate
  } else {
    out->function = std::string(function);
  }
  return true;
}

// Erlang atoms as BEAM prints them unquoted: a lowercase letter, then letters, digits, _ and @.
bool IsPlainAtom(std::string_view text) {
  if (text.empty() || text[0] < 'a' || text[0] > 'z') return false;
  for (char c : text) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '@';
    if (!ok) return false;
  }
  return true;
}

// The length of the quoted atom at the start of `text` ("'Elixir.Foo'", a backslash escaping the
// character after it, as BEAM prints an atom that needs quotes), or 0 when there is none.
size_t QuotedAtomLength(std::string_view text) {
  if (!text.starts_with('\'')) return 0;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '\'') {
      return i + 1;
    }
  }
  return 0;
}

// A module's name as BEAM prints it unquoted in its helpers' names ("$Elixir.Foo::codeHeader").
bool IsRawModuleName(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' ||
              c == '@' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// "$jitprobe:fib/1" (perf map) and "jitprobe:fib/1" (jitdump) are one function; so is
// "$jitprobe:fib/1-CodeInfoPrologue": the prologue holds the function's entry (BEAM jumps into
// its last bytes), so its cost and its callers are the function's. "$jitprobe::codeHeader" and
// the runtime's shared helpers ("$global::times_body_shared") only lose the '$'. A module whose
// name needs quotes (every Elixir module) is quoted in its functions' names
// ("$'Elixir.Foo':run/1") and not in its helpers' ("$Elixir.Foo::codeHeader"); an Elixir
// module's names are written as Elixir writes them (Foo.run/1, Foo::codeHeader: elixir_name.h).
bool ParseErlang(std::string_view name, NameLocation* out) {
  const bool dollar = name.starts_with('$');
  std::string_view rest = dollar ? name.substr(1) : name;
  if (rest.ends_with(kBeamPrologueSuffix)) rest.remove_suffix(kBeamPrologueSuffix.size());
  const size_t quoted = QuotedAtomLength(rest);
  size_t colon = quoted != 0 ? quoted : rest.find(':');
  if (colon >= rest.size() || rest[colon] != ':') return false;
  std::string_view module = rest.substr(0, colon);
  if (rest.substr(colon).starts_with("::")) {
    if (quoted != 0 || !IsRawModuleName(module)) return false;
    std::string_view helper = rest.substr(colon + 2);
    if (!dollar && helper != "codeHeader" && helper != "codeFooter") return false;
    if (helper.empty()) return false;
    std::string alias = ElixirAlias(module);
    out->function = alias.empty() ? std::string(rest) : alias + std::string(rest.substr(colon));
    return true;
  }
  if (quoted == 0 && !IsPlainAtom(module)) return false;
  size_t slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash <= colon + 1 || slash + 1 == rest.size())
    return false;
  for (char c : rest.substr(slash + 1)) {
    if (!IsDigit(c)) return false;
  }
  std::string alias = ElixirAlias(AtomValue(module));
  out->function = alias.empty() ? std::string(rest)
                                : ElixirFunctionName(
                                      alias, AtomValue(rest.substr(colon + 1, slash - colon - 1)),
                                      rest.substr(slash + 1));
  return true;
}

// Mono's names are readable as they are ("Probe.Calc:Fib (int)", "(wrapper managed-to-native)
// System.Buffer:InternalMemcpy (byte*,byte*,int)"); this row only keeps the rows below it (MoarVM
// reads "NAME(FILE:LINE)") away from them.
bool ParseMono(std::string_view name, NameLocation* out) {
  std::string_view rest = name;
  if (rest.starts_with("(wrapper ")) {
    size_t close = rest.find(") ");
    if (close == std::string_view::npos) return false;
    rest.remove_prefix(close + 2);
  }
  size_t open = rest.rfind(" (");
  if (open == std::string_view::npos || !rest.ends_with(')')) return false;
  std::string_view method = rest.substr(0, open);
  size_t colon = method.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == method.size() ||
      method.find(" (") != std::string_view::npos)
    return false;
  out->function = std::string(name);
  return true;
}

// glibc prints a null name as "(null)" (Mono writes some trampolines so): a name that says
// there is none.
bool ParseNull(std::string_view name, NameLocation* out) {
  if (name != "(null)") return false;
  out->function = "(unnamed JIT code)";
  return true;
}

bool ParseJavaDescriptor(std::string_view name, NameLocation* out) {
  // "Ljava/lang/String;::hashCode" -> "java.lang.String::hashCode".
  if (name.size() < 4 || name[0] != 'L') return false;
  size_t semi = name.find(";::");
  if (semi == std::string_view::npos || semi < 2) return false;
  std::string readable;
  readable.reserve(name.size());
  for (char c : name.substr(1, semi - 1)) readable.push_back(c == '/' ? '.' : c);
  readable.append(name.substr(semi + 1));
  out->function = std::move(readable);
  return true;
}

bool ParseRuby(std::string_view name, NameLocation* out) {
  std::string_view rest = name;
  for (std::string_view prefix : {std::string_view("[JIT] "), std::string_view("zjit::")}) {
    if (rest.starts_with(prefix)) rest.remove_prefix(prefix.size());
  }
  size_t at = rest.rfind('@');
  if (at == std::string_view::npos || at == 0) return false;
  std::string_view file;
  uint32_t line_no = 0;
  if (!SplitFileLine(rest.substr(at + 1), &file, &line_no)) return false;
  out->function = std::string(rest.substr(0, at));
  out->file = file;
  out->line_no = line_no;
  return true;
}

struct Convention {
  std::string_view tag;
  bool (*parse)(std::string_view, NameLocation*);
};

constexpr std::array<Convention, 12> kConventions = {{
    {"cpython", ParseCpython},
    {"v8", ParseV8},
    {"jsc", ParseJsc},
    {"luajit", ParseLuaJit},
    {"php", ParsePhp},
    {"php", ParsePhpTrace},
    {"erlang", ParseErlang},
    {"mono", ParseMono},
    {"null", ParseNull},
    {"java", ParseJavaDescriptor},
    {"ruby", ParseRuby},
    {"moarvm", ParseMoarVm},
}};

}  // namespace

std::string_view FileUrlPath(std::string_view file, std::string* decoded) {
  ReadFileUrl(&file, decoded);
  return file;
}

NameLocation ParseNameLocation(std::string_view name) {
  NameLocation location;
  for (const Convention& convention : kConventions) {
    if (convention.parse(name, &location)) {
      location.convention = convention.tag;
      return location;
    }
    location = NameLocation();
  }
  location.function = std::string(name);
  return location;
}

}  // namespace cg_inject
