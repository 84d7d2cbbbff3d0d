#!/usr/bin/env bash
# Real objects named by `ob=`: whatever file a profile names, reading it never blocks and never
# reads more than a regular file (issue 22 item 8: a FIFO used to block open() forever); reading
# it costs time and memory linear in its size, and an object that is not the file the profile
# ran (rebuilt since) keeps its stubs' addresses, with a warning that names it (issue 36 items
# 1-3). The hostile objects are made by hostile_elf.py, not committed.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
gen=$SOURCE_ROOT/tests/cli/hostile_elf.py

# An `ob=` that is a FIFO nobody writes to, with JIT code of a perf map at an address of a block of
# it, so cg-inject asks the object whether it holds that address.
mkfifo "$scratch/fifo.so"
profile=$scratch/fifo.cg
cat >"$profile" <<CG
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
positions: instr line
events: Ir
ob=$scratch/fifo.so
fl=???
fn=0x4000100
0x4000100 0 10
0x4000104 0 5
totals: 15
CG
printf '4000100 40 hot_js_function\n' >"$scratch/perf-4242.map"
# timeout: a blocked open() would otherwise hang the suite until meson's own timeout.
expect_exit 0 timeout 60 "$CG_INJECT" --no-discover --perf-map "$scratch/perf-4242.map" \
  -i "$profile" -o "$scratch/fifo.out" || true
[[ -s $scratch/fifo.out ]] || fail "FIFO object: no output written"
grep -q "fifo.so: not a regular file" "$scratch/err" ||
  fail "FIFO object: expected a warning naming it as not a regular file, got: $(head -c 400 "$scratch/err")"
grep -q '^totals: 15$' "$scratch/fifo.out" || fail "FIFO object: totals changed"

# object_profile OBJECT: a profile whose program and whose block with JIT code is OBJECT, so that
# both ELF readers read it (its stubs for Valgrind's load address, its extents and symbols for
# the JIT code's address).
object_profile() {
  cat <<CG
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd: $1
positions: instr line
events: Ir
ob=$1
fl=???
fn=0x4000100
0x4000100 0 10
0x4000104 0 5
totals: 15
CG
}
# bounded CMD...: runs CMD with stdout/stderr in $scratch/out and $scratch/err, killed past 60 s or
# 1.5 GB of resident memory (the old readers took minutes and gigabytes here, and the machine is
# shared); sets `got` (its exit status, or "time" / "memory"), `seconds` and `peak_mb`.
bounded() {
  read -r got seconds peak_mb < <(python3 "$SOURCE_ROOT/tests/cli/bounded_run.py" 60 1500 \
    "$scratch/out" "$scratch/err" "$@")
}

# 1. Objects whose section headers describe one table again and again: 65,000 SHT_RELA headers
# over one 100,000-entry relocation block (6.6 MB) took 103 s, 65,000 SHT_DYNAMIC headers 14-38 s,
# 250,000 STT_FUNC symbols at one address 85 s (and 65,000 SHT_SYMTAB headers ran out of memory).
# Reading is linear in the file now: each case must take under 20 s (about a second with the
# sanitizers on a busy machine); a file whose tables add up to more than the file is skipped
# with a warning that says so.
printf '4000100 40 hot_js_function\n' >"$scratch/perf-4242.map"
for case in rela-headers dynamic-headers note-headers symtab-headers symtab-aliases; do
  obj=$scratch/$case.so
  python3 "$gen" "$case" "$obj"
  object_profile "$obj" >"$scratch/$case.cg"
  bounded "$CG_INJECT" --no-discover --perf-map "$scratch/perf-4242.map" \
    -i "$scratch/$case.cg" -o "$scratch/$case.out"
  echo "$case: exit $got, ${seconds}s, ${peak_mb} MB"
  [[ $got == 0 ]] || fail "$case: exit $got after ${seconds}s: $(head -c 300 "$scratch/err")"
  awk -v s="$seconds" 'BEGIN { exit !(s < 20) }' || fail "$case: took ${seconds}s (bound: 20 s)"
  grep -q '^fn=.*hot_js_function' "$scratch/$case.out" || fail "$case: JIT code not named"
  case $case in
    rela-headers | dynamic-headers)
      kind=${case%-headers}
      [[ $kind == rela ]] && kind=relocation
      grep -qF "warning: $obj: skipped: its $kind sections add up to" "$scratch/err" ||
        fail "$case: no warning that the object was skipped: $(head -c 300 "$scratch/err")" ;;
    symtab-headers)
      grep -qF "warning: $obj: skipped: its symbol tables add up to" "$scratch/err" ||
        fail "$case: no warning that the object was skipped: $(head -c 300 "$scratch/err")" ;;
  esac
  rm -f "$obj"
done

