#!/bin/bash
# Captures Node 20 (x86-64) running workload.js under the bundled Callgrind (--dump-instr=yes):
#   capture.sh VALGRIND_PREFIX OUT_DIR [NODE]
# OUT_DIR/basic/: node --perf-basic-prof (V8 writes /tmp/perf-PID.map)
# OUT_DIR/prof/:  node --perf-prof (V8 writes jit-PID.dump in the working directory)
# each with callgrind.out (Callgrind's name without the pid), the map or dump named after the pid,
# and CMDLINE.txt.
set -euo pipefail
vg=$(cd "${1:?usage: capture.sh VALGRIND_PREFIX OUT_DIR [NODE]}" && pwd -P)
out=${2:?}
node=${3:-$(command -v node)}
here=$(cd "$(dirname "$0")" && pwd)
unset MALLOC_PERTURB_
mkdir -p "$out"
out=$(cd "$out" && pwd)
for mode in basic prof; do
  scratch=$(mktemp -d)
  cp "$here/workload.js" "$scratch/"
  flag=--perf-prof
  [ $mode = prof ] || flag=--perf-basic-prof
  # --fair-sched=yes as `record` sets it: V8 optimizes on a background thread, which under the
  # default scheduling may never run, and then no optimized code runs (docs/runtimes.md).
  cmd=("$vg/bin/valgrind" --tool=callgrind --dump-instr=yes --fair-sched=yes
    --callgrind-out-file=callgrind.out.%p "$node" "$flag" workload.js)
  start=$(date +%s)
  (cd "$scratch" && "${cmd[@]}" >stdout.txt 2>valgrind.txt) || {
    cat "$scratch/valgrind.txt" >&2
    exit 1
  }
  pid=$(ls "$scratch" | sed -n 's/^callgrind\.out\.\([0-9]*\)$/\1/p')
  rm -rf "${out:?}/$mode"
  mkdir -p "$out/$mode"
  mv "$scratch/callgrind.out.$pid" "$out/$mode/callgrind.out"
  if [ $mode = basic ]; then mv "/tmp/perf-$pid.map" "$out/$mode/"; else mv "$scratch/jit-$pid.dump" "$out/$mode/"; fi
  {
    echo "# node $("$node" --version) under Callgrind (cwd: a scratch directory with workload.js; pid $pid)"
    echo "${cmd[*]}"
    echo "# stdout: $(cat "$scratch/stdout.txt")"
    echo "# wall time: $(( $(date +%s) - start )) s"
  } >"$out/$mode/CMDLINE.txt"
  rm -rf "$scratch"
done
