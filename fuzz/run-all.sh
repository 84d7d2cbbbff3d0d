#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR/fuzz for SECONDS each, seeded from the
# project's test data and, when present, ../shared/corpus. Fails on the first crash.
set -euo pipefail
build_dir=${1:?usage: run-all.sh BUILD_DIR SECONDS}
seconds=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)

seeds_for() {
  case "$1" in
    callgrind_*) echo "$root/tests/data" "$root/../shared/corpus/callgrind" ;;
    perf_map_*) echo "$root/tests/data" "$root/../shared/corpus/perfmap" ;;
    jitdump_*) echo "$root/tests/data" "$root/../shared/corpus/jitdump" ;;
    pipeline_*) echo "$root/tests/data/bad" "$root/../shared/corpus/callgrind" ;;
  esac
}

# pipeline_fuzzer reads "SOURCE\n--cg-inject-fuzz-profile--\nPROFILE": each capture directory
# gives seeds pairing its profile (zstd and plain) with its jitdump and with its perf map.
pipeline_seeds() {
  local out=$1 n=0 dir source profile
  for dir in "$root"/tests/data/*/*/; do
    for profile in "$dir"callgrind.out*.zst; do
      [[ -f $profile ]] || continue
      for source in "$dir"jit-*.dump "$dir"perf-*.map; do
        [[ -f $source ]] || continue
        n=$((n + 1))
        { cat "$source"; printf '\n--cg-inject-fuzz-profile--\n'; cat "$profile"; } >"$out/pair-$n-z"
        { cat "$source"; printf '\n--cg-inject-fuzz-profile--\n'; zstd -q -d -c "$profile"; } >"$out/pair-$n"
      done
    done
  done
}

shopt -s nullglob
ran=0
for fuzzer in "$build_dir"/fuzz/*_fuzzer; do
  name=$(basename "$fuzzer")
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  seed_dirs=()
  for d in $(seeds_for "$name"); do
    [[ -d "$d" ]] || continue
    # Seed files only (libFuzzer reads directories one level deep).
    find "$d" -type f -size -2M -exec cp -t "$work" {} + 2>/dev/null || true
  done
  mkdir -p "$work/corpus"
  max_len=65536
  if [[ $name == pipeline_* ]]; then
    pipeline_seeds "$work"
    max_len=300000  # whole captures (200 KB of text) are the interesting seeds
  fi
  # Every earlier finding first: each regression input must run clean.
  if [[ -d $root/fuzz/regressions/$name ]]; then
    "$fuzzer" "$root/fuzz/regressions/$name"/* >"$work/log" 2>&1 || {
      tail -n 40 "$work/log"
      echo "fuzz: $name fails a regression input (log above)" >&2
      exit 1
    }
  fi
  echo "fuzz: $name for ${seconds}s"
  "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=4096 \
    -artifact_prefix="$work/" "$work/corpus" "$work" >"$work/log" 2>&1 || {
    tail -n 40 "$work/log"
    # The work directory goes away on exit: keep the input that failed.
    kept=$build_dir/fuzz-artifacts/$name
    mkdir -p "$kept"
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$kept"/ 2>/dev/null || true
    echo "fuzz: $name FAILED (log above; the failing input is kept in $kept)" >&2
    exit 1
  }
  # Executions, coverage (cov: edges, ft: features) and corpus size of the last status line.
  grep -E '^#[0-9]+[[:space:]]' "$work/log" | tail -n 1 || true
  grep -E '^Done' "$work/log" | tail -n 1 || true
  rm -rf "$work"
  trap - EXIT
  ran=$((ran + 1))
done
echo "fuzz: $ran targets ran clean"
