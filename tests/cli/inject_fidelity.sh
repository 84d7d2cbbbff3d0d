#!/usr/bin/env bash
# Injection keeps what every consumer sees of the code no source describes: for each JIT capture
# in tests/data (both architectures, Node), cg-inject with the capture's own perf map or jitdump
# must leave every non-JIT function's self and inclusive cost, its calls among such functions and
# the sums of its calls to and from JIT code as KCachegrind reads them (kcachegrind_reading.py
# --native), and KCachegrind and callgrind_annotate's rules (cg-inject's reader) must read the
# injected functions alike.
# The input side is cg-inject's own reading: where Valgrind 3.19 left a fi= open before fn=, the
# input reads differently in the two consumers and the output settles on callgrind_annotate's
# reading (round-trip test); elsewhere the two readings of the input are equal.
# Node: /usr/bin/node's functions are left out. V8's embedded builtins are its code, and the
# interpreter trampoline's blocks hold JIT code Callgrind charged to it (tail jumps); injection
# moves that cost, and the calls made from it, to the JIT functions and the builtins that ran it.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
here=$(cd "$(dirname "$0")" && pwd)
model=$here/kcachegrind_reading.py

plain() {
  if [[ $(head -c 4 "$1" | od -An -tx1 | tr -d ' ') == 28b52ffd ]]; then
    zstd -q -d -c "$1" >"$2"
  else
    cp "$1" "$2"
  fi
}

checked=0
for dir in "$SOURCE_ROOT"/tests/data/{x86_64,aarch64}/* "$SOURCE_ROOT"/tests/data/node/*; do
  sources=()
  jit_objects=()
  for s in "$dir"/jit-*.dump* "$dir"/perf-*.map*; do
    [[ -e $s ]] || continue
    [[ $s == *jit-*.dump* ]] && sources+=(--jitdump "$s") || sources+=(--perf-map "$s")
    base=$(basename "$s")
    jit_objects+=(--jit-object "${base%.zst}")
  done
  ((${#sources[@]})) || { fail "$dir: no perf map or jitdump"; continue; }
  profiles=()
  for f in "$dir"/callgrind.out*; do
    [[ -e $f && -s $f ]] && profiles+=("$f")
  done
  ((${#profiles[@]})) || { fail "$dir: no capture"; continue; }
  for f in "${profiles[@]}"; do
    name=${dir#"$SOURCE_ROOT"/tests/data/}/$(basename "$f")
    plain "$f" "$scratch/in"
    expect_exit 0 "$CG_INJECT" --no-discover -q "${sources[@]}" -i "$scratch/in" -o "$scratch/out" ||
      continue
    "$CG_INJECT" --no-discover -q -i "$scratch/in" -o /dev/null --callgraph "$scratch/in.json"
    python3 "$model" --native "${jit_objects[@]}" --from-callgraph "$scratch/in.json" >"$scratch/n.in"
    python3 "$model" --native "${jit_objects[@]}" "$scratch/out" >"$scratch/n.out"
    if [[ $dir == */node/* ]]; then
      grep -v "'node')" "$scratch/n.in" >"$scratch/n.in.rest"
      grep -v "'node')" "$scratch/n.out" >"$scratch/n.out.rest"
      [[ -s $scratch/n.in.rest ]] || fail "$name: no function outside /usr/bin/node to compare"
      diff "$scratch/n.in.rest" "$scratch/n.out.rest" >"$scratch/diff" || true
    else
      diff "$scratch/n.in" "$scratch/n.out" >"$scratch/diff" || true
    fi
    if [[ -s $scratch/diff ]]; then
      fail "$name: KCachegrind sees the non-JIT functions differently after injection"
      head -n 8 "$scratch/diff" >&2
    fi
    "$CG_INJECT" --no-discover -q -i "$scratch/out" -o /dev/null --callgraph "$scratch/own.json"
    python3 "$model" --project-callgraph "$scratch/own.json" >"$scratch/own"
    python3 "$model" --functions-only "$scratch/out" >"$scratch/kcg"
    if ! diff "$scratch/kcg" "$scratch/own" >"$scratch/diff"; then
      fail "$name: KCachegrind and callgrind_annotate read the injected output differently"
      head -n 8 "$scratch/diff" >&2
    fi
    checked=$((checked + 1))
  done
done
((checked >= 20)) || fail "only $checked captures checked"

# Issue 23's and 33's cases (tests/data/fidelity/README.md): no call target without a function
# block that the input did not have, in KCachegrind's reading or callgrind_annotate's, no cycle of
# calls it did not have, and every function in expected-inclusive with that inclusive cost in
# callgrind_annotate, --callgraph and KCachegrind.
cases=0
for dir in "$SOURCE_ROOT"/tests/data/fidelity/*/; do
  dir=${dir%/}
  name=fidelity/$(basename "$dir")
  # A case is a directory with profile.callgrind and its perf map (erlang/ holds a jitdump case
  # of cli-fidelity_lines).
  [[ -e $dir/profile.callgrind ]] || continue
  maps=("$dir"/perf-*.map)
  expect_exit 0 "$CG_INJECT" --no-discover -q --perf-map "${maps[0]}" -i "$dir/profile.callgrind" \
    -o "$scratch/fid.out" --callgraph "$scratch/fid.json" || continue
  for side in in out; do
    file=$dir/profile.callgrind
    [[ $side == out ]] && file=$scratch/fid.out
    python3 "$model" --blockless "$file" >"$scratch/kc.$side"
    python3 "$here/annotate_blockless.py" "$file" >"$scratch/ann.$side"
  done
  # Merging pieces makes no cycle of calls the input did not have (issue 33 item 7): no more
  # cycles, and no more functions in them, as KCachegrind's cycle detection groups them.
  python3 "$model" --cycles "$dir/profile.callgrind" >"$scratch/cycles.in"
  python3 "$model" --cycles "$scratch/fid.out" >"$scratch/cycles.out"
  if (($(wc -l <"$scratch/cycles.out") > $(wc -l <"$scratch/cycles.in"))) ||
    (($(grep -o "), (" "$scratch/cycles.out" | wc -l) > $(grep -o "), (" "$scratch/cycles.in" | wc -l))); then
    fail "$name: merging made a cycle of calls the input did not have"
    head -n 4 "$scratch/cycles.out" >&2
  fi
  for reading in kc ann; do
    if (($(wc -l <"$scratch/$reading.out") > $(wc -l <"$scratch/$reading.in"))); then
      fail "$name: more call targets without a function block after injection ($reading)"
      diff "$scratch/$reading.in" "$scratch/$reading.out" >"$scratch/diff" || true
      head -n 8 "$scratch/diff" >&2
    fi
  done
  if [[ -e $dir/expected-inclusive ]]; then
    callgrind_annotate --inclusive=yes --threshold=100 "$scratch/fid.out" >"$scratch/ann" 2>&1
    python3 "$model" --inclusive "$scratch/fid.out" >"$scratch/kcinc"
    python3 - "$dir/expected-inclusive" "$scratch/ann" "$scratch/kcinc" "$scratch/fid.json" \
      >"$scratch/incl" <<'PY' || fail "$name: the inclusive-cost check itself failed"
