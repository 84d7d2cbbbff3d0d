#!/bin/bash
# VEX's emulation of x86-64 instructions that BEAMJIT relies on (issue 32 item 3).
#   check.sh VALGRIND_PREFIX
# bt_below_sp.c runs BT/BTS/BTR/BTC on registers with RSP inside live data; its output under the
# bundled Valgrind (Nulgrind and Callgrind, as `cg-inject record` runs it) must be the hardware's,
# word for word, and leave the bytes below RSP alone. Valgrind 3.19 without patch 0011 writes
# every register operand to RSP-288: 600 of 600 runs of an instruction change a byte there.
set -euo pipefail
vg=$(cd "${1:?usage: check.sh VALGRIND_PREFIX}" && pwd -P)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
unset MALLOC_PERTURB_
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

gcc -O1 -Wall -Werror "$here/bt_below_sp.c" -o bt_below_sp
./bt_below_sp >native.txt || { cat native.txt; echo "FAIL: the native run changed the bytes below RSP"; exit 1; }
for tool in none callgrind; do
  rc=0
  options=(-q --tool=$tool)
  [ $tool = none ] || options+=(--callgrind-out-file=/dev/null)
  "$vg/bin/valgrind" "${options[@]}" ./bt_below_sp >$tool.txt 2>$tool.err || rc=$?
  [ $rc = 0 ] || fail "$tool: exit status $rc: $(grep -m 3 changed $tool.txt || head -n 3 $tool.err)"
  cmp -s native.txt $tool.txt ||
    fail "$tool: $(diff native.txt $tool.txt | grep -c '^>') lines differ from the hardware's, first: $(diff native.txt $tool.txt | grep -m 1 '^>')"
done
[ $failed = 0 ] && echo "PASS: $(grep -c cf= native.txt) bit tests as the hardware does them, the bytes below RSP kept"
exit $failed
