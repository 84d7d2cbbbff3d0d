#!/bin/bash
# Regression test for subprojects/valgrind-patches/0001-arm64-plain-B-is-not-a-call.patch: runs
# branch.c (AArch64, -O0) under the bundled arm64 Callgrind and checks its call graph.
#   check.sh VALGRIND_PREFIX [OUT_FILE]
# Expected (see branch.c): fib is entered by 177 calls (1 from main, 176 recursive: fib(10) makes
# 177 calls in all), leaf by exactly one call from main, tail_to_leaf calls nothing, and nothing
# calls main. Without the patch each of fib's 89 base cases adds a phantom call (its `b` to the
# epilogue) and tail_to_leaf calls leaf; see unpatched.txt.
set -euo pipefail
vg=$(cd "${1:?usage: check.sh VALGRIND_PREFIX [OUT_FILE]}" && pwd -P)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 missing (apt-get install qemu-user)"; exit 77; }
aarch64-linux-gnu-gcc -O0 -g -o "$tmp/branch" "$here/branch.c"
(cd "$tmp" && env VALGRIND_LIB="$vg/libexec/valgrind" VALGRIND_LAUNCHER="$vg/bin/valgrind" \
  qemu-aarch64 -cpu cortex-a72 -L /usr/aarch64-linux-gnu "$vg/libexec/valgrind/callgrind-arm64-linux" \
  --tool=callgrind --callgrind-out-file=callgrind.out ./branch 2>valgrind.txt) ||
  { cat "$tmp/valgrind.txt"; echo "FAIL: branch under callgrind"; exit 1; }
python3 "$here/../cgsummary.py" --objects '^branch:' "$tmp/callgrind.out" | grep '^call' |
  sed 's/ Ir=[0-9]*//' >"$tmp/edges"
cat "$tmp/edges"
[ -z "${2:-}" ] || cp "$tmp/edges" "$2"
status=0
check() { # DESCRIPTION ACTUAL EXPECTED
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected $3, got $2"; status=1; else echo "ok: $1 = $3"; fi
}
calls_into() { awk -v re="$1" '$4 ~ re { sub("calls=", "", $5); n += $5 } END { print n + 0 }' "$tmp/edges"; }
check "calls into fib (any recursion level)" "$(calls_into "^branch:fib('[0-9]+)?$")" 177
check "calls into leaf" "$(calls_into '^branch:leaf$')" 1
check "calls made by tail_to_leaf" "$(grep -c '^call branch:tail_to_leaf ' "$tmp/edges" || true)" 0
check "calls into main" "$(calls_into "^branch:main")" 1
check "main's caller" "$(awk '$4 == "branch:main" { print $2 }' "$tmp/edges")" "libc.so.6:(below main)"
exit $status
