#!/bin/bash
# Builds the Valgrind that the e2e tests use: Debian's source package (3.19.0 on Debian 12, with
# Debian's patches) plus ours from subprojects/valgrind-patches/, for x86_64 (native) or aarch64
# (cross, --host=aarch64-linux-gnu, run under qemu-aarch64).
#
#   scripts/build-valgrind.sh ARCH PREFIX [STAMP]
#
# The build is cached in $CG_INJECT_CACHE_DIR (default /var/cache/cg-inject, or
# ~/.cache/cg-inject when that is not writable) under valgrind-ARCH-HASH, HASH covering the recipe
# version below and the patches, so CI runs on one machine reuse it and a changed patch rebuilds it. Valgrind
# bakes its install prefix in, so it is installed in the cache directory and PREFIX becomes a
# symlink to it. STAMP (optional) is touched on success, for Meson's custom_target.
# Set CG_INJECT_VALGRIND_UNPATCHED=1 to build without our patches (to document what they fix).
set -euo pipefail

# Everything is in main, so that bash has parsed the whole file before it starts a long build:
# an edit of this file during a build cannot then derail the running copy.
main() {

arch=${1:?usage: build-valgrind.sh x86_64|aarch64 PREFIX [STAMP]}
prefix=${2:?usage: build-valgrind.sh x86_64|aarch64 PREFIX [STAMP]}
stamp=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
patch_dir=$here/../subprojects/valgrind-patches

case $arch in
  x86_64) host_args=() ;;
  aarch64) host_args=(--host=aarch64-linux-gnu) ;;
  *) echo "build-valgrind.sh: expected ARCH x86_64 or aarch64, got '$arch'" >&2; exit 2 ;;
esac

cache=${CG_INJECT_CACHE_DIR:-/var/cache/cg-inject}
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/cg-inject
  mkdir -p "$cache"
fi

patches=()
flavour=
if [ "${CG_INJECT_VALGRIND_UNPATCHED:-0}" = 1 ]; then
  flavour=unpatched-
else
  mapfile -t patches < <(ls "$patch_dir"/*.patch | sort)
fi
# Bump when a change to this script changes what gets built (cosmetic edits keep the cache).
recipe=1
hash=$( (echo "recipe $recipe"; cat "${patches[@]}" /dev/null) | sha256sum | cut -c1-12)
dest=$cache/valgrind-$arch-$flavour$hash

link_prefix() {
  mkdir -p "$(dirname "$prefix")"
  if [ "$(readlink -f "$prefix" 2>/dev/null)" != "$(readlink -f "$dest")" ]; then
    rm -rf "$prefix"
    ln -s "$dest" "$prefix"
  fi
  [ -z "$stamp" ] || touch "$stamp"
}

if [ -f "$dest/.complete" ]; then # cached: no need to wait for another arch's build
  link_prefix
  exit 0
fi
# One build at a time on the machine: both arches (and concurrent CI runs) share this lock, and a
# waiter finds the finished build afterwards.
exec 9>"$cache/.build.lock"
flock 9
if [ -f "$dest/.complete" ]; then
  link_prefix
  exit 0
fi

echo "build-valgrind.sh: building Valgrind for $arch into $dest" >&2
start=$(date +%s)
work=$(mktemp -d "$cache/work-$arch.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Debian's source package. apt-get source needs deb-src lines; enable them (and refresh the lists)
# only when they are missing.
if ! apt-get source --print-uris valgrind >/dev/null 2>&1; then
  src_list=/etc/apt/sources.list.d/debian.sources
  if [ -w "$src_list" ] && grep -q '^Types: deb$' "$src_list"; then
    sed -i 's/^Types: deb$/Types: deb deb-src/' "$src_list"
    apt-get update -qq
  else
    echo "build-valgrind.sh: apt-get source valgrind needs deb-src entries; enable them in $src_list" >&2
    exit 1
  fi
fi
(cd "$work" && apt-get source -qq valgrind >"$work/apt.log" 2>&1) || { cat "$work/apt.log" >&2; exit 1; }
src=$(find "$work" -maxdepth 1 -type d -name 'valgrind-*' | head -1)
for p in "${patches[@]}"; do
  patch -d "$src" -p1 --forward --quiet < "$p"
done

rm -rf "$dest"
log=$cache/build-$arch.log
(cd "$src" &&
  nice -n 10 ./configure --prefix="$dest" "${host_args[@]}" &&
  nice -n 10 make -j2 &&
  make install) >"$log" 2>&1 || {
  echo "build-valgrind.sh: build failed, see $log" >&2
  exit 1
}
echo "Debian $(basename "$src") + ${patches[*]##*/}" > "$dest/.complete"
echo "build-valgrind.sh: built $arch in $(( $(date +%s) - start )) s" >&2
link_prefix
}

main "$@"
exit
