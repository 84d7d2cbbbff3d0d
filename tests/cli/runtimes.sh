#!/usr/bin/env bash
# The stored PHP, Erlang, Elixir, Java, Mono, Deno and Bun captures
# (tests/data/{php,erlang,elixir,java,mono,deno,bun}: their programs under Valgrind 3.19 with the
# switches `cg-inject record` sets; CMDLINE.txt in each says how). After injection: the totals are
# unchanged, the cost in unnamed JIT code that the map or dump covers is gone (no unnamed block
# inside a map entry above 0.1% of the total), and the program's functions are named, with the
# script where PHP's names carry it. Checked with callgrind_annotate, as a user would read it.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
data=$SOURCE_ROOT/tests/data

totals() { callgrind_annotate "$1" 2>/dev/null | grep 'PROGRAM TOTALS'; }

# check NAME INPUT MAP SOURCE-ARGS... -- PATTERNS...: inject with SOURCE-ARGS, compare totals,
# check that no unnamed block inside one of MAP's entries keeps more than 0.1% of the total (code
# no map or dump describes, such as Mono's low trampolines, may stay unnamed), grep PATTERNS in
# callgrind_annotate's function lines.
check() {
  local name=$1 input=$2 map=$3
  shift 3
  local sources=()
  while [[ $1 != -- ]]; do sources+=("$1"); shift; done
  shift
  local out=$scratch/$name.out
  zstd -q -d -c "$input" >"$scratch/$name.raw"
  expect_exit 0 "$CG_INJECT" --no-discover -i "$scratch/$name.raw" "${sources[@]}" -o "$out" \
    --stats=json || return 0
  [[ "$(totals "$scratch/$name.raw")" == "$(totals "$out")" ]] || fail "$name: PROGRAM TOTALS differ"
  callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null >"$scratch/$name.ann"
  callgrind_annotate --threshold=100 "$out" 2>/dev/null >"$scratch/$name.self"
  python3 - "$name" "$scratch/err" "$map" "$scratch/$name.self" <<'PY' || fail "$name: coverage"
import bisect, json, re, sys
name, err, map_path, self_path = sys.argv[1:5]
stats = json.loads(open(err).read().strip().splitlines()[-1])
before, after, total = (stats["unnamed_jit_cost_before"], stats["unnamed_jit_cost_after"],
                        stats["total_cost"])
print(f"{name}: unnamed JIT cost {before} -> {after} of {total} Ir, "
      f"{stats['functions_resolved']} functions named")
assert before > 0.001 * total, "the capture should spend >0.1% in JIT code"
assert after < before, f"{after} of {before} still unnamed"
entries = sorted((int(l.split()[0], 16), int(l.split()[1], 16)) for l in open(map_path) if l.strip())
starts = [e[0] for e in entries]
for line in open(self_path):
    m = re.match(r"\s*([0-9,]+) .*\?\?\?:0x([0-9a-f]+) \[\?\?\?\]", line)
    if not m:
        continue
    cost, addr = int(m.group(1).replace(",", "")), int(m.group(2), 16)
    i = bisect.bisect_right(starts, addr) - 1
    covered = i >= 0 and addr < entries[i][0] + entries[i][1]
    assert not (covered and cost > 0.001 * total), f"0x{addr:x} ({cost} Ir) is in the map, unnamed"
PY
  local p
  for p in "$@"; do
    grep -qE -- "$p" "$scratch/$name.ann" || fail "$name: no function line matches '$p'"
  done
}

# PHP tracing: traces are named after their function; the script's top-level code is {main} in
# prog.php.
php=$data/php
check php-tracing "$php/tracing/callgrind.out.zst" "$php"/tracing/perf-*.map \
  --jitdump "$php"/tracing/jit-*.dump.zst -- \
  '[ /]prog\.php:\{main\} \[' ' \?\?\?:fib \[' ' \?\?\?:Calc::fib \['
