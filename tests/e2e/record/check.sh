#!/bin/bash
# e2e check of `cg-inject record`: one CASE per run, with the bundled x86-64 Valgrind.
#   check.sh CASE CG_INJECT VALGRIND_PREFIX [CGJIT_BIN_DIR]
# CASE: node (../node/workload.js), java (Work.java, -XX:TieredStopAtLevel=1), jit (the test
# JIT), nojit (the test JIT's ahead-of-time twin, then `sh -c 'exit 7'` for the exit status),
# interrupt (Node on long.js, SIGINT to cg-inject once V8's perf map names optimized fib: status
# 130, and the profile injected with the perf map, since the killed Node's jitdump is cut off),
# java-nomap (the JVM's own -XX:-DumpPerfMapAtExit overrides the switch: exit status 1, the
# message names JAVA_TOOL_OPTIONS and /tmp/perf-PID.map, the profile is written unchanged).
# Each run happens in a scratch working directory (Node writes its jitdump there) with -o out.
# Checked: the program's output and exit status; exactly one process recorded; its map or dump
# moved beside the profile; the share of the cost in unnamed code (ob=???, measured by
# ../node/coverage.py) before (raw) and after (.jit): > 1% before and < 0.1% after for the JIT
# cases, unchanged for nojit; the totals of raw and .jit equal (coverage.py's sum of self costs
# and callgrind_annotate's PROGRAM TOTALS, which for the result are the true sum). A missing
# profile, map or dump fails the test.
set -euo pipefail
case_name=${1:?usage: check.sh CASE CG_INJECT VALGRIND_PREFIX [CGJIT_BIN_DIR]}
cg_inject=$(realpath "${2:?}")
vg=$(cd "${3:?}" && pwd -P)
bin=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
unset MALLOC_PERTURB_
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL $case_name: $*"; exit 1; }
# The pids whose parent is $1 (from /proc, field 4 of stat; the name in field 2 has no spaces here).
children_of() {
  local stat
  for stat in /proc/[0-9]*/stat; do
    read -r -a fields 2>/dev/null <"$stat" || continue
    [ "${fields[3]:-}" = "$1" ] && echo "${fields[0]}"
  done
  return 0
}

expect_rc=0
expect_out=
source_glob=
case $case_name in
  node)
    command -v node >/dev/null || fail "node is not installed (scripts/setup-deps.sh installs it)"
    cp "$here/../node/workload.js" .
    program=(node workload.js); expect_out=2670480; source_glob='jit-*.dump' ;;
  java)
    command -v javac >/dev/null || fail "javac is not installed (openjdk-17-jdk-headless)"
    javac -d . "$here/Work.java"
    program=(java -XX:TieredStopAtLevel=1 -cp . Work); expect_out=270600
    source_glob='perf-*.map' ;;
  java-nomap)
    command -v javac >/dev/null || fail "javac is not installed (openjdk-17-jdk-headless)"
    javac -d . "$here/Work.java"
    program=(java -XX:+UnlockDiagnosticVMOptions -XX:-DumpPerfMapAtExit -XX:TieredStopAtLevel=1
      -cp . Work)
    expect_out=270600; expect_rc=1 ;;
  jit)
    program=("${bin:?jit needs CGJIT_BIN_DIR}/jit"); expect_out='result 4181'
    source_glob='jit-*.dump' ;;
  nojit)
    program=("${bin:?nojit needs CGJIT_BIN_DIR}/twin"); expect_out='result 4181' ;;
  interrupt)
    command -v node >/dev/null || fail "node is not installed (scripts/setup-deps.sh installs it)"
    cp "$here/long.js" .
    program=(node long.js); expect_rc=130; source_glob='perf-*.map' ;;
  *) echo "check.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac

start=$(date +%s)
rc=0
if [ "$case_name" = interrupt ]; then
  "$cg_inject" record -o out --valgrind "$vg/bin/valgrind" -- "${program[@]}" >stdout.txt \
    2>stderr.txt &
  cg=$!
  # Valgrind is cg-inject's child and keeps its pid for the program: V8 writes /tmp/perf-PID.map.
  for _ in $(seq 300); do
    vpid=$(children_of $cg)
    [ -n "$vpid" ] && grep -q 'JS:\*fib' "/tmp/perf-$vpid.map" 2>/dev/null && break
    sleep 1
  done
  grep -q 'JS:\*fib' "/tmp/perf-$vpid.map" 2>/dev/null || echo "# fib not optimized after 300 s"
  kill -INT $cg
  wait $cg || rc=$?
