#!/usr/bin/env bash
# `cg-inject record` without Valgrind: a fake valgrind (below) logs its arguments and
# environment, writes a stored capture of the test JIT (tests/data/x86_64/instr) where
# --callgrind-out-file says, with its own pid for %p, puts the capture's perf map and jitdump where
# a runtime would (/tmp/perf-PID.map, ./jit-PID.dump), and exits with $FAKE_EXIT. Checked: the
# command line and environment given to valgrind, the files moved beside the profile, the exit
# status, --clean, the messages for a missing map and for a program without JIT code, signals.
source "$(dirname "$0")/lib.sh"
data=$SOURCE_ROOT/tests/data/x86_64/instr
fake=$scratch/fake-valgrind
cat >"$fake" <<'FAKE'
#!/bin/bash
out=
for a; do case $a in --callgrind-out-file=*) out=${a#*=} ;; esac; done
out=${out/\%p/$$}
printf '%s\n' "$@" >"$FAKE_DIR/args"
env >"$FAKE_DIR/env"
case $FAKE_MODE in
  jit) zstd -qdc "$FAKE_DATA/callgrind.out.zst" >"$out"
    cp "$FAKE_DATA/perf-24022.map" "/tmp/perf-$$.map"
    cp "$FAKE_DATA/jit-24022.dump" "jit-$$.dump" ;;
  nomap) zstd -qdc "$FAKE_DATA/callgrind.out.zst" >"$out" ;;
  twin) zstd -qdc "$FAKE_DATA/twin.callgrind.out.zst" >"$out" ;;
  term) trap 'zstd -qdc "$FAKE_DATA/twin.callgrind.out.zst" >"$out"; exit 143' TERM
    touch "$FAKE_DIR/ready"
    sleep 60 & wait ;;
esac
exit "${FAKE_EXIT:-0}"
FAKE
chmod +x "$fake"
export FAKE_DIR=$scratch FAKE_DATA=$data
work=$scratch/work
mkdir -p "$work"
cd "$work"
record() { expect_exit "$1" "$CG_INJECT" record --valgrind "$fake" "${@:2}"; }
pid_of() { ls "$1" | sed -n 's/^callgrind\.out\.\([0-9]*\)$/\1/p'; }

# A JIT run: the program's exit status, everything beside the profile, the names injected.
FAKE_MODE=jit FAKE_EXIT=5 record 5 -o out -- --separate-threads=no -- node app.js --x && {
  pid=$(pid_of out)
  [[ -n $pid ]] || fail "no raw profile in out/: $(ls out)"
  for f in callgrind.out.$pid callgrind.out.$pid.jit perf-$pid.map jit-$pid.dump; do
    [[ -s out/$f ]] || fail "out/$f missing"
  done
  [[ ! -e /tmp/perf-$pid.map && ! -e jit-$pid.dump ]] || fail "sources not moved"
  expected="--tool=callgrind --dump-instr=yes --callgrind-out-file=$work/out/callgrind.out.%p"
  expected+=" --separate-threads=no node app.js --x"
  [[ $(tr '\n' ' ' <"$scratch/args") == "$expected " ]] ||
    fail "valgrind arguments: $(tr '\n' ' ' <"$scratch/args")"
  grep -qx 'NODE_OPTIONS=--perf-prof --perf-basic-prof' "$scratch/env" || fail "NODE_OPTIONS"
  grep -qx 'PYTHONPERFSUPPORT=1' "$scratch/env" || fail "PYTHONPERFSUPPORT"
  grep -q "^cg-inject: using jitdump out/jit-$pid.dump" "$scratch/err" ||
    fail "not injected with the jitdump: $(cat "$scratch/err")"
  grep -q "^cg-inject: Ir in unnamed JIT code: 1.70% before, 0.02% after" "$scratch/err" ||
    fail "no stats: $(cat "$scratch/err")"
  grep -q "^cg-inject: pid $pid: wrote out/callgrind.out.$pid.jit$" "$scratch/err" ||
    fail "no 'wrote' line: $(cat "$scratch/err")"
  callgrind_annotate --threshold=100 "out/callgrind.out.$pid.jit" >"$scratch/annotate"
  # ob= is the ELF image of the jitdump's code, written beside the result (absolute path).
  grep -q "jit_fib'2 \[/.*/out/callgrind.out.$pid.jit.jit-$pid.dump.elf\]" "$scratch/annotate" ||
    fail "jit_fib not named in the result"
  [[ -s out/callgrind.out.$pid.jit.jit-$pid.dump.elf ]] || fail "no ELF image beside the result"
}