grep -qE 'TRACE-[0-9]' "$scratch/php-tracing.ann" && fail "php-tracing: a raw TRACE- name is left"
# Every trace of fib is one function: no fib:LINE split by the traces' start lines (6 traces).
grep -qE ':fib:[0-9]+ \[' "$scratch/php-tracing.ann" && fail "php-tracing: fib split by trace lines"
# The map names the same code as the dump.
check php-tracing-map "$php/tracing/callgrind.out.zst" "$php"/tracing/perf-*.map \
  --perf-map "$php"/tracing/perf-*.map -- \
  '[ /]prog\.php:\{main\} \[' ' \?\?\?:fib \[' ' \?\?\?:Calc::fib \['
check php-function "$php/function/callgrind.out.zst" "$php"/function/perf-*.map \
  --jitdump "$php"/function/jit-*.dump.zst -- \
  '[ /]prog\.php:\{main\} \[' ' \?\?\?:fib \[' ' \?\?\?:Calc::fib \['

# Erlang: module:function/arity without the map's '$'; the prologue holding a function's entry
# is that function, so nothing is named -CodeInfoPrologue.
erl=$data/erlang
check erlang "$erl/callgrind.out.zst" "$erl"/perf-*.map --perf-map "$erl"/perf-*.map -- \
  ':jitprobe:fib/1 \[' ':jitprobe:sum/2 \[' ':jitprobe:main/0 \['
grep -qE 'CodeInfoPrologue|\$jitprobe' "$scratch/erlang.ann" &&
  fail "erlang: a prologue or a '\$' name is a function of its own"

# Elixir: an Elixir module's functions as Elixir writes them (Shop.Main.run/1, anonymous
# functions after the function that defines them), with the map; with the jitdump (trimmed to
# the Shop modules' code) in the .ex file that defines them.
ex=$data/elixir
check elixir "$ex/callgrind.out.zst" "$ex"/perf-*.map --perf-map "$ex"/perf-*.map -- \
  ':Shop\.Main\.run/1 \[' ':Shop\.Main\.build/1 \[' ':Shop\.Cart\.add/2 \[' \
  ':anonymous fn/2 in Shop\.Main\.build/1 \['
grep -qE "Elixir\.Shop|CodeInfoPrologue" "$scratch/elixir.ann" &&
  fail "elixir: an Erlang-style Elixir name or a prologue is left: $(grep -m 3 -E 'Elixir\.Shop|CodeInfoPrologue' "$scratch/elixir.ann")"
grep 'Shop' "$ex"/perf-*.map >"$scratch/shop.map"
check elixir-dump "$ex/callgrind.out.zst" "$scratch/shop.map" --jitdump "$ex"/jit-*.dump -- \
  ' shop\.ex:Shop\.Main\.run/1 \[' ' shop\.ex:Shop\.Main\.build/1 \[' \
  ' shop\.ex:Shop\.Cart\.add/2 \[' ' shop\.ex:anonymous fn/2 in Shop\.Main\.build/1 \['

# Java (HotSpot's C1): the map's signature-style names.
java=$data/java
check java "$java/callgrind.out.zst" "$java"/perf-*.map --perf-map "$java"/perf-*.map -- \
  ' \?\?\?:int Work\.fib\(int\) \['

# Mono: the names as Mono writes them.
mono=$data/mono
check mono "$mono/callgrind.out.zst" "$mono"/perf-*.map --perf-map "$mono"/perf-*.map -- \
  ':Probe\.Calc:Fib \(int\) \[' ':Probe\.Calc:Sum \(int\[\]\) \[' ':Probe\.Program:Main \(\) \['