else
  "$cg_inject" record -o out --valgrind "$vg/bin/valgrind" -- "${program[@]}" >stdout.txt \
    2>stderr.txt || rc=$?
fi
echo "# $case_name: cg-inject record -- ${program[*]}: $(( $(date +%s) - start )) s, status $rc"
grep '^cg-inject' stderr.txt || true
[ $rc = $expect_rc ] || { cat stderr.txt; fail "exit status $rc, expected $expect_rc"; }
[ "$(cat stdout.txt)" = "$expect_out" ] || fail "the program printed '$(cat stdout.txt)'"

mapfile -t raws < <(cd out && ls | grep -E '^callgrind\.out\.[0-9]+$' || true)
[ ${#raws[@]} = 1 ] || fail "expected one raw profile in out/, found: $(ls out)"
raw=out/${raws[0]}
pid=${raws[0]#callgrind.out.}
[ -s "$raw.jit" ] || fail "no injected profile $raw.jit"
if [ -n "$source_glob" ]; then
  found=$(cd out && ls ${source_glob/\*/$pid} 2>/dev/null || true)
  [ -n "$found" ] || fail "no ${source_glob/\*/$pid} beside the profile: $(ls out)"
  [ ! -e "/tmp/perf-$pid.map" ] || fail "/tmp/perf-$pid.map was not moved beside the profile"
  [ ! -e "jit-$pid.dump" ] || fail "./jit-$pid.dump was not moved beside the profile"
fi

share() { python3 "$here/../node/coverage.py" "$1"; }
before=$(share "$raw")
after=$(share "$raw.jit")
echo "# before: $before"
echo "# after:  $after"
total() { echo "$1" | sed -n 's/^total \([0-9]*\) .*/\1/p'; }
pct() { echo "$1" | sed -n 's/.*unknown [0-9]* (\([0-9.]*\)%).*/\1/p'; }
[ "$(total "$before")" = "$(total "$after")" ] || fail "totals differ"
# callgrind_annotate's PROGRAM TOTALS come from summary:/totals:. The output's are the true sum of
# its costs; Callgrind stopped by SIGINT can write a summary: a few hundred Ir off its costs
# (measured: 645,378,639 for costs of 645,378,996), so the raw file's may differ.
ann() { callgrind_annotate "$1" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,; }
ann_after=$(ann "$raw.jit")
[ -n "$ann_after" ] && [ "$ann_after" = "$(total "$before")" ] ||
  fail "callgrind_annotate's totals of the result, '$ann_after', are not the raw costs' $(total "$before")"
if [ "$case_name" != interrupt ]; then
  [ "$(ann "$raw")" = "$ann_after" ] ||
    fail "callgrind_annotate totals differ: '$(ann "$raw")' vs '$ann_after'"
fi
if [ "$case_name" = interrupt ]; then
  grep -q "^cg-inject: using perf map out/perf-$pid.map" stderr.txt ||
    fail "the interrupted run was not injected with its perf map"
fi
if [ "$case_name" = java-nomap ]; then
  grep -q "^cg-inject: pid $pid (java): [0-9.]*% of the cost ran in unnamed JIT code, but the process left no perf map or jitdump$" stderr.txt ||
    fail "no missing-map error"
  grep -qF "cg-inject:   JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit was set; java writes /tmp/perf-PID.map, at exit" stderr.txt ||
    fail "the switch is not named"
  grep -qF "cg-inject:   looked for /tmp/perf-$pid.map, " stderr.txt || fail "no expected places"
  [ "$(pct "$before")" = "$(pct "$after")" ] || fail "the unnamed share changed"
elif [ "$case_name" = nojit ]; then
  grep -q "^cg-inject: note: pid $pid (.*twin) ran no JIT code" stderr.txt ||
    fail "no note that the twin ran no JIT code"
  [ "$(pct "$before")" = "$(pct "$after")" ] || fail "the unnamed share changed"
  rc=0
  "$cg_inject" record -q -o out2 --valgrind "$vg/bin/valgrind" -- sh -c 'exit 7' \
    2>/dev/null || rc=$?
  [ $rc = 7 ] || fail "sh -c 'exit 7' gave status $rc"
else
  awk -v b="$(pct "$before")" -v a="$(pct "$after")" 'BEGIN { exit !(b > 1 && a < 0.1) }' ||
    fail "unnamed share $(pct "$before")% before, $(pct "$after")% after"
fi
echo "PASS $case_name"
