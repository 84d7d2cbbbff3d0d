#!/usr/bin/env bash
# Screenshot of KCachegrind's "Machine Code" view of a JIT function after cg-inject: injects the
# x86-64 test JIT's capture (tests/data/x86_64/instr) into a scratch directory (the ELF images
# land beside the output), runs Debian's kcachegrind under Xvfb from the repository root (so the
# Source Code tab finds tests/e2e/jit/workload.mini), selects jit_sum, opens the Machine Code and
# Source Code tabs with xdotool and saves the screen with ImageMagick's `import`.
# Not part of the test run. Needs: kcachegrind xvfb xdotool imagemagick dbus (Debian packages).
#   bash scripts/kcachegrind-screenshot.sh [OUT.png]   (default docs/kcachegrind-machine-code.png)
# CG_INJECT names the binary (default build/cg-inject, else build-release/cg-inject).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
png=${1:-docs/kcachegrind-machine-code.png}
[[ $png == /* ]] || png=$root/$png
cg_inject=${CG_INJECT:-}
if [[ -z $cg_inject ]]; then
  for b in build/cg-inject build-release/cg-inject; do
    [[ -x $b ]] && cg_inject=$root/$b && break
  done
fi
[[ -n $cg_inject ]] || { echo "build cg-inject first (meson compile -C build)" >&2; exit 1; }
for tool in kcachegrind Xvfb xvfb-run xdotool import dbus-run-session; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install kcachegrind xvfb xdotool imagemagick dbus" >&2; exit 1; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
sample=tests/data/x86_64/instr
"$cg_inject" --no-discover -i "$sample/callgrind.out.zst" --jitdump "$sample"/jit-*.dump \
  -o "$scratch/callgrind.out.jit"
mkdir -p "$scratch/home" "$scratch/run" "$(dirname "$png")"
chmod 700 "$scratch/run"

# Runs inside xvfb-run: the X server is $DISPLAY. Coordinates are for a 1400x900 screen and
# KCachegrind 22.12's default layout (Debian 12).
cat >"$scratch/drive.sh" <<'EOF'
set -euo pipefail
profile=$1 png=$2
kcachegrind "$profile" >"$HOME/kcachegrind.log" 2>&1 &
kc=$!
# The main window is the one whose title is the profile's path (the tip dialog comes with it).
win=
for _ in $(seq 60); do
  for w in $(xdotool search --onlyvisible --class kcachegrind 2>/dev/null); do
    case $(xdotool getwindowname "$w") in "$profile"*) win=$w ;; esac
  done
  [[ -n $win ]] && break
  sleep 1
done
[[ -n $win ]] || { echo "kcachegrind did not open a window:" >&2; cat "$HOME/kcachegrind.log" >&2; exit 1; }
sleep 3
for w in $(xdotool search --onlyvisible --class kcachegrind 2>/dev/null); do
  case $(xdotool getwindowname "$w") in "Tip of the Day"*) xdotool windowclose "$w" ;; esac
done
xdotool windowmove "$win" 0 0 windowsize "$win" 1400 900
sleep 2
xdotool mousemove 128 90 click 1        # the flat profile's search field
xdotool type --delay 50 jit_sum
sleep 2
xdotool mousemove 255 140 click 1       # the one function found
sleep 2
xdotool mousemove 814 856 click 1       # lower pane: Machine Code
sleep 3
xdotool mousemove 717 99 click 1        # upper pane: Source Code
sleep 3
xdotool mousemove 1390 10
import -window root "$png"
kill "$kc"
wait "$kc" 2>/dev/null || true
EOF
HOME=$scratch/home XDG_RUNTIME_DIR=$scratch/run \
  xvfb-run -a -s "-screen 0 1400x900x24" \
  dbus-run-session -- bash "$scratch/drive.sh" "$scratch/callgrind.out.jit" "$png"
echo "wrote $png"