# Deno 2.9 (V8 15), from its map and from its dump: every tier of a function (OSR's `o` and
# context specialization's `'` included) is that function, in its script's path (both name it by
# a file:// URL, the dump's line tables too), the two `area` methods told apart by their lines.
deno=$data/deno
for kind in map dump; do
  if [[ $kind == map ]]; then
    sources=(--perf-map "$deno"/perf-*.map)
  else
    sources=(--jitdump "$deno"/jit-*.dump.zst)
  fi
  check deno-$kind "$deno/callgrind.out.zst" "$deno"/perf-*.map "${sources[@]}" -- \
    ' /tmp/cg-inject-e2e-deno/prog\.js:fib \[' ' /tmp/cg-inject-e2e-deno/prog\.js:sumTo \[' \
    ' /tmp/cg-inject-e2e-deno/prog\.js:main \[' ' /tmp/cg-inject-e2e-deno/prog\.js:area:11 \[' \
    ' /tmp/cg-inject-e2e-deno/prog\.js:area:12 \['
  grep -qE "file://|:(o?[~^+*]'?|')(fib|sumTo|main|area)[ :]" "$scratch/deno-$kind.ann" &&
    fail "deno-$kind: a tier mark or a file URL is left"
  [[ $(grep -cE ':fib \[' "$scratch/deno-$kind.ann") == 1 ]] || fail "deno-$kind: fib is not one function"
done
# V8's builtins and bytecode handlers in the stripped binary the capture ran (scripts/js-runtimes.sh
# puts it where it was): named as the map names them, under the binary, at its ELF addresses
# (the map's runtime address minus Valgrind's PIE base 0x108000). Every cost line inside a map
# entry is that entry's. A line outside every entry (native code of the binary, which has no
# symbols) keeps the function Callgrind charged it to: a jump inside one object to an address no
# symbol starts stays in the running function, so the input has it in the nameless function named
# after that builtin's ELF address (`0x0000000003847600` for Builtin:Call_ReceiverIsNullOrUndefined).
deno_bin=/var/cache/cg-inject/js/node_modules/@deno/linux-x64-glibc/deno
if [[ -f $deno_bin ]]; then
  # A bytecode handler's line in callgrind_annotate's self view, under the binary the profile ran.
  handler_in_binary='^ *[0-9,]+ .*:BytecodeHandler:[A-Za-z]+ \[/var/cache/.*/deno\]'
  grep -qE "$handler_in_binary" "$scratch/deno-map.self" ||
    fail "deno: no bytecode handler named in the binary"
  python3 - "$scratch/deno-map.out" "$deno"/perf-*.map "$scratch/deno-map.raw" <<'PY' || fail "deno: builtins not at their ELF addresses"
import bisect, collections, re, sys
entries = sorted((int(l.split()[0], 16), int(l.split()[1], 16), l.split(' ', 2)[2].strip())
                 for l in open(sys.argv[2]) if l.strip())
starts = [e[0] for e in entries]
by_start = {e[0]: e[2] for e in entries}
pie = 0x108000

