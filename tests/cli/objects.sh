#!/usr/bin/env bash
# Real objects named by `ob=`: whatever file a profile names, reading it never blocks and never
# reads more than a regular file (issue 22 item 8: a FIFO used to block open() forever).
source "$(dirname "$0")/lib.sh"

# An `ob=` that is a FIFO nobody writes to, with JIT code of a perf map at an address of a block of
# it, so cg-inject asks the object whether it holds that address.
mkfifo "$scratch/fifo.so"
profile=$scratch/fifo.cg
cat >"$profile" <<CG
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
positions: instr line
events: Ir
ob=$scratch/fifo.so
fl=???
fn=0x4000100
0x4000100 0 10
0x4000104 0 5
totals: 15
CG
printf '4000100 40 hot_js_function\n' >"$scratch/perf-4242.map"
# timeout: a blocked open() would otherwise hang the suite until meson's own timeout.
expect_exit 0 timeout 60 "$CG_INJECT" --no-discover --perf-map "$scratch/perf-4242.map" \
  -i "$profile" -o "$scratch/fifo.out" || true
[[ -s $scratch/fifo.out ]] || fail "FIFO object: no output written"
grep -q "fifo.so: not a regular file" "$scratch/err" ||
  fail "FIFO object: expected a warning naming it as not a regular file, got: $(head -c 400 "$scratch/err")"
grep -q '^totals: 15$' "$scratch/fifo.out" || fail "FIFO object: totals changed"

finish
