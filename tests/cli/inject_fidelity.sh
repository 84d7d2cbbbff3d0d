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
source "$(dirname "$0")/lib.sh"
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
echo "checked $checked injected captures"
finish
