#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR/fuzz for SECONDS each, seeded from the
# project's test data and, when present, ../shared/corpus. Fails on the first crash.
set -euo pipefail
build_dir=${1:?usage: run-all.sh BUILD_DIR SECONDS}
seconds=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)

seeds_for() {
  case "$1" in
    callgrind_*) echo "$root/tests/data" "$root/../shared/corpus/callgrind" ;;
    perf_map_*) echo "$root/tests/data" "$root/../shared/corpus/perfmap" ;;
    jitdump_*) echo "$root/tests/data" "$root/../shared/corpus/jitdump" ;;
    pipeline_*) echo "$root/tests/data/bad" "$root/../shared/corpus/callgrind" ;;
  esac
}

# pipeline_fuzzer reads "SOURCE\n--cg-inject-fuzz-profile--\nPROFILE": each capture directory
# gives seeds pairing its profile (zstd and plain) with its jitdump and with its perf map.
pipeline_seeds() {
  local out=$1 n=0 dir source profile
  for dir in "$root"/tests/data/*/*/; do
    for profile in "$dir"callgrind.out*.zst; do
      [[ -f $profile ]] || continue
      for source in "$dir"jit-*.dump "$dir"perf-*.map; do
        [[ -f $source ]] || continue
        n=$((n + 1))
        { cat "$source"; printf '\n--cg-inject-fuzz-profile--\n'; cat "$profile"; } >"$out/pair-$n-z"
        { cat "$source"; printf '\n--cg-inject-fuzz-profile--\n'; zstd -q -d -c "$profile"; } >"$out/pair-$n"
      done
    done
  done
}

