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
  esac
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
  echo "fuzz: $name for ${seconds}s"
  "$fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 \
    -artifact_prefix="$work/" "$work/corpus" "$work" >"$work/log" 2>&1 || {
    tail -n 40 "$work/log"
    echo "fuzz: $name FAILED (log above)" >&2
    exit 1
  }
  grep -E '^(#[0-9]+ +DONE|Done)' "$work/log" | tail -n 1 || true
  rm -rf "$work"
  trap - EXIT
  ran=$((ran + 1))
done
echo "fuzz: $ran targets ran clean"
