#!/bin/bash
# Regression test for subprojects/valgrind-patches/0001-arm64-plain-B-is-not-a-call.patch: runs
# branch.c (AArch64, -O0) under the bundled arm64 Callgrind and checks its call graph.
#   check.sh VALGRIND_PREFIX [OUT_FILE]
# Expected (see branch.c): fib is entered by 177 calls (1 from main, 176 recursive: fib(10) makes
# 177 calls in all) and main by one. Without the patch each of fib's 89 base cases adds a phantom
# call (its `b` to the epilogue); see unpatched.txt. The tail call tail_to_leaf -> leaf is a call
# either way: Callgrind turns a jump to another named function's entry into a call (x86-64 does
# the same), so leaf is entered twice.
set -euo pipefail
vg=$(cd "${1:?usage: check.sh VALGRIND_PREFIX [OUT_FILE]}" && pwd -P)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 missing (apt-get install qemu-user)"; exit 77; }
aarch64-linux-gnu-gcc -O0 -g -o "$tmp/branch" "$here/branch.c"
(cd "$tmp" && env VALGRIND_LIB="$vg/libexec/valgrind" VALGRIND_LAUNCHER="$vg/bin/valgrind" \
  setarch -R qemu-aarch64 -cpu cortex-a72 -L /usr/aarch64-linux-gnu "$vg/libexec/valgrind/callgrind-arm64-linux" \
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
check "calls into leaf" "$(calls_into '^branch:leaf$')" 2
check "calls into main (any recursion level)" "$(calls_into "^branch:main('[0-9]+)?$")" 1
check "calls made by fib to anything but fib" "$(awk '$2 ~ /^branch:fib/ && $4 !~ /^branch:fib/' "$tmp/edges" | wc -l)" 0
exit $status
