#!/usr/bin/env bash
# KCachegrind's machine-code view on every stored JIT capture (tests/data: the test JIT on x86-64
# and AArch64 in every scenario, Node 20 with --perf-prof, MoarVM's raw code files): cg-inject writes ELF images of the JIT
# code, and check_machine_code.py runs KCachegrind's own objdump command on each function's ob=
# (resolved as KCachegrind resolves it, from a working directory other than the profile's),
# compares the bytes with the jitdump's, asks addr2line for the jitdump's lines and readelf for
# warnings. Then the naming modes: relative names moved with the profile, --elf-dir, stdout.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
data=$SOURCE_ROOT/tests/data
check=$SOURCE_ROOT/tests/cli/check_machine_code.py
elsewhere=$scratch/elsewhere
mkdir -p "$elsewhere"

# check_outputs ARCH PROFILE... -- SOURCES...: runs the checker on each profile from $elsewhere.
check_outputs() {
  local arch=$1 objdump=objdump addr2line=addr2line
  shift
  if [[ $arch == aarch64 ]]; then
    objdump=aarch64-linux-gnu-objdump
    addr2line=aarch64-linux-gnu-addr2line
  fi
  local profiles=()
  while [[ $1 != -- ]]; do
    profiles+=("$1")
    shift
  done
  shift
  for p in "${profiles[@]}"; do
    (cd "$elsewhere" && python3 "$check" "$p" "$objdump" "$addr2line" "$@") ||
      fail "machine code of $p"
  done
}