# Objects named by ob= (issue 36): "MAP\n--cg-inject-fuzz-profile--\nPROFILE\n--cg-inject-fuzz-object--\nELF",
# whose profile names the object (@OBJECT@: the pipeline fuzzer writes it to a file and puts the
# file's path there) as the program, as a block's object and as the object of a stub that
# Callgrind left in ??? (its PLT slot at 0x80, at Valgrind's PIE base 0x108000), which calls libc.
# The objects: tests/cli/hostile_elf.py's cases, scaled down, a compiled PIE and /bin/true.
object_seeds() {
  local out=$1 gen=$root/tests/cli/hostile_elf.py n=0 obj libc
  libc=$(ldd /bin/true 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*libc\.so\.6\) .*/\1/p')
  local objects=$out/objects
  mkdir -p "$objects"
  python3 "$gen" plt-pie "$objects/pie" free,malloc
  python3 "$gen" plt-ok "$objects/ok"
  python3 "$gen" rela-headers "$objects/rela" 300 1000
  python3 "$gen" dynamic-headers "$objects/dynamic" 300 1000
  python3 "$gen" note-headers "$objects/note" 300 1000
  python3 "$gen" symtab-headers "$objects/symtab" 300 500
  python3 "$gen" symtab-aliases "$objects/aliases" 4000
  python3 "$gen" plt-long-name "$objects/long" 20000 200
  cp /bin/true "$objects/true"
  if command -v gcc >/dev/null; then
    printf 'int main(void) { return 0; }\n' >"$objects/p.c"
    gcc -O1 -fpie -pie "$objects/p.c" -o "$objects/gcc-pie" 2>/dev/null || true
    rm -f "$objects/p.c"
  fi
  for obj in "$objects"/*; do
    n=$((n + 1))
    {
      printf '1080a0 10 unrelated\n4000100 40 js_code\n'
      printf '\n--cg-inject-fuzz-profile--\n'
      printf '# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 1\ncmd: @OBJECT@\n'
      printf 'positions: instr line\nevents: Ir\nob=@OBJECT@\nfl=???\nfn=0x4000100\n0x4000100 0 10\n'
      printf 'ob=???\nfn=0x0000000000108080\n0x108080 0 3\ncob=%s\ncfn=free\ncalls=3 0x1000 0\n' "${libc:-/lib/libc.so.6}"
      printf '0x108080 0 30\nob=@OBJECT@\nfn=main\n0x90 0 5\ncob=???\ncfn=0x0000000000108080\n'
      printf 'calls=3 0x108080 0\n0x94 0 33\ntotals: 18\n'
      printf '\n--cg-inject-fuzz-object--\n'
      cat "$obj"
    } >"$out/object-$n"
  done
  rm -rf "$objects"
}

shopt -s nullglob
ran=0
for fuzzer in "$build_dir"/fuzz/*_fuzzer; do
  name=$(basename "$fuzzer")
  work=$(mktemp -d)
  trap 'rm -rf "$work" "$work-regressions"' EXIT
  seed_dirs=()
  for d in $(seeds_for "$name"); do
    [[ -d "$d" ]] || continue
    # Seed files only (libFuzzer reads directories one level deep).
    find "$d" -type f -size -2M -exec cp -t "$work" {} + 2>/dev/null || true
  done
  mkdir -p "$work/corpus"
  max_len=65536
  # Every case is bounded: reading inputs and the objects they name is linear in their size,
  # so a case that takes 30 s or 2 GB is a finding (issue 36: a 6.6 MB object took 103 s, a 1 MB
  # one 1.9 GB).
  limits=(-timeout=30 -rss_limit_mb=2048)
  regressions=()
  if [[ -d $root/fuzz/regressions/$name ]]; then regressions+=("$root/fuzz/regressions/$name"/*); fi
  if [[ $name == pipeline_* ]]; then
    pipeline_seeds "$work"
    object_seeds "$work"
    max_len=300000  # whole captures (200 KB of text) are the interesting seeds
    # Issue 36's objects at a size where the old readers broke the bounds (1 GB of copies of
    # one 250 KB name; 200 million relocations read), made here rather than committed.
    # (Outside $work: libFuzzer would also take them for corpus seeds.)
    made=$work-regressions
    mkdir -p "$made"
    python3 "$root/tests/cli/hostile_elf.py" plt-long-name "$made/long.so" 250000 4000
    python3 "$root/tests/cli/hostile_elf.py" rela-headers "$made/rela.so" 20000 10000
    for obj in long rela; do
      { sed -n '/--cg-inject-fuzz-object--/q;p' "$work/object-1"
        printf -- '--cg-inject-fuzz-object--\n'
        cat "$made/$obj.so"; } >"$made/elf-$obj"
      rm -f "$made/$obj.so"
      regressions+=("$made/elf-$obj")
    done
  fi
  # Every earlier finding first: each regression input must run clean.
  if ((${#regressions[@]})); then
    "$fuzzer" "${limits[@]}" "${regressions[@]}" >"$work/log" 2>&1 || {
      tail -n 40 "$work/log"
      echo "fuzz: $name fails a regression input (log above)" >&2
      exit 1
    }
  fi
  echo "fuzz: $name for ${seconds}s"
  "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" "${limits[@]}" \
    -artifact_prefix="$work/" "$work/corpus" "$work" >"$work/log" 2>&1 || {
    tail -n 40 "$work/log"
    # The work directory goes away on exit: keep the input that failed.
    kept=$build_dir/fuzz-artifacts/$name
    mkdir -p "$kept"
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$kept"/ 2>/dev/null || true
    echo "fuzz: $name FAILED (log above; the failing input is kept in $kept)" >&2
    exit 1
  }
  # Executions, coverage (cov: edges, ft: features) and corpus size of the last status line.
  grep -E '^#[0-9]+[[:space:]]' "$work/log" | tail -n 1 || true
  grep -E '^Done' "$work/log" | tail -n 1 || true
  rm -rf "$work" "$work-regressions"
  trap - EXIT
  ran=$((ran + 1))
done
echo "fuzz: $ran targets ran clean"
