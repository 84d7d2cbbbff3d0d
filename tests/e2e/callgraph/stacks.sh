#!/bin/bash
# Frames that the bundled Callgrind must keep (issue 32): a program run by `cg-inject record`
# under VALGRIND_PREFIX's Callgrind, its profile read as its consumers read it (callers.py:
# callgrind_annotate, KCachegrind with and without cycle detection), checked against the callers
# its source gives.
#   mono:   MainLoop.cs. Main's only caller is Mono's runtime-invoke wrapper and its inclusive
#           cost holds its own loop. With 0005 before issue 32 Main's frame was popped while
#           Mono's JIT compiler re-entered itself (by a jump to a function of stripped mono-sgen
#           that has no symbol): the loop ran in the frame of the code that invoked Main.
#   erlang: stacks.erl. work/3 <- main/0, collatz/3 <- work/3, steps/2 <- collatz/3, each no
#           larger than its only caller and called by it only; main/0 holds what its process
#           computes and not what the second process computes (echo/0, mix/3). Without 0009 the
#           frames of the process waiting for a reply were either popped (main/0 near 0%) or
#           left under the other process's code (main/0 holding mix/3 too), run to run.
# Exits 77 (skipped) when the runtime is not installed.
#   stacks.sh CG_INJECT VALGRIND_PREFIX mono|erlang
# Set CG_INJECT_CALLGRAPH_OUT=DIR to keep the profile there (DIR/stacks-RUNTIME.callgrind.out).
set -euo pipefail
cg_inject=$(realpath "${1:?usage: stacks.sh CG_INJECT VALGRIND_PREFIX mono|erlang}")
vg=$(cd "${2:?usage: stacks.sh CG_INJECT VALGRIND_PREFIX mono|erlang}" && pwd -P)
runtime=${3:?usage: stacks.sh CG_INJECT VALGRIND_PREFIX mono|erlang}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
case $runtime in
  mono)
    command -v mono >/dev/null && command -v mcs >/dev/null ||
      { echo "SKIP: mono not installed"; exit 77; }
    mcs -out:main_loop.exe "$here/MainLoop.cs" >/dev/null
    program=(mono main_loop.exe)
    expected=$'start\n7542374654589704902'
    main='MainLoop:Main ()'
    checks=(--only-caller "$main=(wrapper runtime-invoke) object:runtime_invoke_void (object,intptr,intptr,intptr)"
      --entry "$main=100%$main") ;;
  erlang)
    command -v erl >/dev/null && command -v erlc >/dev/null ||
      { echo "SKIP: erlang not installed"; exit 77; }
    erlc -o . "$here/stacks.erl"
    program=(erl -noshell -pa . -eval 'stacks:main(), halt().')
    expected=243494
    work='stacks:work/3+stacks:collatz/3+stacks:steps/2'
    checks=(--pair stacks:work/3=stacks:main/0 --pair stacks:collatz/3=stacks:work/3
      --pair stacks:steps/2=stacks:collatz/3
      --only-caller stacks:work/3=stacks:main/0 --only-caller stacks:collatz/3=stacks:work/3
      --only-caller stacks:steps/2=stacks:collatz/3
      --entry "stacks:main/0=90%$work"
      # Not with cycle detection: BEAM's shared code (export_trampoline, call_light_bif_shared)
      # puts main/0 in one cycle with most of the runtime (about 80%, stock Valgrind too).
      --readings annotate,plain,kcachegrind
      --most "stacks:main/0=150%$work" --most "stacks:echo/0=150%stacks:echo/0+stacks:mix/3") ;;
  *) echo "stacks.sh: expected RUNTIME mono or erlang, got '$runtime'" >&2; exit 2 ;;
esac
start=$(date +%s)
rc=0
"$cg_inject" record -q -o out --valgrind "$vg/bin/valgrind" -- "${program[@]}" >stdout.txt \
  2>stderr.txt || rc=$?
echo "# $runtime: cg-inject record -- ${program[*]}: $(( $(date +%s) - start )) s, status $rc"
[ $rc = 0 ] || { cat stderr.txt; echo "FAIL: $runtime: status $rc"; exit 1; }
[ "$(cat stdout.txt)" = "$expected" ] ||
  { echo "FAIL: $runtime printed $(head -c 200 stdout.txt), expected $expected"; exit 1; }
# The largest profile is the runtime's (erl's shell wrappers write small ones).
profile=$(ls -S out/callgrind.out.*.jit | head -1)
if [ -n "${CG_INJECT_CALLGRAPH_OUT:-}" ]; then
  mkdir -p "$CG_INJECT_CALLGRAPH_OUT"
  cp "$profile" "$CG_INJECT_CALLGRAPH_OUT/stacks-$runtime.callgrind.out"
fi
python3 "$here/callers.py" "${checks[@]}" "$profile" || { echo "FAIL: $runtime"; exit 1; }
echo "ok: $runtime: every function no larger than its only caller, the entry holds its work"
