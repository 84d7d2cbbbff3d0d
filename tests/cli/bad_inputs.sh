#!/usr/bin/env bash
# The hostile-input corpus in tests/data/bad/: each NAME.cg (or NAME.dump, made below from a
# committed capture) has NAME.expect beside it: "exit N" on the first line, then stderr exactly
# (the "no symbol source" note left out). An error leaves no output and no temporary; a warned
# recovery writes an output that reads back with no totals: warning (its sums are true) and the
# input's summary: warning, if any (a wrong summary: is kept).
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
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

# Symbol sources are read with a bound (issue 22 item 9). A device never ends: refused at once,
# before reading. Through a pipe, a jitdump's header is checked before the rest is read and a
# perf-map line stops at 64 MiB. (Before: each grew until memory ran out; the timeout catches it.)
for dev in /dev/zero /dev/urandom; do
  for opt in --perf-map --jitdump; do
    got=0
    timeout 60 "$CG_INJECT" --no-discover -i "$bad/complete.cg" "$opt" "$dev" -o "$scratch/dev.out" \
      2>"$scratch/err" || got=$?
    [[ $got == 1 && $(cat "$scratch/err") == "cg-inject: $dev: expected a regular file or a pipe, got a character device" ]] ||
      fail "$opt $dev: exit $got: $(head -c 300 "$scratch/err")"
    [[ ! -e $scratch/dev.out ]] || fail "$opt $dev: output written"
    checked=$((checked + 1))
  done
done
stream_case() {  # NAME EXPECTED-STDERR PRODUCER... : the producer's bytes piped into the source
  local name=$1 expected=$2 opt=$3
  shift 3
  local got=0
  { "$@" 2>/dev/null || true; } | timeout 60 "$CG_INJECT" --no-discover -i "$bad/complete.cg" "$opt" - \
    -o "$scratch/stream.out" 2>"$scratch/err" || got=$?
  [[ $got == 1 && $(cat "$scratch/err") == "$expected" ]] ||
    fail "$name: exit $got: $(head -c 300 "$scratch/err")"
  [[ ! -e $scratch/stream.out ]] || fail "$name: output written"
  checked=$((checked + 1))
}
stream_case "jitdump from a pipe of zeros" \
  'cg-inject: <stdin>: offset 0: expected the jitdump magic 0x4a695444 ("JiTD") in either byte order, got 0x0' \
  --jitdump cat /dev/zero
stream_case "jitdump from a pipe of a newer version" \
  'cg-inject: <stdin>: offset 4: expected jitdump version 1, got 2 (newer than this reader)' \
  --jitdump bash -c "printf 'DTiJ\\x02\\x00\\x00\\x00\\x28\\x00\\x00\\x00'; cat /dev/zero"
stream_case "perf map from a pipe of zeros" \
  'cg-inject: <stdin>:1: expected a line shorter than 64 MiB, got a longer one' \
  --perf-map cat /dev/zero
stream_case "perf map from a pipe, a long line after good ones" \
  'cg-inject: <stdin>:3: expected a line shorter than 64 MiB, got a longer one' \
  --perf-map bash -c "printf '1000 10 a\\n2000 10 b\\n3000 10 '; tr '\\0' x </dev/zero"

# A NUL quoted from a source ends no message (issue 22 item 11: it printed "got 'ab" and stopped).
printf 'ab\0cd 10 x\n' >"$scratch/nul.map"
got=0
"$CG_INJECT" --no-discover -i "$bad/complete.cg" --perf-map "$scratch/nul.map" -o "$scratch/nul.out" \
  2>"$scratch/err" || got=$?
[[ $got == 1 && $(cat "$scratch/err") == "cg-inject: $scratch/nul.map: not a perf map: none of its 1 non-empty lines is \`START SIZE name\` (first: $scratch/nul.map:1: expected hex start address, got 'ab\\x00cd')" ]] ||
  fail "NUL in a perf map: exit $got: $(cat -v "$scratch/err")"
checked=$((checked + 1))

# pzstd output starts with a skippable frame (issue 22 item 12): read as zstd, like zstd -dc.
pzstd -q -c "$bad/complete.cg" >"$scratch/pzstd.cg.zst" || fail "pzstd (Debian's zstd package) failed"
[[ $(head -c 4 "$scratch/pzstd.cg.zst" | od -An -tx1 | tr -d ' ') == 5?2a4d18 ]] ||
  fail "pzstd wrote no skippable frame first: $(head -c 4 "$scratch/pzstd.cg.zst" | od -An -tx1)"
"$CG_INJECT" --no-discover -i "$scratch/pzstd.cg.zst" -o "$scratch/pzstd.out" 2>"$scratch/err" ||
  fail "pzstd output refused: $(cat "$scratch/err")"
cmp -s "$bad/complete.cg" "$scratch/pzstd.out" || fail "pzstd output does not read as its content"
checked=$((checked + 1))

# A malformed pid: names no process (issue 22 item 14): a warning, and its digits' map is not
# used (discovery would find perf-3999991.map in the --jit-dir).
mkdir -p "$scratch/jitdir"
printf '1 10 not_for_this_profile\n' >"$scratch/jitdir/perf-3999991.map"
"$CG_INJECT" -i "$bad/pid-malformed.cg" --jit-dir "$scratch/jitdir" --stats -o "$scratch/pid.out" \
  2>"$scratch/err" || fail "pid-malformed with discovery: exit $?"
! grep -q 'perf-3999991.map' "$scratch/err" || fail "pid 3999991abc discovered perf-3999991.map: $(cat "$scratch/err")"
grep -q "pid-malformed.cg:4: expected pid: with a process id" "$scratch/err" ||
  fail "no warning about pid 3999991abc: $(cat "$scratch/err")"
# A well-formed pid finds it (the check above can fail).
sed 's/^pid: 3999991abc$/pid: 3999991/' "$bad/pid-malformed.cg" >"$scratch/pid-good.cg"
"$CG_INJECT" -i "$scratch/pid-good.cg" --jit-dir "$scratch/jitdir" --stats -o "$scratch/pid.out" \
  2>"$scratch/err" || fail "pid 3999991 with discovery: exit $?"
grep -q 'perf-3999991.map' "$scratch/err" || fail "pid 3999991 did not discover its map: $(cat "$scratch/err")"
checked=$((checked + 1))

for f in "$bad"/*.expect; do
  name=$(basename "$f" .expect)
  [[ -f $bad/$name.cg || $name == jitdump-* ]] || fail "$name.expect has no input"
done
((checked >= 16)) || fail "only $checked cases ran"
echo "checked $checked hostile inputs"
finish
