#!/bin/bash
# e2e check with a real JIT: Node 20 under the bundled x86-64 Callgrind (capture.sh), then how
# much of the cost in unnamed code (ob=???) the perf map (--perf-basic-prof) and the jitdump
# (--perf-prof) cover. Node's code addresses change from run to run, so this is not compared with
# tests/data/node/ (those captures are for the fast tests); the coverage must stay >= 99%.
#   check.sh VALGRIND_PREFIX
# TODO(lead): when the injector works, also run cg-inject on both captures here and require that
# >= 99% of the map-covered 0x... cost carries real names and the totals are identical.
set -euo pipefail
vg=${1:?usage: check.sh VALGRIND_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "node missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/capture.sh" "$vg" "$tmp"
status=0
for mode in basic prof; do
  source_args=(--perf-map "$tmp"/basic/perf-*.map)
  [ $mode = prof ] && source_args=(--jitdump "$tmp"/prof/jit-*.dump)
  line=$(python3 "$here/coverage.py" "$tmp/$mode/callgrind.out" "${source_args[@]}")
  grep '^#' "$tmp/$mode/CMDLINE.txt"
  echo "$mode: $line"
  pct=$(echo "$line" | sed -n 's/.*(\([0-9.]*\)% of unknown).*/\1/p')
  # The capture must have run JIT code (more than 1% of its cost in ob=???: about 6% when V8's
  # optimized code runs, 0.0004% when its background compiler never ran, which --fair-sched=yes
  # prevents), and the sources must cover at least 99% of that cost.
  uncovered_ok=$(echo "$line" | awk '{ for (i = 1; i < NF; i++) { if ($i == "total") t = $(i + 1);
    if ($i == "unknown") u = $(i + 1); if ($i == "covered") c = $(i + 1) }
    print (t > 0 && u > 0.01 * t && u - c <= 0.01 * u) ? 1 : 0 }')
  if [ "$uncovered_ok" != 1 ]; then
    echo "FAIL $mode: JIT code is at most 1% of the run, or the sources cover only $pct% of it"
    status=1
  fi
  if ! grep -q '^# stdout: 2670480$' "$tmp/$mode/CMDLINE.txt"; then
    echo "FAIL $mode: workload.js printed something else than 2670480"
    status=1
  fi
done
exit $status
