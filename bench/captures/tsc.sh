#!/usr/bin/env bash
# The TypeScript compiler under Node 20, captured as a new user would (issue 33):
#
#   bash bench/captures/tsc.sh OUTDIR [MODULES]
#
# Generates a TypeScript project of MODULES modules (default 60, bench/captures/tsc_project.js)
# in OUTDIR/project and compiles it with `tsc -p .` under `cg-inject record`, with V8 writing both
# a perf map (--perf-basic-prof) and a jitdump (--perf-prof, code bytes and lines). OUTDIR then
# holds callgrind.out.PID (raw), callgrind.out.PID.jit (named from the jitdump), perf-PID.map
# and jit-PID.dump, and CMDLINE.txt with what ran. On a 2-core machine about 10 minutes; at 60
# modules Callgrind's file is about 26 MB, the jitdump about 16 MB (its code moves and reused
# addresses are what issue 33's defects 1-4 were found on).
#
# Environment: CG_INJECT (default: cg-inject from PATH, else build/cg-inject), VALGRIND (passed
# as --valgrind; default: record's own choice, the bundled Valgrind when installed), TSC (default
# /work/tools/js/node_modules/typescript/bin/tsc, else tsc from PATH), NODE (default node).
set -euo pipefail
out=${1:?usage: tsc.sh OUTDIR [MODULES]}
modules=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

cg_inject=${CG_INJECT:-}
if [[ -z $cg_inject ]]; then
  cg_inject=$(command -v cg-inject || true)
  [[ -n $cg_inject ]] || cg_inject=$repo/build/cg-inject
fi
[[ -x $cg_inject ]] || { echo "tsc.sh: no cg-inject at $cg_inject (set CG_INJECT)" >&2; exit 1; }
tsc=${TSC:-/work/tools/js/node_modules/typescript/bin/tsc}
[[ -f $tsc ]] || tsc=$(command -v tsc || true)
[[ -n $tsc && -f $tsc ]] || { echo "tsc.sh: no TypeScript compiler (npm install typescript@5.9.3, the version of the 2026-11-29 capture; set TSC)" >&2; exit 1; }
node=${NODE:-node}
command -v "$node" >/dev/null || { echo "tsc.sh: no node" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/project"
"$node" "$here/tsc_project.js" "$out/project" "$modules"

record=("$cg_inject" record -o "$out")
[[ -n ${VALGRIND:-} ]] && record+=(--valgrind "$VALGRIND")
# The flags a V8 user gives for perf: both files, and interpreted frames as code of their own.
program=("$node" --perf-prof --perf-basic-prof --interpreted-frames-native-stack "$tsc" -p .)
{
  echo "# made by bench/captures/tsc.sh $modules in $out/project"
  echo "node $("$node" --version), typescript $("$node" "$tsc" --version)"
  echo "${record[*]} -- ${program[*]}"
} >"$out/CMDLINE.txt"
start=$(date +%s)
(cd "$out/project" && "${record[@]}" -- "${program[@]}") 2>&1 | tee -a "$out/CMDLINE.txt"
echo "# $(( $(date +%s) - start )) s" >>"$out/CMDLINE.txt"
# V8 writes the jitdump in the working directory; record moves it beside the profile. The
# compiled project's output is not part of the capture.
rm -rf "$out/project/out"
ls -l "$out"
