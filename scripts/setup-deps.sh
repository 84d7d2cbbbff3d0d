#!/usr/bin/env bash
# Installs the Debian 12 packages cg-inject needs to build, test and run its end-to-end suite.
# Idempotent and quick when everything is present: apt is only touched for missing packages.
set -euo pipefail

packages=(
  # build
  meson ninja-build g++ clang pkg-config
  libboost-dev libzstd-dev liblief-dev libcapstone-dev libgtest-dev libgmock-dev
  # bench: Google Benchmark for bench/hot_loops_perftest
  libbenchmark-dev
  # tests: callgrind_annotate (perl, with valgrind), zstd CLI, fuzzers and sanitizers (clang rt)
  valgrind zstd perl libclang-rt-14-dev clang-format python3
  # tests/cli/machine_code.sh: objdump, addr2line, readelf for both architectures
  binutils binutils-aarch64-linux-gnu
  # tests/cli/outputs.sh: strace delays a syscall's return to land a signal in a race window
  strace
  # bundled Valgrind from Debian's source package, x86-64 and AArch64 (cross + qemu-user)
  dpkg-dev build-essential autoconf automake gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  qemu-user
  # `cg-inject record` e2e tests: a JVM with javac; PHP with opcache's JIT, Erlang (erl, erlc),
  # Mono (mono, mcs); tests/e2e/callgraph also runs PHP's tracing JIT and Erlang's BEAMJIT
  openjdk-17-jdk-headless php8.2-cli php8.2-opcache erlang-base mono-runtime mono-mcs
  # record-erlc compiles OTP's own stdlib modules (their sources); record-elixir runs Elixir 1.14
  erlang-src elixir
)
# ... and Node: Debian's nodejs only when no node is installed (NodeSource's node 20 may be).
command -v node >/dev/null || packages+=(nodejs)
# npm installs Deno and Bun for the `record` e2e tests (scripts/js-runtimes.sh); NodeSource's
# node brings its own.
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Deno and Bun (npm packages, pinned; a few seconds when present).
bash "$(dirname "$0")/js-runtimes.sh" install
