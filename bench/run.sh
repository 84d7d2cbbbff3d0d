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
# runs on a profile of SIZE_MB/10 from the same generator. A second table times real captures,
# each with and without each of its sources in turn ($PAIRS pairs, default 5: the run without
# sources, then the run with, so both see the same minute; the ratio row is the median of the
# pairs' ratios): tests/data/'s (Node, Java, MoarVM, PHP, Mono, the test JIT; stored compressed)
# and the large captures of issue 35 (tsc, mcs, erlc), which bench/captures/NAME.sh re-creates in
# $CAPTURES/NAME (default $BENCH_DIR/captures/NAME; rows skipped with a message when absent), and
# a generated profile of SIZE_MB whose objects are real files of this machine (/usr/bin/node,
# libc...): the cost of reading the ELF objects a profile names. vs cat there compares with cat of
# the 100 MB.
set -euo pipefail

size_mb=${1:-100}
seed=${SEED:-1}
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
work=${BENCH_DIR:-/tmp/cg-inject-bench}
runs=${RUNS:-3}
pairs=${PAIRS:-5}
captures=${CAPTURES:-$work/captures}

for tool in zstd awk callgrind_annotate /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (bash scripts/setup-deps.sh)" >&2; exit 1; }
done
[[ -d $build ]] || meson setup "$build" "$repo" >/dev/null
# Name the targets: a bare compile would also build the e2e suite's Valgrind.
meson compile -C "$build" cg-inject bench/gen_profile bench/parse_floor >/dev/null
# Absolute: the record row runs it from a directory of its own.
build=$(cd "$build" && pwd)
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
  last_wall=$wall last_cpu=$cpu
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

# Real captures (tests/data/) and a generated profile whose objects are real files: these read the
# ELF objects the profile names (/usr/bin/node, libc...), which the rows above never do.
data=$repo/tests/data
real=$work/real
mkdir -p "$real"
# unzst SRC DEST: decompresses once.
unzst() { [[ -s $2 ]] || zstd -q -d -f "$1" -o "$2"; }
real_objects=()
for o in /usr/bin/node /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
  /usr/lib/x86_64-linux-gnu/libm.so.6 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1; do
  [[ -r $o ]] && real_objects+=("$o")
