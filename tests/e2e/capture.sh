#!/bin/bash
# Runs the test JIT and its twin under the bundled Callgrind, one directory per scenario:
#   capture.sh ARCH BIN_DIR VALGRIND_PREFIX OUT_DIR [SCENARIO...]
# BIN_DIR holds jit, twin and libcgjit_helpers.so (tests/e2e/jit/build.sh). They are copied to
# /tmp/cg-inject-e2e-ARCH/ first, so that the paths Callgrind records (cmd:, ob=) are the same on
# every machine. In OUT_DIR/SCENARIO/:
#   callgrind.out[.N|-NN]        the JIT run (Callgrind's file name without the pid; the pid is
#                                in the file's pid: line and in the names below)
#   perf-PID.map, jit-PID.dump   what the JIT wrote about its code
#   twin.callgrind.out[.N|-NN]   the twin's run with the same options
#   CMDLINE.txt                  the exact command lines, the pids and the program output
set -euo pipefail
arch=${1:?usage: capture.sh ARCH BIN_DIR VALGRIND_PREFIX OUT_DIR [SCENARIO...]}
bin=$(cd "${2:?}" && pwd)
vg=$(cd "${3:?}" && pwd -P)
out=${4:?}
shift 4
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(plain instr jumps parts threads skip)

# The captures record exactly the command lines in CMDLINE.txt; Meson sets MALLOC_PERTURB_.
unset MALLOC_PERTURB_
run_dir=/tmp/cg-inject-e2e-$arch
mkdir -p "$run_dir" "$out"
out=$(cd "$out" && pwd)
cp "$bin/jit" "$bin/twin" "$bin/libcgjit_helpers.so" "$run_dir/"

case $arch in
  x86_64) valgrind=("$vg/bin/valgrind") ;;
  aarch64)
    # The launcher cannot exec an arm64 tool without binfmt, so run the tool itself under qemu.
    # -cpu cortex-a72: Valgrind asserts a 64- or 128-byte cache line when the icache is flushed.
    # setarch -R: no host address randomisation, so qemu lays the guest out the same every time.
    valgrind=(env VALGRIND_LIB="$vg/libexec/valgrind" VALGRIND_LAUNCHER="$vg/bin/valgrind"
      setarch -R qemu-aarch64 -cpu cortex-a72 -L /usr/aarch64-linux-gnu
      "$vg/libexec/valgrind/callgrind-arm64-linux") ;;
  *) echo "capture.sh: expected ARCH x86_64 or aarch64, got '$arch'" >&2; exit 2 ;;
esac

scenario_options() {
  case $1 in
    plain) echo "" ;;
    instr) echo "--dump-instr=yes" ;;
    jumps) echo "--dump-instr=yes --collect-jumps=yes" ;;
    parts) echo "--dump-instr=yes" ;;
    threads) echo "--dump-instr=yes --separate-threads=yes" ;;
    # Valgrind 3.19 has no --obj-skip; --fn-skip of every function of the helper library is the
    # same thing here (calls to them become jumps, their cost goes to the caller).
    skip) echo "--dump-instr=yes --fn-skip=c_apply --fn-skip=c_leaf --instr-atstart=no" ;;
    *) echo "capture.sh: unknown scenario '$1'" >&2; exit 2 ;;
  esac
}
program_options() {
  case $1 in
    parts) echo "--dump-at-reuse" ;;
    skip) echo "--start-in-helper" ;;
    *) echo "" ;;
  esac
}

# Runs PROGRAM (jit or twin) for a scenario in a scratch directory, then moves the results to DEST
# with the pid taken out of Callgrind's file names (prefix PREFIX).
run_one() {
  local scenario=$1 program=$2 dest=$3 prefix=$4
  local scratch
  scratch=$(mktemp -d)
  local vg_opts prog_opts
  read -r -a vg_opts <<<"$(scenario_options "$scenario")"
  read -r -a prog_opts <<<"$(program_options "$scenario")"
  [ "$program" = twin ] || prog_opts+=(--out .)
  local cmd=("${valgrind[@]}" --tool=callgrind --callgrind-out-file="$scratch/callgrind.out.%p"
    "${vg_opts[@]}" "$run_dir/$program" "${prog_opts[@]}")
  # Valgrind under qemu crashed once in ld.so in about a hundred runs (before setarch -R): a run
  # killed by a signal on AArch64 gets one more try, said on stderr.
  local attempt rc
  for attempt in 1 2; do
    rc=0
    (cd "$scratch" && "${cmd[@]}" >stdout.txt 2>valgrind.txt) || rc=$?
    [ $rc -gt 128 ] && [ "$arch" = aarch64 ] && [ $attempt = 1 ] || break
    echo "capture.sh: $arch/$scenario/$program died with status $rc under qemu; retrying" >&2
    rm -f "$scratch"/callgrind.out.* "$scratch"/perf-*.map "$scratch"/jit-*.dump
  done
  if [ $rc != 0 ]; then
    cat "$scratch/valgrind.txt" >&2
    echo "capture.sh: $arch/$scenario/$program failed (status $rc)" >&2
    exit 1
  fi
  local pid
  pid=$(ls "$scratch" | sed -n 's/^callgrind\.out\.\([0-9]*\).*/\1/p' | head -1)
  for f in "$scratch"/callgrind.out.*; do
    local name=${f##*/}
    mv "$f" "$dest/$prefix${name/.$pid/}"
  done
  if [ "$program" = jit ]; then mv "$scratch"/perf-*.map "$scratch"/jit-*.dump "$dest/"; fi
  {
    echo "# $program (cwd: a scratch directory; Callgrind's %p was $pid)"
    echo "${cmd[*]}" | sed "s|$scratch|.|g"
    echo "# stdout: $(cat "$scratch/stdout.txt")"
  } >>"$dest/CMDLINE.txt"
  rm -rf "$scratch"
}

for scenario in "${scenarios[@]}"; do
  dest=$out/$scenario
  rm -rf "$dest"
  mkdir -p "$dest"
  run_one "$scenario" jit "$dest" ""
  run_one "$scenario" twin "$dest" twin.
done
