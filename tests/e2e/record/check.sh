#!/bin/bash
# e2e check of `cg-inject record`: one CASE per run, with the bundled x86-64 Valgrind.
#   check.sh CASE CG_INJECT VALGRIND_PREFIX [CGJIT_BIN_DIR]
# CASE: node (../node/workload.js), java (Work.java, -XX:TieredStopAtLevel=1), jit (the test
# JIT), nojit (the test JIT's ahead-of-time twin, then `sh -c 'exit 7'` for the exit status),
# interrupt (Node on long.js, SIGINT to cg-inject once V8's perf map names optimized fib: status
# 130, and the profile injected with the perf map, since the killed Node's jitdump is cut off),
# java-nomap (the JVM's own -XX:-DumpPerfMapAtExit overrides the switch: exit status 1, the
# message names JAVA_TOOL_OPTIONS and /tmp/perf-PID.map, the profile is written unchanged);
# php and php-function (tests/data/php/prog.php, opcache's tracing and function JIT), erlang
# (tests/data/erlang/jitprobe.erl started with `erl`, a launcher script that execs beam.smp),
# erlc (three of OTP's stdlib modules compiled; erlc execs erl), elixir (shop_run.exs, which
# compiles tests/data/elixir/shop.ex; the elixir script execs erl) and mono
# (tests/data/mono/Prog.cs compiled with mcs), each as a user starts it, with only the switches
# record sets; erlang-env-off is jitprobe with --no-runtime-env=erlang and the switches the man
# page tells such a user to give. Their functions must be named with files and lines where the
# runtime gives them (NAMES below: callgrind_annotate lines that must appear); deno and bun
# (tests/data/deno/prog.js as `deno run prog.js` and `bun prog.js`, the binaries
# scripts/js-runtimes.sh installs, skipped when they are absent): each JS function one function
# with its file (Deno) or its name alone (Bun), whatever tier ran, two methods named `area` told
# apart, no tier mark, file:// URL or #hash left where one function has the name.
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
expect_files=()  # files the program must have written into its working directory
program_env=()   # NAME=VALUE for the program's environment
record_args=()   # record's own options
valgrind_args=() # Valgrind options given to record
launcher_subshells=0  # 1: the launcher script's subshells leave profiles of their own
source_glob=
names=()
min_before=1  # the JIT cases' unnamed share before injection, in percent, at least
min_jit_with_moved=  # PHP: unnamed share + cost lines moved to the code that ran, in percent
covered_only=0  # 1: the < 0.1% left unnamed counts only code the map or dump covers
data=$here/../../data
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
  php|php-function)
    command -v php >/dev/null || fail "php is not installed (php8.2-cli, php8.2-opcache)"
    cp "$data/php/prog.php" .
    if [ "$case_name" = php ]; then
      program=(php prog.php)
      # Tracing names its traces after the function and the line they start at.
      names=("^ *[0-9,]+ .*prog\.php:\{main\} \[" "^ *[0-9,]+ .*:fib \[" "^ *[0-9,]+ .*:Calc::fib \[")
    else
      program=(php -d opcache.jit=function prog.php)
      names=("^ *[0-9,]+ .*prog\.php:\{main\} \[" "^ *[0-9,]+ .*:fib \[" "^ *[0-9,]+ .*:Calc::fib \[")
    fi
    expect_out='2584 987 59997'; source_glob='jit-*.dump'
    # Under the bundled Valgrind (patch 0005) opcache enters its JIT code by jumps that are no
    # calls, so that code's cost lines sit in execute_ex's blocks, not in ob=??? ones (stock 3.19:
    # 3% of the run unnamed before injection; bundled: 0.03%). What ran in JIT code is then the
    # unnamed share plus what cg-inject moved to the code that ran (its stats line), at least 1%.
    min_before=0; min_jit_with_moved=1 ;;
  erlang)
    command -v erlc >/dev/null || fail "erlc is not installed (erlang-base)"
    erlc "$data/erlang/jitprobe.erl"
    program=(erl -noshell -s jitprobe main); expect_out='6765 200010000'
    source_glob='jit-*.dump'
    # The VM's boot (C code: loading and preparing the modules) is most of the run: 0.66% of
    # 681M Ir ran in JIT code (measured with Valgrind 3.19).
    min_before=0.3
    names=("^ *[0-9,]+ .*:jitprobe:fib/1 \[" "^ *[0-9,]+ .*:jitprobe:sum/2 \[") ;;
  erlang-env-off)
    # The man page's advice for --no-runtime-env=erlang on OTP 25, which has no +JMsingle
    # (`erl +JMsingle true`: "invalid JIT option"): +JPperf map maps the JIT's code once, and
    # Valgrind's --fair-sched=yes is the user's to give then too.
    command -v erlc >/dev/null || fail "erlc is not installed (erlang-base)"
    erlc "$data/erlang/jitprobe.erl"
    program=(erl -noshell -s jitprobe main); expect_out='6765 200010000'
    program_env=(ERL_FLAGS='+JPperf map'); record_args=(--no-runtime-env=erlang)
    valgrind_args=(--fair-sched=yes); source_glob='perf-*.map'; min_before=0.3
    names=("^ *[0-9,]+ .*:jitprobe:fib/1 \[" "^ *[0-9,]+ .*:jitprobe:sum/2 \[") ;;
  erlc)
    # erlc (an ELF program that execs erl) compiling three of OTP's own stdlib modules: without
    # patch 0011 BEAM crashed (SIGSEGV) in this case 2 runs of 2 (main's bundled Valgrind) and
    # under Debian's Nulgrind 3 of 3 (issue 32 item 3). The compiler is Erlang code, about a
    # fifth of the run in JIT code.
    command -v erlc >/dev/null || fail "erlc is not installed (erlang-base)"
    stdlib=$(ls -d /usr/lib/erlang/lib/stdlib-*/src 2>/dev/null | head -n 1)
    [ -f "$stdlib/lists.erl" ] || fail "OTP's stdlib sources are not installed (erlang-src)"
    program=(erlc "$stdlib/lists.erl" "$stdlib/dict.erl" "$stdlib/sets.erl"); expect_out=
    expect_files=(lists.beam dict.beam sets.beam); source_glob='jit-*.dump'
    names=("^ *[0-9,]+ .*compile\.erl:compile:[a-z_]+/[0-9]+ \[" \
      "^ *[0-9,]+ .*v3_core\.erl:v3_core:[a-z_]+/[0-9]+ \[") ;;
  elixir)
    # An Elixir 1.14 script that compiles tests/data/elixir/shop.ex and runs it (structs, maps,
    # anonymous functions); record used to give `elixir` no Erlang switches. Under Nulgrind
    # without patch 0011 BEAM crashed 6 runs of 6; under record's Callgrind it completed 2 of 2
    # even so (whether VEX's stray write hits a live heap word depends on the layout), so
    # vex/check.sh, not this case, is the test that fails without the patch.
    # Elixir's modules are named as Elixir writes them, in the .ex file that defines them.
    command -v elixir >/dev/null || fail "elixir is not installed (scripts/setup-deps.sh installs it)"
    cp "$data/elixir/shop.ex" "$here/shop_run.exs" .
    program=(elixir shop_run.exs)
    expect_out='total 138761 items 97 freq [{3, 5}, {4, 207}, {5, 7423}, {6, 12365}]'
    source_glob='jit-*.dump'; launcher_subshells=1
    names=("^ *[0-9,]+ .*shop\.ex:Shop\.Main\.run/1 \[" \
      "^ *[0-9,]+ .*shop\.ex:Shop\.Cart\.add/2 \[" \
      "^ *[0-9,]+ .*shop\.ex:anonymous fn/2 in Shop\.Main\.build/1 \[") ;;
  mono)
    command -v mcs >/dev/null || fail "mcs is not installed (mono-mcs)"
    mcs -out:prog.exe "$data/mono/Prog.cs" >/dev/null
    program=(mono prog.exe); expect_out='6765 119979'; source_glob='perf-*.map'
    # Mono's trampolines in low memory (MAP_32BIT, 0x133340 and near) are in no map: 0.17% of
    # the total stays unnamed there. What must be named is what the map covers.
    covered_only=1
    names=("^ *[0-9,]+ .*:Probe\.Calc:Fib \(int\) \[" "^ *[0-9,]+ .*:Probe\.Calc:Sum \(int\[\]\) \[") ;;
  deno|bun)
    runtime=$(bash "$here/../../../scripts/js-runtimes.sh" "$case_name" || command -v "$case_name" ||
      true)
    [ -n "$runtime" ] || { echo "SKIP $case_name: not installed (scripts/js-runtimes.sh install)"; exit 77; }
    # Started as a user starts it: the runtime's own name, found in PATH.
    export PATH=$(dirname "$runtime"):$PATH
    cp "$data/deno/prog.js" .
    expect_out=2458923
    if [ "$case_name" = deno ]; then
      program=(deno run prog.js); source_glob='jit-*.dump'
      # V8 names the two `area` methods by their lines (11 and 12) and the file as a path.
      p='^ *[0-9,]+ \([ 0-9.]+%\) +/[^ ]*/prog\.js'
      names=("$p:fib \[" "$p:sumTo \[" "$p:main \[" "$p:area:11 \[" "$p:area:12 \[")
    else
      program=(bun prog.js); source_glob='jit-*-PID.dump'
      # JavaScriptCore gives no file; its hash tells the two `area` methods apart.
      p='^ *[0-9,]+ \([ 0-9.]+%\) +\?\?\?'
      names=("$p:fib \[" "$p:sumTo \[" "$p:area#[A-Za-z0-9]{6} \[")
    fi ;;
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
  # Let the optimized fib run before the interrupt: at the moment V8 names it, its code may have
  # run too little to pass min_before (0.68% once, with the suite's other tests on both cores).
  sleep 3
  kill -INT $cg
  wait $cg || rc=$?
