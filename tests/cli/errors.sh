#!/usr/bin/env bash
# Malformed inputs: each gets "cg-inject: FILE:LINE: ..." on stderr, exit 1, and no output, and an
# existing output file is left as it was.
source "$(dirname "$0")/lib.sh"

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
finish
