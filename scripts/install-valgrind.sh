#!/bin/bash
# Meson install script for -Dbundled_valgrind=enabled: copies the bundled Valgrind (the prefix
# scripts/build-valgrind.sh linked into the build directory) to $DESTDIR$PREFIX/RELDIR.
#   install-valgrind.sh BUILT_PREFIX RELDIR
# The copy keeps the build's baked-in prefix; `cg-inject record` runs it with VALGRIND_LIB set to
# the copy's libexec/valgrind.
set -euo pipefail
built=${1:?usage: install-valgrind.sh BUILT_PREFIX RELDIR}
reldir=${2:?usage: install-valgrind.sh BUILT_PREFIX RELDIR}
src=$(readlink -f "$built")
[ -x "$src/bin/valgrind" ] && [ -d "$src/libexec/valgrind" ] ||
  { echo "install-valgrind.sh: $built: expected a Valgrind install (bin/valgrind, libexec/valgrind)" >&2; exit 1; }
dest=${MESON_INSTALL_DESTDIR_PREFIX:?install-valgrind.sh runs from meson install}/$reldir
rm -rf "$dest"
mkdir -p "$dest"
cp -a "$src"/. "$dest"/
rm -f "$dest/.complete"
echo "Installing the bundled Valgrind ($(cat "$src/.complete" 2>/dev/null || echo "$src")) to $dest"
