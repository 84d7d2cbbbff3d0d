#!/usr/bin/env bash
# Passes every test of cg-inject on a fresh Debian 12 machine (run as root or with sudo):
# installs what is missing, builds with -Werror and ASan+UBSan, runs every Meson suite (unit,
# cli, conformance, e2e), then builds the libFuzzer targets with clang and runs each briefly.
# Idempotent: a second run only rebuilds what changed. .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

if [[ ! -f build-test/build.ninja ]]; then
  meson setup build-test -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
fi
meson compile -C build-test
meson test -C build-test --print-errorlogs --num-processes 2

# Fuzz targets: clang + libFuzzer, one short run per reader (corpus seeds from tests/data and
# ../shared/corpus when present).
if [[ ! -f build-fuzz/build.ninja ]]; then
  CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false -Db_lundef=false
fi
meson compile -C build-fuzz
bash fuzz/run-all.sh build-fuzz 20
