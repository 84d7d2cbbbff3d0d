#!/usr/bin/env bash
# A real JIT: the stored Node 20 captures (tests/data/node; --perf-basic-prof and --perf-prof under
# the bundled Valgrind with --dump-instr=yes). After injection, the JIT code the sources describe
# has names and source files, callgrind_annotate sees the same totals, and the workload's
# functions appear under workload.js.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
data=$SOURCE_ROOT/tests/data/node

totals() {
  zstd -q -d -c -f "$1" | callgrind_annotate /dev/stdin 2>/dev/null | grep 'PROGRAM TOTALS'
}

for mode in basic prof; do
  input=$data/$mode/callgrind.out.zst
  case $mode in
    basic) sources=(--perf-map "$data"/basic/perf-*.map) ;;
    prof) sources=(--jitdump "$data"/prof/jit-*.dump.zst) ;;
  esac
  out=$scratch/$mode.out
  expect_exit 0 "$CG_INJECT" --no-discover -i "$input" "${sources[@]}" -o "$out" --stats=json || continue
  python3 - "$mode" "$scratch/err" <<'PY' || fail "$mode: coverage"
import json, sys
mode, path = sys.argv[1], sys.argv[2]
stats = json.loads(open(path).read().strip().splitlines()[-1])
before, after = stats["unnamed_jit_cost_before"], stats["unnamed_jit_cost_after"]
print(f"{mode}: unnamed JIT cost {before} -> {after} of {stats['total_cost']} Ir, "
      f"{stats['functions_resolved']} functions named")
# The perf map / jitdump cover > 99.99% of Node's ob=??? cost (tests/e2e/node/coverage.py).
assert before > 0.05 * stats["total_cost"], "the capture should spend >5% in JIT code"
assert after <= 0.0001 * before, f"{after} of {before} still unnamed"
assert not stats["invariant_violations"], stats["invariant_violations"]
PY
  [[ "$(totals "$input")" == "$(totals "$out")" ]] || fail "$mode: PROGRAM TOTALS differ"
  zstd -q -d -c -f "$out" | callgrind_annotate /dev/stdin 2>/dev/null >"$scratch/$mode.ann"
  for fn in fib sumTo; do
    # ob= is the source (perf map) or the ELF image of the jitdump's code written beside $out.
    grep -qE "workload\.js:$fn('[0-9]+)? \[([^]]*\.)?(perf|jit)-[0-9]+\.(map|dump)(\.[0-9]+)?(\.elf)?\]" \
      "$scratch/$mode.ann" ||
      fail "$mode: $fn is not named with its file"
  done
  # V8's embedded builtins live in /usr/bin/node (not PIE) and keep their ELF names there; the
  # perf map's `Builtin:X` names must not create JIT functions. Only checkable with the Node that
  # made the capture.
  if [[ $(node --version 2>/dev/null) == v20.20.2 ]]; then
    ! grep -qE 'Builtin:' "$scratch/$mode.ann" || fail "$mode: a real object's code was renamed"
  else
    echo "note: node v20.20.2 absent, builtin check skipped"
  fi
  if grep -qE '\?\?\?:0x[0-9a-f]+ \[\?\?\?\]' "$scratch/$mode.ann"; then
    # Only stubs no source describes may remain; they must be tiny.
    awk '/\?\?\?:0x[0-9a-f]+ \[\?\?\?\]/ { gsub(",", "", $1); if ($1 > 10000) bad = 1 } END { exit bad }' \
      "$scratch/$mode.ann" || fail "$mode: a large unnamed JIT block remains"
  fi
done
finish
