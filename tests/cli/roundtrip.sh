#!/usr/bin/env bash
# The fidelity bar of issue 2: every Callgrind file of the corpus and every capture in tests/data,
# passed through cg-inject with no symbol source, is the same profile for callgrind_annotate and
# for cg-inject's own reader; Cachegrind files and malformed inputs fail with FILE:LINE and leave
# no output.
source "$(dirname "$0")/lib.sh"
need_corpus

# callgrind_annotate's view (stdout only: its perl warnings carry input line numbers), minus the
# lines that name the file it read. It cannot read zstd, so compressed files are expanded first.
annotate() {
  local file=${*: -1}
  local opts=("${@:1:$#-1}")
  if [[ $(head -c 4 "$file" | od -An -tx1 | tr -d ' ') == 28b52ffd ]]; then
    local plain
    plain=$(mktemp "$scratch/annotate.XXXXXX")
    zstd -q -d -c "$file" >"$plain"
    file=$plain
  fi
  callgrind_annotate "${opts[@]}" "$file" 2>/dev/null |
    grep -vE '^(Profile data file|Data file:|Profiled target|Events recorded|Events shown|Event sort order|Thresholds|Include dirs|User annotated|Auto-annotation|Auto-annotated source)' || true
}

files=()
for f in "$CORPUS"/callgrind/*; do
  [[ $f == *.cgout ]] || files+=("$f")
done
while IFS= read -r f; do files+=("$f"); done < <(
  find "$SOURCE_ROOT/tests/data" -type f \( -name 'callgrind.out*' -o -name 'twin.callgrind.out*' \) \
    ! -name '*.jit' | sort)

checked=0
for f in "${files[@]}"; do
  name=$(basename "$f")
  out="$scratch/$name.rt"
  if ! expect_exit 0 "$CG_INJECT" --no-discover -q -i "$f" -o "$out"; then continue; fi
  # The project's own reader: canonical call graphs of input and output must be equal.
  "$CG_INJECT" --no-discover -q -i "$f" -o /dev/null --callgraph "$scratch/a.json"
  "$CG_INJECT" --no-discover -q -i "$out" -o /dev/null --callgraph "$scratch/b.json"
  cmp -s "$scratch/a.json" "$scratch/b.json" || fail "$name: own reader sees a different profile"
  # callgrind_annotate, exclusive and inclusive, with the caller/callee tree.
  for opts in "" "--inclusive=yes" "--inclusive=yes --tree=caller"; do
    # shellcheck disable=SC2086
    if ! diff <(annotate $opts "$f") <(annotate $opts "$out") >"$scratch/diff"; then
      fail "$name: callgrind_annotate $opts differs"
      head -n 10 "$scratch/diff" >&2
    fi
  done
  checked=$((checked + 1))
done
echo "round-tripped $checked files"

# Cachegrind output is not Callgrind format: a located error, exit 1, no output.
for f in "$CORPUS"/callgrind/*.cgout; do
  name=$(basename "$f")
  expect_exit 1 "$CG_INJECT" --no-discover -i "$f" -o "$scratch/$name.out" || continue
  grep -qE "^cg-inject: $f:[0-9]+: " "$scratch/err" || fail "$name: error not located: $(cat "$scratch/err")"
  [[ ! -e "$scratch/$name.out" ]] || fail "$name: output left behind"
done
# No temporary files remain in the output directory.
leftovers=$(find "$scratch" -name '*.tmp*' -o -name '.*cg-inject*' | head -n 3)
[[ -z $leftovers ]] || fail "temporary files left: $leftovers"
finish
