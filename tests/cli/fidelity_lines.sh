#!/usr/bin/env bash
# Issue 23, items 1, 5, 10 and 11 on the command line:
# - BEAMJIT's line tables (tests/data/fidelity/erlang): a lead entry before the code and a closing
#   line-0 entry; every function with a table gets its file and lines in the profile and in its
#   ELF image (addr2line).
# - A source found by discovery and given again (a copy) is loaded and reported once.
# - Call edges worth more than their part are reported (warning and --stats).
# - PHP's {main} in a real file: callgrind_annotate --auto=yes annotates without Perl warnings.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
data=$SOURCE_ROOT/tests/data/fidelity

# 1. Erlang: file and line in the profile and in the image.
erl=$data/erlang
if ! "$CG_INJECT" --no-discover --jitdump "$erl/jit-15705.dump" -i "$erl/callgrind.out.15705" \
  -o "$scratch/erl.out" --elf-path=relative 2>"$scratch/err"; then
  fail "erlang: exit $?: $(head -n 3 "$scratch/err")"
fi
grep -q "line table outside code" "$scratch/err" && fail "erlang: line tables dropped: $(cat "$scratch/err")"
# fib/1 (defined at fibm.erl:4) ran lines 4 (its head) and 6 (its last clause).
# The (file, line) of fib/1's cost lines, positions "instr line" uncompressed by hand.
fib_lines=$(python3 - "$scratch/erl.out" <<'PY'
import re, sys
files, fns, fn, base, file, pos, seen = {}, {}, "", "", "", [0, 0], set()
def name(text, names):
    m = re.match(r"\((\d+)\)(?: (.*))?", text)
    if not m: return text
    if m.group(2) is not None: names[m.group(1)] = m.group(2)
    return names.get(m.group(1), "")
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    key, _, value = line.partition("=")
    if key == "fl": base = file = name(value, files)
    elif key in ("fi", "fe"): file = name(value, files)
    elif key in ("cfi", "cfl"): name(value, files)
    elif key == "fn": fn, file = name(value, fns), base
    elif key == "cfn": name(value, fns)
    elif line[:1] in "0123456789+-*" and line:
        for i, f in enumerate(line.split()[:2]):
            if f == "*": continue
            if f[0] in "+-": pos[i] += int(f[1:], 0) * (1 if f[0] == "+" else -1)
            else: pos[i] = int(f, 0)
        if fn.startswith("fibm:fib/1"): seen.add("%s %d" % (file, pos[1]))
print(";".join(sorted(seen)) + ";")
PY
)
[[ $fib_lines == *"fibm.erl 4;"* && $fib_lines == *"fibm.erl 6;"* ]] ||
  fail "erlang: fib/1's lines: $fib_lines"
grep -q "^fl=.*fibm\.erl" "$scratch/erl.out" || fail "erlang: no fl= fibm.erl in the output"
# One function, as callgrind_annotate reads it: the prologue that holds fib/1's entry (no line
# table of its own) is fib/1 in fibm.erl, not a second fib/1 in ??? (before: 36 of its 1,935 Ir).
callgrind_annotate --threshold=100 "$scratch/erl.out" >"$scratch/erl.ann" 2>&1 ||
  fail "erlang: callgrind_annotate: $(head -n 3 "$scratch/erl.ann")"
grep -q 'fibm\.erl:fibm:fib/1' "$scratch/erl.ann" || fail "erlang: no fibm.erl:fibm:fib/1 in callgrind_annotate"
grep -q '???:fibm:' "$scratch/erl.ann" &&
  fail "erlang: fib/1 split between fibm.erl and ???: $(grep 'fibm:' "$scratch/erl.ann")"
image=$scratch/erl.out.jit-15705.dump.elf
if [[ ! -f $image ]]; then
  fail "erlang: no image $image: $(ls "$scratch")"
else
  got=$(addr2line -e "$image" 0x47738150 0x4773820c 0x477382a4 | tr '\n' ' ')
  [[ $got == "fibm.erl:4 fibm.erl:6 fibm.erl:9 " ]] || fail "erlang: addr2line says $got"
fi

