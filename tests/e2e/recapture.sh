#!/bin/bash
# Re-runs the stored captures with the bundled Valgrind and checks that every stable property
# still agrees with tests/data/ARCH/ (or, with --store, replaces the stored captures):
#   recapture.sh [--store] ARCH BIN_DIR VALGRIND_PREFIX
# Compared: the set of files per scenario (pids taken out of the names), the perf maps, the
# jitdumps without timestamps/pid/tid, the program output, and cgsummary.py's canonical call graph
# (self cost per function, call counts per edge, inclusive cost of edges into JIT code or the
# helper library) restricted to the JIT code, the program and the helper library.
# Not compared, because they change from run to run: pids, jitdump timestamps, the cost of libc
# and ld.so (thread start-up and futex waits vary) and so the totals and the inclusive cost of
# main and of edges into libc.
set -euo pipefail
store=0
if [ "${1:-}" = --store ]; then store=1; shift; fi
arch=${1:?usage: recapture.sh [--store] ARCH BIN_DIR VALGRIND_PREFIX}
bin=${2:?}
vg=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
stored=$here/../data/$arch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$here/capture.sh" "$arch" "$bin" "$vg" "$tmp/new"

if [ $store = 1 ]; then
  mkdir -p "$stored"
  for dir in "$tmp"/new/*/; do
    scenario=$(basename "$dir")
    rm -rf "${stored:?}/$scenario"
    cp -r "$dir" "$stored/$scenario"
    for f in "$stored/$scenario"/*callgrind.out*; do
      if [ -s "$f" ]; then zstd -q -19 --rm "$f"; fi
    done
  done
  echo "recapture.sh: stored $(ls "$tmp/new" | wc -l) scenarios in $stored"
  exit 0
fi

keep='^(jit|twin|libcgjit_helpers\.so):|^\?\?\?:0x000000005b'
incl='^(libcgjit_helpers\.so|\?\?\?):'
status=0
# A file list with pids replaced by PID and .zst dropped.
list_files() { ls "$1" | sed -e 's/\.zst$//' -e 's/-[0-9]*\.\(map\|dump\)$/-PID.\1/' | sort; }
for dir in "$stored"/*/; do
  scenario=$(basename "$dir")
  new=$tmp/new/$scenario
  fail() { echo "FAIL $arch/$scenario: $*"; status=1; }
  if [ ! -d "$new" ]; then fail "not re-captured"; continue; fi
  diff <(list_files "$dir") <(list_files "$new") >"$tmp/d" || { fail "files differ"; cat "$tmp/d"; }
  for f in "$dir"*callgrind.out*; do
    name=$(basename "${f%.zst}")
    [ -s "$new/$name" ] || continue
    python3 "$here/cgsummary.py" --objects "$keep" --incl-objects "$incl" "$f" >"$tmp/old.sum"
    python3 "$here/cgsummary.py" --objects "$keep" --incl-objects "$incl" "$new/$name" >"$tmp/new.sum"
    diff "$tmp/old.sum" "$tmp/new.sum" >"$tmp/d" || { fail "$name call graph differs"; head -40 "$tmp/d"; }
  done
  diff "$dir"perf-*.map "$new"/perf-*.map >"$tmp/d" || { fail "perf map differs"; cat "$tmp/d"; }
  diff <(python3 "$here/jitdump_dump.py" "$dir"jit-*.dump) \
    <(python3 "$here/jitdump_dump.py" "$new"/jit-*.dump) >"$tmp/d" || { fail "jitdump differs"; cat "$tmp/d"; }
  diff <(grep '^# stdout' "$dir/CMDLINE.txt") <(grep '^# stdout' "$new/CMDLINE.txt") >"$tmp/d" ||
    { fail "program output differs"; cat "$tmp/d"; }
  [ $status = 1 ] || echo "ok   $arch/$scenario"
done
exit $status
