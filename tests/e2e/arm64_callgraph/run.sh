#!/bin/bash
# The call-graph fixtures (README.md): compiles each FIXTURE.c with -O2 for ARCH, runs it under the
# bundled Callgrind with --instr-atstart=no (the program starts and stops instrumentation with
# client requests around the measured region), folds the profile into the call stacks of the
# program's own functions (fold.py) and compares them with FIXTURE.stacks; where FIXTURE.callers
# exists, checks the inclusive costs with ../callgraph/callers.py and the arguments it holds;
# FIXTURE.ARCH.stacks, where it exists, holds ARCH's stacks (libc differs: AArch64's swapcontext
# enters a context through setcontext).
#   run.sh ARCH VALGRIND_PREFIX [FIXTURE...]      (default: every *.stacks here)
# Prints a diff (expected -> got) per failing fixture and exits 1 if any failed. Set
# CG_INJECT_FIXTURE_OUT=DIR to keep each fixture's profile and folded stacks there.
set -euo pipefail
arch=${1:?usage: run.sh ARCH VALGRIND_PREFIX [FIXTURE...]}
vg=$(cd "${2:?usage: run.sh ARCH VALGRIND_PREFIX [FIXTURE...]}" && pwd -P)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
unset MALLOC_PERTURB_

case $arch in
  x86_64)
    cc=gcc
    absent=() # x86-64 keeps _dl_tlsdesc_return as a leaf frame (our patches leave x86-64 alone)
    # TLS descriptors on x86-64 too (its default for -fPIC is __tls_get_addr).
    lib_cflags=(-mtls-dialect=gnu2)
    valgrind=("$vg/bin/valgrind") ;;
  aarch64)
    command -v qemu-aarch64 >/dev/null || { echo "FAIL: qemu-aarch64 missing (apt-get install qemu-user)"; exit 1; }
    cc=aarch64-linux-gnu-gcc
    lib_cflags=()
    # The TLS-descriptor resolver is skipped like a PLT stub on AArch64
    # (subprojects/valgrind-patches/0004-*): it must not be in any profile. The cross ld.so has
    # no symbol table, so Callgrind names it by address; find that address by its code.
    ld_so=/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1
    resolver=$(python3 "$here/tlsdesc_addr.py" "$ld_so") || { echo "FAIL: no TLS resolver in $ld_so"; exit 1; }
    absent=(--absent "${ld_so##*/}:$resolver" --absent "${ld_so##*/}:_dl_tlsdesc_return")
    # As in ../capture.sh: the tool itself under qemu, no host address randomisation.
    valgrind=(env VALGRIND_LIB="$vg/libexec/valgrind" VALGRIND_LAUNCHER="$vg/bin/valgrind"
      setarch -R qemu-aarch64 -cpu cortex-a72 -L /usr/aarch64-linux-gnu
      "$vg/libexec/valgrind/callgrind-arm64-linux") ;;
  *) echo "run.sh: expected ARCH x86_64 or aarch64, got '$arch'" >&2; exit 2 ;;
esac
[ -f "$vg/include/valgrind/callgrind.h" ] || { echo "FAIL: no $vg/include/valgrind/callgrind.h"; exit 1; }

fixtures=("$@")
if [ ${#fixtures[@]} = 0 ]; then
  for f in "$here"/*.stacks; do
    f=$(basename "$f" .stacks)
    [[ $f == *.* ]] || fixtures+=("$f") # NAME.ARCH.stacks belongs to NAME
  done
fi
[ ${#fixtures[@]} -gt 0 ] || { echo "FAIL: no fixtures in $here"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=()
for name in "${fixtures[@]}"; do
  expected=$here/$name.stacks
  [ ! -f "$here/$name.$arch.stacks" ] || expected=$here/$name.$arch.stacks
  [ -f "$here/$name.c" ] && [ -f "$here/$name.stacks" ] ||
    { echo "FAIL: $name: missing $name.c or $name.stacks"; failed+=("$name"); continue; }
  dir=$tmp/$name
  mkdir -p "$dir"
  cflags=(-O2 -g -I"$vg/include" -I"$here")
  libs=(-Wl,-z,now)
  own="^$name\$"
  if [ -f "$here/${name}_lib.c" ]; then
    "$cc" "${cflags[@]}" "${lib_cflags[@]}" -fPIC -shared -Wl,-z,now -o "$dir/lib${name}_lib.so" "$here/${name}_lib.c"
    libs+=(-L"$dir" -l"${name}_lib" -Wl,-rpath,'$ORIGIN')
    own="^($name|lib${name}_lib\\.so)\$"
  fi
  "$cc" "${cflags[@]}" -o "$dir/$name" "$here/$name.c" "${libs[@]}"
  # NAME.options: more Callgrind options, one line.
  opts=()
  [ ! -f "$here/$name.options" ] || read -r -a opts <"$here/$name.options"
  start=$(date +%s%N)
  rc=0
  (cd "$dir" && "${valgrind[@]}" --tool=callgrind --instr-atstart=no "${opts[@]}" \
    --callgrind-out-file=callgrind.out "./$name" >stdout.txt 2>valgrind.txt) || rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ $rc != 0 ]; then
    cat "$dir/valgrind.txt"
    echo "FAIL: $name: status $rc under Callgrind"
    failed+=("$name")
    continue
  fi
  if ! python3 "$here/fold.py" --own "$own" "${absent[@]}" "$dir/callgrind.out" >"$dir/stacks"; then
    echo "FAIL: $name: the profile is empty or has a forbidden frame (above)"
    failed+=("$name")
  elif ! diff -u --label "${expected##*/} (expected)" --label "$name on $arch (folded profile)" \
      "$expected" "$dir/stacks" >"$dir/diff"; then
    cat "$dir/diff"
    echo "FAIL: $name ($arch, ${ms} ms)"
    failed+=("$name")
  elif [ -f "$here/$name.callers" ] && ! { read -r -a checks <"$here/$name.callers" &&
      python3 "$here/../callgraph/callers.py" "${checks[@]}" "$dir/callgrind.out" >"$dir/callers"; }; then
    cat "$dir/callers"
    echo "FAIL: $name ($arch, ${ms} ms): inclusive costs (callers.py $(cat "$here/$name.callers"))"
    failed+=("$name")
  else
    echo "ok: $name ($arch, ${ms} ms)"
  fi
  if [ -n "${CG_INJECT_FIXTURE_OUT:-}" ]; then
    mkdir -p "$CG_INJECT_FIXTURE_OUT/$name"
    cp "$dir/callgrind.out" "$dir/stacks" "$dir/valgrind.txt" "$CG_INJECT_FIXTURE_OUT/$name/" 2>/dev/null || true
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAIL: ${#failed[@]} of ${#fixtures[@]} fixtures on $arch: ${failed[*]}"
  exit 1
fi
echo "ok: all ${#fixtures[@]} fixtures on $arch"