# 5. The same jitdump in the working directory (found by discovery) and given with --jitdump.
mkdir "$scratch/cwd"
cp "$erl/jit-15705.dump" "$scratch/cwd/"
(cd "$scratch/cwd" && "$CG_INJECT" -v --jitdump "$erl/jit-15705.dump" -i "$erl/callgrind.out.15705" \
  -o "$scratch/cwd/dup.out" --stats=json) 2>"$scratch/err" || fail "duplicate: exit $?"
using=$(grep -c "using jitdump" "$scratch/err" || true)
[[ $using == 1 ]] || fail "duplicate: $using 'using jitdump' lines: $(grep using "$scratch/err")"
grep -q "same content as ./jit-15705.dump, not loaded again" "$scratch/err" ||
  fail "duplicate: the copy is not named: $(grep using "$scratch/err")"
tail -n 1 "$scratch/err" | grep -q '"reused_ranges":0,' || fail "duplicate: $(tail -n 1 "$scratch/err")"
tail -n 1 "$scratch/err" | grep -q '"ambiguous_choices":0,' || fail "duplicate: $(tail -n 1 "$scratch/err")"
images=$(ls "$scratch/cwd" | grep -c '\.elf$' || true)
[[ $images == 1 ]] || fail "duplicate: $images images: $(ls "$scratch/cwd")"

# 10. A call edge worth more than the whole profile (Callgrind missed the returns).
cat >"$scratch/broken.cg" <<'CG'
# callgrind format
pid: 1
positions: line
events: Ir
ob=???
fl=???
fn=0x0000000000001000
0 30
cob=/usr/bin/php
cfi=zend.c
cfn=execute_ex
calls=1 0
0 5000
ob=/usr/bin/php
fl=zend.c
fn=execute_ex
0 20
CG
printf '1000 40 jitted\n' >"$scratch/perf-1.map"
"$CG_INJECT" --no-discover --perf-map "$scratch/perf-1.map" -i "$scratch/broken.cg" \
  -o "$scratch/broken.out" --stats 2>"$scratch/err" || fail "broken calls: exit $?"
grep -q "1 call edges cost more than their whole part" "$scratch/err" ||
  fail "broken calls: no warning: $(cat "$scratch/err")"
grep -q "call edges worth more than their whole part: 1 " "$scratch/err" ||
  fail "broken calls: not in --stats: $(cat "$scratch/err")"
"$CG_INJECT" --no-discover --perf-map "$scratch/perf-1.map" -i "$scratch/broken.cg" \
  -o "$scratch/broken.out" --stats=json 2>"$scratch/err" || fail "broken calls json: exit $?"
tail -n 1 "$scratch/err" | grep -q '"overflowing_call_edges":1[,}]' ||
  fail "broken calls: not in --stats=json: $(tail -n 1 "$scratch/err")"

# 11. PHP function mode: {main} of a real script, no line table.
mkdir "$scratch/php"
printf '<?php\nfunction fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }\necho fib(20);\n' \
  >"$scratch/php/prog.php"
printf '2000 40 JIT$%s\n2040 40 JIT$fib\n' "$scratch/php/prog.php" >"$scratch/php/perf-2.map"
cat >"$scratch/php/prog.cg" <<'CG'
# callgrind format
pid: 2
positions: instr line
events: Ir
ob=???
fl=???
fn=0x0000000000002000
0x2000 0 10
cfn=0x0000000000002040
calls=1 0x2040 0
0x2004 0 30
fn=0x0000000000002040
0x2040 0 30
CG
"$CG_INJECT" --no-discover --perf-map "$scratch/php/perf-2.map" -i "$scratch/php/prog.cg" \
  -o "$scratch/php/prog.out" --no-elf 2>"$scratch/err" || fail "php: exit $?: $(cat "$scratch/err")"
grep -q "^fn=.*{main}" "$scratch/php/prog.out" || fail "php: no {main}: $(cat "$scratch/php/prog.out")"
(cd "$scratch/php" && callgrind_annotate --auto=yes prog.out >"$scratch/annotate" 2>"$scratch/err") ||
  fail "php: callgrind_annotate failed"
[[ ! -s $scratch/err ]] || fail "php: callgrind_annotate warns: $(sort -u "$scratch/err" | head -n 3)"
grep -q "Auto-annotated source: .*prog.php" "$scratch/annotate" || fail "php: prog.php not annotated"

finish
