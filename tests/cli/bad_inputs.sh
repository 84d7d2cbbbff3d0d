#!/usr/bin/env bash
# The hostile-input corpus in tests/data/bad/: each NAME.cg (or NAME.dump, made below from a
# committed capture) has NAME.expect beside it: "exit N" on the first line, then stderr exactly
# (the "no symbol source" note left out). An error leaves no output and no temporary; a warned
# recovery writes an output that reads back with no totals: warning (its sums are true) and the
# input's summary: warning, if any (a wrong summary: is kept).
source "$(dirname "$0")/lib.sh"
bad=$SOURCE_ROOT/tests/data/bad

# Jitdumps are binary: made from the test JIT's committed dump instead of committed as hex.
dump=$SOURCE_ROOT/tests/data/x86_64/instr/jit-24022.dump
u32_at() { od -An -tu4 -j "$1" -N 4 "$dump" | tr -d ' '; }
first_size=$(u32_at 44)          # the first record starts after the 40-byte header
second=$((40 + first_size))
cp "$dump" "$scratch/corrupt-size-mid-file.dump"
printf '\x00\x00\x10\x00' | dd of="$scratch/corrupt-size-mid-file.dump" bs=1 seek=$((second + 4)) conv=notrunc status=none
head -c $(($(stat -c %s "$dump") - 10)) "$dump" >"$scratch/cut-tail.dump"  # a writer's tail

run_case() {
  local name=$1 input_dir=$2
  shift 2
  local expect=$bad/$name.expect
  [[ -f $expect ]] || { fail "$name: no $name.expect"; return; }
  rm -f "$scratch/case.out"
  local got=0
  (cd "$input_dir" && "$CG_INJECT" --no-discover "$@" -o "$scratch/case.out") 2>"$scratch/err" || got=$?
  { echo "exit $got"; grep -v ': JIT code keeps its addresses$' "$scratch/err" || true; } >"$scratch/got"
  if ! diff -u "$expect" "$scratch/got" >"$scratch/diff"; then
    fail "$name: outcome differs"
    head -n 12 "$scratch/diff" >&2
    return
  fi
  if [[ $got != 0 ]]; then
    [[ ! -e $scratch/case.out ]] || fail "$name: output written despite the error"
  else
    "$CG_INJECT" --no-discover -i "$scratch/case.out" -o /dev/null 2>"$scratch/err2" ||
      fail "$name: output does not read back: $(cat "$scratch/err2")"
    # A wrong summary: is kept (it sets callgrind_annotate's percentages), so it is warned about
    # again, exactly as in the input; every other sum is true.
    diff <(grep -o "expected summary: .*" "$scratch/err" || true) \
      <(grep -o "expected summary: .*" "$scratch/err2" || true) >/dev/null ||
      fail "$name: output's summary: is not the input's: $(cat "$scratch/err2")"
    ! grep -v 'expected summary:' "$scratch/err2" | grep -q 'summary:\|totals:' ||
      fail "$name: output sums not true: $(cat "$scratch/err2")"
  fi
  [[ -z $(find "$scratch" "$input_dir" -name '*.cg-inject-tmp.*') ]] || fail "$name: temporary left"
  checked=$((checked + 1))
}

checked=0
for f in "$bad"/*.cg; do
  name=$(basename "$f" .cg)
  run_case "$name" "$bad" -i "$name.cg"
done
for name in corrupt-size-mid-file cut-tail; do
  run_case "jitdump-$name" "$scratch" -i "$bad/complete.cg" --jitdump "$name.dump"
done
# --stats says what the cut tail lost too (text: the source's line; JSON: its numbers).
cut_bytes=$(grep -o 'dropped 1 record, [0-9]* bytes' "$bad/jitdump-cut-tail.expect" | grep -o '[0-9]* bytes' | cut -d' ' -f1)
[[ -n $cut_bytes ]] || fail "jitdump-cut-tail.expect names no dropped bytes"
(cd "$scratch" && "$CG_INJECT" --no-discover -i "$bad/complete.cg" --jitdump cut-tail.dump \
  -o "$scratch/stats.out" --stats) 2>"$scratch/err" || fail "cut tail --stats: exit $?"
grep -q "^  cut-tail.dump (jitdump, ob=cut-tail.dump): [0-9]* code versions; last record cut off (1 record, $cut_bytes bytes dropped)$" \
  "$scratch/err" || fail "cut tail: --stats does not say what was dropped: $(grep cut-tail "$scratch/err")"
(cd "$scratch" && "$CG_INJECT" --no-discover -i "$bad/complete.cg" --jitdump cut-tail.dump \
  -o "$scratch/stats.out" --stats=json) 2>"$scratch/err" || fail "cut tail --stats=json: exit $?"
python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["sources"][0]
assert s["dropped_records"] == 1 and s["dropped_bytes"] == int(sys.argv[2]), s
assert s["damage"] == "last record cut off (1 record, %s bytes dropped)" % sys.argv[2], s
' "$scratch/err" "$cut_bytes" || fail "cut tail: --stats=json sources: $(tail -n 1 "$scratch/err")"

for f in "$bad"/*.expect; do
  name=$(basename "$f" .expect)
  [[ -f $bad/$name.cg || $name == jitdump-* ]] || fail "$name.expect has no input"
done
((checked >= 16)) || fail "only $checked cases ran"
echo "checked $checked hostile inputs"
finish
