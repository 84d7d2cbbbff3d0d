#!/usr/bin/env bash
# The main job on a bundled sample: installs what is missing, builds cg-inject, injects the
# x86-64 test JIT's capture (tests/data/x86_64/instr: Callgrind with --dump-instr=yes plus the
# JIT's jitdump) and shows callgrind_annotate's top functions before and after.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
if [[ ! -f build-release/build.ninja ]]; then
  meson setup build-release --buildtype=release -Dtests=false >/dev/null
fi
meson compile -C build-release cg-inject >/dev/null

sample=tests/data/x86_64/instr
input=$sample/callgrind.out
jitdump=$(ls "$sample"/jit-*.dump | head -n 1)
output=$(mktemp -d)/callgrind.out.jit
trap 'rm -rf "$(dirname "$output")"' EXIT

echo "== before: callgrind_annotate $input (JIT code is bare addresses)"
callgrind_annotate --inclusive=yes "$input" | sed -n '/^Ir/,$p' | head -n 14
echo
echo "== build-release/cg-inject -i $input --jitdump $jitdump -o $output --stats"
build-release/cg-inject -i "$input" --jitdump "$jitdump" -o "$output" --stats
echo
echo "== after: callgrind_annotate $output (names, source files and lines from the jitdump)"
callgrind_annotate --inclusive=yes "$output" | sed -n '/^Ir/,$p' | head -n 14
