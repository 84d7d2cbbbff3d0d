#!/usr/bin/env bash
# Where a run writes (issue 22): no output, call graph or ELF image ever replaces a file the run
# reads (an input, stdin's file, a perf map or jitdump, named or discovered), two outputs never
# share a name, devices, FIFOs and symlinks are written through, and a run that fails leaves
# nothing it wrote: its outputs appear together at the end or not at all.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
capture=$SOURCE_ROOT/tests/data/x86_64/plain
zstd -q -d -c "$capture/callgrind.out.zst" >"$scratch/small.cg"
cp "$capture/perf-23987.map" "$scratch/small.map"
cp "$capture/jit-23987.dump" "$scratch/small.dump"
cd "$scratch"
cp small.cg small.cg.orig
cp small.map small.map.orig
cp small.dump small.dump.orig

# unchanged FILE...: each FILE still has the bytes of FILE.orig (restored if not, so that one
# failure does not hide the next).
unchanged() {
  local f
  for f in "$@"; do
    cmp -s "$f" "$f.orig" || {
      fail "$f was changed"
      rm -f "$f"
      cp "$f.orig" "$f"
    }
  done
}
no_temporaries() {
  local left
  left=$(find "$scratch" -name '*.cg-inject-tmp.*' | head -n 3)
  [[ -z $left ]] || fail "$1: temporary left behind: $left"
}
# refused WHAT MESSAGE CMD...: exit 1 with exactly "cg-inject: MESSAGE" on stderr, and the
# files read are as they were.
refused() {
  local what=$1 message=$2
  shift 2
  expect_exit 1 "$@" && { grep -qxF "cg-inject: $message" err || fail "$what: message: $(cat err)"; }
  unchanged small.cg small.map small.dump
}

# 1. --callgraph onto the input, the output, a perf map, a jitdump: refused, nothing changed.
refused "--callgraph onto -i" \
  "small.cg: --callgraph output is the input file small.cg; refusing to replace what this run reads" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph small.cg
refused "--callgraph onto -o" \
  "o.cg: the --callgraph output is also the output: one would overwrite the other; give them different names" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph o.cg
[[ ! -e o.cg ]] || fail "--callgraph onto -o: o.cg written"
refused "--callgraph onto --perf-map" \
  "small.map: --callgraph output is the perf map small.map; refusing to replace what this run reads" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph small.map
refused "--callgraph onto --jitdump" \
  "small.dump: --callgraph output is the jitdump small.dump; refusing to replace what this run reads" \
  "$CG_INJECT" -q --no-discover --jitdump small.dump -i small.cg -o o.cg --callgraph small.dump
# An existing -o file counts by inode, not by name.
echo previous >o2.cg
cp o2.cg o2.cg.orig
ln -s o2.cg o2-link.cg
refused "--callgraph onto -o via a symlink" \
  "o2-link.cg: the --callgraph output is also the output: one would overwrite the other; give them different names" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o2.cg --callgraph o2-link.cg
unchanged small.cg small.map small.dump o2.cg
[[ ! -e o.cg ]] || fail "a refused --callgraph left o.cg"
no_temporaries "refused --callgraph"

# --callgraph writes through a FIFO, a character device and a symlink; replaces a regular file
# atomically, keeping its mode.
mkfifo cg.fifo
timeout 60 cat cg.fifo >fifo.json &  # a replaced FIFO would leave it waiting
reader=$!
expect_exit 0 "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph cg.fifo || true
wait "$reader" || fail "--callgraph FIFO: nothing was written into it"
[[ -p cg.fifo ]] || fail "--callgraph FIFO: replaced by $(stat -c %F cg.fifo)"
grep -q '"functions"' fifo.json || fail "--callgraph FIFO: reader got: $(head -c 200 fifo.json)"
if mknod null.dev c 1 3 2>/dev/null; then
  expect_exit 0 "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph null.dev || true
  [[ -c null.dev ]] || fail "--callgraph char device: replaced by $(stat -c %F null.dev)"
else
  echo "note: mknod not permitted; the character-device case runs as root only"
