#!/bin/bash
# Issue 23 item 7 end to end: a real object's stub that Callgrind puts in `ob=???` is named as
# objdump names it, under its object, and is no unnamed JIT code in --stats.
#   check.sh CG_INJECT VALGRIND_PREFIX
# A small C program, built here as a PIE with immediate binding, calls free through its .plt.got
# slot (free's address is also taken through the GOT, as in mono-sgen and beam.smp). Valgrind
# knows .text and .plt but not .plt.got, so Callgrind writes the slot in `???`, named by its
# runtime address: the slot's ELF address plus 0x108000, where Valgrind maps a PIE executable.
set -euo pipefail
cg_inject=${1:?usage: check.sh CG_INJECT VALGRIND_PREFIX}
cg_inject=$(cd "$(dirname "$cg_inject")" && pwd -P)/$(basename "$cg_inject")
vg=$(cd "${2:?usage: check.sh CG_INJECT VALGRIND_PREFIX}" && pwd -P)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
unset MALLOC_PERTURB_
failed=0
fail() { echo "FAIL: $*"; failed=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat >prog.c <<'C'
#include <stdlib.h>
#include <string.h>
void (*volatile release)(void*);
int main(int argc, char** argv) {
  release = free;
  long n = 0;
  for (int i = 0; i < 1000; ++i) {
    char* p = malloc(16 + i);
    strcpy(p, argv[0]);
    n += strcmp(p, "x");
    free(p);
  }
  release(malloc(1));
  return n == 12345;
}
C
gcc -O1 -fpie -pie -Wl,-z,now prog.c -o prog
slot=$(objdump -d -j .plt.got prog | sed -n 's/^\([0-9a-f]*\) <free@plt>:$/\1/p')
[[ -n $slot ]] || { echo "FAIL: gcc put no free@plt in .plt.got: $(objdump -d -j .plt.got prog)"; exit 1; }
runtime=$(printf '0x%016x' $((0x$slot + 0x108000)))

"$vg/bin/valgrind" --tool=callgrind --dump-instr=yes --collect-jumps=yes \
  --callgrind-out-file=callgrind.out ./prog >/dev/null 2>valgrind.log ||
  { echo "FAIL: Valgrind: $(tail -5 valgrind.log)"; exit 1; }
# The input: the slot in `???` under its address (this also checks Valgrind's PIE base).
callgrind_annotate --threshold=100 callgrind.out >in.txt 2>&1
in_line=$(grep -F "???:$runtime [???]" in.txt || true)
[[ -n $in_line ]] || { echo "FAIL: no ???:$runtime in the profile: Callgrind placed free@plt elsewhere"; grep -F '???' in.txt | head -5; exit 1; }
in_cost=$(sed 's/^ *\([0-9,]*\) .*/\1/' <<<"$in_line")

# A source with code elsewhere, so that cg-inject injects at all (without sources nothing is
# renamed).
printf '7f0000001000 40 not_in_this_run\n' >perf-1.map
"$cg_inject" --no-discover --perf-map perf-1.map --stats -i callgrind.out -o out 2>stats.txt ||
  { echo "FAIL: cg-inject: $(cat stats.txt)"; exit 1; }
callgrind_annotate --threshold=100 out >out.txt 2>&1
out_line=$(grep -F "???:free@plt [$tmp/prog]" out.txt || true)
[[ -n $out_line ]] || fail "free@plt not named under $tmp/prog: $(grep -F '@plt' out.txt | head -3)"
out_cost=$(sed 's/^ *\([0-9,]*\) .*/\1/' <<<"$out_line")
[[ $out_cost == "$in_cost" ]] || fail "free@plt has $out_cost Ir, the input's $runtime had $in_cost"
! grep -qF "$runtime" out || fail "the output still names $runtime"
! grep -qF "$runtime" stats.txt || fail "--stats still lists $runtime as unresolved JIT code"
# main's calls reach free@plt, and free@plt's reach libc's free.
callgrind_annotate --tree=calling --threshold=100 out >tree.txt 2>&1
main_calls=$(grep -A12 -E "\*  \?\?\?:main \[$tmp/prog\]" tree.txt || true)
grep -qE ">   \?\?\?:free@plt \(1,000x\) \[$tmp/prog\]" <<<"$main_calls" ||
  fail "main does not call free@plt 1,000 times: $(grep -F free@plt tree.txt | head)"
stub_calls=$(grep -A1 -E "\*  \?\?\?:free@plt \[$tmp/prog\]" tree.txt || true)
grep -qE ">   .*:free \([0-9,]+x\) \[.*libc\.so\.6\]" <<<"$stub_calls" ||
  fail "free@plt does not call libc's free: $(grep -A1 -F free@plt tree.txt | head)"
# Its cost at the slot's ELF address, as Callgrind writes a real object's code, so KCachegrind's
# machine code view finds it with objdump (KCachegrind's reading of the output).
python3 "$here/../../cli/kcachegrind_reading.py" out >kc.txt
grep -qF "instr (('free@plt', '', 'prog'), $((0x$slot))) [('Ir', ${in_cost//,/})]" kc.txt ||
  fail "free@plt's cost is not at its ELF address 0x$slot: $(grep -F "instr (('free@plt'" kc.txt)"
total=$(sed -n 's/^summary: //p' callgrind.out)
before=$(sed -n 's/^cg-inject: Ir in unnamed JIT code: .* (\([0-9]*\) -> .*/\1/p' stats.txt)
echo "free@plt at $runtime: $in_cost Ir, named; unnamed JIT code before: $before of $total Ir"

# Issue 36 item 3: the program rebuilt after profiling (the usual loop), calling more functions,
# so that its PLT slots move (free@plt's old address is strtol@plt's now). The profile's stubs
# were named after the new slots, silently. Now: the file modified after the profile says so,
# and so does a slot that names another function than the one its stub calls; either way the
# program's stubs keep their addresses, with one warning naming it.
sed 's/  long n = 0;/  long n = 0;\n  n += atoi(argv[0]) + puts("x") + abs(argc);/' prog.c >prog2.c
sed -i '1i #include <stdio.h>' prog2.c
gcc -O1 -fpie -pie -Wl,-z,now prog2.c -o prog.new 2>gcc.log || { echo "FAIL: rebuild: $(cat gcc.log)"; exit 1; }
cp -p prog prog.recorded  # -p: its time is the time the profiled program had
mv prog.new prog
new_slot=$(objdump -d -j .plt.got prog | sed -n 's/^\([0-9a-f]*\) <free@plt>:$/\1/p')
touch prog  # after the profile
"$cg_inject" --no-discover --perf-map perf-1.map -i callgrind.out -o rebuilt 2>rebuilt.err ||
  fail "rebuilt program: cg-inject failed: $(cat rebuilt.err)"
! grep -q '@plt' rebuilt || fail "rebuilt program: stubs named: $(grep '@plt' rebuilt | head -3)"
[[ $(grep -c 'warning:' rebuilt.err) == 1 ]] &&
  grep -q "^warning: $tmp/prog: modified after the profile was written" rebuilt.err ||
  fail "rebuilt program: expected one warning naming it: $(cat rebuilt.err)"
if [[ $new_slot != "$slot" ]]; then
  touch -r prog.recorded prog  # its time no longer tells: the slot does
  "$cg_inject" --no-discover --perf-map perf-1.map -i callgrind.out -o rebuilt 2>rebuilt.err ||
    fail "rebuilt program, old time: cg-inject failed: $(cat rebuilt.err)"
  ! grep -q '@plt' rebuilt || fail "rebuilt program, old time: stubs named: $(grep '@plt' rebuilt | head -3)"
  # The proof is the first stub the profile shows calling through a slot that now names another
  # function (free's or __cxa_finalize's, whichever block comes first): the warning must name a
  # slot the rebuilt program has, with its symbol, and a function the recorded program's stub
  # for that address called.
  proof='^warning: '"$tmp"'/prog: changed since the profile was written: its PLT slot at 0x([0-9a-f]+) names ([^,]+), but the profile shows its stub calling ([^ ]+) in /'
  line=$(grep -E "$proof" rebuilt.err)
  if [[ $(grep -c 'warning:' rebuilt.err) == 1 && $line =~ $proof ]]; then
    at=${BASH_REMATCH[1]} now=${BASH_REMATCH[2]} called=${BASH_REMATCH[3]}
    # Whole listings, not a pipe into grep -q: pipefail would count objdump's SIGPIPE.
    rebuilt_listing=$(objdump -d prog) recorded_listing=$(objdump -d prog.recorded)
    grep -qE "^0*$at <${now%%@*}(@plt)?>:" <<<"$rebuilt_listing" ||
      fail "rebuilt program, old time: the rebuilt program has no slot $now at 0x$at"
    grep -qE "<${called}@plt>:" <<<"$recorded_listing" ||
      fail "rebuilt program, old time: the recorded program had no stub calling $called"
    [[ ${now%%@*} != "$called" ]] || fail "rebuilt program, old time: slot and call agree: $line"
  else
    fail "rebuilt program, old time: expected one warning naming it: $(cat rebuilt.err)"
  fi
else
  echo "note: the rebuilt program's free@plt did not move (0x$slot); the slot check is not run"
fi
((failed == 0)) && echo "all checks passed"
exit $failed