# 2. Memory: a 1 MB object whose .plt of 2,000 slots all read one GOT entry, named by one 1 MB
# symbol, peaked at 1.9 GB (each slot copied the name). Names stay in the file's map now.
obj=$scratch/long-name.so
python3 "$gen" plt-long-name "$obj"
object_profile "$obj" >"$scratch/long-name.cg"
bounded "$CG_INJECT" --no-discover --perf-map "$scratch/perf-4242.map" \
  -i "$scratch/long-name.cg" -o "$scratch/long-name.out"
echo "plt-long-name: exit $got, ${seconds}s, ${peak_mb} MB"
[[ $got == 0 ]] || fail "plt-long-name: exit $got after ${seconds}s: $(head -c 300 "$scratch/err")"
((peak_mb < 400)) || fail "plt-long-name: peak RSS ${peak_mb} MB (bound: 400 MB)"
rm -f "$obj"

# 3. A rebuilt program: a PIE whose PLT slots, in `???` at Valgrind's PIE base 0x108000, the
# profile shows calling libc's free, __strcpy_avx2 (strcpy's resolver chose it), malloc and
# puts. Rebuilt with its slots in another order, they were named calloc@plt, getpid@plt,
# memchr@plt and strlen@plt, silently. A slot whose relocation names another function than the
# one its stub reaches proves the file changed, and so does a file modified after the profile:
# then that object's stubs keep their addresses, and one warning names it.
libc=$(ldd /bin/true | sed -n 's/.*=> \(\/[^ ]*libc\.so\.6\) .*/\1/p')
[[ -n $libc ]] || fail "no libc.so.6 in ldd /bin/true"
prog=$scratch/prog
stub_profile() {
  printf '# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4242\ncmd: %s\n' "$prog"
  printf 'positions: instr line\nevents: Ir\nob=???\nfl=???\n'
  local addr target
  for pair in 108080:free 108090:__strcpy_avx2 1080a0:malloc 1080b0:puts; do
    addr=${pair%%:*}
    target=${pair#*:}
    printf 'fn=0x0000000000%s\n0x%s 0 2\ncob=%s\ncfn=%s\ncalls=2 0x1000 0\n0x%s 0 1\n' \
      "$addr" "$addr" "$libc" "$target" "$addr"
  done
  printf 'ob=%s\nfn=main\n0x1200 0 7\n' "$prog"
  for addr in 108080 108090 1080a0 1080b0; do
    printf 'cob=???\ncfn=0x0000000000%s\ncalls=2 0x%s 0\n0x1204 0 3\n' "$addr" "$addr"
  done
  printf 'totals: 15\n'
}
python3 "$gen" plt-pie "$prog" free,strcpy,malloc,puts
touch -d '1 hour ago' "$prog"
stub_profile >"$scratch/stubs.cg"
inject_stubs() {
  expect_exit 0 "$CG_INJECT" --no-discover --perf-map "$scratch/perf-4242.map" \
    -i "$scratch/stubs.cg" -o "$scratch/stubs.out" || true
  callgrind_annotate --threshold=100 "$scratch/stubs.out" >"$scratch/stubs.txt" 2>&1
}
inject_stubs
for name in free strcpy malloc puts; do
  grep -qF "???:$name@plt [$prog]" "$scratch/stubs.txt" ||
    fail "the program as recorded: $name@plt not named: $(grep -F '@plt' "$scratch/stubs.txt")"
done
! grep -q 'warning:.*changed\|warning:.*modified' "$scratch/err" ||
  fail "the program as recorded: warned: $(cat "$scratch/err")"
# Rebuilt, its slots moved; its time says nothing (older than the profile): the slots say it.
python3 "$gen" plt-pie "$prog" calloc,getpid,memchr,strlen
touch -d '1 hour ago' "$prog"
inject_stubs
! grep -q '@plt' "$scratch/stubs.txt" ||
  fail "rebuilt program: stubs named: $(grep -F '@plt' "$scratch/stubs.txt")"
grep -q "???:0x0000000000108080 \[???\]" "$scratch/stubs.txt" ||
  fail "rebuilt program: the stub at 0x108080 lost its address: $(grep -F 0x "$scratch/stubs.txt")"
[[ $(grep -c 'warning:' "$scratch/err") == 1 ]] &&
  grep -qF "warning: $prog: changed since the profile was written: its PLT slot at 0x80 names calloc, but the profile shows its stub calling free in $libc; its code in ??? keeps its addresses" "$scratch/err" ||
  fail "rebuilt program: expected one warning naming it: $(cat "$scratch/err")"
# Rebuilt after the profile was written: its time says so before any stub is named.
touch "$prog"
inject_stubs
! grep -q '@plt' "$scratch/stubs.txt" ||
  fail "program modified after the profile: stubs named: $(grep -F '@plt' "$scratch/stubs.txt")"
[[ $(grep -c 'warning:' "$scratch/err") == 1 ]] &&
  grep -q "warning: $prog: modified after the profile was written (at .*, the profile at .*): not the file the profile ran, so its code in ??? keeps its addresses" "$scratch/err" ||
  fail "program modified after the profile: expected one warning naming it: $(cat "$scratch/err")"

finish
