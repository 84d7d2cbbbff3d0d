#!/bin/bash
# Deno and Bun for the `record` e2e tests, from npm's per-platform packages (the binaries alone,
# no install scripts), pinned to the versions the captures in tests/data/{deno,bun} came from.
#
#   scripts/js-runtimes.sh install   installs them unless they are there (seconds when they are)
#   scripts/js-runtimes.sh deno|bun  prints the binary's path, or nothing (exit 1) when absent
#
# They live in $CG_INJECT_CACHE_DIR/js (default /var/cache/cg-inject/js, or ~/.cache/cg-inject/js
# when that is not writable), beside the Valgrind builds of scripts/build-valgrind.sh. x86-64
# only: the e2e tests that use them run on the x86-64 Valgrind.
set -euo pipefail

deno_package=@deno/linux-x64-glibc@2.9.6
bun_package=@oven/bun-linux-x64@1.4.5

cache=${CG_INJECT_CACHE_DIR:-/var/cache/cg-inject}
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/cg-inject
fi
dir=$cache/js
deno=$dir/node_modules/@deno/linux-x64-glibc/deno
bun=$dir/node_modules/@oven/bun-linux-x64/bin/bun

# The version a package.json of node_modules says, or nothing.
installed_version() {
  sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$dir/node_modules/$1/package.json" 2>/dev/null |
    head -n 1
}

up_to_date() {
  [ -x "$deno" ] && [ -x "$bun" ] &&
    [ "$(installed_version @deno/linux-x64-glibc)" = "${deno_package##*@}" ] &&
    [ "$(installed_version @oven/bun-linux-x64)" = "${bun_package##*@}" ]
}

case ${1:-} in
  install)
    [ "$(uname -m)" = x86_64 ] || exit 0
    up_to_date && exit 0
    mkdir -p "$dir"
    echo "js-runtimes: installing $deno_package $bun_package into $dir" >&2
    # A lock: two test runs at once must not install over each other.
    exec 9>"$cache/.js.lock"
    flock 9
    up_to_date && exit 0
    npm install --prefix "$dir" --no-audit --no-fund --no-save --ignore-scripts --loglevel=error \
      "$deno_package" "$bun_package" >&2
    up_to_date || { echo "js-runtimes: npm did not install $deno or $bun" >&2; exit 1; }
    ;;
  deno) [ -x "$deno" ] && echo "$deno" ;;
  bun) [ -x "$bun" ] && echo "$bun" ;;
  *) echo "usage: js-runtimes.sh install|deno|bun" >&2; exit 2 ;;
esac