done
# run_once COMMAND...: one timed run; sets run_wall, run_cpu, run_rss, and pair_rc when it fails.
run_once() {
  local t0 t1
  rm -f "$out"
  t0=$(date +%s%N)
  /usr/bin/time -v -o "$work/time.txt" "$@" >"$out" 2>"$work/stderr.txt" || pair_rc=$?
  t1=$(date +%s%N)
  run_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  run_cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time.txt")
  run_rss=$(awk -F': ' '/Maximum resident/ { printf "%.0f", $2 / 1024 }' "$work/time.txt")
  rm -f "$out"
}
# row NAME BYTES WALL CPU RSS RC: a table row as measure prints it.
row() {
  awk -v n="$1" -v b="$2" -v w="$3" -v c="$4" -v r="$5" -v rc="$6" -v cat_mbps="$cat_mbps" 'BEGIN {
    status = rc == 0 ? "" : sprintf(" (exit %d)", rc)
    mbps = b / 1e6 / w
    printf "| %s%s | %d | %.2f | %.0f | %.2f | %d | %.1fx |\n", n, status, int(b / 1e6), w, mbps, c, r, cat_mbps / mbps
  }'
}
# real_pair NAME PROFILE SOURCE_OPTION SOURCE: the run without sources and the run with the
# source, in turn, $pairs times; a row for each (medians) and a row of the pairs' median ratios
# (issue 35's target: at most 2x the wall time of the run without sources, 64 MB peak RSS). Both
# write a file, as a pipeline does: only then does a run whose merged pieces make cycles read its
# input a second time (issue 33 item 7; to stdout it warns instead), and a jitdump's ELF images
# are written beside it.
real_pair() {
  local name=$1 profile=$2 option=$3 source=$4 b i
  b=$(stat -c %s "$profile")
  local without_walls=() without_cpus=() without_rsss=() with_walls=() with_cpus=() with_rsss=()
  local rc0=0 rc1=0 wall_ratios=() cpu_ratios=()
  for ((i = 0; i < pairs; i++)); do
    pair_rc=0
    run_once "$cg_inject" -q --no-discover -i "$profile" -o "$work/pair-out"
    rc0=$((rc0 | pair_rc)) pair_rc=0
    without_walls+=("$run_wall") without_cpus+=("$run_cpu") without_rsss+=("$run_rss")
    run_once "$cg_inject" -q --no-discover -i "$profile" "$option" "$source" -o "$work/pair-out"
    rc1=$((rc1 | pair_rc))
    with_walls+=("$run_wall") with_cpus+=("$run_cpu") with_rsss+=("$run_rss")
    wall_ratios+=("$(awk -v a="${with_walls[i]}" -v b="${without_walls[i]}" 'BEGIN { printf "%.3f", a / b }')")
    cpu_ratios+=("$(awk -v a="${with_cpus[i]}" -v b="${without_cpus[i]}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')")
  done
  row "$name, no sources" "$b" "$(median "${without_walls[@]}")" "$(median "${without_cpus[@]}")" \
    "$(median "${without_rsss[@]}")" "$rc0"
  row "$name, $option" "$b" "$(median "${with_walls[@]}")" "$(median "${with_cpus[@]}")" \
    "$(median "${with_rsss[@]}")" "$rc1"
  local cpu="-"
  [[ ! " ${cpu_ratios[*]} " =~ " - " ]] && cpu=$(printf '%.2fx' "$(median "${cpu_ratios[@]}")")
  printf '| (with / without sources, %d pairs) | | %.2fx | | %s | | |\n' "$pairs" \
    "$(median "${wall_ratios[@]}")" "$cpu"
}
# capture_pairs NAME DIR: real_pair for the capture bench/captures/NAME.sh made in DIR, once per
# source it holds; a message when there is none.
capture_pairs() {
  local name=$1 dir=$2 profile source
  profile=$(ls "$dir"/callgrind.out.[0-9]* 2>/dev/null | grep -E '/callgrind\.out\.[0-9]+$' | head -n 1 || true)
  if [[ -z $profile ]]; then
    echo "| $name capture: skipped, none in $dir (bash bench/captures/$name.sh $dir makes it) | | | | | | |"
    return
  fi
  for source in "$dir"/perf-*.map "$dir"/jit-*.dump; do
    [[ -e $source ]] || continue
    if [[ $source == *.map ]]; then
      real_pair "$name capture" "$profile" --perf-map "$source"
    else
      real_pair "$name capture" "$profile" --jitdump "$source"
    fi
  done
}
echo
echo "Real objects: the rows below read the ELF files their profiles name (${real_objects[*]:-none found})."
echo
echo "| step | MB | seconds | MB/s | CPU s | peak RSS MB | vs cat |"
echo "|---|---:|---:|---:|---:|---:|---:|"
if ((${#real_objects[@]})); then
  gdir=$work/$size_mb-s$seed-real
  if [[ ! -s $gdir/callgrind.out.4242 ]]; then
    mkdir -p "$gdir"
    "$build/bench/gen_profile" "$size_mb" "$gdir" "$seed" 60000 "${real_objects[@]}" >&2
  fi
  real_pair "generated, objects real files" "$gdir/callgrind.out.4242" --perf-map "$gdir/perf-4242.map"
fi
if command -v node >/dev/null && [[ -d $data/node ]]; then
  unzst "$data/node/basic/callgrind.out.zst" "$real/node-basic.cg"
  real_pair "Node 20 capture" "$real/node-basic.cg" --perf-map "$data/node/basic/perf-6390.map"
  unzst "$data/node/prof/callgrind.out.zst" "$real/node-prof.cg"
  unzst "$data/node/prof/jit-6765.dump.zst" "$real/jit-6765.dump"
  real_pair "Node 20 capture (--perf-prof)" "$real/node-prof.cg" --jitdump "$real/jit-6765.dump"
fi
if [[ -d $data/java ]]; then
  unzst "$data/java/callgrind.out.zst" "$real/java.cg"
  real_pair "Java 17 capture" "$real/java.cg" --perf-map "$data/java/perf-20880.map"
fi
if [[ -d $data/moar ]]; then
  unzst "$data/moar/callgrind.out.zst" "$real/moar.cg"
  # The map's moar-jit.PID directory sits beside it in tests/data/moar: code files are paired.
  real_pair "MoarVM capture" "$real/moar.cg" --perf-map "$data/moar/perf-25521.map"
fi
if [[ -d $data/php/function ]]; then
  unzst "$data/php/function/callgrind.out.zst" "$real/php.cg"
  unzst "$data/php/function/jit-2459.dump.zst" "$real/jit-2459.dump"
  real_pair "PHP capture" "$real/php.cg" --perf-map "$data/php/function/perf-2459.map"
  real_pair "PHP capture" "$real/php.cg" --jitdump "$real/jit-2459.dump"
fi
if [[ -d $data/mono ]]; then
  unzst "$data/mono/callgrind.out.zst" "$real/mono.cg"
  real_pair "Mono capture (small)" "$real/mono.cg" --perf-map "$data/mono/perf-6026.map"
fi
if [[ -d $data/x86_64/plain ]]; then
  unzst "$data/x86_64/plain/callgrind.out.zst" "$real/testjit.cg"
  real_pair "test JIT capture" "$real/testjit.cg" --jitdump "$data/x86_64/plain/jit-23987.dump"
fi

# The large captures (issue 35), re-created by bench/captures/NAME.sh: too large for the repository.
for name in tsc mcs erlc; do
  capture_pairs "$name" "$captures/$name"
done

# record of a Node program with two child processes (RECORD=0 skips it: about a minute under
# Valgrind): the whole tree's peak (/usr/bin/time: its largest process, a Valgrind'd node) and
# cg-inject's own (VmHWM, sampled every 0.1 s while it runs, injecting the three profiles).
if [[ ${RECORD:-1} != 0 ]] && command -v node >/dev/null && command -v valgrind >/dev/null; then
  rec=$work/record
  rm -rf "$rec"
  mkdir -p "$rec"
  t0=$(date +%s%N)
  (cd "$rec" && exec /usr/bin/time -v -o "$work/record.time" "$cg_inject" record -o "$rec/out" \
    -- --trace-children=yes -- node "$repo/bench/record_children.js" >"$work/record.log" 2>&1) &
  tpid=$!
  hwm=0
  while kill -0 "$tpid" 2>/dev/null; do
    for pid in $(pgrep -f "^$cg_inject record" || true); do
      v=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
      [[ -n $v && $v -gt $hwm ]] && hwm=$v
    done
    sleep 0.1
  done
  rc=0
  wait "$tpid" || rc=$?
  t1=$(date +%s%N)
  echo
  echo "| \`cg-inject record\` of node with two child processes | wall | CPU s | whole tree's peak RSS MB | cg-inject's peak RSS MB | profiles |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk -F': ' -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", (b - a) / 1e9 }')" \
      -v h="$((hwm / 1024))" -v n="$(ls "$rec"/out/*.jit 2>/dev/null | wc -l)" -v rc="$rc" '
    /User time|System time/ { cpu += $2 }
    /Maximum resident/ { rss = $2 / 1024 }
    END { printf "| record_children.js%s | %s | %.1f | %.0f | %d | %d |\n", rc ? " (exit " rc ")" : "", w, cpu, rss, h, n }' \
      "$work/record.time"
fi
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end"
