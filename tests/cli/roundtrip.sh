#!/usr/bin/env bash
# The fidelity bar: every Callgrind file of the corpus and every capture in tests/data, passed
# through cg-inject with no symbol source, is the same profile for each consumer by its own rules:
# callgrind_annotate, KCachegrind (kcachegrind_reading.py, a model of its loader) and cg-inject's
# own reader. Where an input itself reads differently in KCachegrind and in callgrind_annotate,
# the output may settle on either reading, but then both consumers must agree on the output.
# Cachegrind files and malformed inputs fail with FILE:LINE and leave no output.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2
need_corpus
here=$(cd "$(dirname "$0")" && pwd)

# A plain copy of a possibly zstd-compressed file (the Python model and annotate read plain text).
plain_copy() {
  local file=$1
  if [[ $(head -c 4 "$file" | od -An -tx1 | tr -d ' ') == 28b52ffd ]]; then
    local plain
    plain=$(mktemp "$scratch/plain.XXXXXX")
    zstd -q -d -c "$file" >"$plain"
    echo "$plain"
  else
    echo "$file"
  fi
}

# kcachegrind_agrees IN OUT NAME: KCachegrind reads OUT as it reads IN; where IN is read
# differently by KCachegrind and by cg-inject's reader (callgrind_annotate's file rules), OUT must
# at least be read alike by both.
kcachegrind_agrees() {
  local in out name=$3
  in=$(plain_copy "$1")
  out=$(plain_copy "$2")
  python3 "$here/kcachegrind_reading.py" "$in" >"$scratch/k.in"
  python3 "$here/kcachegrind_reading.py" "$out" >"$scratch/k.out"
  cmp -s "$scratch/k.in" "$scratch/k.out" && return
  # The output reads differently in KCachegrind: allowed only when the input does not read alike
  # in KCachegrind and in callgrind_annotate's rules (cg-inject's reader), and then both must
  # read the output alike.
  own_functions "$in" >"$scratch/own.in"
  python3 "$here/kcachegrind_reading.py" --functions-only "$in" >"$scratch/kf.in"
  if cmp -s "$scratch/kf.in" "$scratch/own.in"; then
    fail "$name: KCachegrind reads the output differently from the input"
    diff "$scratch/k.in" "$scratch/k.out" | head -n 6 >&2 || true
    return
  fi
  own_functions "$out" >"$scratch/own.out"
  python3 "$here/kcachegrind_reading.py" --functions-only "$out" >"$scratch/kf.out"
  if ! diff "$scratch/kf.out" "$scratch/own.out" >"$scratch/diff"; then
    fail "$name: the input reads differently in KCachegrind and callgrind_annotate, and so does the output"
    head -n 6 "$scratch/diff" >&2
    return
  fi
  echo "note: $name reads differently in KCachegrind and callgrind_annotate; the output settles on callgrind_annotate's reading"
  kcachegrind_settled=$((kcachegrind_settled + 1))
  settled=1
}

# cg-inject's own reading of a file, function by function under KCachegrind's keys.
own_functions() {
  "$CG_INJECT" --no-discover -q -i "$1" -o /dev/null --callgraph "$scratch/own.json"
  python3 "$here/kcachegrind_reading.py" --project-callgraph "$scratch/own.json"
}
kcachegrind_settled=0

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
  # --auto=no: auto-annotated sources come out in perl hash order, which varies per run.
  # Callers/callees of equal cost are listed in input order, which a rewrite may change: the tree
  # view is compared as a sorted set of lines.
  local order=cat
  [[ " ${opts[*]} " == *" --tree="* ]] && order=sort
  { callgrind_annotate --auto=no "${opts[@]}" "$file" 2>/dev/null || echo "callgrind_annotate failed"; } |
    $order |
    # An object id that old Callgrinds used without defining (selinux: cob=(8)) reads as an empty
    # name; callgrind_annotate prints an empty object as "[]" but an undefined one as nothing.
    sed 's/ \[\]$//' | grep -vE '^(Profile data file|Data file:|Profiled target|Events recorded|Events shown|Event sort order|Thresholds|Include dirs|User annotated|Auto-annotation|Auto-annotated source)' || true
}

