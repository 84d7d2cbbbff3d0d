#!/bin/bash
# The truth check's table (docs/call-tracking.md): run.sh for every runtime under each Valgrind,
# one Markdown row per runtime and Valgrind with each check's verdict and numbers, and the time
# of the two recordings (with the check). Rows say "bundled" or "stock", not which build: where
# the table is published, say which (the bundled build's cache directory names its patches'
# hash). Nothing is asserted: the table is what the runs measured.
#   table.sh CG_INJECT BUNDLED_VALGRIND STOCK_VALGRIND [RUNTIME...]
# (BUNDLED_VALGRIND: build-dir/tests/e2e/valgrind-x86_64/bin/valgrind; STOCK_VALGRIND:
# /usr/bin/valgrind). Runtimes that are not installed get a row saying so.
set -uo pipefail
usage='usage: table.sh CG_INJECT BUNDLED_VALGRIND STOCK_VALGRIND [RUNTIME...]'
cg_inject=${1:?$usage}
bundled=${2:?$usage}
stock=${3:?$usage}
shift 3
runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(node java php erlang mono moarvm)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo '| runtime | Valgrind | bound (max inclusive) | chain (caller >= callee) | annotate (callgrind_annotate) | entry (>= 90% of own cost) | time (baseline + run) |'
echo '|---|---|---|---|---|---|---|'
for runtime in "${runtimes[@]}"; do
  for which in bundled stock; do
    vg=$bundled
    [ $which = stock ] && vg=$stock
    json=$tmp/$runtime.$which.json
    log=$tmp/$runtime.$which.log
    start=$(date +%s)
    rc=0
    bash "$here/run.sh" "$cg_inject" "$vg" "$runtime" --json "$json" >"$log" 2>&1 || rc=$?
    secs=$(( $(date +%s) - start ))
    cat "$log" >&2
    if [ $rc = 77 ]; then
      echo "| $runtime | $which | not installed | | | | |"
      continue
    fi
    if [ ! -s "$json" ]; then
      echo "| $runtime | $which | $(grep -m1 '^FAIL' "$log" | cut -c1-120) | | | | ${secs} s |"
      continue
    fi
    python3 - "$json" "$which" "$secs" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
c = r['checks']
def cell(name):
    if name not in c:
        return ''
    x = c[name]
    return ('ok' if x['ok'] else '**FAIL**') + ': ' + x['text'].replace('|', '/')
chain = cell('chain')
if 'flat' in c:
    chain += '<br>flat: ' + cell('flat')
print(f"| {r['runtime']} | {sys.argv[2]} | {cell('bound')} | {chain} | {cell('annotate')} | "
      f"{cell('entry')} | "
      f"{sys.argv[3]} s |")
EOF
  done
done
