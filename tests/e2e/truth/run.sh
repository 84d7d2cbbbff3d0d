#!/bin/bash
# The truth check of one runtime's call graph (README.md): records the runtime's chain program
# with `cg-inject record` under VALGRIND, once without N (the baseline: main returns at once, so
# the run is the runtime's start-up and exit) and once with the runtime's N, checks the program's
# output, and runs truth.py on the two injected profiles. Exits 77 (skipped) when the runtime is
# not installed.
#   run.sh CG_INJECT VALGRIND RUNTIME [--assert CHECK,...] [--json FILE]
# VALGRIND is a valgrind executable (the bundled build's bin/valgrind, or /usr/bin/valgrind).
# --assert names the checks that must pass (truth.py); all are computed and printed.
# Set CG_INJECT_TRUTH_KEEP=DIR to keep the recordings there.
set -euo pipefail
usage='usage: run.sh CG_INJECT VALGRIND node|java|php|erlang|mono|moarvm [--assert CHECKS] [--json FILE]'
cg_inject=$(realpath "${1:?$usage}")
valgrind=$(realpath "${2:?$usage}")
runtime=${3:?$usage}
shift 3
truth_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --assert) truth_args+=("$1" "${2:?$usage}"); shift 2 ;;
    --json) truth_args+=("$1" "$(realpath -m "${2:?$usage}")"); shift 2 ;;  # run.sh cds away
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
skip() { echo "SKIP: $runtime: $*"; exit 77; }

# N: enough work that the program's own cost is well above the runs' noise and the JIT
# compilers' threads (README.md has the measured sizes and times).
case $runtime in
  node)
    command -v node >/dev/null || skip "node not installed"
    # NODE_EXTRA_CA_CERTS makes Node parse certificates at start-up (time, not the program's).
    unset NODE_EXTRA_CA_CERTS
    cp "$here/chain.js" .
    # V8's test hooks optimize the chain before the work (chain.js); no inlining: TurboFan would
    # fold invoke and cb into main.
    n=150000; base_arg=0; program=(node --allow-natives-syntax --no-turbo-inlining chain.js) ;;
  java)
    command -v javac >/dev/null || skip "javac not installed"
    javac -d . "$here/Chain.java"
    # -Xcomp with -XX:CompileOnly=Chain: the program's methods are compiled before they first
    # run, the JDK's stay interpreted (main is then one named function from its first
    # instruction, not an interpreter frame that moves into compiled code halfway through a loop);
    # C1 only (fast to compile), and no inlining, which would fold the chain into main.
    n=200000; program=(java -Xcomp -XX:CompileOnly=Chain -XX:TieredStopAtLevel=1
      -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Chain::* -cp . Chain) ;;
  php)
    command -v php >/dev/null || skip "php not installed"
    php -d opcache.enable_cli=1 -r 'exit(function_exists("opcache_get_status") ? 0 : 1);' ||
      skip "php has no opcache"
    cp "$here/chain.php" .
    n=100000; program=(php chain.php) ;;
  erlang)
    command -v erl >/dev/null && command -v erlc >/dev/null || skip "erlang not installed"
    erlc "$here/chain.erl"
    n=200000; program=(erl -noshell -s chain main) ;;
  mono)
    command -v mono >/dev/null && command -v mcs >/dev/null || skip "mono not installed"
    mcs -out:chain.exe "$here/Chain.cs" >/dev/null
    n=300000; program=(mono chain.exe) ;;
  moarvm)
    command -v raku >/dev/null || skip "raku not installed"
    cp "$here/chain.raku" .
    n=2000; program=(raku chain.raku) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

record() {  # N|-: record the program with N (- none) into out.N, print the injected profile
  local rc=0 start args=()
  [ "$1" = - ] || args=("$1")
  start=$(date +%s)
  "$cg_inject" record -o "out.$1" --valgrind "$valgrind" -- "${program[@]}" "${args[@]}" \
    >"stdout.$1" 2>"stderr.$1" || rc=$?
  echo "# $runtime: cg-inject record -- ${program[*]} ${args[*]}: $(( $(date +%s) - start )) s," \
    "status $rc" >&2
  if [ $rc != 0 ]; then
    cat "stderr.$1" >&2
    echo "FAIL: $runtime: status $rc under $valgrind"
    exit 1
  fi
  local expected
  expected=$(python3 "$here/truth.py" --expect "$runtime" "$1")
  [ "$(cat "stdout.$1")" = "$expected" ] ||
    { echo "FAIL: $runtime N=$1 printed '$(head -c 200 "stdout.$1")', expected $expected"; exit 1; }
  # The runtime's process wrote the largest profile (a launcher's helpers write small ones).
  ls -S "out.$1"/callgrind.out.*.jit | head -1
}

base=$(record "${base_arg:--}")
work=$(record "$n")
grep -h '^cg-inject: note:' "stderr.$n" >&2 || true
if [ -n "${CG_INJECT_TRUTH_KEEP:-}" ]; then
  mkdir -p "$CG_INJECT_TRUTH_KEEP"
  cp -r "out.${base_arg:--}" "$CG_INJECT_TRUTH_KEEP/$runtime.base"
  cp -r "out.$n" "$CG_INJECT_TRUTH_KEEP/$runtime.$n"
fi
python3 "$here/truth.py" "$runtime" "$work" "$base" "${truth_args[@]}"