files=()
for f in "$CORPUS"/callgrind/*; do
  [[ $f == *.cgout ]] || files+=("$f")
done
while IFS= read -r f; do files+=("$f"); done < <(
  find "$SOURCE_ROOT/tests/data" -type f \( -name 'callgrind.out*' -o -name 'twin.callgrind.out*' \) \
    ! -name '*.jit' | sort)

checked=0
identical=0
# Refused by design: speedscope's hand-written sample uses +N/-N/* in cost columns, which the
# format allows for positions only (reading "-300" as a cost would invent numbers).
refused=(speedscope-subposition-compression.callgrind)
# Files whose summary: is not what their costs add up to (Qt Creator's hand-edited test files,
# lsprofcalltree, Callgrind 3.5's `summary: 0` for client-request dumps): cg-inject warns and
# keeps the file's one summary: (issue 23: a second, corrected one changed their totals and
# percentages), so their output reads exactly as the original in both consumers.
declare -A true_summary=([qtcreator-calleeFunctions.out]=830 [qtcreator-inlinedFunctions.out]=804
  [qtcreator-recursion.out]=35700865 [qtcreator-simpleFunction.out]=23
  [gprof2dot-bzr.callgrind]=1482191
  [gprof2dot-googlecode-issue34.callgrind]="192717159265 64592858456 41880232760 9202071 127695919 4750724 3468 44754 10930")

# roundtrip_one FILE: every check of one file, in the current $scratch (each file gets its own:
# files are checked one per core at a time), counting into checked, identical,
# kcachegrind_settled and failures.
roundtrip_one() {
  local f=$1 name out settled
  name=$(basename "$f")
  out="$scratch/$name.rt"
  # The empty base file of --separate-threads=yes is not a profile (run_test.cc covers its message).
  [[ -s $f ]] || return 0
  if [[ " ${refused[*]} " == *" $name "* ]]; then
    expect_exit 1 "$CG_INJECT" --no-discover -i "$f" -o "$out" &&
      { grep -qE "^cg-inject: $f:[0-9]+: expected a cost" "$scratch/err" || fail "$name: $(cat "$scratch/err")"; }
    return 0
  fi
  if ! expect_exit 0 "$CG_INJECT" --no-discover -i "$f" -o "$out"; then return 0; fi
  if [[ -n ${true_summary[$name]:-} ]]; then
    grep -q "^warning: $f:[0-9]*: expected summary: equal to what the part's costs add up to (${true_summary[$name]})" "$scratch/err" ||
      fail "$name: no warning about its summary: $(cat "$scratch/err")"
  elif grep -q "summary:\|totals:" "$scratch/err"; then
    fail "$name: unexpected summary:/totals: warning: $(cat "$scratch/err")"
  fi
  # The project's own reader: canonical call graphs of input and output must be equal.
  "$CG_INJECT" --no-discover -q -i "$f" -o /dev/null --callgraph "$scratch/a.json"
  "$CG_INJECT" --no-discover -q -i "$out" -o /dev/null --callgraph "$scratch/b.json"
  cmp -s "$scratch/a.json" "$scratch/b.json" || fail "$name: own reader sees a different profile"
  settled=0
  kcachegrind_agrees "$f" "$out" "$name"
  # Untouched bytes pass through: without a source nothing changes, so every capture comes out
  # byte-identical, unless the capture itself reads differently in KCachegrind and
  # callgrind_annotate (stock Valgrind 3.19 on x86-64 can use a bare function id in another
  # object's context: tests/data/erlang), where the output settles on one reading (checked above).
  # The corpus's other writers may be formatted where their lines read differently; counted.
  if cmp -s <(zstd -q -d -c -f "$f") "$out"; then
    identical=$((identical + 1))
  elif [[ $f == "$SOURCE_ROOT/tests/data/"* && $settled == 0 ]]; then
    fail "$f: a capture no source touched is not byte-identical"
    cmp <(zstd -q -d -c -f "$f") "$out" >&2 || true
  fi
  [[ $(grep -c '^summary:' "$out") == $(zstd -q -d -c -f "$f" | grep -c '^summary:') ]] ||
    fail "$name: the output's summary: lines are not the input's"
  # callgrind_annotate, exclusive and inclusive, with the caller/callee tree; files it cannot
  # read itself (bzr: fi= before fn=; qt-creator's memAddr column) are checked by our reader only.
  if [[ $(annotate "$f" | head -n 1) == "callgrind_annotate failed" ]]; then
    echo "note: callgrind_annotate cannot read $name itself"
    checked=$((checked + 1))
    return 0
  fi
  for opts in "" "--inclusive=yes" "--inclusive=yes --tree=caller"; do
    # shellcheck disable=SC2086
    if ! diff <(annotate $opts "$f") <(annotate $opts "$out") >"$scratch/diff"; then
      fail "$name: callgrind_annotate $opts differs"
      head -n 10 "$scratch/diff" >&2
    fi
  done
  checked=$((checked + 1))
}

# A pool of one worker per core: the loop ran alone at the end of CI for ten minutes on one core.
# Each file's messages are printed in file order afterwards, its counts summed.
workers=$(nproc 2>/dev/null || echo 2)
n=0
for f in "${files[@]}"; do
  n=$((n + 1))
  mkdir "$scratch/$n"
  (
    scratch=$scratch/$n
    failures=0 checked=0 identical=0 kcachegrind_settled=0
    roundtrip_one "$f" >"$scratch/stdout" 2>"$scratch/stderr"
    # No temporary file of cg-inject's is left beside its output.
    leftovers=$(find "$scratch" -name '*.tmp*' -o -name '.*cg-inject*' | head -n 3)
    [[ -z $leftovers ]] || fail "temporary files left: $leftovers" 2>>"$scratch/stderr"
    echo "$checked $identical $kcachegrind_settled $failures" >"$scratch/counts"
    find "$scratch" -mindepth 1 ! -name stdout ! -name stderr ! -name counts -delete
  ) &
  while (($(jobs -rp | wc -l) >= workers)); do wait -n || true; done
done
wait
for ((i = 1; i <= n; i++)); do
  cat "$scratch/$i/stdout"
  cat "$scratch/$i/stderr" >&2
  if [[ ! -f $scratch/$i/counts ]]; then
    fail "${files[i - 1]}: its checks stopped before the end"
    continue
  fi
  read -r one_checked one_identical one_settled one_failures <"$scratch/$i/counts"
  checked=$((checked + one_checked)) identical=$((identical + one_identical))
  kcachegrind_settled=$((kcachegrind_settled + one_settled)) failures=$((failures + one_failures))
done
echo "round-tripped $checked files ($kcachegrind_settled read differently by KCachegrind and callgrind_annotate in the input)"
echo "byte-identical: $identical of $checked files"

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