fi
mkdir real
ln -s real/cg.json cg-link.json
expect_exit 0 "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph cg-link.json || true
[[ -L cg-link.json ]] || fail "--callgraph symlink: the link was replaced"
grep -q '"functions"' real/cg.json || fail "--callgraph symlink: target not written"
echo previous >mode.json
chmod 0640 mode.json
expect_exit 0 "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph mode.json || true
[[ $(stat -c %a mode.json) == 640 ]] || fail "--callgraph: mode not kept: $(stat -c %a mode.json)"
grep -q '"functions"' mode.json || fail "--callgraph: regular file not replaced"
no_temporaries "--callgraph targets"

# 16. --callgraph - while the profile goes to stdout: refused (both would be concatenated).
refused "--callgraph - with stdout" \
  "-: the --callgraph output and the output would both go to standard output; give one of them a file" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg --callgraph -
[[ ! -s out ]] || fail "--callgraph - with stdout: wrote $(wc -c <out) bytes"
expect_exit 0 "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o o.cg --callgraph - &&
  { grep -q '"functions"' out || fail "--callgraph - with -o FILE: no JSON on stdout"; }

# 2. -o onto a symbol source: refused, --in-place or not (it replaces an input, not a source).
for in_place in "" --in-place; do
  refused "-o onto --perf-map $in_place" \
    "small.map: output is the perf map small.map; refusing to replace what this run reads" \
    "$CG_INJECT" -q --no-discover $in_place --perf-map small.map -i small.cg -o small.map
  refused "-o onto --jitdump $in_place" \
    "small.dump: output is the jitdump small.dump; refusing to replace what this run reads" \
    "$CG_INJECT" -q --no-discover $in_place --jitdump small.dump -i small.cg -o small.dump
done
# A discovered source (the profile's pid is 23987) is read too.
mkdir jd
cp small.map jd/perf-23987.map
cp small.map jd/perf-23987.map.orig
refused "-o onto a discovered perf map" \
  "jd/perf-23987.map: output is the symbol source jd/perf-23987.map; refusing to replace what this run reads" \
  "$CG_INJECT" -q --jit-dir jd -i small.cg -o jd/perf-23987.map
unchanged small.map small.dump jd/perf-23987.map

# 3. stdin that is a regular file is an input: by inode, whatever the name.
refused "-i - < FILE -o FILE" \
  "small.cg: output is the file on standard input; use --in-place to replace it" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i - -o small.cg <small.cg
refused "-o /proc/self/fd/0" \
  "/proc/self/fd/0: output is the file on standard input; use --in-place to replace it" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i - -o /proc/self/fd/0 <small.cg
unchanged small.cg
# stdout appending to an input would read what it writes.
got=0
"$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg >>small.cg 2>err || got=$?
[[ $got == 1 ]] || fail "-i FILE >>FILE: exit $got"
grep -qxF "cg-inject: <stdout>: output is the input file small.cg; use --in-place to replace it" err ||
  fail "-i FILE >>FILE: $(cat err)"
unchanged small.cg
# --in-place allows it (the old file stays open for reading, the new one is renamed over it).
cp small.cg inplace.cg
expect_exit 0 "$CG_INJECT" -q --no-discover --perf-map small.map --in-place -i - -o inplace.cg <inplace.cg || true
grep -q '^fn=.*fib' inplace.cg || fail "--in-place with stdin: no JIT names in the result"

# 4. Two inputs with one basename into one directory: refused before any work.
mkdir x y outdir
cp small.cg x/callgrind.out
cp small.cg y/callgrind.out
refused "one basename twice" \
  "outdir/callgrind.out.jit: the output of y/callgrind.out is also the output of x/callgrind.out: one would overwrite the other; run inputs with one basename separately" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i x/callgrind.out -i y/callgrind.out -o outdir
[[ -z $(ls -A outdir) ]] || fail "one basename twice: wrote $(ls -A outdir)"

# 5. One bad input among several: no output at all, and stderr says so and names what was not
# read. Run one at a time (--progress keeps the inputs on one thread, in order).
cp small.cg a.cg
cp small.cg b.cg
printf '# callgrind format\nevents: Ir\nfn=main\n12 abc\n' >bad.cg
mkdir many
expect_exit 1 "$CG_INJECT" --no-discover --perf-map small.map --progress -i a.cg -i bad.cg -i b.cg -o many &&
  {
    grep -qF "cg-inject: bad.cg:4: " err || fail "bad input not named: $(cat err)"
    grep -qF "cg-inject: no output written: outputs are written only when all 3 inputs succeed; not read: b.cg" err ||
      fail "several inputs, one bad: $(cat err)"
  }
