#!/usr/bin/env bash
# The main job on a bundled sample: installs what is missing, builds cg-inject, injects the
# x86-64 test JIT's capture (tests/data/x86_64/instr: Callgrind with --dump-instr=yes plus the
# JIT's jitdump) and shows callgrind_annotate's top functions before and after, then the machine
# code of one JIT function with its source lines, from the ELF image cg-inject wrote beside the
# output (what KCachegrind's "Machine Code" tab shows).
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
if [[ ! -f build-release/build.ninja ]]; then
  meson setup build-release --buildtype=release -Dtests=false >/dev/null
fi
meson compile -C build-release cg-inject >/dev/null

sample=tests/data/x86_64/instr
input=$sample/callgrind.out.zst
jitdump=$(ls "$sample"/jit-*.dump | head -n 1)
output=$(mktemp -d)/callgrind.out.jit
trap 'rm -rf "$(dirname "$output")"' EXIT

echo "== before: callgrind_annotate --inclusive=yes $input"
echo "   JIT code is a bare address in an unknown object:"
annotate() {
  zstd -q -d -c -f "$1" | callgrind_annotate --inclusive=yes --threshold=100 /dev/stdin 2>/dev/null
}
annotate "$input" | grep -E '^ *[0-9,]+ \( *[0-9.]+%\)  \?\?\?:0x.*\[\?\?\?\]$' | head -n 10
echo
echo "== build-release/cg-inject -i $input --jitdump $jitdump -o $output --stats"
build-release/cg-inject -i "$input" --jitdump "$jitdump" -o "$output" --stats
echo
echo "== after: the same functions with names, source files and lines from the jitdump:"
annotate "$output" | grep -E '^ *[0-9,]+ \( *[0-9.]+%\)  .*jit-[0-9]+\.dump(\.[0-9]+)?\.elf\]$' |
  sed "s|$(dirname "$output")/||" | head -n 10
echo
echo "   per-line view of the JIT source (callgrind_annotate --auto=yes):"
zstd -q -d -c -f "$output" >"$output.plain"
callgrind_annotate --auto=yes --show-percs=no "$output.plain" 2>/dev/null |
  awk '/^-- Auto-annotated source: .*workload\.mini/ {on = 1} on && /^-- (Auto-annotated|User-annotated)/ && !/workload/ {on = 0} on' |
  head -n 40 || true
echo
image=$(ls "$output".jit-*.dump.elf)
echo "== machine code: ob= of each JIT function names an ELF image of its code, written beside the"
echo "   output ($(basename "$image")); KCachegrind's Machine Code tab runs objdump on it."
echo "   objdump -dl --disassemble=jit_sum (the lines come from the jitdump's DEBUG_INFO):"
objdump -dl --disassemble=jit_sum "$image" | sed -n '/^[0-9a-f]* <jit_sum>:/,$p' | sed "s|$PWD/||"