import ast, json, re, sys
expected = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip() and l[0] != '#']
annotate = {}
for line in open(sys.argv[2]):
    m = re.match(r'^\s*([\d,]+) \([^)]*\)\s+[^:\[]*:(.*?)(?: \[.*\])?$', line)
    if m:
        annotate[m.group(2)] = int(m.group(1).replace(',', ''))
kcachegrind = {}
for line in open(sys.argv[3]):
    # Names may hold ') ' (Mono's signatures): the costs are the last ' [...]'.
    key_text, costs_text = line[len('inclusive '):].rstrip('\n').rsplit(') [', 1)
    key = ast.literal_eval(key_text + ')')
    costs = dict(ast.literal_eval('[' + costs_text))
    kcachegrind[key[0]] = costs.get('Ir', 0)
callgraph = {}
for part in json.load(open(sys.argv[4]))['parts']:
    for fn in part['functions']:
        f = fn['key']['function']
        callgraph.setdefault(f, [0, 0, 0])
        callgraph[f][0] += fn['inclusive'][0]
        callgraph[f][1] += fn['called']
        callgraph[f][2] += fn['called_inclusive'][0]
for name, value in expected:
    value = int(value)
    got = {'callgrind_annotate': annotate.get(name), 'KCachegrind': kcachegrind.get(name)}
    if name in callgraph:
        inclusive, called, called_inclusive = callgraph[name]
        got['--callgraph inclusive'] = inclusive
        if called:
            got['--callgraph called_inclusive'] = called_inclusive
    else:
        got['--callgraph'] = None
    for reader, cost in got.items():
        if cost != value:
            print('%s: %s inclusive %s, expected %d' % (reader, name, cost, value))
PY
    if [[ -s $scratch/incl ]]; then
      fail "$name: inclusive costs differ from the code each function merged"
      head -n 8 "$scratch/incl" >&2
    fi
  fi
  cases=$((cases + 1))
done
((cases >= 5)) || fail "only $cases fidelity cases checked"

# Issue 33 item 7: keeping a piece apart takes a second reading of the input, so a file input
# says what it kept apart, and stdin, which cannot be read again, writes it merged and says so.
deno=$SOURCE_ROOT/tests/data/fidelity/deno-prologue
if expect_exit 0 "$CG_INJECT" --no-discover --perf-map "$deno"/perf-*.map \
  -i "$deno/profile.callgrind" -o "$scratch/kept.out" --stats; then
  grep -q "kept apart, 1 blocks given a function of their own (words (entered at 0x28001c14, +0x14))" \
    "$scratch/err" || fail "no warning of the block kept apart: $(cat "$scratch/err")"
  grep -q "^cg-inject: pieces kept apart .*: 1 blocks, 0 functions' code" "$scratch/err" ||
    fail "--stats does not count the block kept apart: $(cat "$scratch/err")"
fi
if expect_exit 0 "$CG_INJECT" --no-discover --perf-map "$deno"/perf-*.map -i - \
  -o "$scratch/merged.out" <"$deno/profile.callgrind"; then
  grep -q "1 pieces written merged (keeping them apart takes a second reading of the input, which stdin does not allow)" \
    "$scratch/err" || fail "stdin: no warning of the merged piece: $(cat "$scratch/err")"
  grep -q "entered at" "$scratch/merged.out" && fail "stdin: a piece kept apart without a second reading"
fi
echo "checked $checked injected captures and $cases fidelity cases"
finish
