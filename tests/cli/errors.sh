#!/usr/bin/env bash
# Malformed inputs: each gets "cg-inject: FILE:LINE: ..." on stderr, exit 1, and no output, and an
# existing output file is left as it was.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2

check_bad() {
  local name=$1 line=$2 content=$3
  printf '%b' "$content" >"$scratch/$name"
  echo "previous" >"$scratch/$name.out"
  expect_exit 1 "$CG_INJECT" --no-discover -i "$scratch/$name" -o "$scratch/$name.out" || return 0
  grep -qE "^cg-inject: $scratch/$name:$line: " "$scratch/err" ||
    fail "$name: expected an error at line $line, got: $(cat "$scratch/err")"
  [[ $(cat "$scratch/$name.out") == previous ]] || fail "$name: existing output was touched"
}

check_bad bad-cost 4 '# callgrind format\nevents: Ir\nfn=main\n12 abc\n'
check_bad calls-without-cost 6 '# callgrind format\nevents: Ir\nfn=main\ncfn=f\ncalls=1 2\n'

# An id used without a definition (old Callgrinds wrote cob=(8) so) is tolerated as an empty name
# with a located warning, the way callgrind_annotate and KCachegrind read it.
printf '# callgrind format\nevents: Ir\nfn=(7)\n1 1\n' >"$scratch/unknown-name-id"
expect_exit 0 "$CG_INJECT" --no-discover -i "$scratch/unknown-name-id" -o "$scratch/unknown.out" &&
  { grep -qF "$scratch/unknown-name-id:3: undefined function id (7)" "$scratch/err" ||
    fail "undefined id: no located warning: $(cat "$scratch/err")"; }
check_bad too-many-costs 4 '# callgrind format\nevents: Ir\nfn=main\n1 1 2\n'

# A Callgrind profile cut off (killed run, full disk) is refused with what is missing, whether it
# ends at a line boundary or mid-line; --force writes it with a warning, the true totals: and the
# input's summary:.
capture=$SOURCE_ROOT/tests/data/x86_64/instr/callgrind.out.zst
zstd -q -d -c "$capture" >"$scratch/whole"
head -n 12000 "$scratch/whole" >"$scratch/cut-lines"
# Line 12103 is "0x224a0 131 223": cut after "22", still a well-formed cost line.
head -c $(($(head -n 12102 "$scratch/whole" | wc -c) + 14)) "$scratch/whole" >"$scratch/cut-mid"
[[ $(tail -n 1 "$scratch/cut-mid") == "0x224a0 131 22" ]] || fail "cut-mid: $(tail -n 1 "$scratch/cut-mid")"
for cut in cut-lines cut-mid; do
  echo previous >"$scratch/$cut.out"
  expect_exit 1 "$CG_INJECT" --no-discover -i "$scratch/$cut" -o "$scratch/$cut.out" &&
    { grep -qE "^cg-inject: $scratch/$cut:[0-9]+: expected totals: at the end of part 1 \(Callgrind writes it last\), got end of file: the profile is cut off; its costs add up to [0-9]+, its summary: says '242060'" "$scratch/err" ||
      fail "$cut: $(cat "$scratch/err")"; }
  [[ $(cat "$scratch/$cut.out") == previous ]] || fail "$cut: output written"
done
expect_exit 0 "$CG_INJECT" --no-discover --force -i "$scratch/cut-lines" -o "$scratch/forced.out" &&
  { grep -q "the profile is cut off.*; written anyway (--force)" "$scratch/err" || fail "forced: no warning"; }
sum=$(awk '/^fn=/{f=1} /^calls=/{skip=1; next} /^[0-9+*-]/{ if (skip) {skip=0; next} s+=$NF } END{print s}' "$scratch/cut-lines")
# One summary: per part, the input's (issue 23 item 6: its percentages read as the input's).
[[ $(grep -E '^(summary|totals):' "$scratch/forced.out") == "summary: 242060"$'\n'"totals: $sum" ]] ||
  fail "forced: not the input's summary: and the true totals: $sum: $(grep -E '^(summary|totals):' "$scratch/forced.out")"
"$CG_INJECT" --no-discover -i "$scratch/forced.out" -o /dev/null 2>"$scratch/err" ||
  fail "forced output does not read back cleanly: $(cat "$scratch/err")"

# zstd input is recognized by content, not by name; a truncated frame is an error.
printf '# callgrind format\nevents: Ir\nfn=main\n1 5\n' | zstd -q -c >"$scratch/plain-name"
expect_exit 0 "$CG_INJECT" --no-discover -i "$scratch/plain-name" -o "$scratch/z.out" &&
  grep -q '^fn=.*main' "$scratch/z.out" || fail "zstd input by magic"
head -c 12 "$scratch/plain-name" >"$scratch/cut.zst"
expect_exit 1 "$CG_INJECT" --no-discover -i "$scratch/cut.zst" -o "$scratch/cut.out" || true
[[ ! -e $scratch/cut.out ]] || fail "truncated zstd left an output"

# stdin in, stdout out.
printf '# callgrind format\nevents: Ir\nfn=main\n1 5\n' |
  "$CG_INJECT" --no-discover -i - >"$scratch/stdout.out" 2>"$scratch/err" || fail "stdin to stdout"
grep -q '^1 5$' "$scratch/stdout.out" || fail "stdin to stdout lost the cost line"

# An error of the injector, which runs on a thread of its own when a core is free: two call sites
# into pieces of one JIT function merge into one edge whose count passes 2^64. The run fails with
# the injector's message as on one thread, at the fn= line of the block whose records overflowed
# (line 4, main's), the output is untouched, and no temporary remains.
printf 'positions: line\nevents: Ir\nfl=main.c\nfn=main\n5 10\ncob=???\ncfi=???\ncfn=0x0000000000001000\ncalls=9223372036854775808 0\n5 1\ncob=???\ncfi=???\ncfn=0x0000000000001010\ncalls=9223372036854775808 0\n5 1\nob=???\nfl=???\nfn=0x0000000000001000\n0 1\nfn=0x0000000000001010\n0 1\n' \
  >"$scratch/merge-overflow.cg"
printf '1000 100 f\n' >"$scratch/merge-overflow.map"
mkdir "$scratch/merge-overflow"
echo previous >"$scratch/merge-overflow/out"
expect_exit 1 "$CG_INJECT" --no-discover -i "$scratch/merge-overflow.cg" \
  --perf-map "$scratch/merge-overflow.map" -o "$scratch/merge-overflow/out" &&
  { grep -qF "$scratch/merge-overflow.cg:4: expected cost and count sums below 2^64, got an overflow merging the records of one function" "$scratch/err" ||
    fail "merge overflow: $(cat "$scratch/err")"; }
[[ $(cat "$scratch/merge-overflow/out") == previous ]] || fail "merge overflow: output touched"
[[ $(ls -A "$scratch/merge-overflow") == out ]] || fail "merge overflow: left $(ls -A "$scratch/merge-overflow")"
finish
