#!/usr/bin/env bash
# The pipeline benchmark: one table from one run.
#
#   bash bench/run.sh [SIZE_MB]        # default 100; 1000 for the 1 GB row set
#
# Builds cg-inject and bench/gen_profile (in $BUILD_DIR, default build/), generates a profile of
# SIZE_MB megabytes (10^6 bytes) with a matching perf map and jitdump (bench/profile_generator.h,
# seed $SEED, default 1; kept in $BENCH_DIR, default /tmp/cg-inject-bench, and reused), then times
# each step $RUNS times (default 3) and prints the median wall time, MB/s of the uncompressed
# profile, CPU time (user + sys) and peak RSS (/usr/bin/time -v). Every step writes its output to
# a file in $BENCH_DIR, so all pay the same write cost. callgrind_annotate (Perl, about 1 MB/s)
# runs on a profile of SIZE_MB/10 from the same generator.
set -euo pipefail

size_mb=${1:-100}
seed=${SEED:-1}
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
work=${BENCH_DIR:-/tmp/cg-inject-bench}
runs=${RUNS:-3}

for tool in zstd awk callgrind_annotate /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (bash scripts/setup-deps.sh)" >&2; exit 1; }
done
[[ -d $build ]] || meson setup "$build" "$repo" >/dev/null
# Name the targets: a bare compile would also build the e2e suite's Valgrind.
meson compile -C "$build" cg-inject bench/gen_profile bench/parse_floor >/dev/null
cg_inject=$build/cg-inject

# Generates SIZE into $work/SIZE-sSEED once; prints the directory.
inputs() {
  local dir=$work/$1-s$seed
  if [[ ! -s $dir/callgrind.out.4242.zst ]]; then
    mkdir -p "$dir"
    "$build/bench/gen_profile" "$1" "$dir" "$seed" >&2
    zstd -q -f -3 -T0 "$dir/callgrind.out.4242" -o "$dir/callgrind.out.4242.zst"
  fi
  echo "$dir"
}
dir=$(inputs "$size_mb")
small_mb=$(( size_mb >= 10 ? size_mb / 10 : 1 ))
small=$(inputs "$small_mb")
in=$dir/callgrind.out.4242
out=$work/out
bytes=$(stat -c %s "$in")
small_bytes=$(stat -c %s "$small/callgrind.out.4242")

median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

cat_mbps=
# measure NAME INPUT_BYTES COMMAND... (stdout of COMMAND goes to $out)
measure() {
  local name=$1 input_bytes=$2
  shift 2
  local walls=() cpus=() rsss=() rc=0
  for ((i = 0; i < runs; i++)); do
    rm -f "$out" "$out.zst"
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$out" 2>"$work/stderr.txt" || rc=$?
    t1=$(date +%s%N)
    walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')")
    cpus+=("$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time.txt")")
    rsss+=("$(awk -F': ' '/Maximum resident/ { printf "%.0f", $2 / 1024 }' "$work/time.txt")")
  done
  local wall cpu rss
  wall=$(median "${walls[@]}")
  cpu=$(median "${cpus[@]}")
  rss=$(median "${rsss[@]}")
  awk -v n="$name" -v mb="$(( input_bytes / 1000000 ))" -v w="$wall" -v c="$cpu" -v r="$rss" \
      -v b="$input_bytes" -v cat_mbps="$cat_mbps" -v rc="$rc" 'BEGIN {
    status = rc == 0 ? "" : sprintf(" (exit %d)", rc)
    mbps = b / 1e6 / w
    if (cat_mbps == "") cat_mbps = mbps
    printf "| %s%s | %d | %.2f | %.0f | %.2f | %d | %.1fx |\n", n, status, mb, w, mbps, c, r, cat_mbps / mbps
  }'
  [[ -n $cat_mbps ]] || cat_mbps=$(awk -v b="$input_bytes" -v w="$wall" 'BEGIN { print b / 1e6 / w }')
  rm -f "$out" "$out.zst"
}

map=$dir/perf-4242.map
dump=$dir/jit-4242.dump
echo "cg-inject pipeline benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "build: $build ($(python3 -c "import json,sys; print([o['value'] for o in json.load(open(sys.argv[1])) if o['name'] == 'buildtype'][0])" "$build/meson-info/intro-buildoptions.json" 2>/dev/null || echo '?')), commit $(git -C "$repo" rev-parse --short HEAD)"
echo "input: $in, $(( bytes / 1000000 )) MB (zstd: $(( $(stat -c %s "$in.zst") / 1000000 )) MB);" \
  "perf map $(wc -l <"$map") entries; jitdump $(( $(stat -c %s "$dump") / 1000000 )) MB; seed $seed"
echo "median of $runs runs; MB/s of the uncompressed profile; CPU = user + sys; RSS = peak resident set;"
echo "vs cat = how many times slower per byte than cat"
echo
echo "| step | MB | seconds | MB/s | CPU s | peak RSS MB | vs cat |"
echo "|---|---:|---:|---:|---:|---:|---:|"
measure "cat" "$bytes" cat "$in"
measure "zstd -d" "$bytes" zstd -d -q -c "$in.zst"
measure "awk rename of fn= lines" "$bytes" awk '/^c?fn=/ { sub(/ 0x/, " jit_0x") } { print }' "$in"
measure "parse floor: split lines, parse every number, copy" "$bytes" \
  "$build/bench/parse_floor" "$in"
measure "cg-inject, no sources" "$bytes" "$cg_inject" -q --no-discover -i "$in" -o -
measure "cg-inject --perf-map" "$bytes" "$cg_inject" -q --no-discover -i "$in" --perf-map "$map" -o -
measure "cg-inject --jitdump" "$bytes" "$cg_inject" -q --no-discover -i "$in" --jitdump "$dump" -o -
measure "cg-inject --perf-map, .zst in and out" "$bytes" \
  "$cg_inject" -q --no-discover -i "$in.zst" --perf-map "$map" -o "$out.zst"
measure "callgrind_annotate ($small_mb MB profile)" "$small_bytes" \
  callgrind_annotate "$small/callgrind.out.4242"
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end"