else
  separator=()
  [ ${#valgrind_args[@]} = 0 ] || separator=("${valgrind_args[@]}" --)
  env "${program_env[@]}" "$cg_inject" record -o out --valgrind "$vg/bin/valgrind" \
    "${record_args[@]}" -- "${separator[@]}" "${program[@]}" >stdout.txt 2>stderr.txt || rc=$?
fi
echo "# $case_name: cg-inject record -- ${program[*]}: $(( $(date +%s) - start )) s, status $rc"
grep '^cg-inject' stderr.txt || true
[ $rc = $expect_rc ] || { cat stderr.txt; fail "exit status $rc, expected $expect_rc"; }
[ "$(cat stdout.txt)" = "$expect_out" ] || fail "the program printed '$(cat stdout.txt)'"
for f in "${expect_files[@]}"; do
  [ -s "$f" ] || fail "the program did not write $f: $(ls)"
done

mapfile -t raws < <(cd out && ls | grep -E '^callgrind\.out\.[0-9]+$' || true)
if [ "$launcher_subshells" = 1 ] && [ ${#raws[@]} -gt 1 ]; then
  # The launcher script's subshells ran under Valgrind too (profiles of sh); BEAM's is the one.
  mapfile -t raws < <(cd out && grep -l '^cmd: .*beam\.smp' "${raws[@]}" || true)
fi
[ ${#raws[@]} = 1 ] || fail "expected one raw profile in out/, found: $(ls out)"
raw=out/${raws[0]}
pid=${raws[0]#callgrind.out.}
[ -s "$raw.jit" ] || fail "no injected profile $raw.jit"
if [ -n "$source_glob" ]; then
  # PID in the glob stands for the pid, else its first '*' does.
  case $source_glob in *PID*) glob=${source_glob/PID/$pid} ;; *) glob=${source_glob/\*/$pid} ;; esac
  found=$(cd out && ls $glob 2>/dev/null || true)
  [ -n "$found" ] || fail "no $glob beside the profile: $(ls out)"
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
# callgrind_annotate's PROGRAM TOTALS (and its percentages) come from summary:. Callgrind stopped by
# SIGINT can write a summary: a few hundred Ir off its costs (measured: 645,378,639 for costs of
# 645,378,996); the output keeps the input's summary: as it is (issue 23 item 6), so the result
# reads in callgrind_annotate as the raw file does, and its totals: is the true sum of its costs.
ann() { callgrind_annotate "$1" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,; }
ann_after=$(ann "$raw.jit")
[ -n "$ann_after" ] && [ "$(ann "$raw")" = "$ann_after" ] ||
  fail "callgrind_annotate totals differ: '$(ann "$raw")' vs '$ann_after'"
totals_after=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$raw.jit" | head -n 1)
[ "$totals_after" = "$(total "$before")" ] ||
  fail "the result's totals: '$totals_after' is not the raw costs' $(total "$before")"
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
  a_pct=$(pct "$after")
  if [ "$covered_only" = 1 ]; then
    kind=--jitdump
    case $found in *.map) kind=--perf-map ;; esac
    cov=$(python3 "$here/../node/coverage.py" "$raw.jit" $kind "out/$found")
    echo "# after, covered by out/$found: $cov"
    a_pct=$(echo "$cov" | awk '{ for (i = 1; i < NF; i++) if ($i == "total") t = $(i + 1);
      else if ($i == "covered") c = $(i + 1); print 100 * c / t }')
  fi
  awk -v b="$(pct "$before")" -v a="$a_pct" -v m="$min_before" \
    'BEGIN { exit !(b > m && a < 0.1) }' ||
    fail "unnamed share $(pct "$before")% before, $(pct "$after")% after"
  if [ -n "$min_jit_with_moved" ]; then
    moved=$(sed -n 's/.*cost lines moved to the code that ran: [0-9]* (\([0-9]*\) Ir).*/\1/p' \
      stderr.txt | head -n 1)
    awk -v b="$(pct "$before")" -v m="${moved:-0}" -v t="$(total "$before")" \
      -v f="$min_jit_with_moved" 'BEGIN { exit !(t > 0 && b + 100 * m / t >= f) }' ||
      fail "JIT code's share: $(pct "$before")% unnamed + '$moved' Ir moved, below $min_jit_with_moved%"
  fi
fi
if [ ${#names[@]} -gt 0 ]; then
  # From /: callgrind_annotate shows a file under its working directory by a relative name,
  # and lists part of a function's cost under that spelling (the program's own files are here).
  (cd / && callgrind_annotate --inclusive=yes --threshold=100 "$OLDPWD/$raw.jit") \
    >annotate.txt 2>/dev/null
  for n in "${names[@]}"; do
    grep -qE "$n" annotate.txt || { grep -E 'fib|Fib|main' annotate.txt | head; fail "no line matches '$n'"; }
  done
  # The Erlang prologue is its function: no entry keeps the suffix.
  ! grep -q 'CodeInfoPrologue' annotate.txt || fail "a -CodeInfoPrologue entry is a function of its own"
  # No tier mark (V8's o, ', ~ ^ + *; JSC's tier names), no file URL, no #hash on a lone name.
  if [ "$case_name" = deno ] || [ "$case_name" = bun ]; then
    ! grep -qE ":(o?[~^+*]'?|')(fib|sumTo|main|area)[: ]|file://|JSC-(Baseline|DFG|FTL): |(fib|sumTo)#" \
      annotate.txt || { grep -E "fib|sumTo|main|area" annotate.txt | head; fail "a raw name is left"; }
    [ "$(grep -cE ':fib \[' annotate.txt)" = 1 ] || fail "fib is not one function"
  fi
fi
echo "PASS $case_name"
