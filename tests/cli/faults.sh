#!/usr/bin/env bash
# Faults around the output: whatever goes wrong, the target is either the complete new file or
# untouched, no temporary stays behind (except after SIGKILL, which nothing can catch: then it is
# recognizable and reported), and the message says what happened in plain words.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2

profile=$scratch/in.cg
{
  printf '# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npositions: line\nevents: Ir\n'
  printf 'summary: 20000\nfn=main\n'
  for i in $(seq 1 10000); do printf '%d 2\n' "$i"; done
  printf 'totals: 20000\n'
} >"$profile"

no_temporaries() {
  local left
  left=$(find "$scratch" -name '*.cg-inject-tmp.*' | head -n 3)
  [[ -z $left ]] || fail "$1: temporary left behind: $left"
}

# A file size limit: SIGXFSZ is ignored, EFBIG is an error like ENOSPC, nothing is left behind.
echo previous >"$scratch/big.out"
got=0
(ulimit -f 8 && exec "$CG_INJECT" --no-discover -i "$profile" -o "$scratch/big.out") 2>"$scratch/err" || got=$?
[[ $got == 1 ]] || fail "ulimit -f: exit $got, expected 1: $(cat "$scratch/err")"
grep -qx "cg-inject: $scratch/big.out: cannot write: File too large" "$scratch/err" ||
  fail "ulimit -f: message: $(cat "$scratch/err")"
[[ $(cat "$scratch/big.out") == previous ]] || fail "ulimit -f: target touched"
no_temporaries "ulimit -f"

# A full device, written directly (not renamed over): one "cannot", the device named.
if [[ -w /dev/full ]]; then
  expect_exit 1 "$CG_INJECT" --no-discover -i "$profile" -o /dev/full &&
    { grep -qx "cg-inject: /dev/full: cannot write: No space left on device" "$scratch/err" ||
      fail "/dev/full: $(cat "$scratch/err")"; }
fi

# A directory as the output of one input, or a name ending in '/', is refused before any work.
mkdir "$scratch/dir"
expect_exit 1 "$CG_INJECT" --no-discover -i "$profile" -o "$scratch/dir" &&
  { grep -qx "cg-inject: $scratch/dir: is a directory; give an output file name (a directory is for several inputs)" "$scratch/err" ||
    fail "-o DIR: $(cat "$scratch/err")"; }
expect_exit 1 "$CG_INJECT" --no-discover -i "$profile" -o "$scratch/nodir/" &&
  { grep -qx "cg-inject: $scratch/nodir/: expected an output file name, got a directory name (ends in '/')" "$scratch/err" ||
    fail "-o x/: $(cat "$scratch/err")"; }
no_temporaries "-o DIR"

# Replacing keeps the mode, and a symlink is written through: the link stays, its target changes.
echo previous >"$scratch/private.out"
chmod 0600 "$scratch/private.out"
expect_exit 0 "$CG_INJECT" --no-discover -q -i "$profile" -o "$scratch/private.out"
[[ $(stat -c %a "$scratch/private.out") == 600 ]] ||
  fail "mode not kept: $(stat -c %a "$scratch/private.out")"
mkdir "$scratch/real"
echo previous >"$scratch/real/target.out"
chmod 0640 "$scratch/real/target.out"
ln -s real/target.out "$scratch/link.out"
expect_exit 0 "$CG_INJECT" --no-discover -q -i "$profile" -o "$scratch/link.out"
[[ -L $scratch/link.out ]] || fail "symlink replaced by a regular file"
grep -q '^totals: 20000$' "$scratch/real/target.out" || fail "symlink target not written"
[[ $(stat -c %a "$scratch/real/target.out") == 640 ]] || fail "symlink target lost its mode"
no_temporaries "symlink"

# SIGKILL leaves a temporary (nothing can prevent that): it is named so that it can be recognized,
# and the next run with -v or --stats points at it.
stale=$scratch/.again.out.cg-inject-tmp.AbC123
echo partial >"$stale"
expect_exit 0 "$CG_INJECT" --no-discover -v -i "$profile" -o "$scratch/again.out" &&
  { grep -qxF "cg-inject: $stale: a temporary output left by a killed cg-inject run (safe to remove)" "$scratch/err" ||
    fail "stale temporary not reported: $(cat "$scratch/err")"; }
# Only that one: the run's own temporary is not stale.
[[ $(grep -c "killed cg-inject run" "$scratch/err") == 1 ]] ||
  fail "stale temporaries: expected exactly 1 line: $(cat "$scratch/err")"
expect_exit 0 "$CG_INJECT" --no-discover -i "$profile" -o "$scratch/again.out" &&
  { ! grep -q "killed cg-inject run" "$scratch/err" || fail "stale temporary reported without -v"; }
rm -f "$stale"
# A real SIGKILL mid-write leaves exactly such a name.
mkfifo "$scratch/fifo"
"$CG_INJECT" --no-discover -q -i "$scratch/fifo" -o "$scratch/killed.out" 2>/dev/null &
pid=$!
exec 3>"$scratch/fifo"
head -n -1 "$profile" >&3  # all but totals: the reader waits for more
sleep 0.5
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null || true
exec 3>&-
# (.NAME.cg-inject-tmp.PID.XXXXXX: the pid tells a dead run's leftover from a running one's file)
left=$(find "$scratch" -name ".killed.out.cg-inject-tmp.$pid.??????")
[[ -n $left ]] || fail "SIGKILL: expected a recognizable temporary, found: $(ls -a "$scratch")"
rm -f $left

# A mapped perf map or jitdump cut shorter while read faults with SIGBUS: an input error with a
# message, and no temporary stays (delivered by hand here: the race itself is not reproducible).
"$CG_INJECT" --no-discover -q -i "$scratch/fifo" -o "$scratch/bus.out" 2>"$scratch/bus.err" &
pid=$!
exec 3>"$scratch/fifo"
head -n -1 "$profile" >&3
sleep 0.5
kill -BUS "$pid" 2>/dev/null
status=0
wait "$pid" 2>/dev/null || status=$?
exec 3>&-
[[ $status == 1 ]] || fail "SIGBUS: exit $status, expected 1"
grep -q "became shorter while it was read (SIGBUS); no output written" "$scratch/bus.err" ||
  fail "SIGBUS: $(cat "$scratch/bus.err")"
[[ -z $(find "$scratch" -name '.bus.out.cg-inject-tmp.*') && ! -e $scratch/bus.out ]] ||
  fail "SIGBUS: output or temporary left: $(ls -a "$scratch")"

# Garbage input: control bytes are escaped in the message, a NUL does not cut it short.
printf '# callgrind format\nevents: Ir\nfn=main\n1 \033[2J\000tail\n' >"$scratch/garbage"
expect_exit 1 "$CG_INJECT" --no-discover -i "$scratch/garbage" -o "$scratch/garbage.out" &&
  { grep -qxF "cg-inject: $scratch/garbage:4: expected a cost (a decimal or 0x hex number), got '\\x1b[2J\\x00tail'" "$scratch/err" ||
    fail "garbage: $(cat -v "$scratch/err")"; }
! grep -q $'\033' "$scratch/err" || fail "garbage: raw ESC on stderr"
finish
