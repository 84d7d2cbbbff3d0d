#!/usr/bin/env bash
# Re-creates the erlc capture of issue 33: Erlang/OTP 25's compiler compiling 15 of OTP's stdlib
# modules (Debian's erlang-src), recorded by `cg-inject record`. erlc is an ELF program that
# execs erl's emulator, so Valgrind follows children (with record's list of helpers left out) and
# schedules threads fairly (BEAM's threads spin); `+hms 16777216` keeps BEAM from crashing under
# Valgrind (issue 32, investigated there); record adds `+JPperf true` (perf map and jitdump).
#
#   bench/captures/erlc.sh OUTDIR
#
# Environment: CG_INJECT (default: build/cg-inject, else cg-inject in PATH), VALGRIND (default:
# Debian's /usr/bin/valgrind, whose call tracking Erlang breaks, the input of issue 33 item 7;
# give the bundled build for a capture with a sound call graph).
# OUTDIR gets callgrind.out.PID (raw, about 11 MB, 10.6 G Ir), callgrind.out.PID.jit,
# perf-PID.map, jit-PID.dump (about 9 MB), the compiled .beam files in beam/, stats.txt and
# CMDLINE.txt. Takes about 8 minutes of CPU.
set -euo pipefail
out=${1:?usage: bench/captures/erlc.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
cg_inject=${CG_INJECT:-}
if [[ -z $cg_inject ]]; then
  if [[ -x $root/build/cg-inject ]]; then cg_inject=$root/build/cg-inject; else cg_inject=cg-inject; fi
fi
valgrind=${VALGRIND:-/usr/bin/valgrind}
src=$(ls -d /usr/lib/erlang/lib/stdlib-*/src 2>/dev/null | head -n 1)
[[ -n $src ]] || { echo "erlc.sh: OTP's stdlib sources are not installed (Debian: erlang-src)" >&2; exit 1; }
modules=(array base64 calendar dict digraph filename gb_sets gb_trees lists orddict ordsets
         proplists queue sets string)
mkdir -p "$out/beam"
out=$(cd "$out" && pwd)
skip="--trace-children-skip=*/basename,*/dirname,*/readlink,*/realpath,*/uname,*/sed,*/expr,"
skip+="*/dyn_erl,*/erl_child_setup,*/inet_gethost"
files=()
for m in "${modules[@]}"; do files+=("$m.erl"); done
(
  cd "$src"
  ERL_FLAGS="+hms 16777216" "$cg_inject" record --valgrind "$valgrind" -o "$out" -- \
    --trace-children=yes "$skip" --fair-sched=yes -- erlc -o "$out/beam" "${files[@]}"
) 2> >(tee "$out/stats.txt" >&2)
{
  echo "# bench/captures/erlc.sh: $(erl -noshell -eval 'io:format("OTP ~s", [erlang:system_info(otp_release)]), halt().'); $("$valgrind" --version)"
  echo "cd $src && ERL_FLAGS='+hms 16777216' cg-inject record --valgrind VALGRIND -o OUTDIR -- --trace-children=yes $skip --fair-sched=yes -- erlc -o OUTDIR/beam ${files[*]}"
} >"$out/CMDLINE.txt"