[[ -z $(ls -A many) ]] || fail "several inputs, one bad: left $(ls -A many)"
# On threads too (the order is not fixed there, the outcome is).
expect_exit 1 "$CG_INJECT" -q --no-discover --perf-map small.map -i a.cg -i bad.cg -i b.cg -o many &&
  { grep -q "^cg-inject: no output written: outputs are written only when all 3 inputs succeed" err ||
    fail "several inputs on threads: $(cat err)"; }
[[ -z $(ls -A many) ]] || fail "several inputs on threads, one bad: left $(ls -A many)"

# 6. After an error nothing the run wrote remains: --callgraph that cannot be written (its
# parent is a file) leaves no -o file and no images...
echo file >notadir
expect_exit 1 "$CG_INJECT" -q --no-discover --jitdump small.dump -i small.cg -o img.cg --callgraph notadir/cg.json &&
  { grep -qxF "cg-inject: notadir/cg.json: cannot create: Not a directory" err || fail "--callgraph under a file: $(cat err)"; }
[[ -z $(compgen -G 'img.cg*') ]] || fail "--callgraph under a file: left $(compgen -G 'img.cg*')"
# ...and a file size limit that only the profile exceeds leaves no image either (zstd writes most
# of the profile at its end, after the images; issue 23 item 9).
expect_exit 0 "$CG_INJECT" -q --no-discover --jitdump small.dump -i small.cg -o full.cg.zst || true
image_bytes=$(stat -c %s full.cg.zst.small.dump.elf)
profile_bytes=$(stat -c %s full.cg.zst)
rm -f full.cg.zst*
limit=$(((image_bytes + 1023) / 1024 + 1))
if ((limit * 1024 < profile_bytes)); then
  got=0
  (ulimit -f "$limit" && exec "$CG_INJECT" -q --no-discover --jitdump small.dump -i small.cg -o lim.cg.zst) 2>err || got=$?
  [[ $got == 1 ]] || fail "ulimit -f $limit: exit $got: $(cat err)"
  grep -qxF "cg-inject: lim.cg.zst: cannot write: File too large" err || fail "ulimit -f: $(cat err)"
  [[ -z $(compgen -G 'lim.cg*') ]] || fail "ulimit -f: left $(compgen -G 'lim.cg*')"
else
  fail "no file size limit between the image ($image_bytes bytes) and the profile ($profile_bytes)"
fi
no_temporaries "failed runs"