def deno_lines(path):
    """(instruction address, function name) of every position line under the deno binary."""
    names, obs, fn, ob, addr = {}, {}, None, None, 0
    for line in open(path):
        m = re.match(r'(c?fn|c?ob)=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
        if m:
            table = names if m.group(1).endswith('fn') else obs
            if m.group(3): table[m.group(2)] = m.group(3)
            if m.group(1) == 'fn': fn = names[m.group(2)]
            if m.group(1) == 'ob': ob = obs[m.group(2)]
            continue
        if line[:1] not in '0123456789+-*':
            continue
        # Positions are relative to the last position line, whatever its function or object.
        tok = line.split()[0]
        addr = int(tok, 16) if tok.startswith('0x') else addr + int(tok) if tok[0] in '+-' else addr
        if fn and ob and ob.endswith('/deno'):
            yield addr, fn.split("'")[0]

charged = collections.defaultdict(set)  # the input: address -> nameless functions holding it
for addr, fn in deno_lines(sys.argv[3]):
    if fn.startswith('0x'): charged[addr].add(int(fn, 16))
checked = outside = 0
for addr, name in deno_lines(sys.argv[1]):
    if not name.startswith(('Builtin:', 'BytecodeHandler:')):
        continue
    i = bisect.bisect_right(starts, addr + pie) - 1
    if i >= 0 and addr + pie < starts[i] + entries[i][1]:
        assert entries[i][2] == name, f"{name} at {addr:#x}: the map has {entries[i][2]} at {addr + pie:#x}"
        checked += 1
        continue
    assert any(by_start.get(f + pie) == name for f in charged[addr]), (f"{name} at {addr:#x}: the map has nothing at {addr + pie:#x} and the input did not "
                f"charge it to that builtin")
    outside += 1
assert checked > 1000, f"only {checked} cost lines of builtins"
assert outside < checked / 100, f"{outside} lines outside the builtins' entries"
print(f"deno: {checked} cost lines of builtins at their ELF addresses, {outside} of native code "
      "that Callgrind charged to a builtin")
PY
  # `cmd: deno` names no path: PATH finds one, maybe not the file that ran. Another deno first
  # in PATH (a second name of the same bytes) must not take the builtins from the profile's.
  mkdir -p "$scratch/path"
  ln "$deno_bin" "$scratch/path/deno" 2>/dev/null || cp "$deno_bin" "$scratch/path/deno"
  PATH=$scratch/path:$PATH expect_exit 0 "$CG_INJECT" --no-discover -i "$scratch/deno-map.raw" \
    --perf-map "$deno"/perf-*.map -o "$scratch/deno-path.out"
  grep -q "$scratch/path/deno" "$scratch/deno-path.out" &&
    fail "deno: the deno found in PATH took code of the one the profile ran"
  callgrind_annotate --threshold=100 "$scratch/deno-path.out" 2>/dev/null >"$scratch/deno-path.self"
  grep -qE "$handler_in_binary" "$scratch/deno-path.self" ||
    fail "deno: with another deno in PATH, no bytecode handler named in the binary"
  rm -f "$scratch/path/deno"
else
  echo "note: $deno_bin is absent (scripts/js-runtimes.sh install): builtins not checked"
fi

# Bun 1.4 (JavaScriptCore): JSC-Baseline/DFG/FTL of a function are one function named as in the
# source, the hash only on the two methods named `area`; thunks keep their names. Its dump
# (jit-TID-PID.dump, TID the writer thread's) is found by the profile's pid in a --jit-dir.
bun=$data/bun
python3 - "$bun"/jit-*.dump >"$scratch/bun.map" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
pos = struct.unpack_from('<I', data, 8)[0]
while pos + 16 <= len(data):
    rid, size = struct.unpack_from('<II', data, pos)
    if rid == 0:
        _, _, vma, addr, csize, _ = struct.unpack_from('<IIQQQQ', data, pos + 16)
        name = data[pos + 56:data.index(b'\0', pos + 56)].decode()
        print(f"{addr:x} {csize:x} {name}")
    pos += size
PY
check bun "$bun/callgrind.out.zst" "$scratch/bun.map" --jitdump "$bun"/jit-*.dump -- \
  ' \?\?\?:fib \[' ' \?\?\?:sumTo \[' ' \?\?\?:main \[' ' \?\?\?:area#[A-Za-z0-9]{6} \[' \
  ' \?\?\?:JSC-Thunk: [A-Za-z]+ \['
expect_exit 0 "$CG_INJECT" -i "$scratch/bun.raw" --jit-dir "$bun" -o "$scratch/bun-found.out" &&
  { grep -q "^cg-inject: using jitdump $bun/jit-5613-5610.dump" "$scratch/err" ||
    fail "bun: the dump was not found by the profile's pid: $(head -3 "$scratch/err")"; }
[[ $(grep -cE ':area#[A-Za-z0-9]{6} \[' "$scratch/bun.ann") == 2 ]] || fail "bun: two area methods expected"
# A tier is `JSC-TIER: ` before the name; JSC's own stubs (`JSC-DFGThunk:`, `JSC-DFGOSREntry:`,
# `JSC-DFGOSRExit:`) are names of their own, kept as the thunks' are.
grep -qE 'JSC-(Baseline|DFG|FTL): |:(fib|sumTo|main)#' "$scratch/bun.ann" && fail "bun: a tier or hash is left"
[[ $(grep -cE ':fib \[' "$scratch/bun.ann") == 1 ]] || fail "bun: fib is not one function"
finish