# --clean keeps only the result and its ELF images; -q prints nothing but errors.
FAKE_MODE=jit record 0 -q --clean -o clean -- node app.js && {
  left=$(ls clean | grep -v '^callgrind\.out\.[0-9]*\.jit\.jit-[0-9]*\.dump\(\.[0-9]*\)\?\.elf$')
  [[ $left == callgrind.out.*.jit ]] || fail "--clean left: $left"
  [[ ! -s $scratch/err ]] || fail "-q printed: $(cat "$scratch/err")"
}

# JIT code but no map: an error naming the switch and where the map was expected; the profile
# is still written.
FAKE_MODE=nomap record 1 -o nomap -- node app.js && {
  pid=$(pid_of nomap)
  [[ -s nomap/callgrind.out.$pid.jit ]] || fail "no profile written without a map"
  grep -q "^cg-inject: pid $pid (node): 1.70% of the cost ran in unnamed JIT code, but the process left no perf map or jitdump$" "$scratch/err" ||
    fail "missing-map message: $(cat "$scratch/err")"
  grep -q "^cg-inject:   NODE_OPTIONS=--perf-prof --perf-basic-prof was set; node writes ./jit-PID.dump" "$scratch/err" ||
    fail "the switch is not named: $(cat "$scratch/err")"
  grep -q "^cg-inject:   looked for /tmp/perf-$pid.map, $work/jit-$pid.dump" "$scratch/err" ||
    fail "the expected places are not named: $(cat "$scratch/err")"
}
FAKE_MODE=nomap record 1 -o off --no-runtime-env=node -- node app.js && {
  ! grep -q '^NODE_OPTIONS=' "$scratch/env" || fail "--no-runtime-env=node set NODE_OPTIONS"
  grep -q "^cg-inject:   the node switch was turned off by --no-runtime-env$" "$scratch/err" ||
    fail "switch-off message: $(cat "$scratch/err")"
}

# No JIT code at all: a note, the profile unchanged, the program's status.
FAKE_MODE=twin FAKE_EXIT=0 record 0 -o twin -- ./twin && {
  grep -q "^cg-inject: note: pid [0-9]* (./twin) ran no JIT code" "$scratch/err" ||
    fail "no note for a program without JIT code: $(cat "$scratch/err")"
}

# Nothing written, valgrind missing, usage.
FAKE_MODE=none FAKE_EXIT=0 record 1 -o none -- ./x &&
  { grep -q "^cg-inject: no Callgrind file was written to $work/none" "$scratch/err" ||
    fail "nothing-written message: $(cat "$scratch/err")"; }
expect_exit 127 "$CG_INJECT" record --valgrind "$scratch/no-such-valgrind" -- ./x &&
  { grep -q "valgrind not found" "$scratch/err" || fail "missing valgrind: $(cat "$scratch/err")"; }
expect_exit 2 "$CG_INJECT" record &&
  { grep -q "^cg-inject: record: no PROGRAM to run$" "$scratch/err" || fail "no program"; }
expect_exit 2 "$CG_INJECT" record -- --tool=memcheck -- ./x
expect_exit 0 "$CG_INJECT" record --help &&
  { grep -q '^Usage: cg-inject record' "$scratch/out" || fail "record --help"; }

# SIGTERM sent to cg-inject reaches valgrind, and what it wrote is still injected.
FAKE_MODE=term "$CG_INJECT" record --valgrind "$fake" -o term -- ./x >/dev/null 2>"$scratch/err" &
cg=$!
for _ in $(seq 100); do [[ -e $scratch/ready ]] && break; sleep 0.1; done
kill -TERM $cg
rc=0
wait $cg || rc=$?
[[ $rc == 143 ]] || fail "SIGTERM: exit $rc, expected 143: $(cat "$scratch/err")"
ls term/callgrind.out.*.jit >/dev/null 2>&1 || fail "SIGTERM: nothing injected: $(ls term)"

# The man page documents every long option of `record --help`.
for opt in $("$CG_INJECT" record --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$SOURCE_ROOT/man/cg-inject.1" ||
    fail "man page lacks $opt"
done
finish