for arch in x86_64 aarch64; do
  for scenario in instr jumps parts threads skip plain; do
    dir=$data/$arch/$scenario
    [[ -d $dir ]] || {
      fail "missing capture $dir"
      continue
    }
    dump=$(echo "$dir"/jit-*.dump)
    out=$scratch/$arch-$scenario
    mkdir -p "$out"
    inputs=()
    for f in "$dir"/callgrind.out*.zst; do inputs+=("$f"); done
    if ((${#inputs[@]} == 1)); then
      expect_exit 0 "$CG_INJECT" --no-discover -i "${inputs[0]}" --jitdump "$dump" \
        -o "$out/callgrind.out.jit" --stats || continue
    else
      expect_exit 0 "$CG_INJECT" --no-discover "${inputs[@]}" --jitdump "$dump" -o "$out" ||
        continue
    fi
    outputs=("$out"/callgrind.out*.jit)
    if [[ $scenario == plain ]]; then
      # No instruction positions, so nothing to disassemble: ob= must still name an image.
      grep -Eq "^c?ob=.*$out/callgrind.out.jit.jit-[0-9]*.dump.elf" "${outputs[0]}" ||
        fail "$arch plain: ob= does not name the image"
      continue
    fi
    # skip: instrumentation started inside c_apply, called from jit_cb; Callgrind writes that
    # rebuilt frame's call site as the return address - 1 (one position, not an instruction).
    rebuilt=0
    [[ $scenario == skip ]] && rebuilt=1
    REBUILT_CALL_SITES=$rebuilt check_outputs "$arch" "${outputs[@]}" -- "$dump"
  done
  # Reused address: jit_reuse_v1 and v2 ran at 0x5b003000, so a second image holds v2.
  ls "$scratch/$arch-instr/"*.dump.2.elf >/dev/null 2>&1 || fail "$arch instr: no second image"
done

# Node 20's jitdump (V8 writes line rows 0x40 too high and some tables from freed memory:
# cg-inject corrects or drops those, so only matching tables are counted).
node_out=$scratch/node
mkdir -p "$node_out"
expect_exit 0 "$CG_INJECT" --no-discover -i "$data/node/prof/callgrind.out.zst" \
  --jitdump "$data"/node/prof/jit-*.dump.zst -o "$node_out/callgrind.out.jit" &&
  LINES=v8 check_outputs x86_64 "$node_out/callgrind.out.jit" -- "$data"/node/prof/jit-*.dump.zst

# MoarVM (Rakudo 2022.12): perf map plus the raw code files MVM_JIT_DUMP_BYTECODE=1 wrote, found
# beside the map (tests/data/moar/moar-jit.PID), paired by compile order and checked by size.
moar=$data/moar
moar_out=$scratch/moar
mkdir -p "$moar_out"
expect_exit 0 "$CG_INJECT" --no-discover -i "$moar/callgrind.out.zst" --perf-map "$moar"/perf-*.map \
  -o "$moar_out/callgrind.out.jit" --stats && {
  grep -q "MoarVM code files in .*moar-jit.25521: 44 of 44 paired with the perf map's 44 lines (0 size mismatches)" \
    "$scratch/err" || fail "moar: --stats does not report the pairing: $(grep MoarVM "$scratch/err")"
  check_outputs x86_64 "$moar_out/callgrind.out.jit" -- "moar:$(echo "$moar"/perf-*.map):$(echo "$moar"/moar-jit.*)"
}

# --elf-path=relative: bare names, found beside the profile after both moved together.
x86=$data/x86_64/instr
rel=$scratch/rel
mkdir -p "$rel"
expect_exit 0 "$CG_INJECT" --no-discover -i "$x86/callgrind.out.zst" --jitdump "$x86"/jit-*.dump \
  -o "$rel/p.jit" --elf-path=relative && {
  grep -Eq '^c?ob=\([0-9]+\) p.jit.jit-24022.dump.elf$' "$rel/p.jit" || fail "relative: bare ob= missing"
  grep -Eq "^c?ob=.*/p.jit.jit" "$rel/p.jit" && fail "relative: ob= holds a path"
  mv "$rel" "$scratch/moved"
  check_outputs x86_64 "$scratch/moved/p.jit" -- "$x86"/jit-*.dump
}

# --elf-dir: images elsewhere, ob= absolute; also for stdout.
expect_exit 0 "$CG_INJECT" --no-discover -i "$x86/callgrind.out.zst" --jitdump "$x86"/jit-*.dump \
  --elf-dir "$scratch/images/new" -o "$scratch/d.jit" && {
  [[ -f $scratch/images/new/d.jit.jit-24022.dump.elf ]] || fail "--elf-dir: no image there"
  check_outputs x86_64 "$scratch/d.jit" -- "$x86"/jit-*.dump
}
expect_exit 0 "$CG_INJECT" --no-discover -i "$x86/callgrind.out.zst" --jitdump "$x86"/jit-*.dump \
  --elf-dir "$scratch/images" && {
  [[ -f $scratch/images/stdout.jit-24022.dump.elf ]] || fail "--elf-dir with stdout: no image"
  grep -Eq "^c?ob=.*$scratch/images/stdout.jit-24022.dump.elf" "$scratch/out" ||
    fail "--elf-dir with stdout: ob= does not name the image"
}

# stdout without --elf-dir, and --no-elf: no images, ob= names the jitdump as before.
expect_exit 0 "$CG_INJECT" --no-discover -i "$x86/callgrind.out.zst" --jitdump "$x86"/jit-*.dump && {
  grep -Eq '^c?ob=.* jit-24022.dump$' "$scratch/out" || fail "stdout: ob= changed"
  grep -q '\.elf$' "$scratch/out" && fail "stdout: ob= names an image"
}
mkdir -p "$scratch/none"
expect_exit 0 "$CG_INJECT" --no-discover -i "$x86/callgrind.out.zst" --jitdump "$x86"/jit-*.dump \
  -o "$scratch/none/p.jit" --no-elf && {
  [[ $(ls "$scratch/none") == p.jit ]] || fail "--no-elf wrote: $(ls "$scratch/none")"
}

# --stats=json carries the images.
expect_exit 0 "$CG_INJECT" --no-discover -i "$x86/callgrind.out.zst" --jitdump "$x86"/jit-*.dump \
  -o "$scratch/s.jit" --stats=json && {
  python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["elf_images"]
assert s["images"] == 2 and s["functions"] == 11 and s["versions"] == 11, s
' "$scratch/err" || fail "--stats=json: elf_images"
}
finish
