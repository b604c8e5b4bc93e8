#!/usr/bin/env bash
# Installs the system packages utf8fuzz's real peers and checks need, when they
# are missing. Idempotent and quiet when everything is there. Needs root for apt.
set -euo pipefail

# package:command-or-file that proves it is installed
want=(
  "libicu-dev:/usr/include/unicode/ucnv.h"
  "pkg-config:pkg-config"
  "nodejs:node"
  # test-only: SIMDe emulates AVX-512 intrinsics so the avx512 kernel's validation
  # runs (under ASan) on CPUs without AVX-512 (tests/fast/test_avx512_emulated.py)
  "libsimde-dev:/usr/include/simde/x86/avx512.h"
  # the real peers' toolchains (src/utf8fuzz/decoders/peers, built by make setup)
  "golang-go:go"
  "default-jdk-headless:javac"
)
# rustc from Debian only when there is none, neither on PATH nor from rustup
# (~/.cargo/bin, which the peers' builder also looks in)
if ! command -v rustc >/dev/null 2>&1 && [ ! -x "${HOME:-/nonexistent}/.cargo/bin/rustc" ]; then
  want+=("rustc:rustc")
fi
[ "${UTF8FUZZ_WITH_CLANG:-0}" = 1 ] && want+=("clang:clang")
[ "${UTF8FUZZ_WITH_CHROMIUM:-0}" = 1 ] && want+=("chromium:chromium")

missing=()
for w in "${want[@]}"; do
  pkg=${w%%:*}; probe=${w#*:}
  if [[ $probe == /* ]]; then [ -e "$probe" ] && continue; else command -v "$probe" >/dev/null 2>&1 && continue; fi
  missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
  echo "system-deps: missing ${missing[*]} and not root; install them with apt-get" >&2
  exit 1
fi
SUDO=""; [ "$(id -u)" != 0 ] && SUDO=sudo
echo "system-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