# 10. A valid output name of 234-255 bytes works, and its image names are shortened to fit; a
# name over 255 bytes is refused naming it.
long=$(printf 'L%.0s' $(seq 1 250)).cg
expect_exit 0 "$CG_INJECT" -q --no-discover --jitdump small.dump -i small.cg -o "$long" || true
[[ -s $long ]] || fail "255-byte output name: not written: $(cat err)"
images=$(compgen -G 'LLLL*.elf' || true)
[[ -n $images ]] || fail "255-byte output name: no image written"
for image in $images; do
  ((${#image} <= 255)) || fail "image name of ${#image} bytes"
done
first_image=$(compgen -G 'LLLL*.small.dump.elf' || true)
[[ -n $first_image ]] && grep -qF "$scratch/$first_image" "$long" ||
  fail "profile does not name the image $first_image"
too_long=$(printf 'T%.0s' $(seq 1 256))
refused "256-byte output name" \
  "$too_long: cannot create: the name '$too_long' is 256 bytes, more than the 255 a file name may have" \
  "$CG_INJECT" -q --no-discover --perf-map small.map -i small.cg -o "$too_long"
no_temporaries "long names"

# 7. A signal right after the temporary output is created. strace delays the return of every
# openat by 0.1 s: a signal sent as soon as the temporary exists arrives before the open() that
# made it has returned, so the handler must already know the name.
if strace -o /dev/null true 2>/dev/null; then
  for sig in TERM INT HUP TERM INT HUP; do
    strace -o /dev/null -e trace=openat -e inject=openat:delay_exit=100000 \
      "$CG_INJECT" -q --no-discover -i small.cg -o sig.cg 2>/dev/null &
    tracer=$!
    for _ in $(seq 1 3000); do
      compgen -G '.sig.cg.cg-inject-tmp.*' >/dev/null && break
      sleep 0.01
    done
    kill -"$sig" "$(pgrep -P "$tracer")" 2>/dev/null || fail "SIG$sig: no cg-inject to signal"
    wait "$tracer" 2>/dev/null || true
    left=$(compgen -G '.sig.cg.cg-inject-tmp.*' || true)
    [[ -z $left ]] || fail "SIG$sig right after the temporary was created: left $left"
    rm -f .sig.cg.cg-inject-tmp.* sig.cg
  done
else
  echo "note: strace cannot trace here; the signal race is not checked"
fi

# 15. -v calls a temporary "left by a killed run" only when its owner is gone: a run still
# writing (blocked on a FIFO input) is not killed.
mkfifo slow.fifo
"$CG_INJECT" -q --no-discover -i slow.fifo -o busy.cg 2>/dev/null &
writer=$!
exec 3>slow.fifo
head -n -1 small.cg >&3 # all but totals: past the 64 KiB read before the output is created
for _ in $(seq 1 500); do
  compgen -G '.busy.cg.cg-inject-tmp.*' >/dev/null && break
  sleep 0.01
done
expect_exit 0 "$CG_INJECT" -v --no-discover --perf-map small.map -i small.cg -o busy.cg &&
  { ! grep -q "killed cg-inject run" err || fail "a running run's temporary called stale: $(cat err)"; }
kill -KILL "$writer"
wait "$writer" 2>/dev/null || true
exec 3>&-
stale=$(compgen -G ".busy.cg.cg-inject-tmp.$writer.??????" || true)
[[ -n $stale ]] || fail "SIGKILL: no temporary named with the pid $writer: $(ls -A)"
expect_exit 0 "$CG_INJECT" -v --no-discover --perf-map small.map -i small.cg -o busy.cg &&
  { grep -qxF "cg-inject: $stale: a temporary output left by a killed cg-inject run (safe to remove)" err ||
    fail "a dead run's temporary not reported: $(cat err)"; }
rm -f .busy.cg.cg-inject-tmp.*

# blocked_run OUTPUT: starts cg-inject reading a FIFO that gets all of small.cg but its totals:
# line, so it has created OUTPUT's temporary and waits for more; sets `runner` (its pid) and
# keeps the FIFO open on fd 3 (close it with `exec 3>&-`).
blocked_run() {
  rm -f blocked.fifo
  mkfifo blocked.fifo
  # A script's background command starts with SIGINT and SIGQUIT ignored: env gives it the
  # default dispositions, as a terminal's command has (without, a build that does not handle
  # SIGQUIT would ignore it, and the check would wait for ever).
  env --default-signal "$CG_INJECT" -q --no-discover -i blocked.fifo -o "$1" 2>blocked.err &
  runner=$!
  exec 3>blocked.fifo
  head -n -1 small.cg >&3
  local tmp_dir
  tmp_dir=$(dirname "$1")
  for _ in $(seq 1 3000); do
    compgen -G "$tmp_dir/.$(basename "$1").cg-inject-tmp.*" >/dev/null && return
    sleep 0.01
  done
  fail "blocked_run $1: no temporary appeared"
}

# 17. Every signal whose default action ends the process removes the temporaries (issue 36 item 4:
# QUIT, USR1, USR2, ALRM, VTALRM, PROF, TRAP, SYS, XCPU, PWR and STKFLT left them; the man page
# said only SIGKILL could). Those sent by another process end the run with 128+N; TRAP and SYS,
# which a fault would raise, end it as the signal itself (a core dump, status 128+N in bash).
for sig in QUIT USR1 USR2 ALRM VTALRM PROF TRAP SYS XCPU PWR STKFLT IO RTMIN RTMAX; do
  blocked_run sig17.cg
  kill -"$sig" "$runner"
  # Ended: gone, or a zombie until `wait` (state Z in /proc/PID/stat).
  for _ in $(seq 100); do [[ $(cut -d' ' -f3 "/proc/$runner/stat" 2>/dev/null) =~ ^(Z|)$ ]] && break; sleep 0.1; done
  [[ $(cut -d' ' -f3 "/proc/$runner/stat" 2>/dev/null) =~ ^(Z|)$ ]] ||
    { fail "SIG$sig did not end the run"; kill -KILL "$runner"; }
  rc=0
  wait "$runner" 2>/dev/null || rc=$?
  exec 3>&-
  signo=$(kill -l "$sig")
  [[ $rc == $((128 + signo)) ]] || fail "SIG$sig: exit $rc, expected $((128 + signo))"
  left=$(compgen -G '.sig17.cg.cg-inject-tmp.*' || true)
  [[ -z $left && ! -e sig17.cg ]] || fail "SIG$sig: left $left $(compgen -G 'sig17.cg*' || true)"
  rm -f .sig17.cg.cg-inject-tmp.* sig17.cg core core.*
done

# 18. The output's directory renamed during the run (issue 36 item 5: "cannot replace", and the
# temporary stayed in the renamed directory). The temporary is made, renamed and removed
# through a handle on the directory: the output lands in it under its new name; a failure or a
# signal leaves nothing in it.
mkdir moving
blocked_run moving/out.cg
mv moving moved
tail -n 1 small.cg >&3
exec 3>&-
rc=0
wait "$runner" || rc=$?
[[ $rc == 0 ]] || fail "renamed directory: exit $rc: $(cat blocked.err)"
cmp -s moved/out.cg <("$CG_INJECT" -q --no-discover -i small.cg) ||
  fail "renamed directory: moved/out.cg is not the output: $(ls -A moved)"
[[ -z $(find . -name '*.cg-inject-tmp.*') ]] || fail "renamed directory: $(find . -name '*.cg-inject-tmp.*')"
rm -rf moved
mkdir moving
blocked_run moving/out.cg
mv moving moved
printf 'fn=main\nnot a cost line\n' >&3  # the run fails
exec 3>&-
rc=0
wait "$runner" || rc=$?
[[ $rc == 1 ]] || fail "renamed directory, failed run: exit $rc: $(cat blocked.err)"
[[ -z $(ls -A moved) ]] || fail "renamed directory, failed run: left $(ls -A moved)"
rm -rf moved
mkdir moving
blocked_run moving/out.cg
mv moving moved
kill -TERM "$runner"
wait "$runner" 2>/dev/null || true
exec 3>&-
[[ -z $(ls -A moved) ]] || fail "renamed directory, SIGTERM: left $(ls -A moved)"
rm -rf moved blocked.fifo

# 19. A jitdump that loads one address 10,000 times, under another name each time, for a profile
# that ran one of them: 10,000 ELF images were written (issue 36 item 6). Only the images the
# output names are written, and --stats says how many versions got none.
python3 - reload.dump <<'PY'
import struct, sys
out = bytearray(struct.pack('<IIIIIIQQ', 0x4A695444, 1, 40, 62, 0, 4343, 1000, 0))
code = b'\x90' * 15 + b'\xc3'
for i in range(10000):
    name = b'reloaded_%d\0' % i
    body = struct.pack('<IIQQQQ', 4343, 4343, 0x7f0000001000, 0x7f0000001000, len(code), i)
    body += name + code
    out += struct.pack('<IIQ', 0, 16 + len(body), 2000 + i) + body
open(sys.argv[1], 'wb').write(out)
PY
cat >reload.cg <<'CG'
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4343
positions: instr line
events: Ir
ob=???
fl=???
fn=0x00007f0000001000
0x7f0000001000 0 15
+15 0 1
totals: 16
CG
mkdir reload
expect_exit 0 timeout 120 "$CG_INJECT" --no-discover --jitdump reload.dump -i reload.cg \
  -o reload/out.cg --stats && {
  images=$(find reload -name '*.elf' | wc -l)
  [[ $images == 1 ]] || fail "10,000 reloads: $images images written, expected 1"
  grep -qx 'cg-inject: 9999 code versions the profile never ran: no image (9999 images not written)' err ||
    fail "10,000 reloads: --stats does not say what was not written: $(grep -i image err)"
  ob=$(sed -n 's/^ob=([0-9]*) \(.*\.elf\)$/\1/p' reload/out.cg | head -n 1)
  [[ -f $ob ]] || fail "10,000 reloads: ob= names $ob, which was not written"
}
rm -rf reload reload.dump reload.cg

finish
