#!/usr/bin/env bash
# Re-creates the mcs capture of issue 33: Mono 6.8's C# compiler compiling two C# files that Mono
# ships (/usr/lib/mono-source-libs/Options.cs and getline.cs) into a library, recorded as a user
# would, `cg-inject record -- mcs ...` (record follows the mcs shell script into mono and sets
# MONO_ENV_OPTIONS=--jitmap), under the bundled Valgrind.
#
#   bench/captures/mcs.sh OUTDIR
#
# Environment: CG_INJECT (default: build/cg-inject, else cg-inject in PATH), VALGRIND (default:
# the bundled x86-64 build, made or found in its cache by scripts/build-valgrind.sh).
# OUTDIR gets callgrind.out.PID (raw, about 10 MB, 3.0 G Ir), callgrind.out.PID.jit, the ELF-less
# perf-PID.map (about 6,000 entries), stats.txt (record's stderr) and CMDLINE.txt. Takes about
# 4 minutes of CPU (2 on an idle 2-core machine).
set -euo pipefail
out=${1:?usage: bench/captures/mcs.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
cg_inject=${CG_INJECT:-}
if [[ -z $cg_inject ]]; then
  if [[ -x $root/build/cg-inject ]]; then cg_inject=$root/build/cg-inject; else cg_inject=cg-inject; fi
fi
valgrind=${VALGRIND:-}
if [[ -z $valgrind ]]; then
  prefix=$(mktemp -u "${TMPDIR:-/tmp}/cg-inject-vg.XXXXXX")
  bash "$root/scripts/build-valgrind.sh" x86_64 "$prefix" >&2
  valgrind=$prefix/bin/valgrind
fi
command -v mcs >/dev/null || { echo "mcs.sh: mcs is not installed (Debian: mono-devel)" >&2; exit 1; }
src=/usr/lib/mono-source-libs
# mcs alone (mono-mcs) compiles, but the C# files it is given come with mono-devel.
for f in "$src/Options.cs" "$src/getline.cs"; do
  [[ -f $f ]] || { echo "mcs.sh: $f is missing (Debian: mono-devel)" >&2; exit 1; }
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The library mcs writes is no part of the capture.
"$cg_inject" record --valgrind "$valgrind" -o "$out" -- \
  mcs -target:library -out:"$work/Options.dll" "$src/Options.cs" "$src/getline.cs" \
  2> >(tee "$out/stats.txt" >&2)
{
  echo "# bench/captures/mcs.sh: $(mono --version | head -n 1); $("$valgrind" --version)"
  echo "cg-inject record --valgrind VALGRIND -o OUTDIR -- mcs -target:library -out:Options.dll $src/Options.cs $src/getline.cs"
} >"$out/CMDLINE.txt"
