#!/usr/bin/env bash
# The command line itself: help, version, bad flags, missing inputs.
# Without lib.sh (a copy run elsewhere) $scratch would be empty and "$scratch/bin" /bin.
source "$(dirname "$0")/lib.sh" || exit 2

expect_exit 0 "$CG_INJECT" --help && {
  grep -q '^Usage: cg-inject' "$scratch/out" || fail "--help does not print usage on stdout"
  [[ ! -s $scratch/err ]] || fail "--help wrote to stderr"
}
expect_exit 0 "$CG_INJECT" --version && {
  grep -qE '^cg-inject [0-9]+\.[0-9]+\.[0-9]+$' "$scratch/out" || fail "--version: $(cat "$scratch/out")"
}
expect_exit 2 "$CG_INJECT" --bogus && {
  [[ $(head -n 1 "$scratch/err") == "cg-inject: unknown option '--bogus'" ]] ||
    fail "bad flag message: $(head -n 1 "$scratch/err")"
  grep -q "^usage: cg-inject" "$scratch/err" || fail "bad flag prints no short usage"
  [[ ! -s $scratch/out ]] || fail "bad flag wrote to stdout"
}
expect_exit 2 "$CG_INJECT"
expect_exit 1 "$CG_INJECT" -i "$scratch/does-not-exist" -o "$scratch/o" && {
  grep -q "does-not-exist" "$scratch/err" || fail "missing input not named: $(cat "$scratch/err")"
  [[ ! -e $scratch/o ]] || fail "output left behind for a missing input"
}
# The man page documents every long option that --help lists.
for opt in $("$CG_INJECT" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$SOURCE_ROOT/man/cg-inject.1" ||
    fail "man page lacks $opt"
done
finish
