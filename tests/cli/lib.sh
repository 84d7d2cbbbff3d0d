# Shared helpers for the command-line tests: a scratch directory removed on exit, and checks
# that print what differed.
set -euo pipefail
CG_INJECT=${CG_INJECT:?CG_INJECT must name the cg-inject binary}
SOURCE_ROOT=${SOURCE_ROOT:?SOURCE_ROOT must name the repository root}
CORPUS=$SOURCE_ROOT/../shared/corpus
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_exit CODE CMD...: runs CMD with stdout/stderr in $scratch/out and $scratch/err.
expect_exit() {
  local want=$1
  shift
  local got=0
  "$@" >"$scratch/out" 2>"$scratch/err" || got=$?
  if [[ $got != "$want" ]]; then
    fail "exit $got, expected $want: $*"
    sed 's/^/  stderr: /' "$scratch/err" | head -n 5 >&2
    return 1
  fi
}

finish() {
  if ((failures)); then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}

need_corpus() {
  if [[ ! -d $CORPUS ]]; then
    echo "SKIP: ../shared/corpus is absent (it sits beside the repository on this team's machines)"
    exit 77
  fi
}
